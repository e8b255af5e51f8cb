package redfish

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/image"
	"github.com/openkeel/ironic/internal/image/configdrive"
)

// insertedMedia is the image the BMC reports inserted in the device
// taking mediaType.
func (e *bootEnv) insertedMedia(mediaType string) string {
	e.t.Helper()
	list, err := e.mgmt.GetVirtualMedia(e.ctx, e.task)
	must(e.t, err)
	for _, v := range list {
		types, _ := v["media_types"].([]string)
		img, _ := v["image"].(*string)
		for _, t := range types {
			if t == mediaType && v["inserted"] == true && img != nil {
				return *img
			}
		}
	}
	return ""
}

// A ramdisk deployment over virtual media: the instance's kernel and
// ramdisk are built into an ISO with the ramdisk's own command line, its
// config drive goes into a virtual USB stick, the node boots from the CD
// for good; clean-up ejects and unpublishes both.
func TestVirtualMediaRamdiskInstance(t *testing.T) {
	needTool(t, "xorriso")
	e := newBootEnv(t, nil)
	e.node.DeployInterface = "ramdisk"
	kernel, ramdisk := filepath.Join(e.dir, "vmlinuz"), filepath.Join(e.dir, "initrd")
	must(t, os.WriteFile(kernel, []byte("INSTANCE-KERNEL"), 0o644))
	must(t, os.WriteFile(ramdisk, []byte("INSTANCE-RAMDISK"), 0o644))
	cdISO := []byte("CONFIG-2 ISO BYTES")
	cd, err := configdrive.Encode(cdISO)
	must(t, err)
	e.node.InstanceInfo = map[string]any{
		"kernel": "file://" + kernel, "ramdisk": "file://" + ramdisk,
		"ramdisk_kernel_arguments": "console=ttyS0 quiet", "configdrive": cd,
	}
	must(t, e.boot.Validate(e.ctx, e.task))
	must(t, e.boot.PrepareInstance(e.ctx, e.task))

	isoURL := e.srvURL + "/redfish/boot-" + testNode + ".iso"
	if got := e.insertedCD(); got != isoURL {
		t.Fatalf("CD holds %q, want %q", got, isoURL)
	}
	snap := e.bmc.Snapshot("sys-1")
	if snap.BootTarget != "Cd" || snap.BootEnabled != "Continuous" {
		t.Fatalf("boot override %s/%s, want Cd/Continuous", snap.BootTarget, snap.BootEnabled)
	}
	status, iso := httpGet(t, isoURL)
	if status != http.StatusOK {
		t.Fatalf("GET %s: %d", isoURL, status)
	}
	isoPath := filepath.Join(t.TempDir(), "instance.iso")
	must(t, os.WriteFile(isoPath, iso, 0o644))
	for path, want := range map[string]string{"/vmlinuz": "INSTANCE-KERNEL", "/initrd": "INSTANCE-RAMDISK"} {
		if got, err := image.ReadISOFile(e.ctx, isoPath, path); err != nil || string(got) != want {
			t.Fatalf("%s on the ISO: %q, %v", path, got, err)
		}
	}
	data, err := image.ReadISOFile(e.ctx, isoPath, "/isolinux/isolinux.cfg")
	must(t, err)
	if cfg := string(data); !strings.Contains(cfg, "append initrd=/initrd text root=/dev/ram0 text console=ttyS0 quiet") ||
		strings.Contains(cfg, "ir_pub_id") || strings.Contains(cfg, "ipa-") {
		t.Fatalf("isolinux.cfg %q", data)
	}
	cdURL := e.srvURL + "/redfish/configdrive-" + testNode
	if got := e.insertedMedia("USBStick"); got != cdURL {
		t.Fatalf("USB stick holds %q, want %q", got, cdURL)
	}
	if status, body := httpGet(t, cdURL); status != http.StatusOK || !bytes.Equal(body, cdISO) {
		t.Fatalf("config drive served %d %q", status, body)
	}

	must(t, e.boot.CleanUpInstance(e.ctx, e.task))
	if cd, usb := e.insertedCD(), e.insertedMedia("USBStick"); cd != "" || usb != "" {
		t.Fatalf("after clean-up CD %q USB %q", cd, usb)
	}
	for _, u := range []string{isoURL, cdURL} {
		if status, _ := httpGet(t, u); status != http.StatusNotFound {
			t.Errorf("%s still served after clean-up: %d", u, status)
		}
	}
}

// A ramdisk instance given as a boot ISO is republished and booted as it
// is; without a kernel and ramdisk or an ISO, preparing fails as upstream.
func TestVirtualMediaRamdiskInstanceBootISO(t *testing.T) {
	e := newBootEnv(t, nil)
	e.node.DeployInterface = "ramdisk"
	src := filepath.Join(e.dir, "live.iso")
	must(t, os.WriteFile(src, []byte("LIVE-ISO"), 0o644))
	e.node.InstanceInfo = map[string]any{"boot_iso": "file://" + src}
	must(t, e.boot.PrepareInstance(e.ctx, e.task))
	url := e.srvURL + "/redfish/boot-" + testNode + ".iso"
	if got := e.insertedCD(); got != url {
		t.Fatalf("CD holds %q, want %q", got, url)
	}
	if status, body := httpGet(t, url); status != http.StatusOK || string(body) != "LIVE-ISO" {
		t.Fatalf("served %d %q", status, body)
	}
	// An http(s) ISO with the http download source goes to the BMC as is.
	e.node.InstanceInfo = map[string]any{"boot_iso": "http://127.0.0.1:1/live.iso", "ramdisk_image_download_source": "http"}
	must(t, e.boot.PrepareInstance(e.ctx, e.task))
	if got := e.insertedCD(); got != "http://127.0.0.1:1/live.iso" {
		t.Fatalf("CD holds %q", got)
	}

	e.node.InstanceInfo = map[string]any{"kernel": "file://" + src}
	wantClass(t, e.boot.Validate(e.ctx, e.task), "MissingParameterValue", "Cannot validate image information for node "+testNode+
		" because one or more parameters are missing from its instance_info and insufficient information is present to boot from a remote volume. Missing are: ['ramdisk']")
	wantClass(t, e.boot.PrepareInstance(e.ctx, e.task), "InvalidParameterValue",
		"Unable to find kernel or ramdisk for to generate boot ISO for "+testNode)
}
