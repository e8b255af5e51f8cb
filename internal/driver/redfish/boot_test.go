package redfish

import (
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/httproot"
	"github.com/openkeel/ironic/internal/image"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/testing/redfishbmc"
)

// needTool skips without the binary, except in CI where it must exist.
func needTool(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is required in CI: %v", name, err)
		}
		t.Skipf("%s not installed", name)
	}
}

// bootEnv is an emulated BMC, the conductor's file server on http_root
// and the boot interface publishing there.
type bootEnv struct {
	*env
	boot     *VirtualMediaBoot
	dir      string
	httpRoot string
	srvURL   string
	kernel   string
	ramdisk  string
}

func newBootEnv(t *testing.T, tune func(*BootOptions)) *bootEnv {
	t.Helper()
	bmc := redfishbmc.New(t).System("sys-1", redfishbmc.PowerState(redfishbmc.On)).WithBasicAuth(testUser, testPassword)
	e := newEnv(t, bmc, nil)
	dir := t.TempDir()
	kernel := filepath.Join(dir, "agent.kernel")
	ramdisk := filepath.Join(dir, "agent.initramfs")
	must(t, os.WriteFile(kernel, []byte("FAKE-KERNEL"), 0o644))
	must(t, os.WriteFile(ramdisk, []byte("FAKE-RAMDISK"), 0o644))
	isolinux := filepath.Join(dir, "isolinux.bin")
	// xorriso writes the boot info table into isolinux.bin: it needs room.
	must(t, os.WriteFile(isolinux, make([]byte, 2048), 0o644))

	ctx, cancel := context.WithCancel(context.Background())
	root := filepath.Join(dir, "httpboot")
	srv, err := httproot.Start(ctx, httproot.Options{Root: root, HostIP: "127.0.0.1"})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		if err := srv.Wait(); err != nil {
			t.Error(err)
		}
	})

	iopts := image.DefaultOptions()
	iopts.FileURLAllowedPaths = []string{dir}
	iopts.IsolinuxBin = isolinux
	iopts.TempDir = dir
	sources, err := image.NewSources(iopts, nil)
	must(t, err)
	bo := DefaultBootOptions()
	bo.HTTPRoot = root
	bo.HTTPURL = srv.URL()
	bo.DefaultBootMode = "bios"
	bo.Image = iopts
	bo.Fetcher = image.NewFetcher(sources, iopts)
	if tune != nil {
		tune(&bo)
	}
	b := &VirtualMediaBoot{core: e.core, mgmt: e.mgmt, opts: bo}
	e.drvIfs.Boot = b
	e.node.ProvisionState = states.Deploying
	e.node.DriverInfo["deploy_kernel"] = "file://" + kernel
	e.node.DriverInfo["deploy_ramdisk"] = "file://" + ramdisk
	return &bootEnv{env: e, boot: b, dir: dir, httpRoot: root, srvURL: srv.URL(), kernel: kernel, ramdisk: ramdisk}
}

// insertedCD is the image of the inserted CD as the BMC reports it.
func (e *bootEnv) insertedCD() string {
	e.t.Helper()
	list, err := e.mgmt.GetVirtualMedia(e.ctx, e.task)
	must(e.t, err)
	for _, v := range list {
		types, _ := v["media_types"].([]string)
		img, _ := v["image"].(*string)
		if v["inserted"] == true && strings.Contains(strings.Join(types, ","), "CD") && img != nil {
			return *img
		}
	}
	return ""
}

