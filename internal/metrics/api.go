package metrics

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/middleware"
	"github.com/prometheus/client_golang/prometheus"
)

// Label values for requests outside the route table.
const (
	// RouteUnmatched labels every path no route matches (404s, probes of
	// random paths), so that scanners cannot grow the series set.
	RouteUnmatched = "unmatched"
	// RouteHealthcheck labels the oslo healthcheck path.
	RouteHealthcheck = "healthcheck"
	// MethodOther labels methods outside the HTTP standard ones.
	MethodOther = "OTHER"
)

var knownMethods = map[string]bool{
	http.MethodGet: true, http.MethodHead: true, http.MethodPost: true, http.MethodPut: true,
	http.MethodPatch: true, http.MethodDelete: true, http.MethodOptions: true,
}

// API records the API's requests.
type API struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	routes   []compiledRoute
}

type compiledRoute struct {
	id, method string
	segs       [][]string // the path and, when present, its alias
	literals   int
	// root marks "/", which the router serves apart: /v1 and / split to
	// the same empty segment list.
	root bool
}

// NewAPI registers the request series on reg; routes is the API's route
// table (api.Routes), whose IDs are the route label values.
func NewAPI(reg prometheus.Registerer, routes []api.Route) (*API, error) {
	a := &API{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ironic_api_requests_total",
			Help: "API requests answered, by method, route ID and status code (499: the client disconnected first).",
		}, []string{"method", "route", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "ironic_api_request_duration_seconds",
			Help: "Time to answer an API request, by method and route ID.",
			// Listing thousands of nodes takes seconds; the default
			// buckets stop at 10s.
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"method", "route"}),
	}
	for _, c := range []prometheus.Collector{a.requests, a.duration} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register API metrics: %w", err)
		}
	}
	for _, r := range routes {
		cr := compiledRoute{id: r.ID, method: r.Method, segs: [][]string{splitPath(r.Path)}, root: r.Path == "/"}
		for _, s := range cr.segs[0] {
			if !strings.HasPrefix(s, "{") {
				cr.literals++
			}
		}
		if r.Alias != "" {
			cr.segs = append(cr.segs, splitPath(r.Alias))
		}
		a.routes = append(a.routes, cr)
	}
	return a, nil
}

// Middleware counts and times every request next answers.
func (a *API) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			method := r.Method
			if !knownMethods[method] {
				method = MethodOther
			}
			route := a.Route(r.Method, r.URL.Path)
			// A client that went away is counted under 499, not as the
			// 5xx its canceled work may have produced.
			code := middleware.LoggedStatus(r, sw.code, sw.clientClosed)
			a.requests.WithLabelValues(method, route, strconv.Itoa(code)).Inc()
			a.duration.WithLabelValues(method, route).Observe(time.Since(start).Seconds())
		}()
		next.ServeHTTP(sw, r)
	})
}

// Route is the route label of a request: the ID of the route the API's
// router would choose (the most literal segments win, as there), or
// RouteUnmatched. A path that matches a route of another method keeps
// the unmatched label: the 405 it gets says nothing about the route.
func (a *API) Route(method, path string) string {
	if path == "/healthcheck" {
		return RouteHealthcheck
	}
	root := path == "" || path == "/"
	segs := splitPath(path)
	if n := len(segs); n > 0 {
		// The JSON extension middleware serves /v1/nodes.json as
		// /v1/nodes.
		if s, ok := strings.CutSuffix(segs[n-1], ".json"); ok && s != "" {
			segs[n-1] = s
		}
	}
	best, bestLiterals := RouteUnmatched, -1
	for _, r := range a.routes {
		if r.method != method || r.root != root || r.literals <= bestLiterals {
			continue
		}
		for _, p := range r.segs {
			if matches(p, segs) {
				best, bestLiterals = r.id, r.literals
				break
			}
		}
	}
	return best
}

// splitPath splits a path as the API's router does: the version element
// is optional and one trailing slash is ignored.
func splitPath(p string) []string {
	p = strings.TrimPrefix(p, "/")
	if p == "" {
		return nil
	}
	segs := strings.Split(p, "/")
	if segs[0] == "v1" || segs[0] == "" {
		segs = segs[1:]
	}
	if n := len(segs); n > 0 && segs[n-1] == "" {
		segs = segs[:n-1]
	}
	return segs
}

func matches(pattern, segs []string) bool {
	if len(pattern) != len(segs) {
		return false
	}
	for i, p := range pattern {
		s := segs[i]
		switch {
		case !strings.HasPrefix(p, "{"):
			if p != s {
				return false
			}
		case s == "":
			return false
		case strings.Contains(p, "}@{") && !strings.Contains(s, "@"):
			return false
		}
	}
	return true
}

// statusWriter remembers the status code of the answer and whether the
// API's router found the client gone.
type statusWriter struct {
	http.ResponseWriter
	code         int
	clientClosed bool
}

var _ middleware.ClientClosedMarker = (*statusWriter)(nil)

// MarkClientClosed implements middleware.ClientClosedMarker.
func (s *statusWriter) MarkClientClosed() { s.clientClosed = true }

func (s *statusWriter) WriteHeader(code int) {
	if s.code == 0 {
		s.code = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if s.code == 0 {
		s.code = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }
