package api

import (
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"

	"github.com/openkeel/ironic/internal/api/middleware"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/errs"
)

// New is Build for configurations known to be valid (the defaults, tests'
// own): it panics where Build returns an error.
func New(d Deps) http.Handler {
	h, err := Build(d)
	if err != nil {
		panic("api: " + err.Error())
	}
	return h
}

// Build assembles the API: upstream's middleware chain (seed § 2.1,
// outermost first) around the router. The order is what makes the error
// precedence: 401 (authentication) before 400/413 (body limits) before
// 406 (version) before 404/405 (routing) before the route's policy and
// validation. A configuration upstream's API would not start with is an
// error.
func Build(d Deps) (http.Handler, error) {
	if d.Config == nil {
		cfg, err := config.Load(config.LoadOptions{})
		if err != nil {
			return nil, fmt.Errorf("default configuration: %w", err)
		}
		d.Config = cfg
	}
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	cfg := d.Config
	hc, err := middleware.HealthcheckConfigFrom(cfg)
	if err != nil {
		return nil, err
	}
	return middleware.Chain(newRouter(d),
		middleware.RequestLog(d.Logger),
		middleware.JSONExtension(),
		middleware.CORS(middleware.CORSConfigFrom(cfg)),
		middleware.AssignRequestID(),
		middleware.Healthcheck(hc),
		middleware.ProxyHeaders(cfg.BoolOf(config.OsloMiddlewareEnableProxyHeadersParsing)),
		middleware.Authenticate(d.Authenticate, cfg.StringOf(config.DefaultAuthStrategy), nil),
		d.Audit,
		middleware.BodyLimits(middleware.BodyLimitConfigFrom(cfg)),
		recoverPanics(d.Logger, cfg.BoolOf(config.DefaultDebugTracebacksInAPI), d.Panicked),
	), nil
}

// recoverPanics turns a handler panic into upstream's 500 fault instead
// of a dropped connection, logging it with its stack (upstream logs the
// traceback) and telling panicked when set.
func recoverPanics(log *slog.Logger, debugTracebacks bool, panicked func(*http.Request, any, []byte)) middleware.Middleware {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			tw := &trackingWriter{ResponseWriter: w}
			defer func() {
				p := recover()
				if p == nil || p == http.ErrAbortHandler {
					if p != nil {
						panic(p)
					}
					return
				}
				stack := debug.Stack()
				log.Error("panic while serving a request", "method", r.Method, "path", r.URL.Path, "panic", p,
					"stack", string(stack))
				if !tw.wrote {
					errs.WriteFault(w, r, errs.HTTPStatus(http.StatusInternalServerError, ""), errs.FaultOptions{DebugTracebacks: debugTracebacks})
				}
				if panicked != nil {
					panicked(r, p, stack)
				}
			}()
			next.ServeHTTP(tw, r)
		})
	}
}

// publicURL is upstream's PublicUrlHook: with proxy header parsing the
// request's application URL (as the proxy stage rewrote it), otherwise
// [api]/public_endpoint or the request's scheme and host.
func (rt *router) publicURL(r *http.Request) string {
	if rt.cfg.BoolOf(config.OsloMiddlewareEnableProxyHeadersParsing) {
		return middleware.ApplicationURL(r)
	}
	if p := rt.cfg.StringOf(config.APIPublicEndpoint); p != "" {
		return p
	}
	return middleware.HostURL(r)
}

func requestID(_ http.ResponseWriter, r *http.Request) string {
	return middleware.RequestID(r.Context())
}

func authContext(r *http.Request) any {
	if a := middleware.Auth(r.Context()); a != nil {
		return a
	}
	return nil
}
