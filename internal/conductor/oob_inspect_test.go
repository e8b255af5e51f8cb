package conductor_test

import (
	"context"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/conductor"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/driver/redfish"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store"
	"github.com/openkeel/ironic/internal/store/sqldb"
	"github.com/openkeel/ironic/testing/redfishbmc"
)

const (
	oobUser     = "admin"
	oobPassword = "S3cr3t-Passw0rd"
)

// newOOBEnv is newEnv with the real redfish interfaces (against an
// emulated BMC) and bios, a BIOS interface of the test's, enabled beside
// the fake ones; fake-hardware accepts any enabled interface.
func newOOBEnv(t *testing.T, db *sqldb.DB, bios driver.Interface) *env {
	t.Helper()
	return newOOBEnvWith(t, db, bios, nil)
}

// newOOBEnvWith is newOOBEnv with these [redfish] options.
func newOOBEnvWith(t *testing.T, db *sqldb.DB, bios driver.Interface, redfishConf map[string]string) *env {
	t.Helper()
	e := newStoreEnv(t, db, testConfig(t, map[string]map[string]string{"redfish": redfishConf}))
	r := stockRegistry(t)
	opts := redfish.DefaultOptions()
	opts.Log = slog.New(slog.DiscardHandler)
	if err := redfish.Register(r, opts); err != nil {
		t.Fatal(err)
	}
	mustRegister(t, r, driver.KindBIOS, "settings", bios)
	e.drivers = buildFakeHardware(t, r, map[driver.Kind][]string{
		driver.KindBIOS: {"fake", "redfish", "settings", "no-bios"}, driver.KindInspect: {"fake", "redfish"},
		driver.KindPower: {"fake", "redfish"},
	})
	e.run(conductor.Options{})
	return e
}

// redfishNode points a node's redfish interfaces at bmc.
func redfishNode(bmc *redfishbmc.BMC, bios string) func(*model.Node) {
	return func(n *model.Node) {
		n.DriverInfo = map[string]any{
			"redfish_address": bmc.URL(), "redfish_system_id": redfishbmc.SystemPath("sys-1"),
			"redfish_username": oobUser, "redfish_password": oobPassword,
		}
		n.PowerInterface, n.InspectInterface, n.BIOSInterface = "redfish", "redfish", bios
	}
}

func oobSystem() []redfishbmc.SystemOption {
	return []redfishbmc.SystemOption{
		redfishbmc.Processor(redfishbmc.CPU{Arch: "x86", Cores: 4, Threads: 8, Model: "Xeon"}),
		redfishbmc.MemoryGiB(32),
		redfishbmc.StorageDrive(100 << 30),
		redfishbmc.EthernetInterface("1", "52:54:00:AA:BB:01", "Enabled"),
		redfishbmc.EthernetInterface("2", "52:54:00:aa:bb:02", "Disabled"),
		redfishbmc.EthernetInterface("3", "bogus", "Enabled"),
	}
}

