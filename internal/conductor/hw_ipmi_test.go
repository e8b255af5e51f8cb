package conductor_test

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/driver/builtin"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store/sqldb"
	"github.com/openkeel/ironic/testing/await"
	"github.com/openkeel/ironic/testing/ipmisim"
)

// ipmiShipped is the ipmi + iPXE variant of seed 001's configuration.
var ipmiShipped = map[string]string{
	"enabled_hardware_types":        "ipmi",
	"enabled_power_interfaces":      "ipmitool",
	"enabled_management_interfaces": "ipmitool",
	"enabled_boot_interfaces":       "ipxe",
	"enabled_deploy_interfaces":     "direct",
	"enabled_inspect_interfaces":    "no-inspect",
	"enabled_console_interfaces":    "ipmitool-socat,no-console",
	"enabled_vendor_interfaces":     "ipmitool,no-vendor",
	"enabled_bios_interfaces":       "no-bios",
	"enabled_raid_interfaces":       "no-raid",
	"enabled_firmware_interfaces":   "no-firmware",
	"enabled_network_interfaces":    "noop",
	"enabled_storage_interfaces":    "noop",
	"enabled_rescue_interfaces":     "no-rescue",
}

// newIPMIHWEnv runs the ipmi hardware type with the real ipmitool; the
// throttle is shortened (the driver's own tests hold the 5 s default).
func newIPMIHWEnv(t *testing.T, db *sqldb.DB, conductorConf map[string]string) (*env, *hwLog) {
	t.Helper()
	ipmisim.Require(t)
	pids := t.TempDir()
	return newHWEnv(t, db, ipmiShipped, conductorConf, func(o *builtin.Options) {
		o.IPMI.MinCommandInterval = 200 * time.Millisecond
		o.IPMI.CommandRetryTimeout = 10 * time.Second
		// [console]socat_address defaults to my_ip; tests stay on loopback.
		o.IPMI.SocatAddress = "127.0.0.1"
		o.IPMI.TerminalPIDDir = pids
	})
}

func (e *env) enrollIPMI(b *ipmisim.BMC, password string) *model.Node {
	e.t.Helper()
	n, err := e.api.CreateNode(context.Background(), "", &model.Node{
		UUID: newHWUUID(e.t), Driver: "ipmi", ProvisionState: states.Enroll,
		DriverInfo: map[string]any{
			"ipmi_address": b.Address, "ipmi_port": float64(b.Port),
			"ipmi_username": b.Username, "ipmi_password": password,
			"ipmi_cipher_suite":  ipmisim.CipherSuite,
			"ipmi_terminal_port": float64(freeTCPPort(e.t)),
		},
	})
	if err != nil {
		e.t.Fatalf("create node: %v", err)
	}
	return n
}