func httpGet(t *testing.T, url string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	must(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	must(t, err)
	return resp.StatusCode, body
}

func TestVirtualMediaDeployRamdiskBIOS(t *testing.T) {
	needTool(t, "xorriso")
	e := newBootEnv(t, nil)
	must(t, e.boot.PrepareRamdisk(e.ctx, e.task, map[string]any{"ipa-api-url": "http://192.0.2.1:6385", "coreos.configdrive": 0}))

	wantURL := e.srvURL + "/redfish/boot-" + testNode + ".iso"
	if got := e.insertedCD(); got != wantURL {
		t.Fatalf("BMC has %q in its CD, want %q", got, wantURL)
	}
	snap := e.bmc.Snapshot("sys-1")
	if snap.BootTarget != "Cd" || snap.BootEnabled != "Once" {
		t.Fatalf("boot override %s/%s, want Cd/Once", snap.BootTarget, snap.BootEnabled)
	}
	if p := e.bmc.Power("sys-1"); p != redfishbmc.Off || e.node.PowerState != states.PowerOff {
		t.Fatalf("power BMC %s node %q, want off", p, e.node.PowerState)
	}
	token, _ := e.node.DriverInternalInfo["agent_secret_token"].(string)
	if len(token) < 40 || e.node.DriverInternalInfo["agent_secret_token_pregenerated"] != true {
		t.Fatalf("pre-generated token not recorded: %v", e.node.DriverInternalInfo)
	}
	if e.node.DriverInternalInfo["vmedia_transport_protocol"] != "HTTP" {
		t.Fatalf("vmedia_transport_protocol %v", e.node.DriverInternalInfo["vmedia_transport_protocol"])
	}

	// The file server serves what the BMC was told to fetch.
	status, iso := httpGet(t, wantURL)
	if status != http.StatusOK {
		t.Fatalf("GET %s: %d", wantURL, status)
	}
	isoPath := filepath.Join(t.TempDir(), "fetched.iso")
	must(t, os.WriteFile(isoPath, iso, 0o644))
	cfg, err := image.ReadISOFile(e.ctx, isoPath, "/isolinux/isolinux.cfg")
	must(t, err)
	cmdline := ""
	for line := range strings.SplitSeq(string(cfg), "\n") {
		if rest, ok := strings.CutPrefix(line, "append initrd=/initrd text "); ok {
			cmdline = rest
		}
	}
	for _, want := range []string{
		"nofb vga=normal ir_pub_id=", "ipa-api-url=http://192.0.2.1:6385", "ipa-agent-token=" + token,
		"boot_method=vmedia", "coreos.configdrive=0",
	} {
		if !strings.Contains(cmdline, want) {
			t.Errorf("kernel command line %q lacks %q", cmdline, want)
		}
	}
	for path, want := range map[string]string{"/vmlinuz": "FAKE-KERNEL", "/initrd": "FAKE-RAMDISK"} {
		got, err := image.ReadISOFile(e.ctx, isoPath, path)
		must(t, err)
		if string(got) != want {
			t.Fatalf("%s on the ISO: %q", path, got)
		}
	}
	if st, err := os.Stat(filepath.Join(e.httpRoot, "redfish", "boot-"+testNode+".iso")); err != nil || st.Mode().Perm() != 0o644 {
		t.Fatalf("published file: %v %v", st, err)
	}

	must(t, e.boot.CleanUpRamdisk(e.ctx, e.task))
	if got := e.insertedCD(); got != "" {
		t.Fatalf("CD still holds %q after clean up", got)
	}
	if status, _ := httpGet(t, wantURL); status != http.StatusNotFound {
		t.Fatalf("published ISO still served after clean up: %d", status)
	}

	must(t, e.boot.PrepareInstance(e.ctx, e.task))
	snap = e.bmc.Snapshot("sys-1")
	if snap.BootTarget != "Hdd" || snap.BootEnabled != "Continuous" {
		t.Fatalf("instance boot %s/%s, want Hdd/Continuous", snap.BootTarget, snap.BootEnabled)
	}
}

func TestVirtualMediaRescueUEFIWithBootloader(t *testing.T) {
	needTool(t, "xorriso")
	needTool(t, "mkfs.vfat")
	needTool(t, "mcopy")
	e := newBootEnv(t, func(o *BootOptions) {
		o.ExternalHTTPURL = "http://external.example.com:8080/"
		o.ExternalCallbackURL = "https://callback.example.com/"
		o.APIURL = "http://ignored"
	})
	esp := filepath.Join(e.dir, "esp.img")
	must(t, image.CreateVFATImage(e.ctx, esp, map[string]image.FileEntry{"EFI/BOOT/BOOTX64.EFI": {Data: []byte("efi")}}, nil, 1024))
	e.node.ProvisionState = states.Rescuing
	e.node.Properties["capabilities"] = "boot_mode:uefi"
	e.node.DriverInfo["rescue_kernel"] = "file://" + e.kernel
	e.node.DriverInfo["rescue_ramdisk"] = "file://" + e.ramdisk
	e.node.DriverInfo["bootloader"] = "file://" + esp
	e.node.DriverInfo["kernel_append_params"] = "console=ttyS0"
	must(t, e.boot.PrepareRamdisk(e.ctx, e.task, map[string]any{"ipa-api-url": "http://internal:6385"}))

	// The BMC is given the external URL; the file is where http_url serves.
	name := "/redfish/boot-" + testNode + ".iso"
	if got := e.insertedCD(); got != "http://external.example.com:8080"+name {
		t.Fatalf("inserted %q", got)
	}
	status, iso := httpGet(t, e.srvURL+name)
	if status != http.StatusOK {
		t.Fatalf("GET: %d", status)
	}
	isoPath := filepath.Join(t.TempDir(), "r.iso")
	must(t, os.WriteFile(isoPath, iso, 0o644))
	grub, err := image.ReadISOFile(e.ctx, isoPath, "/EFI/BOOT/grub.cfg")
	must(t, err)
	if !strings.Contains(string(grub), "linux /vmlinuz console=ttyS0 ir_pub_id=") ||
		!strings.Contains(string(grub), "ipa-api-url=https://callback.example.com ") {
		t.Fatalf("grub.cfg %q", grub)
	}
	espBack, err := image.ReadISOFile(e.ctx, isoPath, "/boot/grub/efiboot.img")
	must(t, err)
	espOrig, _ := os.ReadFile(esp)
	if string(espBack) != string(espOrig) {
		t.Fatal("bootloader not used as the ESP image")
	}
}

func TestVirtualMediaPrebuiltISO(t *testing.T) {
	// download source http: an http(s) ISO goes to the BMC as it is.
	e := newBootEnv(t, func(o *BootOptions) { o.DownloadSource = "http" })
	e.node.DriverInfo["deploy_iso"] = "http://images.example.com/ipa.iso"
	must(t, e.boot.PrepareRamdisk(e.ctx, e.task, map[string]any{}))
	if got := e.insertedCD(); got != "http://images.example.com/ipa.iso" {
		t.Fatalf("inserted %q", got)
	}
	if _, ok := e.node.DriverInternalInfo["agent_secret_token"]; ok {
		t.Fatal("a token was generated for an ISO that cannot carry it")
	}

	// download source local: a file ISO is republished under http_root.
	e = newBootEnv(t, nil)
	src := filepath.Join(e.dir, "ipa.iso")
	must(t, os.WriteFile(src, []byte("PREBUILT"), 0o644))
	e.node.DriverInfo = map[string]any{
		"redfish_address": e.bmc.URL(), "redfish_username": testUser, "redfish_password": testPassword,
		"deploy_iso": "file://" + src,
	}
	must(t, e.boot.PrepareRamdisk(e.ctx, e.task, map[string]any{}))
	url := e.srvURL + "/redfish/boot-" + testNode + ".iso"
	if got := e.insertedCD(); got != url {
		t.Fatalf("inserted %q", got)
	}
	if status, body := httpGet(t, url); status != 200 || string(body) != "PREBUILT" {
		t.Fatalf("served %d %q", status, body)
	}
}

func TestVirtualMediaValidate(t *testing.T) {
	e := newBootEnv(t, nil)
	must(t, e.boot.Validate(e.ctx, e.task))
	delete(e.node.DriverInfo, "deploy_ramdisk")
	// Half a pair on the node: both come from the (empty) configuration.
	wantClass(t, e.boot.Validate(e.ctx, e.task), "MissingParameterValue",
		"Error validating Redfish virtual media. Some parameters were missing in node's driver_info. "+
			"Missing are: ['deploy_kernel', 'deploy_ramdisk']")
	e.boot.opts.DeployKernel, e.boot.opts.DeployRamdisk = "http://k", "http://r"
	must(t, e.boot.Validate(e.ctx, e.task))
	e.boot.opts.DeployKernel, e.boot.opts.DeployRamdisk = "", ""
	e.node.DriverInfo["deploy_iso"] = "http://x/ipa.iso"
	must(t, e.boot.Validate(e.ctx, e.task))
	e.node.ProvisionState = states.Rescuing
	wantClass(t, e.boot.Validate(e.ctx, e.task), "MissingParameterValue",
		"Error validating Redfish virtual media. Some parameters were missing in node's driver_info. "+
			"Missing are: ['rescue_kernel', 'rescue_ramdisk']")
	e.node.ProvisionState = states.Deploying
	delete(e.node.DriverInfo, "redfish_address")
	wantClass(t, e.boot.Validate(e.ctx, e.task), "MissingParameterValue", "")
}

func TestVirtualMediaOutsideAgentStatesIsNoop(t *testing.T) {
	e := newBootEnv(t, nil)
	e.node.ProvisionState = states.Active
	must(t, e.boot.PrepareRamdisk(e.ctx, e.task, map[string]any{}))
	if got := e.insertedCD(); got != "" || e.bmc.Power("sys-1") != redfishbmc.On {
		t.Fatalf("prepare_ramdisk acted on an active node: CD %q power %s", got, e.bmc.Power("sys-1"))
	}
	e.task.Shared = true
	e.node.ProvisionState = states.Deploying
	wantClass(t, e.boot.PrepareRamdisk(e.ctx, e.task, map[string]any{}), "ExclusiveLockRequired", "")
}

func TestVirtualMediaRegistered(t *testing.T) {
	r := driver.NewRegistry()
	must(t, Register(r, DefaultOptions(), DefaultBootOptions()))
	impl, ok := r.Implementation(driver.KindBoot, "redfish-virtual-media")
	if !ok {
		t.Fatal("redfish-virtual-media not registered")
	}
	if _, ok := impl.(driver.InspectionValidator); !ok {
		t.Fatal("no validate_inspection")
	}
	if err := Register(driver.NewRegistry(), DefaultOptions(), DefaultBootOptions(), DefaultBootOptions()); err == nil {
		t.Fatal("two boot option sets accepted")
	}
}
