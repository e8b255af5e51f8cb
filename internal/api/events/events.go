// Package events serves POST /v1/events as upstream's
// ironic/api/controllers/v1/event.py does: the network events Neutron
// sends are checked against upstream's request body schema, logged and
// answered 204; nothing reaches the conductor.
package events

import (
	"log/slog"
	"net/http"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apiutil"
	"github.com/openkeel/ironic/internal/errs"
)

// Deps is what the events handler needs.
type Deps struct {
	// Logger; nil means slog.Default().
	Logger *slog.Logger
}

// Register adds the handler of POST /v1/events to m. The version gate
// (404 below 1.54) and the baremetal:events:post rule are the router's.
func Register(m map[string]api.HandlerFunc, d Deps) {
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	m["POST /v1/events"] = func(w http.ResponseWriter, r *http.Request, _ *api.RequestContext) error {
		body, err := apiutil.DecodeBody(r)
		if err != nil {
			return err
		}
		if msg := check(body); msg != "" {
			return errs.InvalidParameterValue("Schema error: " + msg)
		}
		evs, _ := body.(*apiutil.Dict).Get("events")
		for _, e := range evs.([]any) {
			d.Logger.Debug("Received external event: " + apiutil.PyRepr(e))
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
}
