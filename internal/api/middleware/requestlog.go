package middleware

import (
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// RequestLog logs one line per request at info level, as upstream's
// RequestLogMiddleware: source address, method, path, status and duration,
// plus the request id (read back from the response header, since the id is
// made by an inner stage). A request whose client disconnected before its
// answer is logged with status 499 (see LoggedStatus).
//
// Bodies and headers are never logged, so tokens and passwords never reach
// the log. The query string is logged with the value of every parameter
// whose name suggests a secret (see secretParam) replaced by "***"; Ironic's
// own query parameters carry none, but a client may add anything.
func RequestLog(log *slog.Logger) Middleware {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			rec := &statusRecorder{ResponseWriter: w}
			method, path, query := r.Method, r.URL.Path, r.URL.RawQuery
			defer func() {
				status := LoggedStatus(r, rec.status, rec.clientClosed)
				full := path
				if query != "" {
					full += "?" + redactQuery(query)
				}
				// A client that went away is its own business, not a
				// server error: the line says so and carries 499.
				msg := "request"
				if status == StatusClientClosedRequest {
					msg = "request: client disconnected"
				}
				log.LogAttrs(r.Context(), slog.LevelInfo, msg,
					slog.String("source_ip", RealIP(r)),
					slog.String("method", method),
					slog.String("path", full),
					slog.Int("status", status),
					slog.Float64("duration_ms", float64(time.Since(start).Microseconds())/1000),
					slog.String("request_id", rec.Header().Get(HeaderRequestID)))
			}()
			next.ServeHTTP(rec, r)
		})
	}
}

// RealIP is the client address as upstream's get_real_ip finds it: the
// first X-Forwarded-For entry, else X-Real-IP, else the peer address.
func RealIP(r *http.Request) string {
	if v := r.Header.Values("X-Forwarded-For"); len(v) > 0 {
		first, _, _ := strings.Cut(v[0], ",")
		return strings.TrimSpace(first)
	}
	if v := r.Header.Get("X-Real-IP"); v != "" {
		return v
	}
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	if r.RemoteAddr != "" {
		return r.RemoteAddr
	}
	return "unknown"
}

var secretWords = []string{"token", "password", "passwd", "secret", "credential", "auth", "key", "signature"}

// secretParam reports whether a query parameter name may carry a secret.
func secretParam(name string) bool {
	n := strings.ToLower(name)
	for _, w := range secretWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// redactQuery keeps the raw query (order and encoding as sent) except the
// values of secret-looking parameters.
func redactQuery(raw string) string {
	parts := strings.Split(raw, "&")
	for i, p := range parts {
		k, _, hasValue := strings.Cut(p, "=")
		name, err := url.QueryUnescape(k)
		if err != nil {
			name = k
		}
		if hasValue && secretParam(name) {
			parts[i] = k + "=***"
		}
	}
	return strings.Join(parts, "&")
}

// statusRecorder remembers the status written through it and whether the
// router found the client gone.
type statusRecorder struct {
	http.ResponseWriter
	status       int
	clientClosed bool
}

// MarkClientClosed implements ClientClosedMarker.
func (s *statusRecorder) MarkClientClosed() { s.clientClosed = true }

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }
