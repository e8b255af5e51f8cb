// Package logging adds the request being served to every log record, so
// that the lines of one flow can be found together: the API's request id
// (internal/api/middleware) or, in a conductor, the id the API sent in
// the JSON-RPC context.
package logging

import (
	"context"
	"log/slog"

	"github.com/openkeel/ironic/internal/api/middleware"
	"github.com/openkeel/ironic/internal/rpc"
)

// Attribute keys, as oslo.log names them in its JSON records.
const (
	KeyRequestID       = "request_id"
	KeyGlobalRequestID = "global_request_id"
)

// Handler is a slog.Handler that adds the request ids found in a record's
// context. Records logged without a context (slog.Logger.Info rather than
// InfoContext) cannot be tied to a request and go out unchanged.
type Handler struct {
	next slog.Handler
}

var _ slog.Handler = Handler{}

// NewHandler wraps next.
func NewHandler(next slog.Handler) Handler { return Handler{next: next} }

// New returns a logger writing through NewHandler(next).
func New(next slog.Handler) *slog.Logger { return slog.New(NewHandler(next)) }

// RequestIDs returns the request and global request ids of ctx: the API's
// own when serving a request, else those of the JSON-RPC caller.
func RequestIDs(ctx context.Context) (id, global string) {
	if ctx == nil {
		return "", ""
	}
	if id = middleware.RequestID(ctx); id != "" {
		return id, middleware.GlobalRequestID(ctx)
	}
	if rc := rpc.RequestContextFrom(ctx); rc != nil {
		return rc.RequestID, rc.GlobalRequestID
	}
	return "", ""
}

// Enabled reports whether next handles level.
func (h Handler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.next.Enabled(ctx, level)
}

// Handle adds the request ids of ctx to r and passes it on, unless the
// record names its request itself (the API's access log line does).
func (h Handler) Handle(ctx context.Context, r slog.Record) error {
	id, global := RequestIDs(ctx)
	if id != "" && !hasKey(r, KeyRequestID) {
		r = r.Clone()
		r.AddAttrs(slog.String(KeyRequestID, id))
		if global != "" {
			r.AddAttrs(slog.String(KeyGlobalRequestID, global))
		}
	}
	return h.next.Handle(ctx, r)
}

func hasKey(r slog.Record, key string) bool {
	found := false
	r.Attrs(func(a slog.Attr) bool {
		found = a.Key == key
		return !found
	})
	return found
}

// WithAttrs keeps the wrapper around the derived handler.
func (h Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return Handler{next: h.next.WithAttrs(attrs)}
}

// WithGroup keeps the wrapper around the derived handler; the ids then
// land inside the group, as any attribute added at that point would.
func (h Handler) WithGroup(name string) slog.Handler {
	return Handler{next: h.next.WithGroup(name)}
}
