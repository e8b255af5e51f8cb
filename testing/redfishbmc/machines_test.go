package redfishbmc

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/openkeel/ironic/testing/await"
)

// bootISO writes an ISO whose grub.cfg boots a kernel with params, as the
// conductor's virtual media ISOs do, and serves it.
func bootISO(t *testing.T, params string) string {
	t.Helper()
	if _, err := exec.LookPath("xorriso"); err != nil {
		t.Skip("xorriso is not installed")
	}
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	if err := os.MkdirAll(filepath.Join(root, "EFI", "BOOT"), 0o755); err != nil {
		t.Fatal(err)
	}
	grub := "set default=0\nmenuentry \"boot_partition\" {\nlinux /vmlinuz " + params + " --\ninitrd /initrd\n}\n"
	if err := os.WriteFile(filepath.Join(root, "EFI", "BOOT", "grub.cfg"), []byte(grub), 0o644); err != nil {
		t.Fatal(err)
	}
	iso := filepath.Join(dir, "boot.iso")
	if out, err := exec.Command("xorriso", "-as", "mkisofs", "-r", "-o", iso, root).CombinedOutput(); err != nil {
		t.Fatalf("xorriso: %v\n%s", err, out)
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	t.Cleanup(srv.Close)
	return srv.URL + "/boot.iso"
}

// ramdisks records what a machine started and stopped.
type ramdisks struct {
	mu      sync.Mutex
	started []Ramdisk
	stopped int
}

func (r *ramdisks) start(_ context.Context, rd Ramdisk) (func(), error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.started = append(r.started, rd)
	return func() { r.mu.Lock(); r.stopped++; r.mu.Unlock() }, nil
}

func (r *ramdisks) counts() (started, stopped int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.started), r.stopped
}

// A machine powered on from the virtual CD runs the ramdisk of the ISO
// inserted, with the kernel parameters of its grub.cfg, its MACs and its
// hardware's inventory; the ramdisk's power off stops it; powered on
// again once the one-time override is spent, it boots its disk.
func TestMachineBootsTheInsertedISO(t *testing.T) {
	iso := bootISO(t, "ipa-api-url=http://127.0.0.1:6385 ipa-agent-token=tok boot_method=vmedia")
	b := New(t).System("m1", MemoryGiB(16), StorageDrive(100<<30),
		Processor(CPU{Arch: "x86", Cores: 4, Threads: 8, Model: "Lab CPU"}),
		EthernetInterface("1", "52:54:00:12:34:57", "Enabled"))
	c := call{t: t, base: b.URL()}
	resp, _ := c.do(http.MethodPost, "/redfish/v1/Managers/BMC/VirtualMedia/Cd/Actions/VirtualMedia.InsertMedia", map[string]any{"Image": iso})
	wantStatus(t, resp, http.StatusNoContent)
	resp, _ = c.do(http.MethodPatch, "/redfish/v1/Systems/m1", map[string]any{"Boot": map[string]string{
		"BootSourceOverrideTarget": "Cd", "BootSourceOverrideEnabled": "Once"}})
	wantStatus(t, resp, http.StatusNoContent)

	var rds ramdisks
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.RunMachines(ctx, 10*time.Millisecond, rds.start)
	}()
	t.Cleanup(func() { cancel(); <-done })

	resp, _ = c.do(http.MethodPost, "/redfish/v1/Systems/m1/Actions/ComputerSystem.Reset", map[string]string{"ResetType": "On"})
	wantStatus(t, resp, http.StatusNoContent)
	await.Until(t, 10*time.Second, "the ramdisk started", func() bool { n, _ := rds.counts(); return n == 1 })
	rds.mu.Lock()
	rd := rds.started[0]
	rds.mu.Unlock()
	if rd.Params["ipa-api-url"] != "http://127.0.0.1:6385" || rd.Params["ipa-agent-token"] != "tok" || rd.Device.Target != "Cd" || rd.Source != iso {
		t.Fatalf("ramdisk %+v", rd)
	}
	if len(rd.MACs) != 1 || rd.MACs[0] != "52:54:00:12:34:57" {
		t.Fatalf("MACs %v", rd.MACs)
	}
	mem, _ := rd.Inventory["memory"].(map[string]any)
	cpu, _ := rd.Inventory["cpu"].(map[string]any)
	disks, _ := rd.Inventory["disks"].([]any)
	if mem["physical_mb"] != 16384 || cpu["count"] != 8 || cpu["architecture"] != "x86_64" || len(disks) != 1 {
		t.Fatalf("inventory %v", rd.Inventory)
	}

	// The ramdisk's OS powers the machine off (standby.power_off).
	rd.PowerOff()
	await.Until(t, 10*time.Second, "the ramdisk stopped", func() bool { _, n := rds.counts(); return n == 1 })
	resp, _ = c.do(http.MethodPost, "/redfish/v1/Systems/m1/Actions/ComputerSystem.Reset", map[string]string{"ResetType": "On"})
	wantStatus(t, resp, http.StatusNoContent)
	// The machine has booted its disk once the one-time override is
	// spent; it started no second ramdisk.
	await.Until(t, 10*time.Second, "the override spent", func() bool { return b.Snapshot("m1").BootEnabled == "Disabled" })
	if n, _ := rds.counts(); n != 1 {
		t.Fatalf("%d ramdisks started, want 1", n)
	}
}

