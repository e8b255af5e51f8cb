package api

import (
	"net/http"
	"testing"

	"github.com/openkeel/ironic/internal/api/microversion"
	"github.com/openkeel/ironic/internal/config"
)

// Pinned to 21.4, the API serves what that release served, up to 1.82,
// as upstream's does during a rolling upgrade: its conductors lack the
// rest.
func TestPinnedReleaseLowersTheMaximum(t *testing.T) {
	cfg, err := config.Load(config.LoadOptions{Overrides: map[string]map[string]string{"DEFAULT": {"pin_release_version": "21.4"}}})
	if err != nil {
		t.Fatal(err)
	}
	h := New(Deps{Config: cfg, Logger: quiet, Authorize: AllowAll})
	rec := serve(h, http.MethodGet, "/", "latest", "")
	if got := rec.Header().Get(microversion.HeaderMaximum); got != "1.82" {
		t.Errorf("maximum %q, want 1.82", got)
	}
	if rec := serve(h, http.MethodGet, "/v1", "1.83", ""); rec.Code != http.StatusNotAcceptable {
		t.Errorf("1.83 under the pin: %d", rec.Code)
	}
}