func nodePorts(t *testing.T, e *env, n *model.Node) map[string]*model.Port {
	t.Helper()
	id := n.ID
	ports, err := e.st.ListPorts(context.Background(), store.PortFilter{NodeID: &id}, store.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*model.Port{}
	for _, p := range ports {
		out[*p.Address] = p
	}
	return out
}

// The default [redfish]/inspection_hooks (validate-interfaces, ports,
// architecture) make the ports, from every interface with a valid MAC,
// and cpu_arch; the properties are integers and cpus is not one of them.
func TestOutOfBandInspectRunsDefaultHooks(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		bmc := redfishbmc.New(t).System("sys-1", oobSystem()...).WithBasicAuth(oobUser, oobPassword).
			WithNetworkAdapter(redfishbmc.NetworkAdapter{ID: "NIC.1", Ports: []redfishbmc.AdapterPort{
				{ID: "1", LLDP: &redfishbmc.LLDPReceive{ChassisID: "c0:ff:ee:00:00:01", PortID: "Ethernet1/7"}}}})
		e := newOOBEnv(t, db, &settingsBIOS{})
		ctx := context.Background()
		n := e.node(states.Manageable, redfishNode(bmc, "no-bios"), func(n *model.Node) {
			n.Properties = map[string]any{"vendor_hint": "kept"}
		})
		mac1, id, pxe := "52:54:00:aa:bb:01", n.ID, true
		existing, err := e.st.CreatePort(ctx, &model.Port{UUID: "9a4b3c1e-52a1-4bde-8f5e-3f9a7c0d1e01", Address: &mac1, NodeID: &id,
			PXEEnabled: &pxe, Extra: map[string]any{"note": "operator"}})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.api.InspectHardware(ctx, "", n.UUID); err != nil {
			t.Fatal(err)
		}
		got := e.waitState(n, states.Manageable)
		e.expect(got, states.Manageable, "", "")
		wantProps := map[string]any{"cpu_arch": "x86_64", "memory_mb": float64(32768), "local_gb": float64(99),
			"vendor_hint": "kept", "capabilities": "boot_mode:uefi"}
		if !reflect.DeepEqual(got.Properties, wantProps) {
			t.Errorf("properties\n got  %#v\n want %#v", got.Properties, wantProps)
		}
		ports := nodePorts(t, e, got)
		if len(ports) != 2 || ports[mac1] == nil || ports["52:54:00:aa:bb:02"] == nil {
			t.Fatalf("ports %v", ports)
		}
		if p := ports[mac1]; p.UUID != existing.UUID || p.Extra["note"] != "operator" {
			t.Errorf("existing port replaced: %+v", p)
		}
		// No PXE MAC is known out of band, so update_pxe_enabled clears it.
		for mac, p := range ports {
			if p.PXEEnabled == nil || *p.PXEEnabled {
				t.Errorf("port %s pxe_enabled %v", mac, p.PXEEnabled)
			}
		}
		inv, err := e.st.GetNodeInventory(ctx, id)
		if err != nil {
			t.Fatalf("inventory: %v", err)
		}
		cpu, _ := inv.InventoryData["cpu"].(map[string]any)
		if cpu["count"] != float64(8) || cpu["architecture"] != "x86_64" || cpu["model_name"] != "Xeon" {
			t.Errorf("inventory cpu %v", inv.InventoryData["cpu"])
		}
		if ifaces, _ := inv.InventoryData["interfaces"].([]any); len(ifaces) != 2 {
			t.Errorf("inventory interfaces %v", inv.InventoryData["interfaces"])
		}
		wantLLDP := map[string]any{"1": map[string]any{"switch_chassis_id": "c0:ff:ee:00:00:01", "switch_port_id": "Ethernet1/7"}}
		if !reflect.DeepEqual(inv.PluginData["parsed_lldp"], wantLLDP) {
			t.Errorf("plugin data parsed_lldp %#v", inv.PluginData["parsed_lldp"])
		}
		if macs, _ := inv.PluginData["macs"].([]any); len(macs) != 2 {
			t.Errorf("plugin data of the validate-interfaces hook: %v", inv.PluginData)
		}

		// A second inspection keeps every port and replaces the inventory.
		if err := e.api.InspectHardware(ctx, "", n.UUID); err != nil {
			t.Fatal(err)
		}
		e.waitState(n, states.Manageable)
		if again := nodePorts(t, e, got); len(again) != 2 || again[mac1].UUID != existing.UUID {
			t.Fatalf("ports after re-inspection: %v", again)
		}
	})
}

// [redfish]/inspection_hooks decides what runs: without architecture
// nothing sets cpu_arch and the essential properties check fails, after
// the hooks and the storing ran, as upstream's; without ports no port is
// made.
func TestOutOfBandInspectHonoursInspectionHooks(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		bmc := redfishbmc.New(t).System("sys-1", oobSystem()...).WithBasicAuth(oobUser, oobPassword)
		ctx := context.Background()

		e := newOOBEnvWith(t, db, &settingsBIOS{}, map[string]string{"inspection_hooks": "validate-interfaces,ports"})
		n := e.node(states.Manageable, redfishNode(bmc, "no-bios"))
		if err := e.api.InspectHardware(ctx, "", n.UUID); err != nil {
			t.Fatal(err)
		}
		got := e.waitState(n, states.InspectFail)
		e.expect(got, states.InspectFail, states.Manageable,
			"Failed to inspect hardware. Reason: Failed to discover the following properties: cpu_arch on node "+n.UUID)
		if ports := nodePorts(t, e, got); len(ports) != 2 {
			t.Errorf("ports made by the hooks before the check: %v", ports)
		}
		if _, err := e.st.GetNodeInventory(ctx, n.ID); err != nil {
			t.Errorf("inventory stored before the check: %v", err)
		}
		if _, has := got.Properties["cpu_arch"]; has {
			t.Errorf("cpu_arch without the architecture hook: %v", got.Properties)
		}

		e2 := newOOBEnvWith(t, db, &settingsBIOS{}, map[string]string{"inspection_hooks": "validate-interfaces,architecture"})
		n2 := e2.node(states.Manageable, redfishNode(bmc, "no-bios"))
		if err := e2.api.InspectHardware(ctx, "", n2.UUID); err != nil {
			t.Fatal(err)
		}
		got = e2.waitState(n2, states.Manageable)
		e2.expect(got, states.Manageable, "", "")
		if got.Properties["cpu_arch"] != "x86_64" {
			t.Errorf("cpu_arch %v", got.Properties["cpu_arch"])
		}
		if ports := nodePorts(t, e2, got); len(ports) != 0 {
			t.Errorf("ports without the ports hook: %v", ports)
		}
	})
}

