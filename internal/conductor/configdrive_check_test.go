package conductor_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/driver/network"
	"github.com/openkeel/ironic/internal/image"
	"github.com/openkeel/ironic/internal/image/configdrive"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/neutron"
	"github.com/openkeel/ironic/internal/rpc"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store/sqldb"
	fakeneutron "github.com/openkeel/ironic/testing/neutron"
)

const tenantNet = "8a6c1b5e-3f0d-4c2a-9b7e-5d4f3e2a1c0b"

// newNeutronEnv is newEnv with the neutron network interface enabled,
// reaching a Neutron fixture whose tenant network has a 9000-byte MTU and
// a port vif-a on subnet sub-1 at 192.0.2.10.
func newNeutronEnv(t *testing.T, db *sqldb.DB, opts ...envOption) (*env, *fakeneutron.Fixture) {
	t.Helper()
	o := envOpts{overrides: map[string]map[string]string{"agent": {"require_tls": "false"}}}
	for _, f := range opts {
		f(&o)
	}
	fn := fakeneutron.New(t).Network(tenantNet, "tenant").NetworkAttrs(tenantNet, map[string]any{"mtu": 9000})
	fn.Subnet("sub-1", tenantNet, "192.0.2.0/24", map[string]any{"gateway_ip": "192.0.2.1"})
	fn.Port(map[string]any{"id": "vif-a", "network_id": tenantNet, "mac_address": "fa:16:3e:00:00:0a",
		"fixed_ips": []any{map[string]any{"subnet_id": "sub-1", "ip_address": "192.0.2.10"}}})
	e := newStoreEnv(t, db, testConfig(t, o.overrides))
	e.steps, e.power = &scripted{}, &flakyPower{state: states.PowerOff}
	r := stockRegistry(t)
	mustRegister(t, r, driver.KindVendor, "scripted", e.steps)
	mustRegister(t, r, driver.KindNetwork, "neutron", &network.Neutron{Flat: network.Flat{Ports: e.st, Neutron: &network.NeutronOptions{
		Client:   &neutron.Client{Auth: func(context.Context) (string, string, error) { return "svc", fn.URL(), nil }},
		Networks: network.NeutronNetworks{Provisioning: tenantNet, Cleaning: tenantNet},
	}}})
	e.drivers = buildFakeHardware(t, r, map[driver.Kind][]string{
		driver.KindNetwork: {"noop", "neutron"}, driver.KindVendor: {"fake", "scripted"},
	})
	e.c = e.newConductor(testHost, nil, nil)
	e.api = rpc.NewLocal(e.c, slog.New(slog.DiscardHandler))
	e.start(e.c)
	return e, fn
}

// neutronNode is an available node on the neutron network interface
// whose port (of MAC address mac) has vif-a attached as its tenant VIF.
func (e *env) neutronNode(mac string) *model.Node {
	e.t.Helper()
	n := e.node(states.Available, scriptedNode, func(n *model.Node) { n.NetworkInterface = "neutron" })
	if _, err := e.st.CreatePort(context.Background(), &model.Port{NodeID: &n.ID, Address: &mac,
		InternalInfo: map[string]any{network.TenantVIFKey: "vif-a"}}); err != nil {
		e.t.Fatal(err)
	}
	return n
}

// linkMTUs are the MTUs of a network_data document's links.
func linkMTUs(nd any) []any {
	m, _ := nd.(map[string]any)
	links, _ := m["links"].([]any)
	var out []any
	for _, l := range links {
		out = append(out, l.(map[string]any)["mtu"])
	}
	return out
}

// storedNetworkData is the latest network_data.json of the ISO config
// drive instance_info holds.
func storedNetworkData(t *testing.T, n *model.Node) any {
	t.Helper()
	s, _ := n.InstanceInfo["configdrive"].(string)
	iso, err := configdrive.Decode(s, 64<<20)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "cd.iso")
	if err := os.WriteFile(p, iso, 0o644); err != nil {
		t.Fatal(err)
	}
	data, err := image.ReadISOFile(context.Background(), p, "/openstack/latest/network_data.json")
	if err != nil {
		t.Fatal(err)
	}
	var nd any
	if err := json.Unmarshal(data, &nd); err != nil {
		t.Fatal(err)
	}
	return nd
}

