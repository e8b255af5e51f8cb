package compat

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/ports"
	"github.com/gophercloud/gophercloud/v2/pagination"

	"github.com/openkeel/ironic/testing/redfishbmc"
)

// redfishConf runs the redfish hardware type with every interface the
// operator drives on it.
const redfishConf = `[DEFAULT]
enabled_hardware_types = redfish
enabled_power_interfaces = redfish
enabled_management_interfaces = redfish
enabled_boot_interfaces = redfish-virtual-media
enabled_deploy_interfaces = direct
enabled_inspect_interfaces = redfish
enabled_bios_interfaces = redfish
enabled_firmware_interfaces = redfish
enabled_raid_interfaces = no-raid
enabled_rescue_interfaces = no-rescue
enabled_network_interfaces = noop
enabled_console_interfaces = no-console
enabled_vendor_interfaces = redfish,no-vendor
enabled_storage_interfaces = noop
`

// The operator's calls against a node whose BMC is the Redfish emulator:
// enrol, manage, BIOS settings with their registry, inspection, power,
// boot device, virtual media. The second opinion is the BMC itself.
func TestGophercloudRedfish(t *testing.T) {
	forEachDeployment(t, func(t *testing.T, d deployment) {
		ctx := context.Background()
		lower, upper := int64(0), int64(64)
		bmc := redfishbmc.New(t).WithBasicAuth("admin", "s3cret").WithBMCFirmwareVersion("2.10").System("sys-1",
			redfishbmc.BiosVersion("U30 v1.40"),
			redfishbmc.Bios(map[string]any{"ProcVirtualization": "Enabled", "BootMode": "Uefi", "NumCores": 8}),
			redfishbmc.BiosRegistry(
				redfishbmc.RegistryAttribute{Name: "ProcVirtualization", Type: "Enumeration", AllowableValues: []string{"Enabled", "Disabled"}},
				redfishbmc.RegistryAttribute{Name: "BootMode", Type: "Enumeration", AllowableValues: []string{"Uefi", "Bios"}, ResetRequired: true},
				redfishbmc.RegistryAttribute{Name: "NumCores", Type: "Integer", LowerBound: &lower, UpperBound: &upper, ReadOnly: true},
			),
			redfishbmc.EthernetInterface("nic-1", "52:54:00:cc:00:01", "Enabled"),
			redfishbmc.Processor(redfishbmc.CPU{Arch: "x86", Cores: 4, Threads: 8, Model: "Emulated CPU"}),
			redfishbmc.MemoryGiB(8),
			redfishbmc.SimpleStorageDevice("sda", "Emulated Disk", 100*1024*1024*1024),
		)
		s := d.start(t, redfishConf)
		gc, calls := gopherClient(t, s.URL)
		gc.Microversion = metal3Chosen(t, gc)
		check := newRaw(t, s.URL, "1.109")

		// Enrolled as the operator's registration does: every interface
		// named, disable_power_off (1.95) sent, capabilities and cpu_arch.
		off := false
		n := must[*nodes.Node](t, "create")(nodes.Create(ctx, gc, nodes.CreateOpts{
			Name: "ns~rf-0", Driver: "redfish",
			BIOSInterface: "redfish", BootInterface: "redfish-virtual-media", DeployInterface: "direct",
			FirmwareInterface: "redfish", InspectInterface: "redfish", ManagementInterface: "redfish",
			PowerInterface: "redfish", RAIDInterface: "no-raid", VendorInterface: "redfish",
			DisablePowerOff: &off,
			Properties:      map[string]any{"capabilities": "boot_mode:uefi", "cpu_arch": "x86_64"},
			DriverInfo: map[string]any{
				"redfish_address": bmc.URL(), "redfish_system_id": redfishbmc.SystemPath("sys-1"),
				"redfish_username": "admin", "redfish_password": "s3cret",
			},
		}).Extract())
		if n.DisablePowerOff || n.Properties["capabilities"] != "boot_mode:uefi" || n.RAIDInterface != "no-raid" {
			t.Fatalf("created node: %+v", n)
		}
		provision(t, gc, n.UUID, nodes.ProvisionStateOpts{Target: nodes.TargetManage}, nodes.Manageable)
		managed := check.get("/v1/nodes/" + n.UUID)
		if managed["power_state"] != "power off" {
			t.Fatalf("power state read from the BMC: %v", managed["power_state"])
		}
		t.Run("vendor and boot mode cached on manage", func(t *testing.T) {
			// Upstream's verification ends with node_update_cache: vendor,
			// boot mode and secure boot, BIOS settings, firmware.
			if v := managed["properties"].(map[string]any)["vendor"]; v != "OpenKeel" {
				t.Errorf("properties/vendor: %v, the BMC says OpenKeel", v)
			}
			if managed["boot_mode"] != "uefi" || managed["secure_boot"] != false {
				t.Errorf("boot_mode %v, secure_boot %v; the BMC says UEFI, secure boot off", managed["boot_mode"], managed["secure_boot"])
			}
		})

		t.Run("BIOS settings cached on manage", func(t *testing.T) {
			settings := must[[]nodes.BIOSSetting](t, "bios")(nodes.ListBIOSSettings(ctx, gc, n.UUID, nodes.ListBIOSSettingsOpts{Detail: true}).Extract())
			attrs := bmc.BiosOf("sys-1").Attributes
			if len(settings) != len(attrs) {
				t.Fatalf("BIOS settings %+v, BMC has %v", settings, attrs)
			}
			for _, b := range settings {
				if b.Value != fmt.Sprint(attrs[b.Name]) {
					t.Errorf("%s = %q, BMC has %v", b.Name, b.Value, attrs[b.Name])
				}
				switch b.Name {
				case "BootMode":
					if b.AttributeType != "Enumeration" || len(b.AllowableValues) != 2 || b.ResetRequired == nil || !*b.ResetRequired {
						t.Errorf("BootMode schema: %+v", b)
					}
				case "NumCores":
					if b.AttributeType != "Integer" || b.LowerBound == nil || *b.LowerBound != 0 || b.UpperBound == nil || *b.UpperBound != 64 || b.ReadOnly == nil || !*b.ReadOnly {
						t.Errorf("NumCores schema: %+v", b)
					}
				}
			}
		})

		t.Run("firmware components cached on manage", func(t *testing.T) {
			// Upstream's redfish firmware reports the system's BIOS and the
			// manager's firmware.
			fw := must[[]nodes.FirmwareComponent](t, "firmware")(nodes.ListFirmware(ctx, gc, n.UUID).Extract())
			versions := map[string]string{}
			for _, c := range fw {
				versions[c.Component] = c.CurrentVersion
				if c.InitialVersion != c.CurrentVersion {
					t.Errorf("component %s: initial %q, current %q", c.Component, c.InitialVersion, c.CurrentVersion)
				}
			}
			if len(fw) != 2 || versions["bios"] != "U30 v1.40" || versions["bmc"] != "2.10" {
				t.Fatalf("firmware components: %+v", fw)
			}
		})

		t.Run("inspection", func(t *testing.T) {
			provision(t, gc, n.UUID, nodes.ProvisionStateOpts{Target: nodes.TargetInspect}, nodes.Manageable)
			inv := must[*nodes.InventoryData](t, "inventory")(nodes.GetInventory(ctx, gc, n.UUID).Extract()).Inventory
			if inv.CPU.Count != 8 || inv.CPU.Architecture != "x86_64" || inv.Memory.PhysicalMb != 8*1024 ||
				len(inv.Interfaces) != 1 || inv.Interfaces[0].MACAddress != "52:54:00:cc:00:01" {
				t.Fatalf("inventory from the BMC: %+v", inv)
			}
			enrolled := check.get("/v1/ports?node=" + n.UUID)["ports"].([]any)
			if len(enrolled) != 1 || enrolled[0].(map[string]any)["address"] != "52:54:00:cc:00:01" {
				t.Fatalf("ports after inspection: %v", enrolled)
			}
			// The operator's port lookups: by node, and by MAC when it
			// looks for an existing registration.
			for _, opts := range []ports.ListOpts{
				{Fields: []string{"node_uuid", "uuid", "address"}, NodeUUID: n.UUID},
				{Fields: []string{"node_uuid", "uuid", "address"}, Address: "52:54:00:cc:00:01"},
			} {
				page := must[pagination.Page](t, "ports")(ports.List(gc, opts).AllPages(ctx))
				got := must[[]ports.Port](t, "extract")(ports.ExtractPorts(page))
				if len(got) != 1 || got[0].NodeUUID != n.UUID || got[0].Address != "52:54:00:cc:00:01" || got[0].UUID == "" {
					t.Fatalf("ports %+v: %+v", opts, got)
				}
			}
		})

		t.Run("power", func(t *testing.T) {
			for _, p := range []struct {
				target nodes.TargetPowerState
				bmc    string
			}{{nodes.PowerOn, redfishbmc.On}, {nodes.PowerOff, redfishbmc.Off}} {
				if err := nodes.ChangePowerState(ctx, gc, n.UUID, nodes.PowerStateOpts{Target: p.target}).ExtractErr(); err != nil {
					t.Fatalf("power %s: %v", p.target, err)
				}
				eventually(t, func() (bool, string) {
					got := check.get("/v1/nodes/" + n.UUID)
					return got["power_state"] == string(p.target) && got["target_power_state"] == nil, fmt.Sprint(got["power_state"], got["target_power_state"])
				})
				if got := bmc.Power("sys-1"); got != p.bmc {
					t.Fatalf("after %s the BMC says %s", p.target, got)
				}
			}
		})

		t.Run("boot device", func(t *testing.T) {
			if err := nodes.SetBootDevice(ctx, gc, n.UUID, nodes.BootDeviceOpts{BootDevice: "pxe", Persistent: true}).ExtractErr(); err != nil {
				t.Fatalf("set boot device: %v", err)
			}
			if sys := bmc.Snapshot("sys-1"); sys.BootTarget != "Pxe" || sys.BootEnabled != "Continuous" {
				t.Fatalf("BMC boot override: %s %s", sys.BootTarget, sys.BootEnabled)
			}
			bd := must[*nodes.BootDeviceOpts](t, "boot device")(nodes.GetBootDevice(ctx, gc, n.UUID).Extract())
			if bd.BootDevice != "pxe" || !bd.Persistent {
				t.Fatalf("boot device: %+v", bd)
			}
		})

		t.Run("virtual media", func(t *testing.T) {
			const image = "http://127.0.0.1:9/data.iso"
			err := nodes.AttachVirtualMedia(ctx, gc, n.UUID, nodes.AttachVirtualMediaOpts{
				DeviceType: nodes.VirtualMediaCD, ImageURL: image, ImageDownloadSource: nodes.ImageDownloadSourceHTTP,
			}).ExtractErr()
			if err != nil {
				t.Fatalf("attach: %v", err)
			}
			cd := func() map[string]any {
				req, _ := http.NewRequest("GET", bmc.URL()+"/redfish/v1/Managers/BMC/VirtualMedia/Cd", nil)
				req.SetBasicAuth("admin", "s3cret")
				resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				var v map[string]any
				if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
					t.Fatal(err)
				}
				return v
			}
			eventually(t, func() (bool, string) {
				v := cd()
				return v["Inserted"] == true && v["Image"] == image, fmt.Sprint(v["Inserted"], v["Image"])
			})
			waitField(t, check, "/v1/nodes/"+n.UUID, "reservation", nil)
			var devices struct {
				Devices []map[string]any `json:"devices"`
			}
			if err := nodes.GetVirtualMedia(ctx, gc, n.UUID).ExtractInto(&devices); err != nil {
				t.Fatalf("GET vmedia: %v", err)
			}
			found := false
			for _, dev := range devices.Devices {
				found = found || (dev["image"] == image && dev["inserted"] == true)
			}
			if !found {
				t.Fatalf("GET vmedia: %v", devices.Devices)
			}
			if err := nodes.DetachVirtualMedia(ctx, gc, n.UUID, nodes.DetachVirtualMediaOpts{DeviceTypes: []nodes.VirtualMediaDeviceType{nodes.VirtualMediaCD}}).ExtractErr(); err != nil {
				t.Fatalf("detach: %v", err)
			}
			eventually(t, func() (bool, string) {
				v := cd()
				return v["Inserted"] == false, fmt.Sprint(v["Inserted"], v["Image"])
			})
			waitField(t, check, "/v1/nodes/"+n.UUID, "reservation", nil)
		})

		t.Run("event subscription", func(t *testing.T) {
			// BMCEventSubscription: vendor passthru of the redfish vendor
			// interface, synchronous, answered with the BMC's resource.
			sub := must[*nodes.SubscriptionVendorPassthru](t, "create subscription")(nodes.CreateSubscription(ctx, gc, n.UUID,
				nodes.CallVendorPassthruOpts{Method: "create_subscription"},
				nodes.CreateSubscriptionOpts{Destination: "https://127.0.0.1:9/events", Context: "bmh-0",
					HttpHeaders: []map[string]string{{"X-Token": "t"}}}).Extract())
			subs := bmc.Subscriptions()
			if len(subs) != 1 || subs[0].ID != sub.Id || subs[0].Destination != "https://127.0.0.1:9/events" || subs[0].Context != "bmh-0" {
				t.Fatalf("subscription %+v, the BMC has %+v", sub, subs)
			}
			all := must[*nodes.GetAllSubscriptionsVendorPassthru](t, "subscriptions")(nodes.GetAllSubscriptions(ctx, gc, n.UUID,
				nodes.CallVendorPassthruOpts{Method: "get_all_subscriptions"}).Extract())
			if len(all.Members) != 1 {
				t.Fatalf("all subscriptions: %+v", all)
			}
			if err := nodes.DeleteSubscription(ctx, gc, n.UUID, nodes.CallVendorPassthruOpts{Method: "delete_subscription"},
				nodes.DeleteSubscriptionOpts{Id: sub.Id}).ExtractErr(); err != nil {
				t.Fatalf("delete subscription: %v", err)
			}
			if subs := bmc.Subscriptions(); len(subs) != 0 {
				t.Fatalf("subscriptions left on the BMC: %+v", subs)
			}
		})

		if last := check.get("/v1/nodes/" + n.UUID)["last_error"]; last != nil {
			t.Fatalf("last_error: %v", last)
		}
		if err := nodes.Delete(ctx, gc, n.UUID).ExtractErr(); err != nil {
			t.Fatalf("node delete: %v", err)
		}
		t.Logf("gophercloud at %s made %d calls, raw checks %d; ironic made %d calls to the BMC", gc.Microversion, calls.n.Load(), check.calls.n.Load(), bmc.Requests())
	})
}
