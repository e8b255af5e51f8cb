// Package logging adds the flow being served to every log record, so that
// the lines of one flow can be found together: the API's request id
// (internal/requestctx, set by the API's middleware) or, in a conductor, the id the API sent in
// the JSON-RPC context; and the node and conductor the flow is about,
// learnt after the request's context was made (see Flow).
package logging

import (
	"context"
	"log/slog"
	"net/http"
	"sync"

	"github.com/openkeel/ironic/internal/requestctx"
	"github.com/openkeel/ironic/internal/rpc"
)

// Attribute keys. The request ids are named as oslo.log names them in its
// JSON records; node and conductor as the conductor's own loggers name
// them (task and service loggers), so that a record never carries both a
// bound and an added copy.
const (
	KeyRequestID       = "request_id"
	KeyGlobalRequestID = "global_request_id"
	KeyNode            = "node"
	KeyConductor       = "conductor"
)

// Handler is a slog.Handler that adds the request ids and the Flow found in
// a record's context. Records logged without a context (slog.Logger.Info
// rather than InfoContext) cannot be tied to a flow and keep only what
// they carry.
type Handler struct {
	next slog.Handler
	// bound holds the top-level attributes attached with WithAttrs: a
	// record attribute repeating one of them (a driver adding "node" to
	// the task's logger, which has it) is dropped rather than written
	// twice, and the flow does not add what is bound. Shared between
	// handlers and never written after construction.
	bound map[string]slog.Value
	// grouped is set once WithGroup was called: later attributes land in
	// the group, so the top-level keys no longer collide.
	grouped bool
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
	if id = requestctx.RequestID(ctx); id != "" {
		return id, requestctx.GlobalRequestID(ctx)
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

// Handle adds the request ids and flow of ctx to r and passes it on. What
// the record or the logger's bound attributes already say wins (the API's
// access log line names its request itself).
func (h Handler) Handle(ctx context.Context, r slog.Record) error {
	var keep []slog.Attr
	has := map[string]bool{}
	dropped := false
	r.Attrs(func(a slog.Attr) bool {
		if v, ok := h.bound[a.Key]; ok && !h.grouped && v.Equal(a.Value) {
			dropped = true
			return true
		}
		has[a.Key] = true
		keep = append(keep, a)
		return true
	})
	var add []slog.Attr
	id, global := RequestIDs(ctx)
	if id != "" && !has[KeyRequestID] && !h.isBound(KeyRequestID) {
		add = append(add, slog.String(KeyRequestID, id))
		if global != "" {
			add = append(add, slog.String(KeyGlobalRequestID, global))
		}
	}
	if f := FlowFrom(ctx); f != nil {
		node, conductor := f.get()
		for _, kv := range [][2]string{{KeyNode, node}, {KeyConductor, conductor}} {
			if kv[1] != "" && !has[kv[0]] && !h.isBound(kv[0]) {
				add = append(add, slog.String(kv[0], kv[1]))
			}
		}
	}
	if !dropped && len(add) == 0 {
		return h.next.Handle(ctx, r)
	}
	out := slog.NewRecord(r.Time, r.Level, r.Message, r.PC)
	out.AddAttrs(keep...)
	out.AddAttrs(add...)
	return h.next.Handle(ctx, out)
}

func (h Handler) isBound(key string) bool {
	_, ok := h.bound[key]
	return ok && !h.grouped
}

// WithAttrs keeps the wrapper around the derived handler and remembers
// the top-level keys it binds.
func (h Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	out := Handler{next: h.next.WithAttrs(attrs), bound: h.bound, grouped: h.grouped}
	if !h.grouped && len(attrs) > 0 {
		out.bound = make(map[string]slog.Value, len(h.bound)+len(attrs))
		for k, v := range h.bound {
			out.bound[k] = v
		}
		for _, a := range attrs {
			out.bound[a.Key] = a.Value
		}
	}
	return out
}

// WithGroup keeps the wrapper around the derived handler; the ids then
// land inside the group, as any attribute added at that point would.
func (h Handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	return Handler{next: h.next.WithGroup(name), bound: h.bound, grouped: true}
}

// Flow is what a flow learns about itself after its context was made: the
// node it acts on and the conductor that owns that node. The API finds
// them when it routes the request to a conductor, after its access log's
// context exists; the Flow is shared by every context derived from the
// one it was put in, so that the access line, the RPC and the conductor's
// lines all name them. A flow that touches several nodes (or conductors)
// names none: one name would mislead.
type Flow struct {
	mu                       sync.Mutex
	node, conductor          string
	severalNodes, severalCon bool
}

type flowKey struct{}

// WithFlow returns ctx with a new, empty Flow, unless ctx has one already.
func WithFlow(ctx context.Context) context.Context {
	if FlowFrom(ctx) != nil {
		return ctx
	}
	return context.WithValue(ctx, flowKey{}, &Flow{})
}

// FlowFrom returns the Flow of ctx, or nil. The Flow's setters accept nil,
// so callers need not check.
func FlowFrom(ctx context.Context) *Flow {
	if ctx == nil {
		return nil
	}
	f, _ := ctx.Value(flowKey{}).(*Flow)
	return f
}

// SetNode records the node (its UUID) the flow acts on.
func (f *Flow) SetNode(uuid string) {
	if f == nil || uuid == "" {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.node, f.severalNodes = merge(f.node, f.severalNodes, uuid)
}

// SetConductor records the conductor (its [DEFAULT]/host) serving the flow.
func (f *Flow) SetConductor(host string) {
	if f == nil || host == "" {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.conductor, f.severalCon = merge(f.conductor, f.severalCon, host)
}

func merge(cur string, several bool, v string) (string, bool) {
	switch {
	case several:
		return "", true
	case cur == "" || cur == v:
		return v, false
	}
	return "", true
}

func (f *Flow) get() (node, conductor string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.node, f.conductor
}

// Middleware gives every request next serves a Flow of its own.
func Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(WithFlow(r.Context())))
	})
}