// A system with a power delay reports its old state until the delay has
// passed, to the client and to the machine behind it.
func TestPowerDelay(t *testing.T) {
	b := New(t).System("s1", PowerState(On), PowerDelay(2*time.Second))
	c := call{t: t, base: b.URL()}
	resp, _ := c.do(http.MethodPost, "/redfish/v1/Systems/s1/Actions/ComputerSystem.Reset", map[string]string{"ResetType": "ForceOff"})
	wantStatus(t, resp, http.StatusNoContent)
	if got := b.Power("s1"); got != On {
		t.Fatalf("power right after ForceOff: %s", got)
	}
	await.Until(t, 5*time.Second, "the system off", func() bool {
		_, doc := c.do(http.MethodGet, "/redfish/v1/Systems/s1", nil)
		return doc["PowerState"] == Off
	})
	if got := b.Snapshot("s1").PowerState; got != Off {
		t.Fatalf("snapshot after the delay: %s", got)
	}
}

// UEFI HTTP boot starts the ramdisk of the ISO at Boot.HttpBootUri, as
// the redfish-https boot interface sets it.
func TestMachineHTTPBoots(t *testing.T) {
	iso := bootISO(t, "ipa-api-url=http://127.0.0.1:6385")
	b := New(t).System("m1", EthernetInterface("1", "52:54:00:12:34:57", "Enabled"))
	c := call{t: t, base: b.URL()}
	resp, _ := c.do(http.MethodPatch, "/redfish/v1/Systems/m1", map[string]any{"Boot": map[string]any{
		"BootSourceOverrideTarget": "UefiHttp", "BootSourceOverrideEnabled": "Once", "HttpBootUri": iso}})
	wantStatus(t, resp, http.StatusNoContent)
	var rds ramdisks
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.RunMachines(ctx, 10*time.Millisecond, rds.start)
	}()
	resp, _ = c.do(http.MethodPost, "/redfish/v1/Systems/m1/Actions/ComputerSystem.Reset", map[string]string{"ResetType": "On"})
	wantStatus(t, resp, http.StatusNoContent)
	await.Until(t, 10*time.Second, "the ramdisk started", func() bool { n, _ := rds.counts(); return n == 1 })
	// The lab stopping takes the ramdisk down with it.
	cancel()
	<-done
	rds.mu.Lock()
	defer rds.mu.Unlock()
	if rd := rds.started[0]; rd.Device.Target != "UefiHttp" || rd.Source != iso || rd.Params["ipa-api-url"] != "http://127.0.0.1:6385" {
		t.Fatalf("ramdisk %+v", rd)
	}
	if rds.stopped != 1 {
		t.Fatalf("%d ramdisks stopped at the end, want 1", rds.stopped)
	}
}
