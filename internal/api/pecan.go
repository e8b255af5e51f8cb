package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/openkeel/ironic/internal/api/apiutil"
	"github.com/openkeel/ironic/internal/errs"
)

// This file holds what upstream's answers owe to pecan's object traversal
// and to the signatures of its controller methods rather than to the
// handlers: pecan passes left-over path elements, query parameters and
// body members to a method as its arguments, and ironic.common.args
// checks them against the method's parameters (Route.Args).

// pathSegments splits a request path below the optional /v1 element.
// pecan drops empty path elements ("//v1/nodes", "/v1/nodes//x" route as
// their single-slash forms); trailing reports a trailing slash, which the
// detail handlers tell apart.
func pathSegments(path string) (segs []string, trailing bool) {
	for _, s := range strings.Split(path, "/") {
		if s != "" {
			segs = append(segs, s)
		}
	}
	trailing = len(path) > 1 && strings.HasSuffix(path, "/")
	// Paths without the version element are served as /v1 paths (the
	// bookmark links rely on it).
	if len(segs) > 0 && segs[0] == "v1" {
		segs = segs[1:]
	}
	return segs, trailing
}

// missingArg finds the route a request for a collection would take if
// the path named the object: upstream's controller has the method (a
// DELETE or PATCH on /v1/nodes reaches NodesController.delete), called
// without its first parameter, which args.validate refuses with
// "Missing mandatory parameter". Routes upstream does not serve do not
// count (their controller has no such method).
func (rt *router) missingArg(method string, segs []string) *Route {
	for _, r := range rt.index.candidates(segs) {
		n := len(r.segs)
		if r.Method != method || r.Unimplemented || n != len(segs)+1 || !isParam(r.segs[n-1]) || len(r.Args) == 0 {
			continue
		}
		if matches(r.segs[:n-1], segs) {
			return r
		}
	}
	return nil
}

// surplusArg finds the route a request with one path element too many
// would take: pecan passes the element to the method as its next
// positional parameter (GET /v1/nodes/X/bogus is get_one(X, fields=
// "bogus"), POST /v1/nodes/X is post(node="X")). The parameter is
// returned with the route.
func (rt *router) surplusArg(method string, segs []string) (*Route, map[string]string, *Arg) {
	if len(segs) == 0 {
		return nil, nil, nil
	}
	for _, r := range rt.index.candidates(segs) {
		// pecan routes a GET with elements left to get_one or get, never
		// to get_all.
		if r.Method != method || r.Unimplemented || r.TrailingArg != "" || (method == http.MethodGet && r.Action == "get_all") {
			continue
		}
		if !matches(r.segs, segs[:len(segs)-1]) {
			continue
		}
		params := map[string]string{}
		match(r.segs, segs[:len(segs)-1], params)
		// A top-level controller's method takes the route's one path
		// parameter first (get_one(node_ident, fields)) or none
		// (post(node)). Below a parent the method's parameters also hold
		// what the parent passes down, and no element is bound.
		next := 0
		switch {
		case len(params) == 0:
		case len(params) == 1 && isParam(r.segs[len(r.segs)-1]) && !strings.Contains(r.segs[len(r.segs)-1], "@"):
			next = 1
		default:
			// A controller _lookup makes (traits, vifs, ...) holds the
			// parent's identifier; its method's leading parameters are
			// the route's own path parameters.
			var ok bool
			if next, ok = ownParams(r, params); !ok {
				continue
			}
		}
		if next < len(r.Args) {
			return r, params, &r.Args[next]
		}
	}
	return nil, nil, nil
}

// ownParams counts the leading parameters of the route's method that are
// path parameters of the route, when the others (the parent's
// identifiers) are not the method's; ok is false when every path
// parameter is the method's, or when the names do not tell.
func ownParams(r *Route, params map[string]string) (int, bool) {
	for _, p := range r.segs {
		if strings.Contains(p, "@") {
			return 0, false
		}
	}
	own := 0
	for own < len(r.Args) {
		if _, ok := params[r.Args[own].Name]; !ok {
			break
		}
		own++
	}
	if own == len(params) {
		return 0, false
	}
	if own == 0 && isParam(r.segs[len(r.segs)-1]) {
		// The route's own parameter has another name in the method.
		return 0, false
	}
	return own, true
}

// bindSurplus hands a left-over path element to the handler as the
// parameter it fills. A body parameter gets a string where its schema
// wants an object, which args.schema refuses before the handler runs.
func bindSurplus(r *http.Request, route *Route, a *Arg, value string) error {
	if a.Name == route.Body {
		rc := FromContext(r.Context())
		if _, below := ownParams(route, rc.Params); below && a.Name != route.Args[0].Name {
			// args.validate checks the parameters before it first, which
			// the handler does.
			rc.SurplusBody = &value
			return nil
		}
		// args.patch wants a list, every other body an object.
		want := "object"
		if a.Name == "patch" {
			want = "array"
		}
		return errs.InvalidParameterValue(fmt.Sprintf("Schema error for %s: %s is not of type '%s'",
			a.Name, apiutil.PyRepr(value), want))
	}
	q := r.URL.Query()
	q.Set(a.Name, value)
	r.URL.RawQuery = q.Encode()
	FromContext(r.Context()).PositionalQuery = a.Name
	return nil
}

