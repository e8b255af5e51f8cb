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
