package redfish

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/driver/drivertest"
	"github.com/openkeel/ironic/internal/image"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/testing/redfishbmc"
)

// newHTTPSEnv is newBootEnv with redfish-https as the node's boot
// interface, sharing the virtual media interface's ISO publishing.
func newHTTPSEnv(t *testing.T) (*bootEnv, *HTTPSBoot) {
	t.Helper()
	e := newBootEnv(t, nil)
	b := &HTTPSBoot{vm: e.boot}
	e.drvIfs.Boot = b
	return e, b
}

func TestHTTPSBootDeployRamdisk(t *testing.T) {
	needTool(t, "xorriso")
	e, b := newHTTPSEnv(t)
	must(t, b.Validate(e.ctx, e.task))
	must(t, b.PrepareRamdisk(e.ctx, e.task, map[string]any{"ipa-api-url": "http://192.0.2.1:6385"}))

	wantURL := e.srvURL + "/redfish/boot-" + testNode + ".iso"
	snap := e.bmc.Snapshot("sys-1")
	if snap.BootTarget != "UefiHttp" || snap.BootEnabled != "Once" || snap.HTTPBootURI != wantURL {
		t.Fatalf("BMC boot override %s/%s URI %q, want UefiHttp/Once %q", snap.BootTarget, snap.BootEnabled, snap.HTTPBootURI, wantURL)
	}
	if got := e.insertedCD(); got != "" {
		t.Fatalf("virtual CD holds %q; UEFI HTTP boot inserts nothing", got)
	}
	if p := e.bmc.Power("sys-1"); p != redfishbmc.Off || e.node.PowerState != states.PowerOff {
		t.Fatalf("power BMC %s node %q, want off", p, e.node.PowerState)
	}
	token, _ := e.node.DriverInternalInfo["agent_secret_token"].(string)
	if len(token) < 40 || e.node.DriverInternalInfo["agent_secret_token_pregenerated"] != true {
		t.Fatalf("pre-generated token not recorded: %v", e.node.DriverInternalInfo)
	}
	// The management interface consumed the URL handed to it.
	if _, ok := e.node.DriverInternalInfo[uefiHTTPURLKey]; ok {
		t.Fatalf("%s left in driver_internal_info", uefiHTTPURLKey)
	}
	if _, ok := e.node.DriverInternalInfo["vmedia_transport_protocol"]; ok {
		t.Fatal("vmedia_transport_protocol set without virtual media")
	}
	if status, body := httpGet(t, wantURL); status != 200 || len(body) == 0 {
		t.Fatalf("ISO served %d, %d bytes", status, len(body))
	}

	must(t, b.CleanUpRamdisk(e.ctx, e.task))
	if status, _ := httpGet(t, wantURL); status != 404 {
		t.Fatalf("ISO still served after clean-up: %d", status)
	}
	if _, err := os.Stat(filepath.Join(e.httpRoot, "redfish", "boot-"+testNode+".iso")); !os.IsNotExist(err) {
		t.Fatalf("ISO left under http_root: %v", err)
	}
}

func TestHTTPSBootPrebuiltISOURL(t *testing.T) {
	// With an http ISO and download source http, the BMC is given the
	// ISO's own URL and no token is made (the ISO cannot carry it).
	e, b := newHTTPSEnv(t)
	e.boot.opts.DownloadSource = "http"
	e.node.DriverInfo["deploy_iso"] = "http://images.example.com/ipa.iso"
	must(t, b.PrepareRamdisk(e.ctx, e.task, map[string]any{}))
	if snap := e.bmc.Snapshot("sys-1"); snap.HTTPBootURI != "http://images.example.com/ipa.iso" || snap.BootTarget != "UefiHttp" {
		t.Fatalf("boot %s URI %q", snap.BootTarget, snap.HTTPBootURI)
	}
	if _, ok := e.node.DriverInternalInfo["agent_secret_token"]; ok {
		t.Fatal("token generated for a pre-built ISO")
	}
}

