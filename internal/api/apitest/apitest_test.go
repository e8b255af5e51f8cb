package apitest

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/api"
)

// recordingTB is a test that records its failures instead of failing.
type recordingTB struct {
	testing.TB
	errors []string
}

func (r *recordingTB) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

// A handler panic under the harness fails the test, naming the request
// and the panic, while the client still gets the 500 fault.
func TestPanicFailsTheTest(t *testing.T) {
	rec := &recordingTB{TB: t}
	h := Handler(rec, nil, map[string]api.HandlerFunc{
		"POST /v1/chassis": func(http.ResponseWriter, *http.Request, *api.RequestContext) error {
			var m map[string]any
			m["x"] = 1 // assignment to a nil map
			return nil
		},
	})
	r := Do(t, h, "POST", "/v1/chassis", "", `{}`)
	if r.Status != http.StatusInternalServerError {
		t.Fatalf("status %d, want 500", r.Status)
	}
	if len(rec.errors) != 1 || !strings.HasPrefix(rec.errors[0], "POST /v1/chassis panicked: assignment to entry in nil map") {
		t.Fatalf("test failures %q, want the panic reported", rec.errors)
	}
}