// Hooks [redfish]/inspection_hooks cannot load fail the interface as
// upstream's fail loading it, before the BMC is asked anything.
func TestOutOfBandInspectInvalidHooks(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newOOBEnv(t, db, &settingsBIOS{})
		for _, tc := range []struct{ hooks, msg string }{
			{"validate-interfaces,ports,no-such-hook,architecture", "Driver, hardware type or interface redfish could not be loaded. " +
				"Reason: The following hook(s) are missing or failed to load: no-such-hook."},
			{"ports,validate-interfaces", "Driver, hardware type or interface redfish could not be loaded. Reason: Failed to " +
				"inspect hardware. Reason: Some hooks failed to load due to dependency problems: Hook ports requires these " +
				"missing hooks to be enabled before it: validate-interfaces."},
		} {
			cfg, err := config.Load(config.LoadOptions{Overrides: map[string]map[string]string{"redfish": {"inspection_hooks": tc.hooks}}})
			if err != nil {
				t.Fatal(err)
			}
			_, err = conductor.New(conductor.Options{Store: e.st, Drivers: e.drivers, Config: cfg, Host: "bad-hooks",
				Logger: slog.New(slog.DiscardHandler)})
			if class(err) != "DriverLoadError" || err.Error() != tc.msg {
				t.Errorf("%s: conductor start-up: %v", tc.hooks, err)
			}
		}
	})
}

// A system reporting no memory fails the essential properties check with
// upstream's message once hooks, storing and rules ran; a main-phase rule
// sees what inspection found.
func TestOutOfBandInspectMissingMemoryAndRules(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		bmc := redfishbmc.New(t).System("sys-1",
			redfishbmc.Processor(redfishbmc.CPU{Arch: "ARM", Cores: 2, Threads: 2}),
			redfishbmc.EthernetInterface("1", "52:54:00:aa:bb:01", "Enabled"),
		).WithBasicAuth(oobUser, oobPassword)
		e := newOOBEnv(t, db, &settingsBIOS{})
		ctx := context.Background()
		if _, err := e.st.CreateInspectionRule(ctx, &model.InspectionRule{UUID: "7a0c8e9f-0000-4000-8000-0000000000a1",
			Conditions: []map[string]any{{"op": "eq", "args": map[string]any{"values": []any{"{inventory[cpu][architecture]}", "aarch64"}}}},
			Actions:    []map[string]any{{"op": "set-attribute", "args": map[string]any{"path": "resource_class", "value": "arm"}}}}); err != nil {
			t.Fatal(err)
		}
		n := e.node(states.Manageable, redfishNode(bmc, "no-bios"))
		if err := e.api.InspectHardware(ctx, "", n.UUID); err != nil {
			t.Fatal(err)
		}
		got := e.waitState(n, states.InspectFail)
		e.expect(got, states.InspectFail, states.Manageable,
			"Failed to inspect hardware. Reason: Failed to discover the following properties: memory_mb on node "+n.UUID)
		if ports := nodePorts(t, e, got); len(ports) != 1 {
			t.Errorf("ports %v", ports)
		}
		inv, err := e.st.GetNodeInventory(ctx, n.ID)
		if err != nil {
			t.Fatalf("inventory: %v", err)
		}
		if _, has := inv.InventoryData["memory"]; has {
			t.Errorf("memory in the inventory of a system reporting none: %v", inv.InventoryData)
		}

		// With the memory reported, the rule applies and the node is saved.
		bmc2 := redfishbmc.New(t).System("sys-1",
			redfishbmc.Processor(redfishbmc.CPU{Arch: "ARM", Cores: 2, Threads: 2}), redfishbmc.MemoryGiB(4),
			redfishbmc.EthernetInterface("1", "52:54:00:aa:bb:11", "Enabled"),
		).WithBasicAuth(oobUser, oobPassword)
		n2 := e.node(states.Manageable, redfishNode(bmc2, "no-bios"))
		if err := e.api.InspectHardware(ctx, "", n2.UUID); err != nil {
			t.Fatal(err)
		}
		got = e.waitState(n2, states.Manageable)
		if deref(got.ResourceClass) != "arm" || got.Properties["cpu_arch"] != "aarch64" || got.Properties["memory_mb"] != float64(4096) {
			t.Errorf("resource class %q properties %v", deref(got.ResourceClass), got.Properties)
		}
	})
}

// Without NICs the validate-interfaces hook fails the inspection.
func TestOutOfBandInspectNoInterfaces(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		bmc := redfishbmc.New(t).System("sys-1",
			redfishbmc.Processor(redfishbmc.CPU{Arch: "x86", Cores: 2, Threads: 2}), redfishbmc.MemoryGiB(4),
		).WithBasicAuth(oobUser, oobPassword)
		e := newOOBEnv(t, db, &settingsBIOS{})
		n := e.node(states.Manageable, redfishNode(bmc, "no-bios"))
		if err := e.api.InspectHardware(context.Background(), "", n.UUID); err != nil {
			t.Fatal(err)
		}
		got := e.waitState(n, states.InspectFail)
		want := "Failed to inspect hardware. Reason: The following failures happened while running preprocess hooks for node " +
			n.UUID + ":\n"
		if msg := deref(got.LastError); !strings.HasPrefix(msg, want) || !strings.Contains(msg, "validate-interfaces") ||
			!strings.Contains(msg, "no valid network interfaces") {
			t.Fatalf("last_error %q", msg)
		}
		if len(got.Properties) != 0 {
			t.Errorf("properties saved by an inspection whose hooks failed: %v", got.Properties)
		}
	})
}
