package api

import (
	"net/http"
	"sort"
	"strings"

	"github.com/openkeel/ironic/internal/api/microversion"
	"github.com/openkeel/ironic/internal/errs"
)

// Routes (routes_table.go) is generated from the spec's routes.json and the
// hand-kept gen/routes/local.go.
//go:generate go run ./gen/routes

// Route is one v1 operation: its method and path as upstream documents
// them, the first microversion serving it, what older versions get
// instead, and the policy rules and conductor calls its handler uses.
type Route struct {
	// ID is "METHOD PATH", the key of Deps.Handlers.
	ID     string
	Method string
	// Path uses upstream's parameter names ({node_ident}, {port_id}, ...).
	// A segment may hold two parameters joined by "@"
	// ({ind_ident}@{component}).
	Path string
	// Min is the first minor version served; AlsoAt lists single older
	// minors that are served too (continue_inspection at 1.1).
	Min    int
	AlsoAt []int
	// Success is the status of a successful answer; 0 where the handler
	// decides (vendor passthru: 200 for synchronous, 202 for asynchronous
	// driver methods).
	Success int
	// TooOld is what a request below Min gets: the first step whose Below
	// is above the requested minor answers. Upstream is inconsistent here
	// (404, 405 or 406, routing or handler error shape) and clients see
	// the difference, so each route carries its own answer.
	TooOld []TooOld
	// Public routes are reachable without a token (acl_public_routes).
	Public bool
	// Policies are the rules that can reject the call, in order.
	Policies []string
	// Topic is the conductor lookup; RPC the ConductorAPI methods called.
	Topic []string
	RPC   []string
	// Controller and Action name upstream's handler. The controller
	// decides the Allow header of a 405 (pecan lists the standard methods
	// of the controller that rejected the request).
	Controller string
	Action     string
	// Alias is a second path served by the same handler (the passthru
	// method name as a path element).
	Alias string
	// TrailingArg names a handler argument that may also come as one more
	// path element after Path, as pecan passes surplus path elements as
	// positional arguments (IndicatorController.put's state).
	TrailingArg string
	// Unimplemented marks operations documented upstream that its
	// controller does not serve (the handler fails with a server error).
	Unimplemented bool
	// Args are the parameters of upstream's handler after self, in order
	// (the enclosing controllers' path parameters are not among them).
	// pecan fills them from the path elements the route leaves over, then
	// by name from the query string and the members of a JSON object or
	// form body, and args.validate refuses any other name with
	// "Unexpected arguments" unless AnyArgs.
	Args []Arg
	// Body is the parameter taking the whole JSON body (method.body), whose
	// members are then no arguments.
	Body string
	// AnyArgs: the handler takes any argument name (**kwargs).
	AnyArgs bool

	segs      []string
	aliasSegs []string
}

// Arg is one parameter of an upstream handler.
type Arg struct {
	Name  string
	Check ArgCheck
}

// ArgCheck is the ironic.common.args validator a parameter is declared
// with, which words the refusal of a repeated query parameter (pecan
// passes the list of its values).
type ArgCheck int

const (
	// CheckNone: no validator, or one the router does not model.
	CheckNone ArgCheck = iota
	CheckString
	CheckInteger
	CheckUUID
	CheckUUIDOrName
	CheckBoolean
	CheckName
	CheckMAC
)

// Order says when a too-old answer is produced relative to the policy
// check.
type Order int

const (
	// BeforePolicy: routing or the first lines of the handler.
	BeforePolicy Order = iota
	// AfterPolicy: after the handler's policy check.
	AfterPolicy
	// AfterPolicyAndTopic: also after the conductor lookup (which fails
	// with 503 when no conductor is alive).
	AfterPolicyAndTopic
)

// TooOldKind is how upstream raises a too-old answer, which decides the
// error body and whether version headers are sent.
type TooOldKind int

const (
	// Routing: a web framework exception raised while routing (pecan.abort
	// or webob exceptions in _lookup/_route). Body {"code", "title",
	// "description"}; the response carries no version headers because
	// pecan replaces the response object with the exception.
	Routing TooOldKind = iota
	// Handler: a web framework exception raised inside an exposed handler
	// (the api_version decorator). Fault body; version headers kept.
	Handler
	// Ironic: an Ironic exception class raised by the handler. Fault
	// body; version headers kept.
	Ironic
)

// TooOld is one step of a route's answer to old versions.
type TooOld struct {
	Below   int
	Status  int
	Kind    TooOldKind
	Class   errs.Class
	Message string
	// AllowOf names the controller whose methods fill the Allow header of
	// a routing 405.
	AllowOf string
	Order   Order
}

// Err is the error the step answers with.
func (t TooOld) Err() error {
	switch t.Kind {
	case Ironic:
		if t.Message != "" {
			return errs.NewMessage(t.Class, t.Message)
		}
		return errs.New(t.Class, nil)
	case Routing:
		e := errs.HTTPStatus(t.Status, t.Message)
		if t.AllowOf != "" {
			e = e.WithHeaders(map[string]string{"Allow": allowHeader(t.AllowOf)})
		}
		return e
	default:
		return errs.HTTPStatus(t.Status, t.Message)
	}
}

