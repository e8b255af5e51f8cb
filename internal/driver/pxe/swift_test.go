package pxe

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/image"
	"github.com/openkeel/ironic/testing/swift"
)

const (
	swiftKernelID  = "6d9c51a0-52b6-4a8e-9d43-4a1f4e0e8f11"
	swiftRamdiskID = "0b7e2c43-9f1d-4d5e-8a62-3c1f0e9d7a25"
	swiftAccount   = "AUTH_acct"
)

// swiftEnv is an iPXE node whose agent images are Glance images stored in
// Swift: a Glance answering their records (and counting downloads) and a
// Swift holding their data behind the account's temporary URL key.
type swiftEnv struct {
	*env
	swift     *swift.Fixture
	downloads *atomic.Int32
}

func newSwiftEnv(t *testing.T) *swiftEnv {
	t.Helper()
	e := newEnv(t, "uefi")
	var downloads atomic.Int32
	glance := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := strings.TrimPrefix(r.URL.Path, "/v2/images/")
		if strings.HasSuffix(id, "/file") {
			downloads.Add(1)
			_, _ = w.Write([]byte("FROM-GLANCE"))
			return
		}
		if id != swiftKernelID && id != swiftRamdiskID {
			http.NotFound(w, r)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"id": id, "status": "active", "visibility": "public",
			"disk_format": "aki", "container_format": "aki", "size": 6})
	}))
	t.Cleanup(glance.Close)
	iopts := image.DefaultOptions()
	iopts.FileURLAllowedPaths = e.opts.Cache.Fetcher.Opts.FileURLAllowedPaths
	sources, err := image.NewSources(iopts, &image.GlanceService{
		Auth: func(context.Context) (string, string, error) { return "token", glance.URL, nil },
		Opts: iopts,
	})
	if err != nil {
		t.Fatal(err)
	}
	sw := swift.New(t)
	sw.SetTempURLKey(swiftAccount, "s3cr3t", false)
	sw.PutObject(swiftAccount, "glance", swiftKernelID, []byte("SWIFT-KERNEL"))
	sw.PutObject(swiftAccount, "glance", swiftRamdiskID, []byte("SWIFT-RAMDISK"))
	// Agent images not taken from Swift go through the master cache,
	// which then also reaches Glance.
	e.opts.Fetcher = image.NewFetcher(sources, iopts)
	if e.opts.Cache, err = image.NewCache(e.master, 1<<30, time.Hour, false, e.opts.Fetcher); err != nil {
		t.Fatal(err)
	}
	e.opts.IPXEUseSwift = true
	e.opts.Swift = &image.SwiftTempURLs{EndpointURL: sw.AccountURL("acct"), APIVersion: "v1", Account: swiftAccount,
		AccountPrefix: "AUTH", Container: "glance", Key: "s3cr3t", Duration: 20 * time.Minute, Now: sw.Now}
	e.node.DriverInfo["deploy_kernel"] = swiftKernelID
	e.node.DriverInfo["deploy_ramdisk"] = "glance://" + swiftRamdiskID
	return &swiftEnv{env: e, swift: sw, downloads: &downloads}
}

