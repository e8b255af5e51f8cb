package image

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

type imageServer struct {
	*httptest.Server
	gets  atomic.Int32
	files map[string][]byte
	mod   time.Time
}

func newImageServer(t *testing.T, files map[string][]byte) *imageServer {
	t.Helper()
	s := &imageServer{files: files, mod: time.Now().Add(-time.Hour).UTC()}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, ok := s.files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		if r.Method == http.MethodGet {
			s.gets.Add(1)
			time.Sleep(20 * time.Millisecond) // widen the race window
		}
		w.Header().Set("Last-Modified", s.mod.Format(http.TimeFormat))
		w.Header().Set("Content-Length", fmt.Sprint(len(data)))
		if r.Method == http.MethodGet {
			w.Write(data)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

func sha(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

func newTestCache(t *testing.T, size int64) (*Cache, string) {
	t.Helper()
	dir := t.TempDir()
	src, err := NewSources(testOpts(dir), nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewCache(filepath.Join(dir, "master"), size, time.Hour, false, NewFetcher(src, testOpts(dir)))
	if err != nil {
		t.Fatal(err)
	}
	return c, dir
}

func TestCacheDownloadsOnceForTwoNodes(t *testing.T) {
	img := make([]byte, 3<<20)
	img[0] = 7
	srv := newImageServer(t, map[string][]byte{"/img.raw": img})
	c, dir := newTestCache(t, 1<<30)
	href := srv.URL + "/img.raw"
	var wg sync.WaitGroup
	errsOut := make([]error, 4)
	for i := range errsOut {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errsOut[i] = c.FetchImage(t.Context(), href, filepath.Join(dir, fmt.Sprintf("node%d", i)), nil,
				FetchOptions{ExpectedFormat: "raw", Checksum: sha(img), ChecksumAlgo: "sha256"})
		}()
	}
	wg.Wait()
	for _, err := range errsOut {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := srv.gets.Load(); n != 1 {
		t.Fatalf("%d downloads, want 1", n)
	}
	master, err := os.Stat(filepath.Join(c.MasterDir, MasterFileName(href, false)))
	if err != nil {
		t.Fatal(err)
	}
	for i := range errsOut {
		st, err := os.Stat(filepath.Join(dir, fmt.Sprintf("node%d", i)))
		if err != nil || !os.SameFile(st, master) {
			t.Fatalf("node%d is not a link to the master: %v", i, err)
		}
	}
}

func TestCacheWrongChecksumLeavesNothing(t *testing.T) {
	img := []byte("not what you expect")
	srv := newImageServer(t, map[string][]byte{"/img.raw": img})
	c, dir := newTestCache(t, 1<<30)
	dest := filepath.Join(dir, "node")
	err := c.FetchImage(t.Context(), srv.URL+"/img.raw", dest, nil,
		FetchOptions{ExpectedFormat: "raw", Checksum: sha([]byte("other")), ChecksumAlgo: "sha256"})
	wantClass(t, err, "ImageChecksumError", "The supplied image checksum is invalid or does not match.")
	entries, _ := os.ReadDir(c.MasterDir)
	if len(entries) != 0 {
		t.Fatalf("cache holds %v after a failed download", entries)
	}
	if _, err := os.Stat(dest); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("destination exists: %v", err)
	}
	// md5 refused for streaming: the file is checked after download.
	c.Fetcher.Opts.AllowMD5 = false
	err = c.FetchImage(t.Context(), srv.URL+"/img.raw", dest, nil,
		FetchOptions{ExpectedFormat: "raw", Checksum: "md5:00000000000000000000000000000000"})
	wantClass(t, err, "ImageChecksumError", "")
}

func TestCacheSizeAndTTL(t *testing.T) {
	files := map[string][]byte{}
	for i := 0; i < 3; i++ {
		files[fmt.Sprintf("/%d", i)] = make([]byte, 1<<20)
	}
	srv := newImageServer(t, files)
	c, dir := newTestCache(t, 1<<30)
	for i := 0; i < 3; i++ {
		dest := filepath.Join(dir, "node")
		if err := c.FetchImage(t.Context(), fmt.Sprintf("%s/%d", srv.URL, i), dest, nil, FetchOptions{ExpectedFormat: "raw"}); err != nil {
			t.Fatal(err)
		}
		// The node is done with it: only the master remains.
		os.Remove(dest)
		past := time.Now().Add(time.Duration(i-10) * time.Minute)
		os.Chtimes(filepath.Join(c.MasterDir, MasterFileName(fmt.Sprintf("%s/%d", srv.URL, i), false)), past, past)
	}
	// A file in use (link count 2) is never removed.
	inUse := filepath.Join(c.MasterDir, MasterFileName(srv.URL+"/0", false))
	if err := os.Link(inUse, filepath.Join(dir, "busy")); err != nil {
		t.Fatal(err)
	}
	c.Size = 2<<20 + 1
	c.CleanUp(0)
	names := map[string]bool{}
	entries, _ := os.ReadDir(c.MasterDir)
	for _, e := range entries {
		names[e.Name()] = true
	}
	// Oldest unused (1) goes first; 0 is linked, 2 is the newest.
	if !names[MasterFileName(srv.URL+"/0", false)] || names[MasterFileName(srv.URL+"/1", false)] || !names[MasterFileName(srv.URL+"/2", false)] {
		t.Fatalf("after size clean-up: %v", names)
	}
	c.Now = func() time.Time { return time.Now().Add(2 * time.Hour) }
	c.CleanUp(0)
	entries, _ = os.ReadDir(c.MasterDir)
	if len(entries) != 1 || entries[0].Name() != MasterFileName(srv.URL+"/0", false) {
		t.Fatalf("after TTL clean-up: %v", entries)
	}
}

func TestFetchConvertsQcow2ToRaw(t *testing.T) {
	needTool(t, "qemu-img")
	dir := t.TempDir()
	q := filepath.Join(dir, "img.qcow2")
	run(t, "qemu-img", "create", "-f", "qcow2", q, "4M")
	src, _ := NewSources(testOpts(dir), nil)
	f := NewFetcher(src, testOpts(dir))
	out := filepath.Join(dir, "out")
	if err := f.Fetch(t.Context(), "file://"+q, out, FetchOptions{ForceRaw: true, ExpectedFormat: "qcow2"}); err != nil {
		t.Fatal(err)
	}
	info, err := ImgInfo(t.Context(), out, "")
	if err != nil || info.Format != "raw" || info.VirtualSize != 4<<20 {
		t.Fatalf("converted: %+v %v", info, err)
	}
	// A qcow2 claiming to be raw is refused.
	err = f.Fetch(t.Context(), "file://"+q, filepath.Join(dir, "out2"), FetchOptions{ForceRaw: true, ExpectedFormat: "raw"})
	wantClass(t, err, "InvalidImage", "")
	if _, err := os.Stat(filepath.Join(dir, "out2.part")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("partial file left behind")
	}
}

func TestHTTPErrors(t *testing.T) {
	srv := newImageServer(t, map[string][]byte{})
	h, _ := NewHTTPService(DefaultOptions())
	_, err := h.Show(t.Context(), srv.URL+"/missing")
	wantClass(t, err, "ImageRefValidationFailed", "Validation of image href "+srv.URL+"/missing failed, reason: Got HTTP code 404 instead of 200 in response to HEAD request.")
	err = h.Download(t.Context(), srv.URL+"/missing", new(nopWriter))
	wantClass(t, err, "ImageRefValidationFailed", "Validation of image href "+srv.URL+"/missing failed, reason: Got HTTP code 404 instead of 200 in response to GET request.")

	// A server that stops sending fails the download after the timeout.
	stall := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100")
		w.Write([]byte("x"))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer stall.Close()
	o := DefaultOptions()
	o.WebserverTimeout = 200 * time.Millisecond
	h, _ = NewHTTPService(o)
	err = h.Download(t.Context(), stall.URL, new(nopWriter))
	wantClass(t, err, "ImageDownloadFailed", "")
}

type nopWriter struct{}

func (nopWriter) Write(p []byte) (int, error) { return len(p), nil }

func TestFileSourceRestrictions(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "img"), []byte("x"))
	s := &FileService{AllowedPaths: []string{dir}}
	if _, err := s.Path("file://" + filepath.Join(dir, "img")); err != nil {
		t.Fatal(err)
	}
	_, err := s.Path("file:///etc/passwd")
	wantClass(t, err, "ImageRefValidationFailed", "Validation of image href file:///etc/passwd failed, reason: Security: The path /etc is not permitted in file URLs")
	_, err = s.Path("file:///var/tmp/x")
	wantClass(t, err, "ImageRefValidationFailed", "Validation of image href file:///var/tmp/x failed, reason: Security: Path /var/tmp/x is not allowed for image source file URLs")
	_, err = s.Path("file://" + dir + "/../x")
	wantClass(t, err, "ImageRefValidationFailed", "")
	_, err = s.Path("file://" + dir + "/none")
	wantClass(t, err, "ImageRefValidationFailed", "Validation of image href file://"+dir+"/none failed, reason: Specified image file not found.")

	src, _ := NewSources(testOpts(dir), nil)
	_, err = src.For("ftp://x/y")
	wantClass(t, err, "ImageRefValidationFailed", "Validation of image href ftp://x/y failed, reason: Image download protocol ftp is not supported.")
	_, err = src.For("not-a-uuid")
	wantClass(t, err, "ImageRefValidationFailed", "Validation of image href not-a-uuid failed, reason: Scheme-less image href is not a UUID.")
}
