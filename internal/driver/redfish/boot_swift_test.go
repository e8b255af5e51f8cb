package redfish

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/image"
	"github.com/openkeel/ironic/testing/keystone"
	fakeswift "github.com/openkeel/ironic/testing/swift"
)

// TestVirtualMediaSwift: with [redfish]/use_swift the deploy ISO is
// published to swift_container, expiring after
// swift_object_expiry_timeout, and the BMC gets its temporary URL with a
// filename parameter; clean-up deletes the object, a missing one being
// no failure.
func TestVirtualMediaSwift(t *testing.T) {
	needTool(t, "xorriso")
	ks := keystone.New(t).Project("service").User("ironic", "secret").Grant("ironic", "service", "admin")
	sw := fakeswift.New(t).ValidateTokens(ks.TokenValid)
	sw.Register(ks, ks.ProjectID("service"))
	account := fakeswift.AccountName(ks.ProjectID("service"))
	sw.SetTempURLKey(account, "vmedia-key", false)
	c, err := config.Load(config.LoadOptions{Overrides: map[string]map[string]string{
		"redfish": {"use_swift": "true", "swift_container": "vmedia", "swift_object_expiry_timeout": "1200"},
		"swift":   fakeswift.IronicSection(ks, "ironic", "secret", "service"),
	}})
	must(t, err)
	from := BootOptionsFromConfig(c)
	if from.Swift == nil || from.SwiftContainer != "vmedia" || from.SwiftObjectExpiry != 1200*time.Second {
		t.Fatalf("swift options %+v", from)
	}
	e := newBootEnv(t, func(o *BootOptions) {
		o.Swift, o.SwiftContainer, o.SwiftObjectExpiry = from.Swift, from.SwiftContainer, from.SwiftObjectExpiry
	})
	must(t, e.boot.PrepareRamdisk(e.ctx, e.task, map[string]any{"ipa-api-url": "http://192.0.2.1:6385"}))

	obj := "boot-" + testNode + ".iso"
	u := e.insertedCD()
	if !strings.HasPrefix(u, sw.URL()+"/v1/"+account+"/vmedia/"+obj+"?temp_url_sig=") || !strings.HasSuffix(u, "&filename=boot.iso") {
		t.Fatalf("BMC has %q in its CD", u)
	}
	status, iso := httpGet(t, u)
	if status != 200 {
		t.Fatalf("GET the temporary URL: %d", status)
	}
	isoPath := filepath.Join(t.TempDir(), "fetched.iso")
	must(t, os.WriteFile(isoPath, iso, 0o644))
	if kernel, err := image.ReadISOFile(e.ctx, isoPath, "/vmlinuz"); err != nil || string(kernel) != "FAKE-KERNEL" {
		t.Fatalf("kernel on the published ISO: %q %v", kernel, err)
	}
	o := sw.Object(account, "vmedia", obj)
	if o == nil || !o.DeleteAt.Equal(sw.Now().Add(1200*time.Second)) {
		t.Fatalf("object %v, want it to expire in 1200 s", o != nil)
	}
	if _, err := os.Stat(filepath.Join(e.httpRoot, "redfish", obj)); !os.IsNotExist(err) {
		t.Fatalf("ISO also published under http_root: %v", err)
	}

	must(t, e.boot.CleanUpRamdisk(e.ctx, e.task))
	if sw.Object(account, "vmedia", obj) != nil {
		t.Fatal("ISO left in Swift after clean up")
	}
	// Upstream only logs a failed deletion.
	must(t, e.boot.CleanUpRamdisk(e.ctx, e.task))
}

func TestAppendFilenameParam(t *testing.T) {
	for in, want := range map[string]string{
		"http://s/v1/a/c/o?temp_url_sig=ab&temp_url_expires=1": "http://s/v1/a/c/o?temp_url_sig=ab&temp_url_expires=1&filename=boot.iso",
		"http://s/v1/a/c/o":                "http://s/v1/a/c/o?filename=boot.iso",
		"http://s/v1/a/c/o?FileName=x.iso": "http://s/v1/a/c/o?FileName=x.iso",
	} {
		if got := appendFilenameParam(in, "boot.iso"); got != want {
			t.Errorf("%s: got %s, want %s", in, got, want)
		}
	}
}
