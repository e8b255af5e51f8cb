package redfish

import (
	"bytes"
	"context"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
)

// isoServer serves ISOs by path on 127.0.0.1 and counts their downloads
// (GETs; the cache's HEADs only ask for the modification time).
type isoServer struct {
	url    string
	mu     sync.Mutex
	gets   map[string]int
	failed atomic.Int32 // GETs still to answer with a 500
}

func newISOServer(t *testing.T, isos map[string]string) *isoServer {
	t.Helper()
	s := &isoServer{gets: map[string]int{}}
	modified := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := isos[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		if r.Method == http.MethodGet {
			s.mu.Lock()
			s.gets[r.URL.Path]++
			s.mu.Unlock()
			if s.failed.Load() > 0 {
				s.failed.Add(-1)
				http.Error(w, "boom", http.StatusInternalServerError)
				return
			}
		}
		http.ServeContent(w, r, filepath.Base(r.URL.Path), modified, bytes.NewReader([]byte(body)))
	}))
	t.Cleanup(srv.Close)
	s.url = srv.URL
	return s
}

func (s *isoServer) downloads(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gets[path]
}

// secondNode is another node behind the same emulated system.
func (e *bootEnv) secondNode(uuid string) *driver.Task {
	n := &model.Node{
		ID: e.node.ID + 1, UUID: uuid, Driver: e.node.Driver, ProvisionState: e.node.ProvisionState,
		DriverInfo: maps.Clone(e.node.DriverInfo), DriverInternalInfo: map[string]any{}, Properties: map[string]any{},
	}
	return &driver.Task{Node: n, Driver: e.drvIfs, Log: e.task.Log}
}

// masterFiles are the cached images (the cache's temporary directories
// left out).
func masterFiles(t *testing.T, dir string) map[string]os.FileInfo {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	out := map[string]os.FileInfo{}
	for _, en := range entries {
		if en.Type().IsRegular() {
			info, err := en.Info()
			must(t, err)
			out[en.Name()] = info
		}
	}
	return out
}

func links(t *testing.T, info os.FileInfo) uint64 {
	t.Helper()
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		t.Fatal("no link count")
	}
	return uint64(st.Nlink)
}

func TestVirtualMediaISOCacheDownloadsOnce(t *testing.T) {
	srv := newISOServer(t, map[string]string{"/ipa.iso": "PREBUILT-ISO"})
	master := filepath.Join(t.TempDir(), "master_iso_images")
	e := newBootEnv(t, func(o *BootOptions) { o.ISOMasterPath = master })
	e.node.DriverInfo["redfish_deploy_iso"] = srv.url + "/ipa.iso"
	other := e.secondNode("6b0ba4b4-9a2a-4f70-8b1e-5d3b0f6f6a01")

	must(t, e.boot.PrepareRamdisk(e.ctx, e.task, map[string]any{}))
	must(t, e.boot.PrepareRamdisk(e.ctx, other, map[string]any{}))
	if n := srv.downloads("/ipa.iso"); n != 1 {
		t.Fatalf("the ISO was downloaded %d times for two nodes, want once", n)
	}
	for _, uuid := range []string{testNode, other.Node.UUID} {
		url := e.srvURL + "/redfish/boot-" + uuid + ".iso"
		if status, body := httpGet(t, url); status != http.StatusOK || string(body) != "PREBUILT-ISO" {
			t.Fatalf("%s served %d %q", url, status, body)
		}
	}
	files := masterFiles(t, master)
	if len(files) != 1 {
		t.Fatalf("master directory holds %v, want one image", files)
	}
	for _, info := range files {
		// The master copy and the two published links.
		if l := links(t, info); l != 3 {
			t.Fatalf("master copy has %d links, want 3", l)
		}
	}

	// Rescue of the same ISO, and a node prepared again after its clean
	// up, use the cached copy.
	must(t, e.boot.CleanUpRamdisk(e.ctx, e.task))
	e.node.ProvisionState = states.Rescuing
	e.node.DriverInfo["rescue_iso"] = srv.url + "/ipa.iso"
	must(t, e.boot.PrepareRamdisk(e.ctx, e.task, map[string]any{}))
	if n := srv.downloads("/ipa.iso"); n != 1 {
		t.Fatalf("the cached ISO was downloaded again (%d downloads)", n)
	}
}

func TestVirtualMediaISOCacheConcurrentNodes(t *testing.T) {
	srv := newISOServer(t, map[string]string{"/ipa.iso": "PREBUILT-ISO"})
	master := filepath.Join(t.TempDir(), "master_iso_images")
	e := newBootEnv(t, func(o *BootOptions) { o.ISOMasterPath = master })
	href := srv.url + "/ipa.iso"
	tasks := []*driver.Task{
		e.secondNode("6b0ba4b4-9a2a-4f70-8b1e-5d3b0f6f6a01"), e.secondNode("6b0ba4b4-9a2a-4f70-8b1e-5d3b0f6f6a02"),
		e.secondNode("6b0ba4b4-9a2a-4f70-8b1e-5d3b0f6f6a03"), e.secondNode("6b0ba4b4-9a2a-4f70-8b1e-5d3b0f6f6a04"),
	}
	var wg sync.WaitGroup
	errc := make(chan error, len(tasks))
	for _, task := range tasks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, err := e.boot.parseDriverInfo(task)
			if err == nil {
				_, err = e.boot.prepareRemoteISO(context.Background(), task, d, href, "local")
			}
			errc <- err
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		must(t, err)
	}
	if n := srv.downloads("/ipa.iso"); n != 1 {
		t.Fatalf("%d nodes at once downloaded the ISO %d times, want once", len(tasks), n)
	}
}