func TestHTTPSBootPrepareInstance(t *testing.T) {
	e, b := newHTTPSEnv(t)
	e.boot.opts.DownloadSource = "http"
	e.node.DriverInfo["deploy_iso"] = "http://images.example.com/ipa.iso"
	must(t, b.PrepareRamdisk(e.ctx, e.task, map[string]any{}))
	must(t, b.PrepareInstance(e.ctx, e.task))
	snap := e.bmc.Snapshot("sys-1")
	if snap.BootTarget != "Hdd" || snap.BootEnabled != "Continuous" {
		t.Fatalf("boot override %s/%s, want Hdd/Continuous", snap.BootTarget, snap.BootEnabled)
	}
	// A stale URI would send the next UEFI HTTP boot to the old ISO.
	if snap.HTTPBootURI != "" {
		t.Fatalf("HttpBootUri %q left on the BMC", snap.HTTPBootURI)
	}
	e.node.InstanceInfo = map[string]any{"capabilities": map[string]any{"boot_option": "netboot"}}
	wantClass(t, b.PrepareInstance(e.ctx, e.task), "InstanceDeployFailure", "")
	e.task.Shared = true
	wantClass(t, b.CleanUpInstance(e.ctx, e.task), "ExclusiveLockRequired", "")
}

func TestHTTPSBootValidate(t *testing.T) {
	e, b := newHTTPSEnv(t)
	must(t, b.Validate(e.ctx, e.task))
	delete(e.node.DriverInfo, "deploy_ramdisk")
	msg := "Error validating Redfish virtual media. Some parameters were missing in node's driver_info. " +
		"Missing are: ['deploy_kernel', 'deploy_ramdisk']"
	wantClass(t, b.Validate(e.ctx, e.task), "MissingParameterValue", msg)
	wantClass(t, b.ValidateInspection(e.ctx, e.task), "MissingParameterValue", msg)

	// A system without UefiHttp among its boot targets.
	bmc := redfishbmc.New(t).System("sys-1", redfishbmc.AllowedBootTargets("Pxe", "Hdd", "Cd")).WithBasicAuth(testUser, testPassword)
	e2 := newEnv(t, bmc, nil)
	b2 := newHTTPSBoot(e2.core, e2.mgmt, DefaultBootOptions())
	e2.node.DriverInfo["deploy_kernel"], e2.node.DriverInfo["deploy_ramdisk"] = "http://127.0.0.1/k", "http://127.0.0.1/r"
	wantClass(t, b2.Validate(e2.ctx, e2.task), "UnsupportedHardwareFeature",
		"Node "+testNode+" hardware does not support feature UefiHttp boot, which is required based upon the requested configuration.")
	// Inspection does not look at the hardware.
	must(t, b2.ValidateInspection(e2.ctx, e2.task))
}

func TestHTTPSBootOutsideAgentStatesIsNoop(t *testing.T) {
	e, b := newHTTPSEnv(t)
	e.node.ProvisionState = states.Active
	must(t, b.PrepareRamdisk(e.ctx, e.task, map[string]any{}))
	if snap := e.bmc.Snapshot("sys-1"); snap.BootTarget == "UefiHttp" || e.bmc.Power("sys-1") != redfishbmc.On {
		t.Fatalf("prepare_ramdisk acted on an active node: %s, power %s", snap.BootTarget, e.bmc.Power("sys-1"))
	}
	e.task.Shared = true
	e.node.ProvisionState = states.Deploying
	wantClass(t, b.PrepareRamdisk(e.ctx, e.task, map[string]any{}), "ExclusiveLockRequired", "")
}

func TestHTTPSBootRegisteredAsUpstream(t *testing.T) {
	spec := drivertest.LoadSpec(t)
	r := driver.NewRegistry()
	must(t, Register(r, DefaultOptions(), DefaultBootOptions()))
	impl, ok := r.Implementation(driver.KindBoot, "redfish-https")
	if !ok {
		t.Fatal("redfish-https not registered")
	}
	if _, ok := impl.(*HTTPSBoot); !ok {
		t.Fatalf("redfish-https is %T", impl)
	}
	class := spec.Interfaces["boot"]["redfish-https"]
	if class != "ironic.drivers.modules.redfish.boot:RedfishHttpsBoot" {
		t.Fatalf("entry point %q", class)
	}
	if got, want := impl.Properties(), spec.Classes[class].Properties; !maps.Equal(got, want) {
		t.Fatalf("properties\n got  %v\n want %v", got, want)
	}
	if got := impl.(*HTTPSBoot).Capabilities(); len(got) != 1 || got[0] != "ramdisk_boot" {
		t.Fatalf("capabilities %v", got)
	}
	if _, ok := impl.(driver.RescueValidator); ok {
		t.Fatal("validate_rescue: upstream's class has none, so rescue is unsupported")
	}
}

