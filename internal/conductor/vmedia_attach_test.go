package conductor_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/httproot"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/rpc"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store/sqldb"
	"github.com/openkeel/ironic/testing/await"
	"github.com/openkeel/ironic/testing/redfishbmc"
)

// Fake management has no virtual media: reading answers upstream's
// refusal naming the call; attaching and detaching answer at once and
// their worker records why they failed.
func TestVirtualMediaOnFakeHardware(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		old := "an earlier failure"
		n := e.node(states.Manageable, func(n *model.Node) { n.LastError = &old })

		_, err := e.api.GetVirtualMedia(ctx, "", n.UUID)
		if class(err) != "UnsupportedDriverExtension" ||
			err.Error() != "Driver fake-hardware does not support get_virtual_media (disabled or not implemented)." {
			t.Fatalf("get virtual media: %v", err)
		}

		if err := e.api.AttachVirtualMedia(ctx, "", rpc.AttachVirtualMediaArgs{
			NodeID: n.UUID, DeviceType: "cdrom", ImageURL: "http://127.0.0.1:9/data.iso", ImageDownloadSource: "http",
		}); err != nil {
			t.Fatalf("attach: %v", err)
		}
		want := "Could not attach device cdrom to node " + n.UUID + ": Publishing images is not supported for driver fake-hardware"
		if got := e.waitLastError(n, old); got != want {
			t.Fatalf("last_error after attach %q, want %q", got, want)
		}
		if h := e.history(e.get(n)); len(h) != 1 || !strings.HasPrefix(h[0], "ERROR|UNKNOWN|"+want+"|") {
			t.Fatalf("history %v", h)
		}

		for _, c := range []struct {
			types []string
			shown string
		}{{nil, "None"}, {[]string{"cdrom", "disk"}, "['cdrom', 'disk']"}} {
			before := deref(e.get(n).LastError)
			if err := e.api.DetachVirtualMedia(ctx, "", n.UUID, c.types); err != nil {
				t.Fatalf("detach %v: %v", c.types, err)
			}
			want := "Could not detach device(s) " + c.shown + " from node " + n.UUID +
				": Driver fake-hardware does not support detach_virtual_media (disabled or not implemented)."
			if before == want {
				t.Fatalf("detach %v: last_error already %q", c.types, before)
			}
			if got := e.waitLastError(n, before); got != want {
				t.Fatalf("last_error after detach %v %q, want %q", c.types, got, want)
			}
		}
	})
}

// Attaching and detaching are refused while the node is in maintenance
// for a power failure, and nothing is cleared.
func TestVirtualMediaRefusedOnPowerFailure(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		fault, reason := "power failure", "power sync failed"
		n := e.node(states.Manageable, func(n *model.Node) {
			n.Maintenance, n.Fault, n.LastError = true, &fault, &reason
		})
		err := e.api.AttachVirtualMedia(ctx, "", rpc.AttachVirtualMediaArgs{NodeID: n.UUID, DeviceType: "cdrom", ImageURL: "http://127.0.0.1:9/x.iso"})
		if class(err) != "TemporaryFailure" || err.Error() != "Unable to attach virtual media for node "+n.UUID+" due to power failure state" {
			t.Fatalf("attach: %v", err)
		}
		err = e.api.DetachVirtualMedia(ctx, "", n.UUID, nil)
		if class(err) != "TemporaryFailure" || err.Error() != "Unable to detach virtual media for node "+n.UUID+" due to power failure state" {
			t.Fatalf("detach: %v", err)
		}
		if got := e.get(n); deref(got.LastError) != reason || got.Reservation != nil {
			t.Fatalf("node after refusals: last_error %q reservation %v", deref(got.LastError), got.Reservation)
		}
	})
}

