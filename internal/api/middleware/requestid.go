package middleware

import (
	"net/http"
	"regexp"

	"github.com/google/uuid"

	"github.com/openkeel/ironic/internal/requestctx"
)

// Response headers carrying the request id: oslo.middleware's and the one
// Ironic has always sent (IronicRequestId.compat_headers).
const (
	HeaderRequestID       = "X-Openstack-Request-Id"
	HeaderRequestIDCompat = "Openstack-Request-Id"
)

// globalIDFormat is oslo.middleware's ID_FORMAT: lower-case hex only.
var globalIDFormat = regexp.MustCompile(`^req-[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12}$`)

// AssignRequestID gives every request a fresh id "req-<uuid4>" (RequestID(ctx))
// and sends it in both response headers unless a handler already set
// them. As oslo.middleware, an incoming X-Openstack-Request-Id is never
// reused as the request's own id: when it is well formed it is kept as the
// global request id (GlobalRequestID(ctx)), otherwise dropped.
func AssignRequestID() Middleware {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if g := r.Header.Get(HeaderRequestID); globalIDFormat.MatchString(g) {
				r = r.WithContext(requestctx.WithGlobalRequestID(r.Context(), g))
			}
			id := "req-" + uuid.NewString()
			r = r.WithContext(requestctx.WithRequestID(r.Context(), id))
			hook := &headerHook{ResponseWriter: w, before: func(h http.Header) {
				for _, k := range []string{HeaderRequestID, HeaderRequestIDCompat} {
					if len(h.Values(k)) == 0 {
						h.Set(k, id)
					}
				}
			}}
			next.ServeHTTP(hook, r)
			hook.finish()
		})
	}
}

// headerHook runs before once, just before the status line is written, so
// that a stage can add response headers after the handler chose its own.
type headerHook struct {
	http.ResponseWriter
	before func(http.Header)
	done   bool
}

func (h *headerHook) fire() {
	if !h.done {
		h.done = true
		h.before(h.ResponseWriter.Header())
	}
}

func (h *headerHook) WriteHeader(code int) {
	h.fire()
	h.ResponseWriter.WriteHeader(code)
}

func (h *headerHook) Write(b []byte) (int, error) {
	h.fire()
	return h.ResponseWriter.Write(b)
}

// Flush makes streaming work through the hook.
func (h *headerHook) Flush() {
	h.fire()
	if f, ok := h.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (h *headerHook) Unwrap() http.ResponseWriter { return h.ResponseWriter }

// finish makes sure the hook ran even when the handler wrote nothing.
func (h *headerHook) finish() {
	if !h.done {
		h.WriteHeader(http.StatusOK)
	}
}