// A ramdisk deployment over UEFI HTTP: the instance's kernel and ramdisk
// become a boot ISO published under http_root, which the BMC boots for
// good; validation wants them as for virtual media.
func TestHTTPSBootRamdiskInstance(t *testing.T) {
	needTool(t, "xorriso")
	e, b := newHTTPSEnv(t)
	e.node.DeployInterface = "ramdisk"
	kernel, ramdisk := filepath.Join(e.dir, "vmlinuz"), filepath.Join(e.dir, "initrd")
	must(t, os.WriteFile(kernel, []byte("INSTANCE-KERNEL"), 0o644))
	must(t, os.WriteFile(ramdisk, []byte("INSTANCE-RAMDISK"), 0o644))
	e.node.InstanceInfo = map[string]any{"kernel": "file://" + kernel}
	wantClass(t, b.Validate(e.ctx, e.task), "MissingParameterValue", "Cannot validate image information for node "+testNode+
		" because one or more parameters are missing from its instance_info and insufficient information is present to boot from a remote volume. Missing are: ['ramdisk']")
	e.node.InstanceInfo["ramdisk"] = "file://" + ramdisk
	must(t, b.Validate(e.ctx, e.task))
	must(t, b.PrepareInstance(e.ctx, e.task))

	isoURL := e.srvURL + "/redfish/boot-" + testNode + ".iso"
	snap := e.bmc.Snapshot("sys-1")
	if snap.BootTarget != "UefiHttp" || snap.BootEnabled != "Continuous" || snap.HTTPBootURI != isoURL {
		t.Fatalf("boot override %s/%s URI %q, want UefiHttp/Continuous %q", snap.BootTarget, snap.BootEnabled, snap.HTTPBootURI, isoURL)
	}
	if got := e.insertedCD(); got != "" {
		t.Fatalf("virtual CD holds %q; UEFI HTTP boot inserts nothing", got)
	}
	status, iso := httpGet(t, isoURL)
	if status != 200 {
		t.Fatalf("GET %s: %d", isoURL, status)
	}
	isoPath := filepath.Join(t.TempDir(), "instance.iso")
	must(t, os.WriteFile(isoPath, iso, 0o644))
	for path, want := range map[string]string{"/vmlinuz": "INSTANCE-KERNEL", "/initrd": "INSTANCE-RAMDISK"} {
		if got, err := image.ReadISOFile(e.ctx, isoPath, path); err != nil || string(got) != want {
			t.Fatalf("%s on the ISO: %q, %v", path, got, err)
		}
	}
	must(t, b.CleanUpInstance(e.ctx, e.task))
	if status, _ := httpGet(t, isoURL); status != 404 {
		t.Fatalf("ISO still served after clean-up: %d", status)
	}
}

// The deploy ISO booted over UEFI HTTP names the NIC with a VIF in
// BOOTIF, as the virtual media one does.
func TestHTTPSBootBOOTIF(t *testing.T) {
	needTool(t, "xorriso")
	e, b := newHTTPSEnv(t)
	mac := "52:54:00:aa:bb:02"
	e.boot.opts.Ports = portList{
		{Address: ptrTo("52:54:00:aa:bb:01")},
		{Address: &mac, InternalInfo: map[string]any{"cleaning_vif_port_id": "vif-2"}},
	}
	e.boot.opts.CurrentVIF = func(_ *driver.Task, ii map[string]any) string { s, _ := ii["cleaning_vif_port_id"].(string); return s }
	must(t, b.PrepareRamdisk(e.ctx, e.task, map[string]any{}))
	_, iso := httpGet(t, e.bmc.Snapshot("sys-1").HTTPBootURI)
	isoPath := filepath.Join(t.TempDir(), "boot.iso")
	must(t, os.WriteFile(isoPath, iso, 0o644))
	cfg, err := image.ReadISOFile(e.ctx, isoPath, "/isolinux/isolinux.cfg")
	must(t, err)
	if !strings.Contains(string(cfg), " BOOTIF="+mac+" ") {
		t.Fatalf("isolinux.cfg lacks BOOTIF=%s: %q", mac, cfg)
	}
}