// On the redfish hardware type an image the BMC can fetch itself goes to
// it as given; one to serve locally is downloaded and published under
// http_root/redfish. What was published for the device before goes.
func TestVirtualMediaOnRedfish(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		bmc := redfishbmc.New(t).WithBasicAuth(oobUser, oobPassword).System("sys-1")
		root := t.TempDir()
		e := newVmediaEnv(t, db, map[string]string{"http_root": root, "http_url": "http://127.0.0.1:8088/"})
		ctx := context.Background()
		n := e.enrollRedfish(bmc, oobPassword)
		published := filepath.Join(root, "redfish", "cdrom-"+n.UUID+".iso")
		if err := os.MkdirAll(filepath.Dir(published), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(published, []byte("stale"), 0o644); err != nil {
			t.Fatal(err)
		}

		const remote = "http://127.0.0.1:9/data.iso"
		e.attach(n, remote, "http")
		if img, inserted := bmcCD(t, bmc); img != remote || !inserted {
			t.Fatalf("BMC CD after attach over http: %q inserted=%v", img, inserted)
		}
		if _, err := os.Stat(published); !os.IsNotExist(err) {
			t.Fatalf("image published before still there: %v", err)
		}

		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "ISO bytes") }))
		t.Cleanup(srv.Close)
		e.attach(n, srv.URL+"/boot.iso", "local")
		want := "http://127.0.0.1:8088/redfish/cdrom-" + n.UUID + ".iso"
		if img, inserted := bmcCD(t, bmc); img != want || !inserted {
			t.Fatalf("BMC CD after a local attach: %q inserted=%v, want %s", img, inserted, want)
		}
		if data, err := os.ReadFile(published); err != nil || string(data) != "ISO bytes" {
			t.Fatalf("published image: %q %v", data, err)
		}
		list, err := e.api.GetVirtualMedia(ctx, "", n.UUID)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, d := range list["devices"].([]any) {
			img, _ := d.(map[string]any)["image"].(*string)
			found = found || (img != nil && *img == want)
		}
		if !found {
			t.Fatalf("get virtual media: %v", list)
		}

		if err := e.api.DetachVirtualMedia(ctx, "", n.UUID, []string{"cdrom"}); err != nil {
			t.Fatal(err)
		}
		if got := e.waitUnlocked(n); got.LastError != nil {
			t.Fatalf("detach: last_error %q", deref(got.LastError))
		}
		if _, inserted := bmcCD(t, bmc); inserted {
			t.Fatal("BMC CD still inserted after detach")
		}
	})
}

// attach attaches the image and waits for the worker to finish cleanly.
func (e *env) attach(n *model.Node, url, source string) {
	e.t.Helper()
	if err := e.api.AttachVirtualMedia(context.Background(), "", rpc.AttachVirtualMediaArgs{
		NodeID: n.UUID, DeviceType: "cdrom", ImageURL: url, ImageDownloadSource: source,
	}); err != nil {
		e.t.Fatalf("attach %s: %v", url, err)
	}
	if got := e.waitUnlocked(n); got.LastError != nil {
		e.t.Fatalf("attach %s: last_error %q", url, deref(got.LastError))
	}
}

// waitLastError waits for last_error to change from before.
func (e *env) waitLastError(n *model.Node, before string) string {
	e.t.Helper()
	var got *model.Node
	await.UntilReason(e.t, 10*time.Second, "last_error to change on an unlocked node", func() (bool, string) {
		got = e.get(n)
		return got.Reservation == nil && deref(got.LastError) != before, fmt.Sprintf("last_error stayed %q", before)
	})
	return deref(got.LastError)
}

// bmcCD is what the emulated BMC says its CD holds.
func bmcCD(t *testing.T, bmc *redfishbmc.BMC) (image string, inserted bool) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, bmc.URL()+"/redfish/v1/Managers/BMC/VirtualMedia/Cd", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth(oobUser, oobPassword)
	resp, err := bmc.Server().Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v struct {
		Image    *string
		Inserted bool
	}
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		t.Fatal(err)
	}
	if v.Image != nil {
		image = *v.Image
	}
	return image, v.Inserted
}

