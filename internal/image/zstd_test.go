package image

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
)

// Issue 23: a zstd-compressed download is decompressed before its checks
// (upstream's _handle_zstd_compression), unless [conductor]/
// disable_zstandard_decompression.
func TestFetchDecompressesZstd(t *testing.T) {
	needTool(t, "zstd")
	dir := t.TempDir()
	disk := bytes.Repeat([]byte("raw disk block "), 8192)
	plain := filepath.Join(dir, "disk.raw")
	if err := os.WriteFile(plain, disk, 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, "zstd", "-q", plain, "-o", plain+".zst")
	compressed, err := os.ReadFile(plain + ".zst")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(compressed) }))
	t.Cleanup(srv.Close)
	for _, disabled := range []bool{false, true} {
		o := DefaultOptions()
		o.DisableZstdDecompression = disabled
		srcs, err := NewSources(o, nil)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(dir, "fetched")
		_ = os.Remove(dst)
		if err := NewFetcher(srcs, o).Fetch(context.Background(), srv.URL+"/disk.raw.zst", dst, FetchOptions{DisableValidation: true}); err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(dst)
		if want := map[bool][]byte{false: disk, true: compressed}[disabled]; !bytes.Equal(got, want) {
			t.Errorf("disable_zstandard_decompression=%v: got %d bytes, want %d", disabled, len(got), len(want))
		}
	}
}
