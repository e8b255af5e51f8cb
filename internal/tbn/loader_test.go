package tbn

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/errs"
)

func writeTraits(t *testing.T, path, content string, mtime time.Time) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	// The loader watches the modification time; set it explicitly so the
	// test does not depend on the file system's timestamp resolution.
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

const oneTrait = "CUSTOM_TRAIT_NAME:\n  actions:\n    - action: attach_port\n      filter: port.is_port\n"

// Upstream's test_loader: the file is read once, re-read only when its
// modification time changes.
func TestLoaderRefresh(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tbn.yaml")
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	writeTraits(t, path, oneTrait, t0)
	l, err := Start(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	names := func() []string {
		t.Helper()
		traits, err := l.Traits()
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, tr := range traits {
			out = append(out, tr.Name)
		}
		return out
	}
	if got := names(); len(got) != 1 || got[0] != "CUSTOM_TRAIT_NAME" {
		t.Fatalf("first read: %v", got)
	}
	// Same modification time: not re-read, even though the content changed.
	writeTraits(t, path, "CUSTOM_OTHER:\n  actions: []\n", t0)
	if got := names(); len(got) != 1 || got[0] != "CUSTOM_TRAIT_NAME" {
		t.Errorf("re-read without an mtime change: %v", got)
	}
	writeTraits(t, path, "CUSTOM_TRAIT_NAME_CHANGED:\n  actions: []\n", t0.Add(time.Second))
	if got := names(); len(got) != 1 || got[0] != "CUSTOM_TRAIT_NAME_CHANGED" {
		t.Errorf("after an mtime change: %v", got)
	}
	// An invalid file leaves no traits.
	writeTraits(t, path, "CUSTOM_X:\n  order: 1\n", t0.Add(2*time.Second))
	if got := names(); len(got) != 0 || l.Valid() {
		t.Errorf("invalid file: traits %v, valid %v", got, l.Valid())
	}
	// A file that is gone is an error.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Traits(); err == nil {
		t.Error("missing file: no error")
	}
}

// Upstream's base_manager: an invalid or missing file stops the conductor.
func TestStartRefuses(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	writeTraits(t, bad, "CUSTOM_X: {}\n", time.Now())
	for _, path := range []string{bad, filepath.Join(dir, "missing.yaml")} {
		_, err := Start(path, nil)
		var e *errs.Error
		if !errors.As(err, &e) || e.Class != errs.ClassIncorrectConfiguration ||
			e.Error() != "Supplied configuration is incorrect and must be fixed. Error: Trait Based Networking configuration file could not be loaded or is invalid." {
			t.Errorf("%s: %v", path, err)
		}
	}
}

// Tasks read the traits concurrently while the file changes under them;
// each sees one whole version of the file.
func TestLoaderConcurrentReaders(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tbn.yaml")
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	writeTraits(t, path, oneTrait, t0)
	l, err := Start(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	for range 4 {
		go func() {
			for range 50 {
				traits, err := l.Traits()
				if err != nil || len(traits) != 1 {
					done <- fmt.Errorf("traits %v, %v", traits, err)
					return
				}
			}
			done <- nil
		}()
	}
	// Replaced as an operator should replace it: written aside, then
	// renamed over (a file rewritten in place may be read half-written).
	for i := range 10 {
		next := path + ".new"
		writeTraits(t, next, fmt.Sprintf("CUSTOM_V%d:\n  actions: []\n", i), t0.Add(time.Duration(i+1)*time.Second))
		if err := os.Rename(next, path); err != nil {
			t.Fatal(err)
		}
	}
	for range 4 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}
