package spectest

import (
	"os"
	"path/filepath"
	"testing"
)

func TestDirFromEnv(t *testing.T) {
	d := t.TempDir()
	t.Setenv("IRONIC_SPEC_DIR", d)
	got := Dir(t)
	want, _ := filepath.Abs(d)
	if got != want {
		t.Fatalf("Dir = %q, want %q", got, want)
	}
}

func TestFindRejectsMissingDir(t *testing.T) {
	t.Setenv("IRONIC_SPEC_DIR", filepath.Join(t.TempDir(), "absent"))
	if _, err := find(); err == nil {
		t.Fatal("find accepted a folder that does not exist")
	}
}

func TestDefaultLocation(t *testing.T) {
	t.Setenv("IRONIC_SPEC_DIR", "")
	d := Dir(t)
	if _, err := os.Stat(filepath.Join(d, "ironic", "api", "routes.json")); err != nil {
		t.Fatalf("spec folder %s has no routes.json: %v", d, err)
	}
}
