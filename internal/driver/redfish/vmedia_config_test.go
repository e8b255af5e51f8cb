package redfish

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/image"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/store"
)

// With config_via_removable a pre-built deploy ISO boots with the ramdisk
// parameters, the pre-generated agent token among them, on a FAT image in
// the virtual USB stick; clean-up ejects and unpublishes it.
func TestVirtualMediaConfigViaRemovable(t *testing.T) {
	needTool(t, "mkfs.vfat")
	needTool(t, "mcopy")
	needTool(t, "mtype")
	e := newBootEnv(t, nil)
	src := filepath.Join(e.dir, "ipa.iso")
	must(t, os.WriteFile(src, []byte("PREBUILT"), 0o644))
	e.node.DriverInfo = map[string]any{
		"redfish_address": e.bmc.URL(), "redfish_username": testUser, "redfish_password": testPassword,
		"deploy_iso": "file://" + src, "config_via_removable": true,
	}
	must(t, e.boot.PrepareRamdisk(e.ctx, e.task, map[string]any{"ipa-api-url": "http://127.0.0.1:6385"}))
	if got, want := e.insertedCD(), e.srvURL+"/redfish/boot-"+testNode+".iso"; got != want {
		t.Fatalf("CD holds %q, want %q", got, want)
	}
	cfgURL := e.srvURL + "/redfish/image-" + testNode + ".img"
	if got := e.insertedMedia("USBStick"); got != cfgURL {
		t.Fatalf("USB stick holds %q, want %q", got, cfgURL)
	}
	status, img := httpGet(t, cfgURL)
	if status != http.StatusOK {
		t.Fatalf("GET %s: %d", cfgURL, status)
	}
	imgPath := filepath.Join(t.TempDir(), "config.img")
	must(t, os.WriteFile(imgPath, img, 0o644))
	out, err := exec.Command("mtype", "-i", imgPath, "::parameters.txt").CombinedOutput()
	if err != nil {
		t.Fatalf("mtype: %v: %s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	slices.Sort(lines)
	token, _ := e.node.DriverInternalInfo["agent_secret_token"].(string)
	want := []string{"boot_method=vmedia", "ipa-agent-token=" + token, "ipa-api-url=http://127.0.0.1:6385"}
	if token == "" || strings.Join(lines, "|") != strings.Join(want, "|") {
		t.Fatalf("parameters.txt %q, want %q", lines, want)
	}
	must(t, e.boot.CleanUpRamdisk(e.ctx, e.task))
	if usb := e.insertedMedia("USBStick"); usb != "" {
		t.Fatalf("USB stick still holds %q", usb)
	}
	if status, _ := httpGet(t, cfgURL); status != http.StatusNotFound {
		t.Fatalf("configuration image still served: %d", status)
	}
}

type portList []*model.Port

func (l portList) ListPorts(context.Context, store.PortFilter, store.ListOptions) ([]*model.Port, error) {
	return l, nil
}

// The ramdisk is told the MAC address of the port whose VIF it boots
// through (BOOTIF), as upstream's get_single_nic_with_vif_port_id finds it.
func TestVirtualMediaBOOTIF(t *testing.T) {
	needTool(t, "xorriso")
	e := newBootEnv(t, nil)
	mac := "52:54:00:aa:bb:02"
	e.boot.opts.Ports = portList{
		{Address: ptrTo("52:54:00:aa:bb:01")},
		{Address: &mac, InternalInfo: map[string]any{"cleaning_vif_port_id": "vif-2"}},
	}
	e.boot.opts.CurrentVIF = func(_ *driver.Task, ii map[string]any) string { s, _ := ii["cleaning_vif_port_id"].(string); return s }
	must(t, e.boot.PrepareRamdisk(e.ctx, e.task, map[string]any{}))
	_, iso := httpGet(t, e.insertedCD())
	isoPath := filepath.Join(t.TempDir(), "boot.iso")
	must(t, os.WriteFile(isoPath, iso, 0o644))
	cfg, err := image.ReadISOFile(e.ctx, isoPath, "/isolinux/isolinux.cfg")
	must(t, err)
	if !strings.Contains(string(cfg), " BOOTIF="+mac+" ") {
		t.Fatalf("isolinux.cfg lacks BOOTIF=%s: %q", mac, cfg)
	}
}

func ptrTo[T any](v T) *T { return &v }
