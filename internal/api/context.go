package api

import (
	"context"
	"net/http"
	"strings"

	"github.com/openkeel/ironic/internal/api/microversion"
	"github.com/openkeel/ironic/internal/config"
)

// HandlerFunc serves one route. An error returned before anything was
// written is rendered as upstream's fault (internal/errs), with the
// version headers already set on w.
type HandlerFunc func(w http.ResponseWriter, r *http.Request, rc *RequestContext) error

// RequestContext is what the pipeline learned about a request before its
// handler runs.
type RequestContext struct {
	// Version is the negotiated microversion.
	Version microversion.Version
	// Route is the matched operation.
	Route *Route
	// Params are the path parameters by upstream's names (node_ident,
	// port_id, method_name for the passthru alias, ...).
	Params map[string]string
	// RequestID is the request id given to the client.
	RequestID string
	// PublicURL is the base of every link (PublicUrlHook).
	PublicURL string
	// Auth is the caller's authentication context (nil on public routes
	// or without authentication); its type belongs to the auth stage.
	Auth any
	// Config is the service configuration.
	Config *config.Config
	// SurplusBody is a path element pecan passes as the body parameter
	// after the method's own path parameters (PUT /v1/nodes/X/traits/T/B
	// is put(trait=T, body=B)): the handler validates it as the body,
	// after the parameters before it.
	SurplusBody *string
	// PositionalQuery names the query parameter a left-over path element
	// was bound to (GET /v1/conductors/X/Y is get_one(X, fields="Y")).
	// pecan passes it positionally, and master's request_query_schema
	// checks keyword arguments only: KeywordArgs leaves it out.
	PositionalQuery string
}

// KeywordArgs returns kwargs without the parameter pecan passed
// positionally, as the query schema sees them.
func (rc *RequestContext) KeywordArgs(kwargs map[string]any) map[string]any {
	if rc.PositionalQuery == "" {
		return kwargs
	}
	delete(kwargs, rc.PositionalQuery)
	return kwargs
}

// Param returns a path parameter, "" when the route has none by that name.
func (rc *RequestContext) Param(name string) string { return rc.Params[name] }

// URL is upstream's link.build_url: PUBLIC/v1/RESOURCE/ARGS, or
// PUBLIC/RESOURCE/ARGS for a bookmark; ARGS starting with "?" is appended
// without a slash.
func (rc *RequestContext) URL(resource, args string, bookmark bool) string {
	return BuildURL(rc.PublicURL, resource, args, bookmark)
}

// SetLocation sets the Location header of a 201 or 202 as upstream does
// (e.g. nodes/<uuid> after a create, nodes/<ident>/states after a
// provision or power change).
func (rc *RequestContext) SetLocation(w http.ResponseWriter, resource, args string) {
	w.Header().Set("Location", rc.URL(resource, args, false))
}

// BuildURL is link.build_url with an explicit base.
func BuildURL(base, resource, args string, bookmark bool) string {
	var b strings.Builder
	b.WriteString(base)
	if bookmark {
		b.WriteString("/")
	} else {
		b.WriteString("/v1/")
	}
	b.WriteString(resource)
	if !strings.HasPrefix(args, "?") {
		b.WriteString("/")
	}
	b.WriteString(args)
	return b.String()
}

type ctxKey struct{}

// FromContext returns the RequestContext the router attached to a
// request's context, nil outside a routed request.
func FromContext(ctx context.Context) *RequestContext {
	rc, _ := ctx.Value(ctxKey{}).(*RequestContext)
	return rc
}
