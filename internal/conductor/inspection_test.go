package conductor_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/conductor"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/driver/agent"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store"
	"github.com/openkeel/ironic/internal/store/sqldb"
	"github.com/openkeel/ironic/testing/await"
)

// newInspectEnv is a conductor whose fake-hardware nodes may use the
// agent inspect interface, with the hooks named.
func newInspectEnv(t *testing.T, db *sqldb.DB, extra map[string]map[string]string) *env {
	t.Helper()
	e := newStoreEnv(t, db, testConfig(t, map[string]map[string]string{
		"agent":     {"require_tls": "false"},
		"inspector": {"hooks": "$default_hooks,memory,cpus,root-device"},
	}, extra))
	r := stockRegistry(t)
	if err := agent.RegisterInspect(r, agent.InspectOptions{
		CallbackURL: agent.InspectCallbackURL("", "http://127.0.0.1:6385"),
		PowerOff:    e.cfg.Bool("inspector", "power_off"),
	}); err != nil {
		t.Fatal(err)
	}
	e.drivers = buildFakeHardware(t, r, map[driver.Kind][]string{driver.KindInspect: {"agent", "fake"}})
	e.run(conductor.Options{})
	return e
}

// ramdiskInventory is what IPA posts: two NICs (eth0 booted), loopback,
// 8 CPUs, 16 GiB and a 500 GB root disk.
const ramdiskInventory = `{
 "inventory": {
  "interfaces": [
   {"name": "eth0", "mac_address": "52:54:00:12:34:01", "ipv4_address": "192.0.2.10", "ipv6_address": null, "has_carrier": true, "lldp": null, "vendor": "0x1af4", "product": "0x0001", "client_id": null},
   {"name": "eth1", "mac_address": "52:54:00:12:34:02", "ipv4_address": null, "ipv6_address": null, "has_carrier": false, "lldp": null},
   {"name": "lo", "mac_address": "00:00:00:00:00:00", "ipv4_address": "127.0.0.1"}
  ],
  "cpu": {"model_name": "Intel Xeon", "frequency": "2400", "count": 8, "architecture": "x86_64", "flags": ["vmx"]},
  "memory": {"total": 17179869184, "physical_mb": 16384},
  "disks": [{"name": "/dev/sda", "model": "QEMU HARDDISK", "size": 500107862016, "rotational": true, "serial": "S1", "vendor": "ATA"}],
  "bmc_address": "192.0.2.200",
  "system_vendor": {"product_name": "KVM", "serial_number": "SN1", "manufacturer": "QEMU"},
  "boot": {"current_boot_mode": "uefi", "pxe_interface": "52:54:00:12:34:01"},
  "hostname": "node-0"
 },
 "plugin_data": {"root_disk": {"name": "/dev/sda", "size": 500107862016}, "logs": "H4sIAAAA"}
}`

func ramdiskData(t *testing.T) (map[string]any, map[string]any) {
	t.Helper()
	var d struct {
		Inventory  map[string]any `json:"inventory"`
		PluginData map[string]any `json:"plugin_data"`
	}
	if err := json.Unmarshal([]byte(ramdiskInventory), &d); err != nil {
		t.Fatal(err)
	}
	return d.Inventory, d.PluginData
}

func (e *env) inspectUntilWait(n *model.Node) *model.Node {
	e.t.Helper()
	if err := e.api.InspectHardware(context.Background(), "", n.UUID); err != nil {
		e.t.Fatalf("inspect: %v", err)
	}
	got := e.waitState(n, states.InspectWait)
	if got.PowerState != states.PowerOn || got.DriverInternalInfo["inspector_manage_boot"] != true {
		e.t.Fatalf("waiting node: power %q, driver_internal_info %v", got.PowerState, got.DriverInternalInfo)
	}
	return got
}