// Serves reports whether the route serves v (no too-old answer).
func (r *Route) Serves(v microversion.Version) bool {
	if v.Minor >= r.Min {
		return true
	}
	for _, m := range r.AlsoAt {
		if v.Minor == m {
			return true
		}
	}
	return false
}

// tooOld returns the step answering v, or nil when the route serves v.
func (r *Route) tooOld(v microversion.Version) *TooOld {
	if r.Serves(v) {
		return nil
	}
	for i := range r.TooOld {
		if v.Minor < r.TooOld[i].Below {
			return &r.TooOld[i]
		}
	}
	return nil
}

// standardActions are pecan's RestController methods that count for the
// Allow header (custom actions such as states/power do not).
var standardActions = map[string]string{
	"get": http.MethodGet, "get_all": http.MethodGet, "get_one": http.MethodGet,
	"post": http.MethodPost, "put": http.MethodPut, "patch": http.MethodPatch, "delete": http.MethodDelete,
}

// allowController maps controllers whose wrong-method requests upstream
// rejects in an enclosing controller: the management sub-controllers are
// reached through NodeManagementController, which has no standard method,
// so upstream sends an empty Allow header.
var allowController = map[string]string{
	"BootDeviceController": "NodeManagementController",
	"InjectNmiController":  "NodeManagementController",
	"IndicatorController":  "NodeManagementController",
}

// HiddenRoutes are operations upstream serves that routes.json, made from
// the API reference, does not list; the router serves them after Routes.
var HiddenRoutes = []Route{{
	// ShardController.get_one exists only to refuse (master's
	// ironic/api/controllers/v1/shard.py: pecan.abort(404) inside
	// method.expose, a fault), so that /v1/shards/X is no 405.
	ID:         "GET /v1/shards/{shard}",
	Method:     "GET",
	Path:       "/v1/shards/{shard}",
	Min:        microversion.Minor82NodeShard,
	TooOld:     []TooOld{{Below: microversion.Minor82NodeShard, Status: 404, Kind: Handler, Message: "The API version does not allow shards", Order: BeforePolicy}},
	Controller: "ShardController",
	Action:     "get_one",
	Args:       []Arg{{"_", CheckNone}},
}}

// allows is the Allow header value of each controller, built once.
var allows = buildAllows()

func buildAllows() map[string]string {
	sets := map[string]map[string]bool{}
	for _, r := range Routes {
		c := r.Controller
		if sets[c] == nil {
			sets[c] = map[string]bool{}
		}
		if m, ok := standardActions[r.Action]; ok {
			sets[c][m] = true
		}
	}
	out := make(map[string]string, len(sets))
	for c, set := range sets {
		ms := make([]string, 0, len(set))
		for m := range set {
			ms = append(ms, m)
		}
		sort.Strings(ms)
		out[c] = strings.Join(ms, ", ")
	}
	return out
}

func allowHeader(controller string) string {
	if c, ok := allowController[controller]; ok {
		controller = c
	}
	return allows[controller]
}

// match matches path segments (below /v1) against a pattern, filling
// params. Parameters never match an empty segment.
func match(pattern, path []string, params map[string]string) bool {
	if len(pattern) != len(path) {
		return false
	}
	for i, p := range pattern {
		s := path[i]
		if !strings.HasPrefix(p, "{") {
			if p != s {
				return false
			}
			continue
		}
		if s == "" {
			return false
		}
		if at := strings.Index(p, "}@{"); at >= 0 {
			// "{a}@{b}": upstream takes the element whole and splits it at
			// its first "@" in the handler, after the policy check and the
			// conductor lookup; without "@" b stays unset for the handler
			// to refuse then.
			a, b, ok := strings.Cut(s, "@")
			params[p[1:at]] = a
			if ok {
				params[p[at+3:len(p)-1]] = b
			}
			continue
		}
		params[p[1:len(p)-1]] = s
	}
	return true
}

// matches is match without the parameters, for the checks that only ask
// whether a pattern matches (no map to fill per route compared).
func matches(pattern, path []string) bool {
	if len(pattern) != len(path) {
		return false
	}
	for i, p := range pattern {
		if strings.HasPrefix(p, "{") {
			if path[i] == "" {
				return false
			}
		} else if p != path[i] {
			return false
		}
	}
	return true
}

// literals counts the fixed segments of a pattern: a more literal pattern
// wins (/v1/nodes/detail over /v1/nodes/{node_ident}).
func literals(segs []string) int {
	n := 0
	for _, s := range segs {
		if !strings.HasPrefix(s, "{") {
			n++
		}
	}
	return n
}

func splitPattern(p string) []string {
	p = strings.TrimPrefix(p, "/v1")
	p = strings.TrimPrefix(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}