// get fetches u as the node's iPXE would.
func get(t *testing.T, u string) (int, string) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// With [pxe]/ipxe_use_swift, the iPXE script fetches Glance agent images
// from Swift temporary URLs: nothing is downloaded from Glance or written
// under http_root for them, and clean-up has nothing of them to remove.
func TestIPXEUseSwift(t *testing.T) {
	e := newSwiftEnv(t)
	ctx := context.Background()
	if err := NewIPXE(e.opts).PrepareRamdisk(ctx, e.task, nil); err != nil {
		t.Fatal(err)
	}
	cfg, err := os.ReadFile(filepath.Join(e.http, e.node.UUID, "config"))
	if err != nil {
		t.Fatal(err)
	}
	base := e.swift.URL() + "/v1/" + swiftAccount + "/glance/"
	kernel := regexp.MustCompile(`(?m)^kernel (\S+) .* initrd=(\S+) `).FindStringSubmatch(string(cfg))
	initrd := regexp.MustCompile(`(?m)^initrd (\S+) `).FindStringSubmatch(string(cfg))
	if kernel == nil || initrd == nil {
		t.Fatalf("no kernel or initrd line in the iPXE script:\n%s", cfg)
	}
	if !strings.HasPrefix(kernel[1], base+swiftKernelID+"?temp_url_sig=") || !strings.HasPrefix(initrd[1], base+swiftRamdiskID+"?temp_url_sig=") {
		t.Fatalf("kernel %s, initrd %s: not Swift temporary URLs of the images", kernel[1], initrd[1])
	}
	// The kernel names its initrd by the URL's last path element.
	if kernel[2] != swiftRamdiskID {
		t.Fatalf("initrd= %s, want the ramdisk image id", kernel[2])
	}
	for u, want := range map[string]string{kernel[1]: "SWIFT-KERNEL", initrd[1]: "SWIFT-RAMDISK"} {
		if status, body := get(t, u); status != http.StatusOK || body != want {
			t.Fatalf("GET %s: %d %q, want the image data through a valid signature", u, status, body)
		}
	}
	// A signature is only good for what it signs.
	forged := strings.Replace(kernel[1], swiftKernelID, swiftRamdiskID, 1)
	if status, _ := get(t, forged); status != http.StatusUnauthorized {
		t.Fatalf("GET with another object's signature: %d", status)
	}
	if got := tree(t, e.http); slices.ContainsFunc(got, func(s string) bool { return strings.Contains(s, "deploy_") }) {
		t.Fatalf("agent images written under http_root: %v", got)
	}
	if n := e.downloads.Load(); n != 0 {
		t.Fatalf("%d downloads from Glance", n)
	}
	if got := tree(t, e.master); len(got) != 0 {
		t.Fatalf("agent images cached: %v", got)
	}
	if err := NewIPXE(e.opts).CleanUpRamdisk(ctx, e.task); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(e.http, e.node.UUID)); !os.IsNotExist(err) {
		t.Fatalf("node folder left after clean-up: %v", err)
	}
}

// Only Glance images come from Swift: a file:// ramdisk is still copied
// under http_root and named there; the pxe interface ignores the option.
func TestIPXEUseSwiftOnlyGlanceImages(t *testing.T) {
	e := newSwiftEnv(t)
	ctx := context.Background()
	e.node.DriverInfo["deploy_ramdisk"] = "file://" + filepath.Join(filepath.Dir(e.tftp), "images", "ramdisk")
	if err := NewIPXE(e.opts).PrepareRamdisk(ctx, e.task, nil); err != nil {
		t.Fatal(err)
	}
	cfg, _ := os.ReadFile(filepath.Join(e.http, e.node.UUID, "config"))
	if !strings.Contains(string(cfg), "initrd=deploy_ramdisk ") || !strings.Contains(string(cfg), "initrd http://127.0.0.1:8080/"+e.node.UUID+"/deploy_ramdisk ") ||
		!strings.Contains(string(cfg), "kernel "+e.swift.URL()+"/v1/"+swiftAccount+"/glance/"+swiftKernelID+"?temp_url_sig=") {
		t.Fatalf("iPXE script:\n%s", cfg)
	}
	got := tree(t, e.http)
	if !slices.Contains(got, e.node.UUID+"/deploy_ramdisk -rw-r--r--") || slices.Contains(got, e.node.UUID+"/deploy_kernel -rw-r--r--") {
		t.Fatalf("http_root: %v", got)
	}

	e.node.DriverInfo["deploy_ramdisk"] = swiftRamdiskID
	if err := NewPXE(e.opts).PrepareRamdisk(ctx, e.task, nil); err != nil {
		t.Fatal(err)
	}
	for _, label := range []string{"deploy_kernel", "deploy_ramdisk"} {
		if b, err := os.ReadFile(filepath.Join(e.tftp, e.node.UUID, label)); err != nil || string(b) != "FROM-GLANCE" {
			t.Fatalf("pxe %s: %q %v, want the Glance copy", label, b, err)
		}
	}
}

// Without the Swift options, the boot is refused with upstream's error
// before any configuration is written.
func TestIPXEUseSwiftMissingKey(t *testing.T) {
	e := newSwiftEnv(t)
	e.opts.Swift.Key = ""
	err := NewIPXE(e.opts).PrepareRamdisk(context.Background(), e.task, nil)
	want := `Swift temporary URLs require a shared secret to be created. You must provide "swift_temp_url_key" as a config option or pre-generate the key on the project used to access Swift.`
	if !errs.Is(err, errs.ClassMissingParameterValue) || err.Error() != want {
		t.Fatalf("err %v", err)
	}
	if _, err := os.Stat(filepath.Join(e.http, e.node.UUID)); !os.IsNotExist(err) {
		t.Fatalf("node folder written: %v", err)
	}
	if len(e.mgmt.calls) != 0 {
		t.Fatalf("boot device set: %v", e.mgmt.calls)
	}
}