func TestVirtualMediaISOCacheFailedDownloadCachesNothing(t *testing.T) {
	srv := newISOServer(t, map[string]string{"/ipa.iso": "PREBUILT-ISO"})
	srv.failed.Store(1)
	master := filepath.Join(t.TempDir(), "master_iso_images")
	e := newBootEnv(t, func(o *BootOptions) { o.ISOMasterPath = master })
	e.node.DriverInfo["deploy_iso"] = srv.url + "/ipa.iso"

	if err := e.boot.PrepareRamdisk(e.ctx, e.task, map[string]any{}); err == nil {
		t.Fatal("a failed ISO download was not reported")
	}
	entries, err := os.ReadDir(master)
	must(t, err)
	if len(entries) != 0 {
		t.Fatalf("a failed download left %v in the cache", entries)
	}
	must(t, e.boot.PrepareRamdisk(e.ctx, e.task, map[string]any{}))
	if n := srv.downloads("/ipa.iso"); n != 2 {
		t.Fatalf("%d downloads, want the failed one and a new one", n)
	}
	if files := masterFiles(t, master); len(files) != 1 {
		t.Fatalf("master directory holds %v after a good download", files)
	}
}

func TestVirtualMediaISOCacheSizeLimit(t *testing.T) {
	srv := newISOServer(t, map[string]string{"/one.iso": "FIRST-ISO-1", "/two.iso": "SECOND-ISO2"})
	master := filepath.Join(t.TempDir(), "master_iso_images")
	// Room for one of the two images.
	e := newBootEnv(t, func(o *BootOptions) { o.ISOMasterPath, o.ISOCacheSize = master, 11 })

	e.node.DriverInfo["deploy_iso"] = srv.url + "/one.iso"
	must(t, e.boot.PrepareRamdisk(e.ctx, e.task, map[string]any{}))
	must(t, e.boot.CleanUpRamdisk(e.ctx, e.task))
	e.node.DriverInfo["deploy_iso"] = srv.url + "/two.iso"
	must(t, e.boot.PrepareRamdisk(e.ctx, e.task, map[string]any{}))
	files := masterFiles(t, master)
	if len(files) != 1 {
		t.Fatalf("master directory holds %v over its size limit", files)
	}
	for _, info := range files {
		if links(t, info) < 2 {
			t.Fatal("the image in use was evicted instead of the unused one")
		}
	}
	must(t, e.boot.CleanUpRamdisk(e.ctx, e.task))
	e.node.DriverInfo["deploy_iso"] = srv.url + "/one.iso"
	must(t, e.boot.PrepareRamdisk(e.ctx, e.task, map[string]any{}))
	if n := srv.downloads("/one.iso"); n != 2 {
		t.Fatalf("the evicted ISO was downloaded %d times, want twice", n)
	}
}

func TestVirtualMediaISOWithoutCacheDownloadsEachTime(t *testing.T) {
	srv := newISOServer(t, map[string]string{"/ipa.iso": "PREBUILT-ISO"})
	e := newBootEnv(t, func(o *BootOptions) { o.ISOMasterPath = "" })
	e.node.DriverInfo["deploy_iso"] = srv.url + "/ipa.iso"
	other := e.secondNode("6b0ba4b4-9a2a-4f70-8b1e-5d3b0f6f6a01")
	must(t, e.boot.PrepareRamdisk(e.ctx, e.task, map[string]any{}))
	must(t, e.boot.PrepareRamdisk(e.ctx, other, map[string]any{}))
	if n := srv.downloads("/ipa.iso"); n != 2 {
		t.Fatalf("without iso_master_path %d downloads for two nodes, want two", n)
	}
}

func TestBootOptionsISOCacheFromConfig(t *testing.T) {
	c, err := config.Load(config.LoadOptions{})
	must(t, err)
	o := BootOptionsFromConfig(c)
	if o.ISOMasterPath != "/var/lib/ironic/master_iso_images" || o.ISOCacheSize != 20480<<20 || o.ISOCacheTTL != 10080*time.Minute || o.isoCache == nil {
		t.Fatalf("default ISO cache options %q %d %s", o.ISOMasterPath, o.ISOCacheSize, o.ISOCacheTTL)
	}
	c, err = config.Load(config.LoadOptions{Overrides: map[string]map[string]string{
		"deploy": {"iso_master_path": "/srv/isos", "iso_cache_size": "7", "iso_cache_ttl": "3"},
	}})
	must(t, err)
	o = BootOptionsFromConfig(c)
	if o.ISOMasterPath != "/srv/isos" || o.ISOCacheSize != 7<<20 || o.ISOCacheTTL != 3*time.Minute {
		t.Fatalf("ISO cache options %q %d %s", o.ISOMasterPath, o.ISOCacheSize, o.ISOCacheTTL)
	}
}