// newVmediaEnv is a conductor with the shipped redfish configuration and
// these [deploy] options (and sections), its drivers built as the service
// builds them.
func newVmediaEnv(t *testing.T, db *sqldb.DB, deploy map[string]string, sections ...map[string]map[string]string) *env {
	t.Helper()
	sections = append([]map[string]map[string]string{{"DEFAULT": redfishShipped, "deploy": deploy}}, sections...)
	return newBuiltinEnv(t, db, testConfig(t, sections...), nil, nil)
}

// isoServer serves body as any file, as the image store an operator
// attaches virtual media from.
func isoServer(t *testing.T, body string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, body) }))
	t.Cleanup(srv.Close)
	return srv
}

// attachDevice attaches url to the device with image_download_source
// local and waits for the worker to finish cleanly.
func (e *env) attachDevice(n *model.Node, device, url string) {
	e.t.Helper()
	if err := e.api.AttachVirtualMedia(context.Background(), "", rpc.AttachVirtualMediaArgs{
		NodeID: n.UUID, DeviceType: device, ImageURL: url, ImageDownloadSource: "local",
	}); err != nil {
		e.t.Fatalf("attach %s to %s: %v", url, device, err)
	}
	if got := e.waitUnlocked(n); got.LastError != nil {
		e.t.Fatalf("attach %s to %s: last_error %q", url, device, deref(got.LastError))
	}
}

// detach detaches the devices (all for nil) and waits for the worker to
// finish cleanly.
func (e *env) detach(n *model.Node, devices []string) {
	e.t.Helper()
	if err := e.api.DetachVirtualMedia(context.Background(), "", n.UUID, devices); err != nil {
		e.t.Fatalf("detach %v: %v", devices, err)
	}
	if got := e.waitUnlocked(n); got.LastError != nil {
		e.t.Fatalf("detach %v: last_error %q", devices, deref(got.LastError))
	}
}

// Detaching a device withdraws the image published for it: the file
// leaves http_root/redfish and its URL, served by the conductor's
// http_root server, answers 404; the other device's image stays until it
// is detached in turn. Deleting the node withdraws everything published
// for it (virtual media and the boot interface's ISO and configuration
// image), and nothing of another node.
func TestVirtualMediaDetachAndDeletionWithdrawImages(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		bmc := redfishbmc.New(t).WithBasicAuth(oobUser, oobPassword).System("sys-1")
		root := t.TempDir()
		files, err := httproot.NewHandler(root, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = files.Close() })
		httpRoot := httptest.NewServer(files)
		t.Cleanup(httpRoot.Close)
		e := newVmediaEnv(t, db, map[string]string{"http_root": root, "http_url": httpRoot.URL})
		ctx := context.Background()
		images := isoServer(t, "ISO bytes")
		n := e.enrollRedfish(bmc, oobPassword)
		cdrom := "/redfish/cdrom-" + n.UUID + ".iso"
		floppy := "/redfish/floppy-" + n.UUID + ".img"

		e.attachDevice(n, "cdrom", images.URL+"/boot.iso")
		e.attachDevice(n, "floppy", images.URL+"/config.img")
		if img, inserted := bmcCD(t, bmc); img != httpRoot.URL+cdrom || !inserted {
			t.Fatalf("BMC CD %q inserted=%v, want %s", img, inserted, httpRoot.URL+cdrom)
		}
		for _, p := range []string{cdrom, floppy} {
			if status, body := fetch(t, httpRoot.URL+p); status != http.StatusOK || body != "ISO bytes" {
				t.Fatalf("GET %s after attach: %d %q", p, status, body)
			}
		}

		e.detach(n, []string{"cdrom"})
		if _, err := os.Stat(filepath.Join(root, cdrom)); !os.IsNotExist(err) {
			t.Fatalf("%s still in http_root after detach: %v", cdrom, err)
		}
		if status, _ := fetch(t, httpRoot.URL+cdrom); status != http.StatusNotFound {
			t.Fatalf("GET %s after detach: %d, want 404", cdrom, status)
		}
		if status, _ := fetch(t, httpRoot.URL+floppy); status != http.StatusOK {
			t.Fatalf("GET %s, not detached: %d", floppy, status)
		}
		e.detach(n, nil)
		if status, _ := fetch(t, httpRoot.URL+floppy); status != http.StatusNotFound {
			t.Fatalf("GET %s after detaching every device: %d, want 404", floppy, status)
		}

		// Deletion: what attach and the boot interface published for the
		// node goes, another node's image stays.
		e.attachDevice(n, "cdrom", images.URL+"/boot.iso")
		others := []string{"boot-" + n.UUID + ".iso", "image-" + n.UUID + ".img"}
		keep := "cdrom-00000000-0000-4000-8000-000000000001.iso"
		for _, name := range append(others, keep) {
			if err := os.WriteFile(filepath.Join(root, "redfish", name), []byte("published"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := e.api.DestroyNode(ctx, "", n.UUID); err != nil {
			t.Fatalf("delete node: %v", err)
		}
		for _, p := range append([]string{cdrom}, "/redfish/"+others[0], "/redfish/"+others[1]) {
			if status, _ := fetch(t, httpRoot.URL+p); status != http.StatusNotFound {
				t.Errorf("GET %s after the node was deleted: %d, want 404", p, status)
			}
		}
		entries, err := os.ReadDir(filepath.Join(root, "redfish"))
		if err != nil || len(entries) != 1 || entries[0].Name() != keep {
			t.Fatalf("http_root/redfish after deletion: %v (%v), want only %s", entries, err, keep)
		}
	})
}

