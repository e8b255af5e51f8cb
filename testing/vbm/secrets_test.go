package vbm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/store/storetest"
	"github.com/openkeel/ironic/testing/await"
	"github.com/openkeel/ironic/testing/cluster"
	"github.com/openkeel/ironic/testing/ipmisim"
	"github.com/openkeel/ironic/testing/vbm"
)

// hardwareConf enables both hardware types of issue 9 next to each other.
const hardwareConf = `[DEFAULT]
debug = true
enabled_hardware_types = redfish,ipmi
enabled_power_interfaces = redfish,ipmitool
enabled_management_interfaces = redfish,ipmitool
enabled_boot_interfaces = redfish-virtual-media,ipxe
enabled_deploy_interfaces = direct
enabled_inspect_interfaces = redfish,no-inspect
enabled_console_interfaces = no-console
enabled_vendor_interfaces = no-vendor
enabled_bios_interfaces = no-bios
enabled_raid_interfaces = no-raid
enabled_firmware_interfaces = no-firmware
enabled_rescue_interfaces = no-rescue
enabled_network_interfaces = noop
enabled_storage_interfaces = noop
[ipmi]
min_command_interval = 1
`

type api struct {
	t *testing.T
	c *cluster.Cluster
}

func (a api) call(method, path string, body any) (int, map[string]any, string) {
	a.t.Helper()
	var data []byte
	if body != nil {
		var err error
		if data, err = json.Marshal(body); err != nil {
			a.t.Fatal(err)
		}
	}
	status, out, err := a.c.Do(context.Background(), method, path, "1.80", data)
	if err != nil {
		a.t.Fatalf("%s %s: %v", method, path, err)
	}
	var doc map[string]any
	if len(out) > 0 {
		_ = json.Unmarshal(out, &doc)
	}
	return status, doc, string(out)
}

// waitProvision polls the node until it rests in want.
func (a api) waitProvision(uuid, want string) map[string]any {
	a.t.Helper()
	var n map[string]any
	await.UntilReason(a.t, 90*time.Second, "node "+uuid+" "+want, func() (bool, string) {
		_, n, _ = a.call(http.MethodGet, "/v1/nodes/"+uuid, nil)
		return n["provision_state"] == want && n["target_provision_state"] == nil && n["reservation"] == nil,
			fmt.Sprintf("%v/%v (last_error %v)", n["provision_state"], n["target_provision_state"], n["last_error"])
	})
	return n
}

// psWatch samples every process's arguments until stopped, so that the
// short-lived ipmitool runs are seen too.
type psWatch struct {
	mu      sync.Mutex
	samples int
	// ipmitool counts the samples that caught an ipmitool run, proof that
	// the short-lived processes were looked at.
	ipmitool int
	seen     []string
	stop     chan struct{}
	done     chan struct{}
}

