// Package api is the HTTP side of the service: the middleware chain in
// upstream's order, microversion negotiation, the route table with its
// per-route answers to old versions, the root documents, and the dispatch
// to resource handlers.
package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/openkeel/ironic/internal/api/microversion"
	"github.com/openkeel/ironic/internal/api/middleware"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/rpc/ovo"
	"github.com/openkeel/ironic/internal/store/sqldb"
)

// Deps is what the API needs from the rest of the service.
type Deps struct {
	// Config is the service configuration; nil means all defaults.
	Config *config.Config
	// Logger receives request and error logs; nil means slog.Default().
	Logger *slog.Logger
	// Handlers serve the routes, keyed by Route.ID ("GET /v1/nodes/{node_ident}").
	// Routes without a handler answer 501.
	Handlers map[string]HandlerFunc
	// Authenticate establishes the caller for every route except the
	// public ones; nil means noauth.
	Authenticate middleware.Authenticator
	// Authorize is the policy check of a route, run after the route's
	// before-policy version gate and before its after-policy one. It must
	// be set: nil refuses every route that has policies (tests that mean
	// "allow all" pass AllowAll).
	Authorize func(r *http.Request, rc *RequestContext) error
	// Panicked, when set, is told of every handler panic the API
	// recovers (after it is logged and answered 500), with the stack it
	// was raised on: test harnesses fail the test on it, so a panic is
	// never a 500 to live with.
	Panicked func(r *http.Request, p any, stack []byte)
	// Audit, when set, is keystonemiddleware's audit stage ([audit]),
	// run after authentication as upstream's pipeline runs it.
	Audit middleware.Middleware
}

// router is the innermost stage: version negotiation, routing, gates and
// dispatch (upstream's v1 controller and pecan routing).
type router struct {
	cfg      *config.Config
	log      *slog.Logger
	handlers map[string]HandlerFunc
	auth     func(r *http.Request, rc *RequestContext) error
	rng      microversion.Range
	// minimum and maximum are rng's bounds as their headers give them.
	minimum, maximum string
	routes           []*Route
	index            routeIndex
	debug            bool
}

func newRouter(d Deps) *router {
	rt := &router{
		cfg:      d.Config,
		log:      d.Logger,
		handlers: d.Handlers,
		auth:     d.Authorize,
		rng:      microversion.Range{Min: microversion.MIN, Max: pinnedMax(d.Config, microversion.MAX)},
		debug:    d.Config.BoolOf(config.DefaultDebugTracebacksInAPI),
	}
	rt.minimum, rt.maximum = rt.rng.Min.String(), rt.rng.Max.String()
	for _, r := range slices.Concat(Routes, HiddenRoutes) {
		r.segs = splitPattern(r.Path)
		if r.Alias != "" {
			r.aliasSegs = splitPattern(r.Alias)
		}
		rt.routes = append(rt.routes, &r)
	}
	rt.index = newRouteIndex(rt.routes)
	return rt
}

// pinnedMax lowers the highest microversion served to the pinned
// release's ([DEFAULT]/pin_release_version), as upstream's API does during
// a rolling upgrade: the release's conductors lack what is newer.
func pinnedMax(cfg *config.Config, max microversion.Version) microversion.Version {
	c, err := ovo.NewCodec(cfg.StringOf(config.DefaultPinReleaseVersion))
	if err != nil || c.APIVersionCap() == "" {
		return max
	}
	_, minor, _ := strings.Cut(c.APIVersionCap(), ".")
	if n, err := strconv.Atoi(minor); err == nil && n < max.Minor {
		return microversion.Version{Major: max.Major, Minor: n}
	}
	return max
}