// With [redfish]/use_swift the images of attach_virtual_media are
// published to swift_container under a temporary URL; detach deletes the
// object, so the URL the BMC had answers 404, and so does node deletion.
func TestVirtualMediaSwiftWithdrawnOnDetachAndDeletion(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		s := newSwiftEnv(t)
		s.sw.SetTempURLKey(s.account, "vmedia-key", false)
		bmc := redfishbmc.New(t).WithBasicAuth(oobUser, oobPassword).System("sys-1")
		root := t.TempDir()
		e := newVmediaEnv(t, db, map[string]string{"http_root": root, "http_url": "http://127.0.0.1:9/"}, map[string]map[string]string{
			"redfish": {"use_swift": "true", "swift_container": "vmedia"},
			"swift":   s.section,
		})
		ctx := context.Background()
		images := isoServer(t, "ISO bytes")
		n := e.enrollRedfish(bmc, oobPassword)
		obj := "cdrom-" + n.UUID + ".iso"

		e.attachDevice(n, "cdrom", images.URL+"/boot.iso")
		u, inserted := bmcCD(t, bmc)
		if !inserted || !strings.HasPrefix(u, s.sw.URL()+"/v1/"+s.account+"/vmedia/"+obj+"?temp_url_sig=") {
			t.Fatalf("BMC CD %q inserted=%v, want a temporary URL of %s", u, inserted, obj)
		}
		if status, body := fetch(t, u); status != http.StatusOK || body != "ISO bytes" {
			t.Fatalf("GET the temporary URL: %d %q", status, body)
		}
		if _, err := os.Stat(filepath.Join(root, "redfish", obj)); !os.IsNotExist(err) {
			t.Fatalf("image also published under http_root: %v", err)
		}

		e.detach(n, []string{"cdrom"})
		if s.sw.Object(s.account, "vmedia", obj) != nil {
			t.Fatal("image left in Swift after detach")
		}
		if status, _ := fetch(t, u); status != http.StatusNotFound {
			t.Fatalf("GET the temporary URL after detach: %d, want 404", status)
		}

		e.attachDevice(n, "cdrom", images.URL+"/boot.iso")
		u, _ = bmcCD(t, bmc)
		if err := e.api.DestroyNode(ctx, "", n.UUID); err != nil {
			t.Fatalf("delete node: %v", err)
		}
		if objs := s.sw.Objects(s.account, "vmedia"); len(objs) != 0 {
			t.Fatalf("objects left in Swift after deletion: %v", objs)
		}
		if status, _ := fetch(t, u); status != http.StatusNotFound {
			t.Fatalf("GET the temporary URL after deletion: %d, want 404", status)
		}
	})
}