func TestAgentInspection(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newInspectEnv(t, db, nil)
		ctx := context.Background()
		for _, r := range []*model.InspectionRule{
			{UUID: "7a0c8e9f-0000-4000-8000-000000000001", Priority: 10,
				Conditions: []map[string]any{{"op": "gt", "args": map[string]any{"values": []any{"{inventory[cpu][count]}", "4"}}}},
				Actions: []map[string]any{
					{"op": "set-attribute", "args": map[string]any{"path": "resource_class", "value": "large"}},
					{"op": "add-trait", "args": map[string]any{"name": "CUSTOM_MANY_CPUS"}},
				}},
			{UUID: "7a0c8e9f-0000-4000-8000-000000000002",
				Conditions: []map[string]any{{"op": "eq", "args": map[string]any{"values": []any{"{inventory[cpu][architecture]}", "aarch64"}}}},
				Actions:    []map[string]any{{"op": "set-attribute", "args": map[string]any{"path": "resource_class", "value": "arm"}}}},
		} {
			if _, err := e.st.CreateInspectionRule(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		n := e.node(states.Manageable, func(n *model.Node) { n.InspectInterface = "agent" })
		e.inspectUntilWait(n)

		inv, pd := ramdiskData(t)
		if err := e.api.ContinueInspection(ctx, "", n.UUID, inv, pd); err != nil {
			t.Fatalf("continue_inspection: %v", err)
		}
		got := e.waitState(n, states.Manageable)
		e.expect(got, states.Manageable, "", "")
		props, _ := json.Marshal(got.Properties)
		if string(props) != `{"cpu_arch":"x86_64","cpus":8,"local_gb":464,"memory_mb":16384}` {
			t.Errorf("properties = %s", props)
		}
		if deref(got.ResourceClass) != "large" {
			t.Errorf("resource_class = %q", deref(got.ResourceClass))
		}
		if got.PowerState != states.PowerOff || got.DriverInternalInfo["inspector_manage_boot"] != nil || got.DriverInternalInfo["agent_last_heartbeat"] == nil {
			t.Errorf("after inspection: power %q, driver_internal_info %v", got.PowerState, got.DriverInternalInfo)
		}
		traits, err := e.st.GetNodeTraits(ctx, got.ID)
		if err != nil || len(traits) != 1 || traits[0].Trait != "CUSTOM_MANY_CPUS" {
			t.Errorf("traits = %+v, %v", traits, err)
		}
		id := got.ID
		ports, err := e.st.ListPorts(ctx, store.PortFilter{NodeID: &id}, store.ListOptions{})
		if err != nil || len(ports) != 1 || deref(ports[0].Address) != "52:54:00:12:34:01" || ports[0].PXEEnabled == nil || !*ports[0].PXEEnabled {
			t.Fatalf("ports = %+v, %v", ports, err)
		}
		stored, err := e.st.GetNodeInventory(ctx, got.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(stored.InventoryData, inv) {
			t.Errorf("stored inventory = %v", stored.InventoryData)
		}
		keys := make([]string, 0, len(stored.PluginData))
		for k := range stored.PluginData {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if strings.Join(keys, ",") != "all_interfaces,local_gb,macs,root_disk,valid_interfaces" {
			t.Errorf("plugin data keys = %v", keys)
		}

		// Inspecting again keeps the port (MAC already known) and replaces
		// the stored inventory.
		e.inspectUntilWait(n)
		inv, pd = ramdiskData(t)
		inv["cpu"].(map[string]any)["count"] = 2.0
		if err := e.api.ContinueInspection(ctx, "", n.UUID, inv, pd); err != nil {
			t.Fatal(err)
		}
		got = e.waitState(n, states.Manageable)
		if got.Properties["cpus"] != 2.0 || deref(got.ResourceClass) != "large" {
			t.Errorf("second pass: cpus %v resource_class %q", got.Properties["cpus"], deref(got.ResourceClass))
		}
		if ports, _ := e.st.ListPorts(ctx, store.PortFilter{NodeID: &id}, store.ListOptions{}); len(ports) != 1 {
			t.Errorf("ports after second pass = %d", len(ports))
		}
		if stored, _ := e.st.GetNodeInventory(ctx, got.ID); stored == nil || stored.InventoryData["cpu"].(map[string]any)["count"] != 2.0 {
			t.Errorf("inventory not replaced: %+v", stored)
		}
	})
}

// TestAgentInspectionRaidDevice: the raid-device hook compares with the
// inventory stored by the previous inspection, so the disk a RAID build
// added becomes the root device hint that root-device then follows.
func TestAgentInspectionRaidDevice(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newInspectEnv(t, db, map[string]map[string]string{"inspector": {"hooks": "$default_hooks,raid-device,root-device"}})
		ctx := context.Background()
		n := e.node(states.Manageable, func(n *model.Node) { n.InspectInterface = "agent" })
		e.inspectUntilWait(n)
		inv, pd := ramdiskData(t)
		if err := e.api.ContinueInspection(ctx, "", n.UUID, inv, pd); err != nil {
			t.Fatal(err)
		}
		got := e.waitState(n, states.Manageable)
		if got.Properties["root_device"] != nil || got.Properties["local_gb"] != 464.0 {
			t.Fatalf("first pass properties = %v", got.Properties)
		}

		e.inspectUntilWait(n)
		inv, pd = ramdiskData(t)
		inv["disks"] = append(inv["disks"].([]any), map[string]any{"name": "/dev/md0", "size": 1099511627776.0, "serial": "RAID-1", "rotational": false})
		if err := e.api.ContinueInspection(ctx, "", n.UUID, inv, pd); err != nil {
			t.Fatal(err)
		}
		got = e.waitState(n, states.Manageable)
		hint, _ := json.Marshal(got.Properties["root_device"])
		if string(hint) != `{"serial":"RAID-1"}` || got.Properties["local_gb"] != 1023.0 {
			t.Errorf("second pass properties = %v", got.Properties)
		}
	})
}

func TestContinueInspectionRefusedStates(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newInspectEnv(t, db, nil)
		inv, pd := ramdiskData(t)
		for _, st := range []string{states.Manageable, states.Enroll, states.Inspecting, states.Active} {
			n := e.node(st, func(n *model.Node) { n.InspectInterface = "agent" })
			err := e.api.ContinueInspection(context.Background(), "", n.UUID, inv, pd)
			if class(err) != "NotFound" || err.Error() != "Resource could not be found." {
				t.Errorf("%s: err = %v", st, err)
			}
			if got := e.get(n); got.ProvisionState != st || got.Reservation != nil {
				t.Errorf("%s: node moved to %q", st, got.ProvisionState)
			}
		}
	})
}

func TestAgentInspectionFailures(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newInspectEnv(t, db, nil)
		ctx := context.Background()

		n := e.node(states.Manageable, func(n *model.Node) { n.InspectInterface = "agent" })
		e.inspectUntilWait(n)
		inv, pd := ramdiskData(t)
		pd["error"] = "disk on fire"
		if err := e.api.ContinueInspection(ctx, "", n.UUID, inv, pd); err != nil {
			t.Fatal(err)
		}
		got := e.waitState(n, states.InspectFail)
		want := "Failed to finish inspection: Failed to inspect hardware. Reason: failed to run inspection hooks: " +
			"Failed to inspect hardware. Reason: The following failures happened while running preprocess hooks for node " + n.UUID +
			":\nError in preprocess hook ramdisk-error: Failed to inspect hardware. Reason: Ramdisk reported error: disk on fire"
		e.expect(got, states.InspectFail, states.Manageable, want)
		if got.PowerState != states.PowerOff {
			t.Errorf("power after failure = %q", got.PowerState)
		}
		if _, err := e.st.GetNodeInventory(ctx, got.ID); err == nil {
			t.Errorf("inventory stored for a failed inspection")
		}

		if _, err := e.st.CreateInspectionRule(ctx, &model.InspectionRule{UUID: "7a0c8e9f-0000-4000-8000-000000000009",
			Actions: []map[string]any{{"op": "fail", "args": map[string]any{"msg": "unwanted vendor"}}}}); err != nil {
			t.Fatal(err)
		}
		n2 := e.node(states.Manageable, func(n *model.Node) { n.InspectInterface = "agent" })
		e.inspectUntilWait(n2)
		inv, pd = ramdiskData(t)
		if err := e.api.ContinueInspection(ctx, "", n2.UUID, inv, pd); err != nil {
			t.Fatal(err)
		}
		got = e.waitState(n2, states.InspectFail)
		e.expect(got, states.InspectFail, states.Manageable, "Failed to finish inspection: Failed to inspect hardware. Reason: unwanted vendor")
	})
}

