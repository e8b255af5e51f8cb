package middleware

import (
	"bytes"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/openkeel/ironic/internal/api/microversion"
	"github.com/openkeel/ironic/internal/config"
)

// CORSConfig is the [cors] section (oslo.middleware's options, with the
// defaults Ironic sets: its methods and its version headers exposed).
type CORSConfig struct {
	AllowedOrigins   []string
	AllowCredentials bool
	ExposeHeaders    []string
	MaxAge           int
	AllowMethods     []string
	AllowHeaders     []string
}

// CORSConfigFrom reads [cors].
func CORSConfigFrom(c *config.Config) CORSConfig {
	return CORSConfig{
		AllowedOrigins:   c.ListOf(config.CorsAllowedOrigin),
		AllowCredentials: c.BoolOf(config.CorsAllowCredentials),
		ExposeHeaders:    c.ListOf(config.CorsExposeHeaders),
		MaxAge:           c.IntOf(config.CorsMaxAge),
		AllowMethods:     c.ListOf(config.CorsAllowMethods),
		AllowHeaders:     c.ListOf(config.CorsAllowHeaders),
	}
}

// corsSimpleHeaders are oslo.middleware's simple headers plus those
// IronicCORS adds, always allowed in a preflight request.
var corsSimpleHeaders = []string{
	"Accept", "Accept-Language", "Content-Type", "Cache-Control", "Content-Language",
	"Expires", "Last-Modified", "Pragma",
	"X-Auth-Token", microversion.HeaderMaximum, microversion.HeaderMinimum, microversion.HeaderLegacy,
}

// CORS decorates responses for allowed origins as oslo.middleware's CORS
// does. A preflight (any OPTIONS request) still goes to the application;
// a non-2xx answer is replaced by an empty 200, which then gets the
// preflight headers when origin, method and requested headers are
// allowed. Responses that already carry Access-Control-Allow-Origin are
// left alone. Without allowed origins the stage passes every other
// method through.
func CORS(cfg CORSConfig) Middleware {
	origins := map[string]bool{}
	for _, o := range cfg.AllowedOrigins {
		origins[o] = true
	}
	permitted := map[string]bool{}
	for _, h := range append(slices.Clone(cfg.AllowHeaders), corsSimpleHeaders...) {
		permitted[strings.ToUpper(h)] = true
	}
	match := func(origin string) (string, bool) {
		if origins[origin] {
			return origin, true
		}
		if origins["*"] {
			return "*", true
		}
		return "", false
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// The preflight answer replaces every non-2xx OPTIONS answer,
			// allowed origins or not: upstream's CORS stage is always in
			// the pipeline, so OPTIONS /v1/nodes is an empty 200.
			if r.Method == http.MethodOptions {
				preflight(w, r, next, cfg, match, permitted)
				return
			}
			if len(origins) == 0 {
				next.ServeHTTP(w, r)
				return
			}
			hook := &headerHook{ResponseWriter: w, before: func(h http.Header) {
				if len(h.Values("Access-Control-Allow-Origin")) > 0 || len(r.Header.Values("Origin")) == 0 {
					return
				}
				origin, ok := match(r.Header.Get("Origin"))
				if !ok {
					return
				}
				if v := h.Get("Vary"); v != "" {
					h.Set("Vary", v+",Origin")
				} else {
					h.Set("Vary", "Origin")
				}
				h.Set("Access-Control-Allow-Origin", origin)
				if cfg.AllowCredentials {
					h.Set("Access-Control-Allow-Credentials", "true")
				}
				if len(cfg.ExposeHeaders) > 0 {
					h.Set("Access-Control-Expose-Headers", strings.Join(cfg.ExposeHeaders, ","))
				}
			}}
			next.ServeHTTP(hook, r)
			hook.finish()
		})
	}
}

func preflight(w http.ResponseWriter, r *http.Request, next http.Handler, cfg CORSConfig,
	match func(string) (string, bool), permitted map[string]bool) {
	buf := newBufferedResponse()
	next.ServeHTTP(buf, r)
	h := buf.header
	status := buf.statusCode()
	body := buf.body.Bytes()
	if len(h.Values("Access-Control-Allow-Origin")) == 0 {
		if status < 200 || status >= 300 {
			// A new response, which keeps only the request id every
			// answer carries.
			fresh := http.Header{}
			for _, k := range []string{HeaderRequestID, HeaderRequestIDCompat} {
				if v := h.Values(k); len(v) > 0 {
					fresh[k] = v
				}
			}
			h, status, body = fresh, http.StatusOK, nil
		}
		decoratePreflight(h, r, cfg, match, permitted)
	}
	dst := w.Header()
	for k, v := range h {
		dst[k] = v
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func decoratePreflight(h http.Header, r *http.Request, cfg CORSConfig,
	match func(string) (string, bool), permitted map[string]bool) {
	if len(r.Header.Values("Origin")) == 0 {
		return
	}
	origin, ok := match(r.Header.Get("Origin"))
	if !ok || len(r.Header.Values("Access-Control-Request-Method")) == 0 {
		return
	}
	method := r.Header.Get("Access-Control-Request-Method")
	if !slices.Contains(cfg.AllowMethods, method) {
		return
	}
	var requested []string
	for _, v := range strings.Split(r.Header.Get("Access-Control-Request-Headers"), ",") {
		if v = strings.TrimSpace(v); v != "" {
			requested = append(requested, v)
		}
	}
	for _, rh := range requested {
		if !permitted[strings.ToUpper(rh)] {
			return
		}
	}
	h.Set("Vary", "Origin")
	h.Set("Access-Control-Allow-Origin", origin)
	if cfg.AllowCredentials {
		h.Set("Access-Control-Allow-Credentials", "true")
	}
	if cfg.MaxAge != 0 {
		h.Set("Access-Control-Max-Age", strconv.Itoa(cfg.MaxAge))
	}
	h.Set("Access-Control-Allow-Methods", method)
	if len(requested) > 0 {
		h.Set("Access-Control-Allow-Headers", strings.Join(requested, ","))
	}
}

// bufferedResponse holds a whole response so a stage can replace it.
type bufferedResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func newBufferedResponse() *bufferedResponse { return &bufferedResponse{header: http.Header{}} }

func (b *bufferedResponse) Header() http.Header { return b.header }

func (b *bufferedResponse) WriteHeader(code int) {
	if b.status == 0 {
		b.status = code
	}
}

func (b *bufferedResponse) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.body.Write(p)
}

func (b *bufferedResponse) statusCode() int {
	if b.status == 0 {
		return http.StatusOK
	}
	return b.status
}
