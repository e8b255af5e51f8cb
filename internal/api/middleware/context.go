package middleware

import (
	"context"
	"net/http"

	"github.com/openkeel/ironic/internal/auth"
	"github.com/openkeel/ironic/internal/requestctx"
)

type ctxKey int

const (
	keyJSONSuffix ctxKey = iota
	keyPublicRoute
	keyScriptName
	keyBodyLimit
)

// RequestID is the request's own id ("req-<uuid4>"), "" outside the
// pipeline. The ids live in internal/requestctx so that the layers below
// the API (logging, the conductor) read them without importing this
// package.
func RequestID(ctx context.Context) string { return requestctx.RequestID(ctx) }

// GlobalRequestID is the caller's X-Openstack-Request-Id when it was a
// well-formed "req-<uuid>", as oslo.middleware keeps it for tracing across
// services; "" otherwise.
func GlobalRequestID(ctx context.Context) string { return requestctx.GlobalRequestID(ctx) }

// WithRequestID returns ctx carrying id, for calls that start outside the
// HTTP pipeline (periodic tasks, tests).
func WithRequestID(ctx context.Context, id string) context.Context {
	return requestctx.WithRequestID(ctx, id)
}

// HasJSONSuffix reports whether JSONExtension removed a ".json" suffix from
// the path; lookups by name then retry with the suffix put back, as
// upstream's _get_with_suffix does.
func HasJSONSuffix(ctx context.Context) bool {
	b, _ := ctx.Value(keyJSONSuffix).(bool)
	return b
}

// Auth returns the caller's authentication context, nil on public routes
// and outside the pipeline.
func Auth(ctx context.Context) *AuthContext { return auth.FromContext(ctx) }

// WithAuth returns ctx carrying a (for tests and internal callers).
func WithAuth(ctx context.Context, a *AuthContext) context.Context { return auth.WithContext(ctx, a) }

// IsPublicRoute reports whether the request matched one of the public
// routes that skip authentication (upstream's environ["is_public_api"]).
func IsPublicRoute(ctx context.Context) bool {
	b, _ := ctx.Value(keyPublicRoute).(bool)
	return b
}

func withValue(r *http.Request, k ctxKey, v any) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), k, v))
}