// A deployment on the neutron network interface whose config drive has a
// link without an MTU gets the network metadata regenerated from the
// node's VIF (the tenant network's 9000-byte MTU), in the dict form and
// in the ISO form; [conductor]/disable_configdrive_check and
// disable_metadata_mtu_check each leave the drive as sent; Neutron
// failing fails the deployment as upstream's unexpected configdrive error.
func TestDeployFixesConfigdriveNetworkMetadata(t *testing.T) {
	noMTU := func() map[string]any {
		return map[string]any{"links": []any{map[string]any{"id": "eth0", "type": "phy", "ethernet_mac_address": "52:54:00:aa:bb:01"}}}
	}
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		for i, tc := range []struct {
			name  string
			opts  []envOption
			fixed bool
		}{
			{name: "checked", fixed: true},
			{name: "check disabled", opts: []envOption{withConf("conductor", "disable_configdrive_check", "true")}},
			{name: "MTU check disabled", opts: []envOption{withConf("conductor", "disable_metadata_mtu_check", "true")}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				e, _ := newNeutronEnv(t, db, tc.opts...)
				mac := fmt.Sprintf("52:54:00:aa:bb:%02x", i)
				n := e.neutronNode(mac)
				cd := map[string]any{"meta_data": map[string]any{"hostname": "h1"}, "network_data": noMTU()}
				if err := e.api.DoNodeDeploy(ctx, "", n.UUID, false, cd, nil); err != nil {
					t.Fatal(err)
				}
				got := e.waitState(n, states.Active)
				stored, _ := got.InstanceInfo["configdrive"].(map[string]any)
				mtus := linkMTUs(stored["network_data"])
				if fixed := len(mtus) == 1 && mtus[0] == 9000.0; fixed != tc.fixed {
					t.Fatalf("dict network_data %v: fixed %v, want %v", stored["network_data"], fixed, tc.fixed)
				}
				if tc.fixed {
					nd := stored["network_data"].(map[string]any)
					link := nd["links"].([]any)[0].(map[string]any)
					if link["id"] != "iface0" || link["vif_id"] != "vif-a" || link["ethernet_mac_address"] != mac {
						t.Fatalf("regenerated link %v", link)
					}
					if nets := nd["networks"].([]any); len(nets) != 1 || nets[0].(map[string]any)["ip_address"] != "192.0.2.10" {
						t.Fatalf("regenerated networks %v", nets)
					}
				}

				iso, err := configdrive.Build(ctx, n.UUID, "", map[string]any{"network_data": noMTU()})
				if err != nil {
					t.Fatal(err)
				}
				if err := e.api.DoNodeDeploy(ctx, "", n.UUID, true, iso, nil); err != nil {
					t.Fatal(err)
				}
				got = e.waitState(n, states.Active)
				if same := got.InstanceInfo["configdrive"] == iso; same == tc.fixed {
					t.Fatalf("ISO config drive unchanged %v, want fixed %v", same, tc.fixed)
				}
				mtus = linkMTUs(storedNetworkData(t, got))
				if fixed := len(mtus) == 1 && mtus[0] == 9000.0; fixed != tc.fixed {
					t.Fatalf("ISO network_data link MTUs %v: fixed %v, want %v", mtus, fixed, tc.fixed)
				}
			})
		}

		t.Run("neutron failing", func(t *testing.T) {
			e, fn := newNeutronEnv(t, db)
			n := e.neutronNode("52:54:00:aa:bb:ff")
			fn.Fail(http.MethodGet, "/v2.0/ports/vif-a", http.StatusServiceUnavailable, -1)
			if err := e.api.DoNodeDeploy(ctx, "", n.UUID, false, map[string]any{"network_data": noMTU()}, nil); err != nil {
				t.Fatal(err)
			}
			got := e.waitState(n, states.DeployFail)
			if !strings.HasPrefix(deref(got.LastError), "Failed to prepare the configdrive. Exception: Unable to get port info for vif-a.") {
				t.Fatalf("last_error %q", deref(got.LastError))
			}
		})
	})
}