// Seed 001 scenario 1 (verification) and the power and boot device calls
// with the ipmi hardware type against ipmi_sim, scenario 4's drift forced
// back, and the ipmitool-socat console; the password shows nowhere.
func TestHWIPMIManagePowerBootDevice(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		b := ipmisim.Start(t, ipmisim.Options{})
		e, logs := newIPMIHWEnv(t, db, nil)
		ctx := context.Background()

		const wrong = "Wr0ng-IPMI-pw"
		bad := e.enrollIPMI(b, wrong)
		if err := e.api.DoProvisioningAction(ctx, "", bad.UUID, "manage"); err != nil {
			t.Fatal(err)
		}
		got := e.waitState(bad, states.Enroll)
		e.expect(got, states.Enroll, "", "Failed to get power state for node "+bad.UUID+". Error: IPMI call failed: power status.")

		n := e.enrollIPMI(b, b.Password)
		if n.PowerInterface != "ipmitool" || n.ManagementInterface != "ipmitool" || n.ConsoleInterface != "ipmitool-socat" ||
			n.VendorInterface != "ipmitool" || n.BootInterface != "ipxe" {
			t.Fatalf("default interfaces power %q management %q console %q vendor %q boot %q",
				n.PowerInterface, n.ManagementInterface, n.ConsoleInterface, n.VendorInterface, n.BootInterface)
		}
		if err := e.api.DoProvisioningAction(ctx, "", n.UUID, "manage"); err != nil {
			t.Fatal(err)
		}
		got = e.waitState(n, states.Manageable)
		e.expect(got, states.Manageable, "", "")
		if got.PowerState != states.PowerOff {
			t.Fatalf("power state after verification %q", got.PowerState)
		}

		if err := e.api.ChangeNodePowerState(ctx, "", n.UUID, states.PowerOn, 0); err != nil {
			t.Fatal(err)
		}
		if got := e.waitPower(n); got.PowerState != states.PowerOn || deref(got.LastError) != "" || !b.PoweredOn(t) {
			t.Fatalf("power on: node %q last_error %q, simulator on %v", got.PowerState, deref(got.LastError), b.PoweredOn(t))
		}

		if err := e.api.SetBootDevice(ctx, "", n.UUID, "pxe", true); err != nil {
			t.Fatal(err)
		}
		if dev := b.BootDevice(t); dev != "pxe" {
			t.Fatalf("simulator boot device %q", dev)
		}
		bd, err := e.api.GetBootDevice(ctx, "", n.UUID)
		if err != nil || bd.BootDevice != "pxe" {
			t.Fatalf("boot device %+v, %v", bd, err)
		}
		devices, err := e.api.GetSupportedBootDevices(ctx, "", n.UUID)
		if err != nil || strings.Join(devices, ",") != "pxe,disk,cdrom,bios,safe" {
			t.Fatalf("supported boot devices %v, %v", devices, err)
		}

		if err := e.api.ChangeNodePowerState(ctx, "", n.UUID, states.PowerOff, 0); err != nil {
			t.Fatal(err)
		}
		if got := e.waitPower(n); got.PowerState != states.PowerOff || b.PoweredOn(t) {
			t.Fatalf("power off: node %q, simulator on %v", got.PowerState, b.PoweredOn(t))
		}

		b.SetPower(t, true)
		e.c.SyncPowerStates(ctx)
		if got := e.get(n); got.PowerState != states.PowerOff || b.PoweredOn(t) {
			t.Fatalf("drift not forced back: node %q, simulator on %v", got.PowerState, b.PoweredOn(t))
		}

		checks, err := e.api.ValidateDriverInterfaces(ctx, "", n.UUID)
		if err != nil {
			t.Fatal(err)
		}
		for _, iface := range []string{"power", "management", "console"} {
			if r := checks[iface]; r.Result == nil || !*r.Result {
				t.Errorf("validate %s: %+v", iface, r)
			}
		}
		e.console(n, b.Password)
		e.secretFree(logs, wrong, bad, n)
		e.secretFree(logs, b.Password, bad, n)
	})
}

func freeTCPPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// console enables the ipmitool-socat console through the conductor,
// connects to the URL it reports and disables it again; the password is
// not on socat's command line.
func (e *env) console(n *model.Node, password string) {
	e.t.Helper()
	ctx := context.Background()
	waitConsole := func(want bool) {
		e.t.Helper()
		await.UntilReason(e.t, 15*time.Second, fmt.Sprintf("console_enabled %v on an unlocked node", want), func() (bool, string) {
			cur := e.get(n)
			return cur.ConsoleEnabled == want && cur.Reservation == nil,
				fmt.Sprintf("console_enabled %v, want %v (last_error %q)", cur.ConsoleEnabled, want, deref(cur.LastError))
		})
	}
	if err := e.api.SetConsoleMode(ctx, "", n.UUID, true); err != nil {
		e.t.Fatal(err)
	}
	// A failed check must not leave socat running after the test.
	e.t.Cleanup(func() {
		if e.get(n).ConsoleEnabled {
			_ = e.api.SetConsoleMode(context.Background(), "", n.UUID, false)
			waitConsole(false)
		}
	})
	waitConsole(true)
	info, err := e.api.GetConsoleInformation(ctx, "", n.UUID)
	if err != nil {
		e.t.Fatal(err)
	}
	if info["type"] != "socat" {
		e.t.Fatalf("console information %v", info)
	}
	url, _ := info["url"].(string)
	addr, ok := strings.CutPrefix(url, "tcp://")
	if !ok || !strings.HasPrefix(addr, "127.0.0.1:") {
		e.t.Fatalf("console URL %q", url)
	}
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		e.t.Fatalf("console at %s: %v", addr, err)
	}
	_ = conn.Close()
	if out, err := exec.Command("ps", "-eo", "args").Output(); err != nil || strings.Contains(string(out), password) {
		e.t.Fatalf("ps (%v) shows the BMC password", err)
	}
	if err := e.api.SetConsoleMode(ctx, "", n.UUID, false); err != nil {
		e.t.Fatal(err)
	}
	waitConsole(false)
}