// lookupIdents are the path parameters that NodesController._lookup and
// PortgroupsController._lookup check while routing, by the collection
// element before them and the name args.uuid_or_name gives them: a
// malformed identifier is a routing 400, and the name of a sub-controller
// in its place a routing 404. Other controllers taking a node (the
// heartbeat) check it in the handler, whose fault names node_ident.
var lookupIdents = map[string]string{"nodes": "node", "portgroups": "portgroup"}

// attributeControllers are the sub-controllers NodesController holds as
// attributes: pecan reaches them before it calls _lookup, so their
// handlers check the identifier themselves, and _lookup runs only when
// routing below them fails (a 404 or 405 falls back to it).
var attributeControllers = map[string]bool{"states": true, "vendor_passthru": true, "management": true, "maintenance": true}

// checkLookupIdent applies lookupIdents to a request path. routed is
// false before the route is looked up, true once routing failed, when
// pecan falls back to _lookup from below an attribute controller too.
func (rt *router) checkLookupIdent(segs []string, routed bool) error {
	for _, p := range rt.index.idents {
		i := len(p.prefix)
		if i >= len(segs) || !matches(p.prefix, segs[:i]) {
			continue
		}
		v := segs[i]
		if p.actions[v] {
			// detail, validate: a custom action of the collection.
			continue
		}
		if p.children[v] {
			return errs.Abort(http.StatusNotFound)
		}
		if !routed && i+1 < len(segs) && p.name == "node" && attributeControllers[segs[i+1]] {
			continue
		}
		if err := apiutil.UUIDOrName(p.name, v); err != nil {
			return errs.HTTPStatus(http.StatusBadRequest, err.Error())
		}
	}
	return nil
}

// bareController reports whether the path reaches a sub-controller that
// has no method of its own, only sub-controllers and custom actions
// (/v1/nodes/X/management, /v1/drivers/X/raid): pecan finds it and
// answers every method on it, and on an element below it that names no
// child, with 405 and an empty Allow.
func (rt *router) bareController(segs []string) bool {
	for _, r := range rt.index.candidates(segs) {
		for k := 1; k < len(r.segs)-1 && k < len(segs); k++ {
			if isParam(r.segs[k]) || !isParam(r.segs[k-1]) || !matches(r.segs[:k+1], segs[:k+1]) {
				continue
			}
			// Below a child it names, the child routes.
			if !rt.hasPath(segs[:k+1]) && (len(segs) == k+1 || !rt.literalAt(r.segs[:k+1], segs[k+1])) {
				return true
			}
		}
	}
	return false
}

// soleController returns a route of the one controller that serves every
// path below the longest prefix of the request that routes serve, nil
// when several do (/v1/heartbeat, /v1/lookup/x, /v1/nodes/X/vifs/x/y, but
// not /v1/nodes/X/bogus): pecan hands such a controller whatever follows,
// and its RestController answers 405 for a path or method none of its
// methods takes.
func (rt *router) soleController(method string, segs []string) *Route {
	for k := len(segs); k >= 1; k-- {
		var sole *Route
		for _, r := range rt.index.candidates(segs) {
			if r.Unimplemented || len(r.segs) < k || !matches(r.segs[:k], segs[:k]) {
				continue
			}
			if sole != nil && sole.Controller != r.Controller {
				return nil
			}
			sole = r
		}
		if sole == nil {
			continue
		}
		for _, r := range rt.index.candidates(segs) {
			// A method of the request's at the prefix takes the rest as
			// its arguments (which upstream's signature refuses with a
			// 500); get_all never gets any.
			if r.Method == method && len(r.segs) == k && r.Action != "get_all" && matches(r.segs, segs[:k]) {
				return nil
			}
		}
		return sole
	}
	return nil
}

// hasPath reports whether some route of any method serves the path.
func (rt *router) hasPath(segs []string) bool {
	for _, r := range rt.index.candidates(segs) {
		if matches(r.segs, segs) {
			return true
		}
	}
	return false
}

// literalAt reports whether some route's path or alias has the literal v
// right after prefix.
func (rt *router) literalAt(prefix []string, v string) bool {
	for _, r := range rt.index.candidates(prefix) {
		for _, segs := range [][]string{r.segs, r.aliasSegs} {
			if len(segs) > len(prefix) && segs[len(prefix)] == v && slices.Equal(segs[:len(prefix)], prefix) {
				return true
			}
		}
	}
	return false
}

func isParam(seg string) bool { return strings.HasPrefix(seg, "{") }

