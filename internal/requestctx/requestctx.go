// Package requestctx carries the request ids of the flow being served in a
// context.Context. It is a leaf (standard library only) so that the layers
// below the API — logging, the conductor — can read the ids the API's
// middleware assigned without depending on the HTTP middleware itself.
package requestctx

import "context"

type key int

const (
	keyRequestID key = iota
	keyGlobalRequestID
)

// WithRequestID returns ctx carrying id, the request's own id
// ("req-<uuid4>"): set by the API's middleware for every request, and by
// calls that start outside the HTTP pipeline (periodic tasks, tests).
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, keyRequestID, id)
}

// RequestID is the request's own id, "" when ctx carries none.
func RequestID(ctx context.Context) string {
	s, _ := ctx.Value(keyRequestID).(string)
	return s
}

// WithGlobalRequestID returns ctx carrying id as the global request id: the
// caller's X-Openstack-Request-Id, kept for tracing across services as
// oslo.middleware keeps it.
func WithGlobalRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, keyGlobalRequestID, id)
}

// GlobalRequestID is the global request id of ctx, "" when it carries none.
func GlobalRequestID(ctx context.Context) string {
	s, _ := ctx.Value(keyGlobalRequestID).(string)
	return s
}