func (rt *router) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Upstream checks the version in the root controller, before it looks
	// at the path: a bad version wins over an unknown resource.
	v, err := rt.rng.FromHeaders(r.Header)
	if err != nil {
		rt.routingError(w, r, err)
		return
	}
	path := r.URL.Path
	if path == "" || path == "/" {
		if !acceptsJSON(r.Header.Get("Accept")) {
			rt.notAcceptable(w, r)
			return
		}
		rt.rootDocument(w, r, v)
		return
	}
	if !utf8.ValidString(path) {
		// webob cannot decode the path: a bare 400 while routing.
		rt.routingError(w, r, errs.Abort(http.StatusBadRequest))
		return
	}
	segs, trailing := pathSegments(path)
	if len(segs) == 0 {
		if !acceptsJSON(r.Header.Get("Accept")) {
			rt.notAcceptable(w, r)
			return
		}
		rt.v1Document(w, r, v)
		return
	}
	if err := rt.checkLookupIdent(segs, false); err != nil {
		rt.routingError(w, r, err)
		return
	}
	route, params, other := rt.lookup(r.Method, segs)
	bare := route == nil && rt.bareController(segs)
	// A path with one element fewer or more than a route of the method
	// still reaches that method in pecan's traversal (missingArg,
	// surplusArg).
	var missing *Route
	var surplus *Arg
	if route == nil && !bare {
		if missing = rt.missingArg(r.Method, segs); missing != nil {
			route, params = missing, map[string]string{}
		} else if sr, sp, sa := rt.surplusArg(r.Method, segs); sr != nil && (other == nil || other.Controller == sr.Controller) {
			// The controller that would refuse the method has it.
			route, params, surplus = sr, sp, sa
		}
	}
	if route == nil {
		if err := rt.checkLookupIdent(segs, true); err != nil {
			rt.routingError(w, r, err)
			return
		}
		if bare {
			rt.routingError(w, r, errs.Abort(http.StatusMethodNotAllowed).WithHeaders(map[string]string{"Allow": ""}))
			return
		}
		if other == nil {
			other = rt.soleController(r.Method, segs)
		}
		if other != nil {
			rt.routingError(w, r, errs.Abort(http.StatusMethodNotAllowed).WithHeaders(map[string]string{"Allow": allowHeader(other.Controller)}))
			return
		}
		rt.routingError(w, r, errs.Abort(http.StatusNotFound))
		return
	}
	rc := &RequestContext{
		Version:   v,
		Route:     route,
		Params:    params,
		RequestID: requestID(w, r),
		PublicURL: rt.publicURL(r),
		Auth:      authContext(r),
		Config:    rt.cfg,
	}
	r = r.WithContext(context.WithValue(r.Context(), ctxKey{}, rc))
	step := route.tooOld(v)
	if step != nil && step.Order == BeforePolicy && step.Kind == Routing {
		rt.tooOld(w, r, v, step)
		return
	}
	// pecan negotiates the content type once routing found the method,
	// before calling it.
	if !acceptsJSON(r.Header.Get("Accept")) {
		rt.notAcceptable(w, r)
		return
	}
	if step != nil && step.Order == BeforePolicy {
		rt.tooOld(w, r, v, step)
		return
	}
	// args.validate runs before the handler's body (and upstream master's
	// api_version decorator before it, the step above).
	if err := rt.validateArgs(r, route, missing, surplus, segs); err != nil {
		rt.handlerError(w, r, v, err)
		return
	}
	if err := rt.authorize(r, rc); err != nil {
		rt.handlerError(w, r, v, err)
		return
	}
	if step != nil {
		rt.tooOld(w, r, v, step)
		return
	}
	if trailing && route.Action == "detail" {
		// The detail handlers check that the path element before theirs
		// names the collection, which a trailing slash defeats.
		rt.handlerError(w, r, v, errs.New(errs.ClassNotFound, nil))
		return
	}
	h := rt.handlers[route.ID]
	if h == nil {
		// Upstream has no such answer (every route has a handler there);
		// a webob 501 raised inside the handler is what upstream would
		// send for a capability it lacks: fault body, version headers.
		rt.handlerError(w, r, v, errs.HTTPStatus(http.StatusNotImplemented,
			fmt.Sprintf("%s is not implemented by this service yet.", route.ID)))
		return
	}
	rt.setVersionHeaders(w, v)
	tw := &trackingWriter{ResponseWriter: w}
	// client keeps the client's own context, which ends when it goes away.
	client := r
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		// A write either completes or does not happen: a client that goes
		// away does not cut its handler (and the conductor call it makes)
		// half-way; the RPC and database calls keep their own deadlines.
		r = r.WithContext(context.WithoutCancel(r.Context()))
	}
	if err := h(tw, r, rc); err != nil {
		if tw.wrote {
			if middleware.ClientGone(client) {
				// Broken pipe or reset while writing the answer.
				middleware.MarkClientClosed(w)
				rt.log.Info("client disconnected", "route", route.ID, "error", err)
				return
			}
			rt.log.Error("handler failed after answering", "route", route.ID, "error", err)
			return
		}
		rt.writeFault(w, client, err)
	}
}

// lookup finds the route for method and path. With no route for the
// method but one for the path it returns that other route, whose
// controller rejects the method. Routes upstream documents but does not
// serve are no match.
func (rt *router) lookup(method string, segs []string) (*Route, map[string]string, *Route) {
	var best, other *Route
	var bestSegs []string
	trailing := false
	for _, r := range rt.index.candidates(segs) {
		if r.Unimplemented {
			continue
		}
		pattern, withTrailing := r.segs, false
		ok := matches(pattern, segs)
		if !ok && r.aliasSegs != nil {
			pattern = r.aliasSegs
			ok = matches(pattern, segs)
		}
		if n := len(segs) - 1; !ok && r.TrailingArg != "" && r.Method == method && n == len(r.segs) && segs[n] != "" {
			pattern, withTrailing = r.segs, true
			ok = matches(pattern, segs[:n])
		}
		if !ok {
			continue
		}
		if r.Method != method {
			if other == nil || literals(r.segs) > literals(other.segs) {
				other = r
			}
			continue
		}
		if best == nil || literals(r.segs) > literals(best.segs) {
			best, bestSegs, trailing = r, pattern, withTrailing
		}
	}
	if best == nil {
		return nil, nil, other
	}
	// The parameters are filled once, for the route chosen.
	params := map[string]string{}
	if trailing {
		n := len(segs) - 1
		match(bestSegs, segs[:n], params)
		params[best.TrailingArg] = segs[n]
	} else {
		match(bestSegs, segs, params)
	}
	return best, params, nil
}