// checkArgs is args.validate's refusal of names the handler does not
// take (query parameters, and the members of a JSON object or form body
// unless the handler takes the body whole) and of a repeated query
// parameter, which pecan passes as a list its validator refuses.
func checkArgs(r *http.Request, route *Route) error {
	if route.AnyArgs {
		return nil
	}
	query := r.URL.Query()
	names := map[string]bool{}
	for k := range query {
		names[k] = true
	}
	if route.Body == "" {
		members, err := bodyMembers(r)
		if err != nil {
			return err
		}
		for _, k := range members {
			names[k] = true
		}
	}
	var extra []string
	for k := range names {
		if !slices.ContainsFunc(route.Args, func(a Arg) bool { return a.Name == k }) {
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 {
		// Upstream joins a Python set; ours is sorted.
		sort.Strings(extra)
		return errs.InvalidParameterValue("Unexpected arguments: " + strings.Join(extra, ", "))
	}
	for _, a := range route.Args {
		if vs := query[a.Name]; len(vs) > 1 {
			if err := a.Check.refuseList(a.Name, vs); err != nil {
				return err
			}
		}
	}
	return nil
}

// refuseList is the validator's answer to the list of a repeated query
// parameter, nil for validators the router does not model.
func (c ArgCheck) refuseList(name string, vs []string) error {
	list := make([]any, len(vs))
	for i, v := range vs {
		list[i] = v
	}
	repr := apiutil.PyRepr(list)
	var msg string
	switch c {
	case CheckString:
		msg = "Expected string for %s: %s"
	case CheckInteger:
		msg = "Expected an integer for %s: %s"
	case CheckUUID:
		msg = "Expected UUID for %s: %s"
	case CheckUUIDOrName:
		msg = "Expected UUID or name for %s: %s"
	case CheckName:
		msg = "Expected name for %s: %s"
	case CheckMAC:
		msg = "Expected valid MAC address for %s: %s"
	case CheckBoolean:
		// oslo's bool_from_string in strict mode, prefixed by args.boolean.
		return errs.InvalidParameterValue(fmt.Sprintf("Invalid %s: Unrecognized value '%s', acceptable values are: "+
			"'0', '1', 'f', 'false', 'n', 'no', 'off', 'on', 't', 'true', 'y', 'yes'", name, repr))
	default:
		return nil
	}
	return errs.InvalidParameterValue(fmt.Sprintf(msg, name, repr))
}

// bodyMembers are the names pecan takes from a request body as keyword
// arguments: the members of a JSON object, or the fields of a form. The
// body is read and put back for the handler.
func bodyMembers(r *http.Request) ([]string, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, fmt.Errorf("read request body: %w", err)
	}
	r.Body = io.NopCloser(bytes.NewReader(raw))
	if len(raw) == 0 {
		return nil, nil
	}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch ct {
	case "application/json", "application/javascript":
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil {
			return nil, nil
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		return keys, nil
	case "application/x-www-form-urlencoded", "":
		form, err := url.ParseQuery(string(raw))
		if err != nil {
			return nil, nil
		}
		keys := make([]string, 0, len(form))
		for k := range form {
			keys = append(keys, k)
		}
		return keys, nil
	}
	return nil, nil
}

// acceptsJSON is pecan's content negotiation for a controller that only
// renders application/json: no Accept header, "*/*", a header webob
// cannot parse, one that accepts application/json or merely starts with
// it pass.
func acceptsJSON(accept string) bool {
	if accept == "" || accept == "*/*" || strings.HasPrefix(accept, "application/json") {
		return true
	}
	ranges, ok := parseAccept(accept)
	if !ok {
		return true
	}
	return acceptQuality(ranges, "application/json") > 0
}

// mediaRange is one element of an Accept header.
type mediaRange struct {
	typ, sub string
	q        float64
}

// parseAccept parses an Accept header; ok is false for one webob would
// not parse (then everything is acceptable).
func parseAccept(h string) ([]mediaRange, bool) {
	var out []mediaRange
	for _, part := range strings.Split(h, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		mt, params, _ := strings.Cut(part, ";")
		typ, sub, ok := strings.Cut(strings.ToLower(strings.TrimSpace(mt)), "/")
		if !ok || typ == "" || sub == "" || (typ == "*" && sub != "*") {
			return nil, false
		}
		m := mediaRange{typ: typ, sub: sub, q: 1}
		for _, p := range strings.Split(params, ";") {
			k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
			if strings.EqualFold(k, "q") {
				q, err := strconv.ParseFloat(v, 64)
				if err != nil || q < 0 || q > 1 {
					return nil, false
				}
				m.q = q
			}
		}
		out = append(out, m)
	}
	return out, len(out) > 0
}

// acceptQuality is the quality the most specific matching range gives
// offer ("type/sub").
func acceptQuality(ranges []mediaRange, offer string) float64 {
	typ, sub, _ := strings.Cut(offer, "/")
	best, spec := 0.0, -1
	for _, m := range ranges {
		s := -1
		switch {
		case m.typ == typ && m.sub == sub:
			s = 2
		case m.typ == typ && m.sub == "*":
			s = 1
		case m.typ == "*":
			s = 0
		}
		if s > spec {
			best, spec = m.q, s
		}
	}
	return best
}