func watchPS(marker string, secrets ...string) *psWatch {
	w := &psWatch{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for {
			out, err := exec.Command("ps", "-eo", "args").Output()
			if err == nil {
				w.mu.Lock()
				w.samples++
				for _, line := range strings.Split(string(out), "\n") {
					if strings.HasPrefix(line, "ipmitool ") && strings.Contains(line, marker) {
						w.ipmitool++
						break
					}
				}
				for _, s := range secrets {
					for _, line := range strings.Split(string(out), "\n") {
						if strings.Contains(line, s) {
							w.seen = append(w.seen, line)
						}
					}
				}
				w.mu.Unlock()
			}
			select {
			case <-w.stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	return w
}

func (w *psWatch) finish() (samples, ipmitool int, seen []string) {
	close(w.stop)
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.samples, w.ipmitool, w.seen
}

// The BMC passwords of a redfish and an ipmi node, set through the API of
// a running API and conductor pair, are masked in every API answer, kept
// out of last_error and the validation report (including for a refused
// password), absent from every process's arguments while the conductor
// drives the BMCs, and absent from the services' logs at debug level.
func TestBMCPasswordsStayHidden(t *testing.T) {
	ipmisim.Require(t)
	lab := vbm.New(t, vbm.Options{})
	m := lab.Machine("node-1", "52:54:00:00:09:01")
	sim := ipmisim.Start(t, ipmisim.Options{})
	const wrong = "Wr0ng-BMC-passw0rd"
	secrets := []string{vbm.BMCPassword, sim.Password, wrong}
	ps := watchPS(" -p "+strconv.Itoa(sim.Port)+" ", secrets...)
	c := cluster.Start(t, cluster.Options{Conductors: 1, Database: storetest.MySQLURL(t), Config: hardwareConf})
	a := api{t: t, c: c}

	redfishNode := func(name, password string) map[string]any {
		return map[string]any{"name": name, "driver": "redfish", "driver_info": map[string]any{
			"redfish_address": m.BMC.URL(), "redfish_system_id": "/redfish/v1/Systems/" + m.ID,
			"redfish_username": vbm.BMCUsername, "redfish_password": password,
		}}
	}
	var uuids []string
	for _, body := range []map[string]any{
		redfishNode("redfish-ok", vbm.BMCPassword),
		redfishNode("redfish-refused", wrong),
		{"name": "ipmi-ok", "driver": "ipmi", "driver_info": map[string]any{
			"ipmi_address": sim.Address, "ipmi_port": sim.Port, "ipmi_username": sim.Username,
			"ipmi_password": sim.Password, "ipmi_cipher_suite": ipmisim.CipherSuite,
		}},
	} {
		status, n, raw := a.call(http.MethodPost, "/v1/nodes", body)
		if status != http.StatusCreated {
			t.Fatalf("create %v: %d %s", body["name"], status, raw)
		}
		info, _ := n["driver_info"].(map[string]any)
		for k, v := range info {
			if strings.HasSuffix(k, "_password") && v != "******" {
				t.Errorf("POST answered %s = %v", k, v)
			}
		}
		uuids = append(uuids, n["uuid"].(string))
	}
	for _, u := range uuids {
		if status, _, raw := a.call(http.MethodPut, "/v1/nodes/"+u+"/states/provision", map[string]any{"target": "manage"}); status != http.StatusAccepted {
			t.Fatalf("manage %s: %d %s", u, status, raw)
		}
	}
	okRedfish, refused, okIPMI := uuids[0], uuids[1], uuids[2]
	a.waitProvision(okRedfish, "manageable")
	a.waitProvision(okIPMI, "manageable")
	n := a.waitProvision(refused, "enroll")
	if msg, _ := n["last_error"].(string); !strings.Contains(msg, "401") {
		t.Errorf("refused node's last_error %q", msg)
	}
	if status, _, raw := a.call(http.MethodPut, "/v1/nodes/"+okIPMI+"/states/power", map[string]any{"target": "power on"}); status != http.StatusAccepted {
		t.Fatalf("power on: %d %s", status, raw)
	}
	await.Until(t, 60*time.Second, "the ipmi node powered on", func() bool {
		if !sim.PoweredOn(t) {
			return false
		}
		_, n, _ := a.call(http.MethodGet, "/v1/nodes/"+okIPMI, nil)
		return n["target_power_state"] == nil
	})

	var shown bytes.Buffer
	for _, path := range []string{"/v1/nodes?detail=True", "/v1/nodes/" + okRedfish, "/v1/nodes/" + refused, "/v1/nodes/" + okIPMI,
		"/v1/nodes/" + okRedfish + "/validate", "/v1/nodes/" + refused + "/validate", "/v1/nodes/" + okIPMI + "/validate",
		"/v1/nodes/" + refused + "/history"} {
		status, _, raw := a.call(http.MethodGet, path, nil)
		if status != http.StatusOK {
			t.Errorf("GET %s: %d %s", path, status, raw)
		}
		shown.WriteString(raw)
	}
	samples, ipmitool, seen := ps.finish()
	logs := c.API.Output() + c.Conductors[0].Output()
	for _, s := range secrets {
		if strings.Contains(shown.String(), s) {
			t.Errorf("the API shows a BMC password")
		}
		if strings.Contains(logs, s) {
			t.Errorf("the services' logs hold a BMC password")
		}
	}
	if len(seen) > 0 {
		t.Errorf("process arguments hold a BMC password: %q", seen)
	}
	if ipmitool == 0 || !strings.Contains(logs, okIPMI) || !strings.Contains(shown.String(), "******") {
		t.Fatalf("the checks saw too little: %d of %d ps samples caught ipmitool, node in logs %v",
			ipmitool, samples, strings.Contains(logs, okIPMI))
	}
	t.Logf("%d of %d ps samples caught an ipmitool run", ipmitool, samples)
}
