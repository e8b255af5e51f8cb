package image

import (
	"os"
	"os/exec"
	"testing"

	"github.com/openkeel/ironic/internal/errs"
)

// needTool skips without the binary, except in CI where it must exist.
func needTool(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is required in CI: %v", name, err)
		}
		t.Skipf("%s not installed", name)
	}
}

func run(t *testing.T, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v: %s", name, args, err, out)
	}
}

func wantClass(t *testing.T, err error, class errs.Class, msg string) {
	t.Helper()
	e, ok := errs.As(err)
	if !ok {
		t.Fatalf("error %v (%T) is not an Ironic error, want %s", err, err, class)
	}
	if e.Class != class {
		t.Fatalf("class %s (%s), want %s", e.Class, e.Message, class)
	}
	if msg != "" && e.Message != msg {
		t.Fatalf("message %q, want %q", e.Message, msg)
	}
}

func testOpts(dirs ...string) Options {
	o := DefaultOptions()
	o.FileURLAllowedPaths = dirs
	return o
}
