package conductor_test

import (
	"context"
	"log/slog"
	"slices"
	"sort"
	"testing"

	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/driver/fake"
	"github.com/openkeel/ironic/internal/driver/noop"
	"github.com/openkeel/ironic/internal/driver/redfish"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/rpc"
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
	cfg, err := config.Load(config.LoadOptions{Overrides: map[string]map[string]string{
		"conductor": {
			"sync_power_state_interval": "0", "power_failure_recovery_interval": "0",
			"check_provision_state_interval": "0", "sync_local_state_interval": "0",
			"check_allocations_interval": "0", "conductor_cleanup_interval": "0",
			"node_history_cleanup_interval": "0", "graceful_shutdown_timeout": "10",
		},
	}})
	if err != nil {
		t.Fatalf("load config: %v", err)
	}
	clock := &offsetClock{}
	st := store.New(db, store.WithClock(clock.Now))
	r := driver.NewRegistry()
	for _, h := range driver.StockHardwareTypes() {
		if err := r.AddHardwareType(h); err != nil {
			t.Fatal(err)
		}
	}
	if err := fake.Register(r, fake.Delays{}); err != nil {
		t.Fatal(err)
	}
	if err := noop.Register(r); err != nil {
		t.Fatal(err)
	}
	opts := redfish.DefaultOptions()
	opts.Log = slog.New(slog.DiscardHandler)
	if err := redfish.Register(r, opts); err != nil {
		t.Fatal(err)
	}
	if err := r.Register(driver.KindBIOS, "settings", bios); err != nil {
		t.Fatal(err)
	}
	fakeOnly := []string{"fake"}
	d, err := r.Build(driver.Settings{
		EnabledHardwareTypes: []string{"fake-hardware"},
		EnabledInterfaces: map[driver.Kind][]string{
			driver.KindBIOS: {"fake", "redfish", "settings", "no-bios"}, driver.KindBoot: fakeOnly,
			driver.KindConsole: {"no-console"}, driver.KindDeploy: fakeOnly, driver.KindFirmware: fakeOnly,
			driver.KindInspect: {"fake", "redfish"}, driver.KindManagement: fakeOnly, driver.KindNetwork: {"noop"},
			driver.KindPower: {"fake", "redfish"}, driver.KindRAID: fakeOnly, driver.KindRescue: {"no-rescue"},
			driver.KindStorage: {"noop"}, driver.KindVendor: fakeOnly,
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, st: st, db: db, clock: clock, cfg: cfg, drivers: d}
	e.c = e.newConductor(testHost, nil, nil)
	e.api = rpc.NewLocal(e.c, slog.New(slog.DiscardHandler))
	e.start(e.c)
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

func TestOutOfBandInspectPersistsPortsInventoryProperties(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		bmc := redfishbmc.New(t).System("sys-1",
			redfishbmc.Processor(redfishbmc.CPU{Arch: "x86", Cores: 4, Threads: 8, Model: "Xeon"}),
			redfishbmc.MemoryGiB(32),
			redfishbmc.StorageDrive(100<<30),
			redfishbmc.EthernetInterface("1", "52:54:00:AA:BB:01", "Enabled"),
			redfishbmc.EthernetInterface("2", "52:54:00:aa:bb:02", "Disabled"),
			redfishbmc.EthernetInterface("3", "52:54:00:aa:bb:03", "Enabled"),
		).WithBasicAuth(oobUser, oobPassword)
		e := newOOBEnv(t, db, &settingsBIOS{})
		ctx := context.Background()
		n := e.node(states.Manageable, redfishNode(bmc, "no-bios"), func(n *model.Node) {
			n.Properties = map[string]any{"vendor_hint": "kept"}
		})
		mac1, id := "52:54:00:aa:bb:01", n.ID
		existing, err := e.st.CreatePort(ctx, &model.Port{UUID: "9a4b3c1e-52a1-4bde-8f5e-3f9a7c0d1e01", Address: &mac1, NodeID: &id,
			Extra: map[string]any{"note": "operator"}})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.api.InspectHardware(ctx, "", n.UUID); err != nil {
			t.Fatal(err)
		}
		got := e.waitState(n, states.Manageable)
		e.expect(got, states.Manageable, "", "")
		for k, want := range map[string]any{"cpus": float64(8), "cpu_arch": "x86_64", "memory_mb": "32768", "local_gb": "99", "vendor_hint": "kept"} {
			if got.Properties[k] != want {
				t.Errorf("property %s = %#v, want %#v", k, got.Properties[k], want)
			}
		}
		ports, err := e.st.ListPorts(ctx, store.PortFilter{NodeID: &id}, store.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var addrs []string
		for _, p := range ports {
			addrs = append(addrs, *p.Address)
			if *p.Address == mac1 && (p.UUID != existing.UUID || p.Extra["note"] != "operator") {
				t.Errorf("existing port replaced: %+v", p)
			}
			if *p.Address != mac1 && (p.PXEEnabled == nil || !*p.PXEEnabled) {
				t.Errorf("new port %s not pxe_enabled", *p.Address)
			}
		}
		sort.Strings(addrs)
		if !slices.Equal(addrs, []string{mac1, "52:54:00:aa:bb:03"}) {
			t.Fatalf("ports %v", addrs)
		}
		inv, err := e.st.GetNodeInventory(ctx, id)
		if err != nil {
			t.Fatalf("inventory: %v", err)
		}
		cpu, _ := inv.InventoryData["cpu"].(map[string]any)
		if cpu["count"] != float64(8) || cpu["architecture"] != "x86_64" {
			t.Errorf("inventory cpu %v", inv.InventoryData["cpu"])
		}
		if ifaces, _ := inv.InventoryData["interfaces"].([]any); len(ifaces) != 3 {
			t.Errorf("inventory interfaces %v", inv.InventoryData["interfaces"])
		}

		// A second inspection keeps every port and replaces the inventory.
		if err := e.api.InspectHardware(ctx, "", n.UUID); err != nil {
			t.Fatal(err)
		}
		e.waitState(n, states.Manageable)
		again, err := e.st.ListPorts(ctx, store.PortFilter{NodeID: &id}, store.ListOptions{})
		if err != nil || len(again) != 2 {
			t.Fatalf("ports after re-inspection: %d, %v", len(again), err)
		}
	})
}

func TestOutOfBandInspectMissingPropertiesFailsWithoutWrites(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		bmc := redfishbmc.New(t).System("sys-1",
			redfishbmc.Processor(redfishbmc.CPU{Arch: "x86", Cores: 2, Threads: 2}),
			redfishbmc.EthernetInterface("1", "52:54:00:aa:bb:01", "Enabled"),
		).WithBasicAuth(oobUser, oobPassword)
		e := newOOBEnv(t, db, &settingsBIOS{})
		ctx := context.Background()
		n := e.node(states.Manageable, redfishNode(bmc, "no-bios"))
		if err := e.api.InspectHardware(ctx, "", n.UUID); err != nil {
			t.Fatal(err)
		}
		got := e.waitState(n, states.InspectFail)
		msg := "Failed to inspect hardware. Reason: Failed to discover the following properties: memory_mb on node " + n.UUID
		e.expect(got, states.InspectFail, states.Manageable, msg)
		id := n.ID
		if ports, _ := e.st.ListPorts(ctx, store.PortFilter{NodeID: &id}, store.ListOptions{}); len(ports) != 0 {
			t.Errorf("ports created by a failed inspection: %d", len(ports))
		}
		if _, err := e.st.GetNodeInventory(ctx, id); err == nil {
			t.Error("inventory stored by a failed inspection")
		}
	})
}