func (rt *router) tooOld(w http.ResponseWriter, r *http.Request, v microversion.Version, step *TooOld) {
	if step.Kind == Routing {
		rt.routingError(w, r, step.Err())
		return
	}
	rt.handlerError(w, r, v, step.Err())
}

// routingError answers an error raised while routing: pecan replaces the
// response with the exception, so the version headers set before are
// lost (only headers the exception carries survive, such as the range
// headers of a 406 or Allow).
func (rt *router) routingError(w http.ResponseWriter, r *http.Request, err error) {
	if rt.writeWebobPage(w, r, err) {
		return
	}
	errs.WriteFault(w, r, err, errs.FaultOptions{Routing: true, DebugTracebacks: rt.debug})
}

// handlerError answers an error raised inside an exposed handler, which
// keeps the version headers.
func (rt *router) handlerError(w http.ResponseWriter, r *http.Request, v microversion.Version, err error) {
	rt.setVersionHeaders(w, v)
	rt.writeFault(w, r, err)
}

// writeFault answers err. A database outage becomes the 503 clients
// retry (conductor outages already are, see jsonrpc). When the client has
// gone away, the work its disconnect canceled is not a server error: it
// is logged as a disconnect, and a client that only half-closed its side
// and still reads gets a 503 to retry rather than a 500.
func (rt *router) writeFault(w http.ResponseWriter, r *http.Request, err error) {
	err = sqldb.Fault(err)
	st := errs.Status(err)
	switch {
	case middleware.ClientGone(r) && errors.Is(err, context.Canceled):
		middleware.MarkClientClosed(w)
		rt.log.Info("client disconnected", "method", r.Method, "path", r.URL.Path, "error", err)
		if _, typed := errs.As(err); !typed {
			err = errs.Unavailable(err)
		}
	case st == http.StatusServiceUnavailable:
		rt.log.Warn("request failed, answered 503 for the client to retry", "method", r.Method, "path", r.URL.Path,
			"error", err, "cause", errs.Cause(err))
	case st >= 500 && st != http.StatusNotImplemented:
		rt.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "error", err)
	}
	errs.WriteFault(w, r, err, errs.FaultOptions{DebugTracebacks: rt.debug})
}

// setVersionHeaders sets the headers of every answer that passed version
// negotiation; upstream sends no Vary header.
func (rt *router) setVersionHeaders(w http.ResponseWriter, v microversion.Version) {
	h := w.Header()
	h[microversion.KeyMinimum] = []string{rt.minimum}
	h[microversion.KeyMaximum] = []string{rt.maximum}
	h[microversion.KeyLegacy] = []string{v.String()}
}

// trackingWriter records whether a handler started its answer, so that an
// error returned afterwards is logged instead of written twice.
type trackingWriter struct {
	http.ResponseWriter
	wrote bool
}

func (t *trackingWriter) WriteHeader(code int) {
	t.wrote = true
	t.ResponseWriter.WriteHeader(code)
}

func (t *trackingWriter) Write(b []byte) (int, error) {
	t.wrote = true
	return t.ResponseWriter.Write(b)
}

func (t *trackingWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }

// AllowAll is a Deps.Authorize that allows every route, for tests that
// exercise routing and handlers without policy.
func AllowAll(*http.Request, *RequestContext) error { return nil }

// authorize runs the route's policy check; without one configured every
// route with policies is refused as upstream refuses a caller its policy
// does not allow, naming the route's first rule.
func (rt *router) authorize(r *http.Request, rc *RequestContext) error {
	if rt.auth != nil {
		return rt.auth(r, rc)
	}
	if len(rc.Route.Policies) == 0 {
		return nil
	}
	return errs.New(errs.ClassHTTPForbidden, map[string]any{"resource": rc.Route.Policies[0]})
}

// validateArgs is what pecan and args.validate refuse before a handler
// runs: a missing first parameter, a left-over path element bound to a
// body parameter, parameter names the handler does not take and repeated
// query parameters.
func (rt *router) validateArgs(r *http.Request, route, missing *Route, surplus *Arg, segs []string) error {
	if missing != nil {
		return errs.NewMessage(errs.ClassMissingParameterValue, "Missing mandatory parameter: "+missing.Args[0].Name)
	}
	if surplus != nil {
		if err := bindSurplus(r, route, surplus, segs[len(segs)-1]); err != nil {
			return err
		}
	}
	return checkArgs(r, route)
}

// notAcceptable answers a request whose Accept header excludes JSON as
// pecan does while routing: no version headers, webob's text wrapped by
// ParsableErrorMiddleware.
func (rt *router) notAcceptable(w http.ResponseWriter, r *http.Request) {
	rt.routingError(w, r, errs.Abort(http.StatusNotAcceptable))
}
