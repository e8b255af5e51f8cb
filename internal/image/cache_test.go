package image

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/errs"
)

// The cache drops unused masters older than its TTL, and never a master
// a node still links to.
func TestCacheTTLAndLinkedMasters(t *testing.T) {
	var gets atomic.Int32
	modTime := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			gets.Add(1)
		}
		http.ServeContent(w, r, "", modTime, bytes.NewReader([]byte(r.URL.Path+" contents")))
	}))
	t.Cleanup(srv.Close)
	opts := testOpts()
	opts.DisableDeepInspection = true
	sources, err := NewSources(opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	c, err := NewCache(filepath.Join(dir, "master"), 1<<20, time.Hour, false, NewFetcher(sources, opts))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	c.Now = func() time.Time { return now }
	ctx := context.Background()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	if err := c.FetchImage(ctx, srv.URL+"/a", a, nil, FetchOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.FetchImage(ctx, srv.URL+"/b", b, nil, FetchOptions{}); err != nil {
		t.Fatal(err)
	}
	// A second node asking for a cached image gets a link, no download.
	if err := c.FetchImage(ctx, srv.URL+"/a", filepath.Join(dir, "a2"), nil, FetchOptions{}); err != nil || gets.Load() != 2 {
		t.Fatalf("cached fetch: %v, %d downloads", err, gets.Load())
	}
	os.Remove(a)
	os.Remove(filepath.Join(dir, "a2"))
	now = now.Add(2 * time.Hour)
	c.CleanUp(0)
	if _, err := os.Stat(filepath.Join(c.MasterDir, MasterFileName(srv.URL+"/a", false))); !os.IsNotExist(err) {
		t.Fatalf("expired unused master kept: %v", err)
	}
	if _, err := os.Stat(filepath.Join(c.MasterDir, MasterFileName(srv.URL+"/b", false))); err != nil {
		t.Fatalf("master in use removed: %v", err)
	}
}

// Before a download the cache makes room for the image by dropping
// unused masters, and fails the deployment when it cannot.
func TestCacheEnsureSpaceFor(t *testing.T) {
	const mib = 1 << 20
	files := map[string][]byte{"/one": bytes.Repeat([]byte{1}, mib), "/two": bytes.Repeat([]byte{2}, 2*mib), "/big": bytes.Repeat([]byte{3}, 5*mib)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "", time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), bytes.NewReader(files[r.URL.Path]))
	}))
	t.Cleanup(srv.Close)
	opts := testOpts()
	opts.DisableDeepInspection = true
	sources, err := NewSources(opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	c, err := NewCache(filepath.Join(dir, "master"), 100*mib, time.Hour, false, NewFetcher(sources, opts))
	if err != nil {
		t.Fatal(err)
	}
	// A 2.5 MiB filesystem holding only the cache.
	c.FreeSpace = func(string) (int64, error) { return 5*mib/2 - c.totalSize(), nil }
	ctx := context.Background()
	one := filepath.Join(dir, "one")
	if err := c.EnsureSpaceFor(ctx, srv.URL+"/one"); err != nil {
		t.Fatal(err)
	}
	if err := c.FetchImage(ctx, srv.URL+"/one", one, nil, FetchOptions{}); err != nil {
		t.Fatal(err)
	}
	os.Remove(one)
	if err := c.EnsureSpaceFor(ctx, srv.URL+"/two"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(c.MasterDir, MasterFileName(srv.URL+"/one", false))); !os.IsNotExist(err) {
		t.Fatalf("unused master kept although its room was needed: %v", err)
	}
	err = c.EnsureSpaceFor(ctx, srv.URL+"/big")
	wantClass(t, err, "InstanceDeployFailure", "Failed to deploy instance: Disk volume where '"+c.MasterDir+"' is located doesn't have enough disk space. Required 5 MiB, only 2 MiB available space present.")
}

// Converting to raw needs room for the virtual size, or failing that for
// the size estimated with raw_image_growth_factor.
func TestFetchRoomForRawConversion(t *testing.T) {
	needTool(t, "qemu-img")
	dir := t.TempDir()
	raw := filepath.Join(dir, "disk.raw")
	content := append(bytes.Repeat([]byte{7}, 64<<10), make([]byte, 4<<20-64<<10)...)
	if err := os.WriteFile(raw, content, 0o644); err != nil {
		t.Fatal(err)
	}
	qcow := filepath.Join(dir, "disk.qcow2")
	run(t, "qemu-img", "convert", "-f", "raw", "-O", "qcow2", raw, qcow)
	opts := testOpts(dir)
	sources, err := NewSources(opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	f := NewFetcher(sources, opts)
	var asked []int64
	roomFor := func(limit int64) func(string, int64) error {
		return func(d string, amount int64) error {
			asked = append(asked, amount)
			if amount > limit {
				return errs.New(errs.ClassInsufficientDiskSpace, map[string]any{"path": d, "required": amount >> 20, "actual": limit >> 20})
			}
			return nil
		}
	}
	out := filepath.Join(dir, "out")
	st, _ := os.Stat(qcow)
	err = f.Fetch(context.Background(), "file://"+qcow, out, FetchOptions{ForceRaw: true, ExpectedFormat: "qcow2", Reclaim: roomFor(3 << 20)})
	if err != nil || len(asked) != 2 || asked[0] != 4<<20 || asked[1] != min(2*st.Size(), 4<<20) {
		t.Fatalf("fetch %v, room asked %v (qcow2 %d bytes)", err, asked, st.Size())
	}
	if got, _ := os.ReadFile(out); !bytes.Equal(got, content) {
		t.Fatal("conversion result differs")
	}
	asked = nil
	err = f.Fetch(context.Background(), "file://"+qcow, out+"2", FetchOptions{ForceRaw: true, ExpectedFormat: "qcow2", Reclaim: roomFor(0)})
	wantClass(t, err, "InsufficientDiskSpace", "")
	if _, serr := os.Stat(out + "2"); !os.IsNotExist(serr) {
		t.Fatalf("partial conversion left: %v", serr)
	}
}
