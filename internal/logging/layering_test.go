package logging_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The conductor logs through this package, so whatever it imports the
// conductor imports too: reaching into internal/api (its HTTP middleware,
// for the request ids) would make the conductor depend on the API layer.
// The request ids live in the leaf internal/requestctx instead.
func TestNoDependencyOnAPI(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("go tool not on PATH, cannot list dependencies: %v", err)
	}
	out, err := exec.Command(gobin, "list", "-deps",
		"github.com/openkeel/ironic/internal/logging",
		"github.com/openkeel/ironic/internal/requestctx").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "github.com/openkeel/ironic/internal/api") {
			t.Errorf("internal/logging depends on %s", dep)
		}
	}
}