func TestAbortAgentInspection(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newInspectEnv(t, db, nil)
		n := e.node(states.Manageable, func(n *model.Node) { n.InspectInterface = "agent" })
		e.inspectUntilWait(n)
		if err := e.api.DoProvisioningAction(context.Background(), "", n.UUID, "abort"); err != nil {
			t.Fatal(err)
		}
		got := e.waitState(n, states.InspectFail)
		if got.PowerState != states.PowerOff || got.DriverInternalInfo["inspector_manage_boot"] != nil {
			t.Errorf("after abort: power %q dii %v", got.PowerState, got.DriverInternalInfo)
		}
	})
}

// TestAutoDiscoveryInspection: with [auto_discovery]/enabled, the data of
// a node the lookup just enrolled is processed like an inspection's (hooks,
// rules, ports, stored inventory) and the node stays in enroll, as
// upstream's auto-discovery leaves it.
func TestAutoDiscoveryInspection(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newInspectEnv(t, db, map[string]map[string]string{"auto_discovery": {"enabled": "true"}})
		ctx := context.Background()
		n := e.node(states.Enroll, func(n *model.Node) { n.InspectInterface = "agent" })
		inv, pd := ramdiskData(t)
		if err := e.api.ContinueInspection(ctx, "", n.UUID, inv, pd); err != nil {
			t.Fatalf("continue_inspection: %v", err)
		}
		var got *model.Node
		await.UntilReason(t, 10*time.Second, "the discovered properties", func() (bool, string) {
			got = e.waitUnlocked(n)
			props, _ := json.Marshal(got.Properties)
			return got.Properties["memory_mb"] != nil, fmt.Sprintf("properties = %s", props)
		})
		e.expect(got, states.Enroll, "", "")
		if props, _ := json.Marshal(got.Properties); string(props) != `{"cpu_arch":"x86_64","cpus":8,"local_gb":464,"memory_mb":16384}` {
			t.Errorf("properties = %s", props)
		}
		id := got.ID
		if ports, err := e.st.ListPorts(ctx, store.PortFilter{NodeID: &id}, store.ListOptions{}); err != nil || len(ports) != 1 || deref(ports[0].Address) != "52:54:00:12:34:01" {
			t.Errorf("ports = %+v, %v", ports, err)
		}
		if stored, err := e.st.GetNodeInventory(ctx, got.ID); err != nil || !reflect.DeepEqual(stored.InventoryData, inv) {
			t.Errorf("stored inventory: %v", err)
		}

		// A failure is recorded, and the node still stays in enroll.
		bad := e.node(states.Enroll, func(n *model.Node) { n.InspectInterface = "agent" })
		inv, pd = ramdiskData(t)
		pd["error"] = "disk on fire"
		if err := e.api.ContinueInspection(ctx, "", bad.UUID, inv, pd); err != nil {
			t.Fatal(err)
		}
		await.UntilReason(t, 10*time.Second, "the ramdisk's error recorded", func() (bool, string) {
			got = e.waitUnlocked(bad)
			return got.LastError != nil, fmt.Sprintf("failed auto-discovery: %s, last_error %q", got.ProvisionState, deref(got.LastError))
		})
		if got.ProvisionState != states.Enroll || !strings.Contains(deref(got.LastError), "Ramdisk reported error: disk on fire") {
			t.Errorf("failed auto-discovery: %s, last_error %q", got.ProvisionState, deref(got.LastError))
		}
	})
}
