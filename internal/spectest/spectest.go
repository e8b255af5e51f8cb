// Package spectest locates the upstream specification data (../shared/spec)
// that tests replay against the product's own tables.
//
// The folder is found through IRONIC_SPEC_DIR, or ../shared/spec relative to
// the module root. When it is absent a test is skipped with the reason, unless
// IRONIC_SPEC_REQUIRED=1 (set by .ci/run), in which case it fails.
package spectest

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// Dir returns the spec folder or skips (fails when required) the test.
func Dir(t testing.TB) string {
	t.Helper()
	dir, err := find()
	if err != nil {
		if os.Getenv("IRONIC_SPEC_REQUIRED") == "1" {
			t.Fatalf("spec data required (IRONIC_SPEC_REQUIRED=1): %v", err)
		}
		t.Skipf("spec data not available: %v (set IRONIC_SPEC_DIR)", err)
	}
	return dir
}

// Path returns the absolute path of a file below the spec folder, e.g.
// Path(t, "ironic/core/hash-ring-vectors.json"). A missing file is a failure:
// the folder exists, so the file must too.
func Path(t testing.TB, rel string) string {
	t.Helper()
	p := filepath.Join(Dir(t), filepath.FromSlash(rel))
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("spec file: %v", err)
	}
	return p
}

// ReadFile returns the contents of a spec file.
func ReadFile(t testing.TB, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(Path(t, rel))
	if err != nil {
		t.Fatalf("read spec file: %v", err)
	}
	return b
}

// LoadJSON decodes a spec JSON file into v.
func LoadJSON(t testing.TB, rel string, v any) {
	t.Helper()
	if err := json.Unmarshal(ReadFile(t, rel), v); err != nil {
		t.Fatalf("decode spec file %s: %v", rel, err)
	}
}

func find() (string, error) {
	if d := os.Getenv("IRONIC_SPEC_DIR"); d != "" {
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			return "", errors.New("IRONIC_SPEC_DIR=" + d + " is not a directory")
		}
		return filepath.Abs(d)
	}
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	d := filepath.Join(root, "..", "shared", "spec")
	if st, err := os.Stat(d); err != nil || !st.IsDir() {
		return "", errors.New(d + " does not exist")
	}
	return filepath.Clean(d), nil
}

// ModuleRoot returns the directory holding go.mod, found upwards from the
// working directory (a package's folder under go test).
func ModuleRoot(t testing.TB) string {
	t.Helper()
	r, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod not found above the working directory")
		}
		dir = parent
	}
}
