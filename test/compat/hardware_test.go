package compat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"
	"github.com/gophercloud/gophercloud/v2/pagination"
)

// inspectConf adds the agent inspect interface, which fake-hardware
// supports beside its own: the ramdisk's inventory goes through the
// conductor's hooks and is kept for GET …/inventory.
const inspectConf = "[DEFAULT]\nenabled_inspect_interfaces = fake,agent,no-inspect\n"

// The hardware data the operator reads from a node (HardwareData and
// HostFirmwareSettings resources): the inventory after inspection, BIOS
// settings with and without their schema, firmware components, the RAID
// target, virtual media. gophercloud reads at the version the operator
// negotiates; the ramdisk's callback and the checks are plain HTTP.
func TestGophercloudHardwareData(t *testing.T) {
	eachServer(t, inspectConf, gophercloudHardwareData)
}

func gophercloudHardwareData(t *testing.T, s *server) {
	ctx := context.Background()
	gc, calls := gopherClient(t, s.URL)
	gc.Microversion = metal3Chosen(t, gc)
	check := newRaw(t, s.URL, "1.109")
	ramdisk := newRaw(t, s.URL, "")

	n := must[*nodes.Node](t, "create")(nodes.Create(ctx, gc, nodes.CreateOpts{
		Name: "hw-0", Driver: "fake-hardware",
		InspectInterface: "agent", BIOSInterface: "fake", FirmwareInterface: "fake", RAIDInterface: "fake",
		DriverInfo: map[string]any{"ipmi_address": "192.168.122.1"},
	}).Extract())
	provision(t, gc, n.UUID, nodes.ProvisionStateOpts{Target: nodes.TargetManage}, nodes.Manageable)

	t.Run("inventory", func(t *testing.T) {
		provision(t, gc, n.UUID, nodes.ProvisionStateOpts{Target: nodes.TargetInspect}, nodes.InspectWait)
		// The ramdisk's report, found by its BMC address; the interface
		// needs a routable address: loopback ones are skipped, as the
		// agent's own are.
		const mac = "52:54:00:aa:bb:01"
		inv := map[string]any{
			"interfaces":  []any{map[string]any{"name": "eth0", "mac_address": mac, "ipv4_address": "192.0.2.10"}},
			"cpu":         map[string]any{"count": 8, "architecture": "x86_64", "model_name": "Fake CPU"},
			"memory":      map[string]any{"physical_mb": 16384, "total": 17179869184},
			"disks":       []any{map[string]any{"name": "/dev/sda", "size": 107374182400, "rotational": false}},
			"bmc_address": "192.168.122.1",
			"boot":        map[string]any{"current_boot_mode": "uefi", "pxe_interface": mac},
		}
		st, body, _ := ramdisk.do("POST", "/v1/continue_inspection", map[string]any{
			"inventory": inv, "root_disk": map[string]any{"name": "/dev/sda", "size": 107374182400},
		})
		if st != http.StatusAccepted || body["uuid"] != n.UUID {
			t.Fatalf("continue_inspection: %d %v", st, body)
		}
		waitState(t, gc, n.UUID, nodes.Manageable)
		data := must[*nodes.InventoryData](t, "inventory")(nodes.GetInventory(ctx, gc, n.UUID).Extract())
		got := data.Inventory
		if got.CPU.Count != 8 || got.CPU.Architecture != "x86_64" || got.Memory.PhysicalMb != 16384 ||
			len(got.Disks) != 1 || got.Disks[0].Size != 107374182400 || got.BmcAddress != "192.168.122.1" ||
			len(got.Interfaces) != 1 || got.Interfaces[0].MACAddress != mac || got.Boot.PXEInterface != mac {
			t.Fatalf("inventory: %+v", got)
		}
		plugin := must[map[string]any](t, "plugin data")(data.PluginData.AsMap())
		if rd, _ := plugin["root_disk"].(map[string]any); rd["name"] != "/dev/sda" {
			t.Fatalf("plugin_data root_disk: %v", plugin["root_disk"])
		}
		// The ports hook enrolled the PXE interface.
		ports := check.get("/v1/ports?node=" + n.UUID + "&fields=address,pxe_enabled")["ports"].([]any)
		if len(ports) != 1 || ports[0].(map[string]any)["address"] != mac || ports[0].(map[string]any)["pxe_enabled"] != true {
			t.Fatalf("ports after inspection: %v", ports)
		}
		if props := check.get("/v1/nodes/" + n.UUID)["properties"].(map[string]any); props["cpu_arch"] != "x86_64" {
			t.Fatalf("properties after inspection: %v", props)
		}
	})

	t.Run("BIOS settings", func(t *testing.T) {
		// The operator applies firmware settings in manual cleaning; the
		// fake BIOS keeps what it was given, as upstream's does.
		provision(t, gc, n.UUID, nodes.ProvisionStateOpts{Target: nodes.TargetClean, CleanSteps: []nodes.CleanStep{{
			Interface: nodes.InterfaceBIOS, Step: "apply_configuration",
			Args: map[string]any{"settings": []any{
				map[string]any{"name": "ProcVirtualization", "value": "Enabled"},
				map[string]any{"name": "BootMode", "value": "Uefi"},
			}},
		}}}, nodes.Manageable)
		seen := check.get("/v1/nodes/" + n.UUID + "/bios")["bios"].([]any)
		if len(seen) != 2 {
			t.Fatalf("BIOS settings seen by raw client: %v", seen)
		}
		plain := must[[]nodes.BIOSSetting](t, "bios")(nodes.ListBIOSSettings(ctx, gc, n.UUID, nil).Extract())
		values := map[string]string{}
		for _, b := range plain {
			values[b.Name] = b.Value
		}
		if len(plain) != 2 || values["ProcVirtualization"] != "Enabled" || values["BootMode"] != "Uefi" {
			t.Fatalf("BIOS settings: %+v", plain)
		}
		// With the schema (1.74): the fake BIOS has no registry, so every
		// schema field is null except allowable_values: its JSON-list
		// column stores None as [], and upstream answers [].
		detail := must[[]nodes.BIOSSetting](t, "bios detail")(nodes.ListBIOSSettings(ctx, gc, n.UUID, nodes.ListBIOSSettingsOpts{Detail: true}).Extract())
		for _, b := range detail {
			if b.AttributeType != "" || b.AllowableValues == nil || len(b.AllowableValues) != 0 || b.ReadOnly != nil || b.ResetRequired != nil {
				t.Fatalf("BIOS setting with schema: %+v", b)
			}
		}
		// Upstream answers one setting keyed by its name; gophercloud reads
		// the key "Setting" only, so it decodes an empty setting from
		// upstream as from us (a client bug; listing decodes fine).
		one := must[*nodes.BIOSSetting](t, "bios setting")(nodes.GetBIOSSetting(ctx, gc, n.UUID, "BootMode").Extract())
		if one.Name != "" || one.Value != "" {
			t.Fatalf("gophercloud decoded BIOS setting BootMode: %+v", one)
		}
		raw, _ := check.get("/v1/nodes/" + n.UUID + "/bios/BootMode")["BootMode"].(map[string]any)
		if raw["name"] != "BootMode" || raw["value"] != "Uefi" {
			t.Fatalf("BIOS setting BootMode seen by raw client: %v", raw)
		}
	})

	t.Run("firmware", func(t *testing.T) {
		// The fake firmware interface caches no components.
		fw := must[[]nodes.FirmwareComponent](t, "firmware")(nodes.ListFirmware(ctx, gc, n.UUID).Extract())
		if len(fw) != 0 {
			t.Fatalf("firmware components: %+v", fw)
		}
		if seen := check.get("/v1/nodes/" + n.UUID + "/firmware"); len(seen["firmware"].([]any)) != 0 {
			t.Fatalf("firmware seen by raw client: %v", seen)
		}
	})

	t.Run("RAID", func(t *testing.T) {
		size := 100
		root := true
		err := nodes.SetRAIDConfig(ctx, gc, n.UUID, nodes.RAIDConfigOpts{LogicalDisks: []nodes.LogicalDisk{
			{SizeGB: &size, RAIDLevel: nodes.RAID1, IsRootVolume: &root},
			{RAIDLevel: nodes.RAID0, DiskType: nodes.SSD},
		}}).ExtractErr()
		if err != nil {
			t.Fatalf("set RAID config: %v", err)
		}
		disks := check.get("/v1/nodes/" + n.UUID)["target_raid_config"].(map[string]any)["logical_disks"].([]any)
		// gophercloud sends a missing size as "MAX".
		if len(disks) != 2 || disks[0].(map[string]any)["size_gb"] != float64(100) ||
			disks[1].(map[string]any)["size_gb"] != "MAX" || disks[1].(map[string]any)["disk_type"] != "ssd" {
			t.Fatalf("target_raid_config: %v", disks)
		}
		// A level the schema does not know is refused before it is kept:
		// the fake RAID interface validates with the base class's schema.
		err = nodes.SetRAIDConfig(ctx, gc, n.UUID, nodes.RAIDConfigOpts{LogicalDisks: []nodes.LogicalDisk{{SizeGB: &size, RAIDLevel: "7"}}}).ExtractErr()
		var bad gophercloud.ErrUnexpectedResponseCode
		want := `RAID config validation error: '7' is not one of ['JBOD', '0', '1', '2', '5', '6', '1+0', '5+0', '6+0']`
		if !errors.As(err, &bad) || bad.Actual != http.StatusBadRequest || !strings.Contains(string(bad.Body), jsonQuoted(want)) {
			t.Errorf("RAID level 7: want 400 %q, got %v", want, err)
		}
		if disks := check.get("/v1/nodes/" + n.UUID)["target_raid_config"].(map[string]any)["logical_disks"].([]any); len(disks) != 2 {
			t.Fatalf("target_raid_config after a refused change: %v", disks)
		}
	})

	t.Run("virtual media", func(t *testing.T) {
		// fake-hardware's management has no virtual media. Upstream asks
		// the driver, whose base class names the missing call: reading
		// is synchronous; attaching runs in a worker and reports through
		// last_error.
		err := nodes.GetVirtualMedia(ctx, gc, n.UUID).Err
		var bad gophercloud.ErrUnexpectedResponseCode
		want := "Driver fake-hardware does not support get_virtual_media (disabled or not implemented)."
		if !errors.As(err, &bad) || bad.Actual != http.StatusBadRequest || !strings.Contains(string(bad.Body), jsonQuoted(want)) {
			t.Errorf("GET vmedia: want 400 %q, got %v", want, err)
		}
		err = nodes.AttachVirtualMedia(ctx, gc, n.UUID, nodes.AttachVirtualMediaOpts{
			DeviceType: nodes.VirtualMediaCD, ImageURL: "http://127.0.0.1:9/data.iso", ImageDownloadSource: nodes.ImageDownloadSourceHTTP,
		}).ExtractErr()
		if err != nil {
			t.Fatalf("attach vmedia: want 204, got %v", err)
		}
		// The worker first withdraws any image published before, which
		// only the redfish and idrac hardware types can publish.
		want = fmt.Sprintf("Could not attach device cdrom to node %s: Publishing images is not supported for driver fake-hardware", n.UUID)
		waitField(t, check, "/v1/nodes/"+n.UUID, "last_error", want)
	})

	all := must[pagination.Page](t, "list")(nodes.List(gc, nodes.ListOpts{}).AllPages(ctx))
	if got := must[[]nodes.Node](t, "extract")(nodes.ExtractNodes(all)); len(got) != 1 {
		t.Fatalf("nodes: %+v", got)
	}
	if err := nodes.Delete(ctx, gc, n.UUID).ExtractErr(); err != nil {
		t.Fatalf("node delete: %v", err)
	}
	if st, _, _ := check.do("GET", "/v1/nodes/"+n.UUID, nil); st != http.StatusNotFound {
		t.Fatalf("deleted node: GET answers %d", st)
	}
	t.Logf("gophercloud at %s made %d calls, ramdisk %d, raw checks %d", gc.Microversion, calls.n.Load(), ramdisk.calls.n.Load(), check.calls.n.Load())
}

// jsonQuoted is s as it appears inside error_message, a JSON document
// carried as a JSON string: quoted twice.
func jsonQuoted(s string) string {
	once, _ := json.Marshal(s)
	twice, _ := json.Marshal(string(once[1 : len(once)-1]))
	return string(twice[1 : len(twice)-1])
}
