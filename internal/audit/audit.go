// Package audit is keystonemiddleware's audit middleware as upstream's API
// pipeline includes it when [audit]/enabled: every API request not
// ignored by method ([audit]/ignore_req_list) is described as a CADF
// activity event, sent as an audit.http.request notification before the
// request is served and, completed with its outcome, as
// audit.http.response after. The target's type comes from the audit map
// file ([audit]/audit_map_file) and the caller's service catalog.
package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/openkeel/ironic/internal/auth"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/requestctx"
)

// Notifier sends a non-versioned notification at INFO priority.
type Notifier interface {
	Info(ctx context.Context, eventType string, payload map[string]any)
}

// Event types of the two notifications of a request.
const (
	EventRequest  = "audit.http.request"
	EventResponse = "audit.http.response"
)

// CADF vocabulary (pycadf's taxonomy) the events use.
const (
	cadfEventType   = "http://schemas.dmtf.org/cloud/audit/1.0/event"
	typeAccountUser = "service/security/account/user"
	unknown         = "unknown"
	outcomePending  = "pending"
	outcomeSuccess  = "success"
	outcomeFailure  = "failure"
	actionCreate    = "create"
	actionRead      = "read"
	actionList      = "read/list"
	actionUpdate    = "update"
	actionDelete    = "delete"
	// cadfTime is pycadf's timestamp: microseconds and a numeric zone.
	cadfTime = "2006-01-02T15:04:05.000000-0700"
)

// actionBodyLimit bounds how much of a POST …/action body is read to name
// the action; a longer body names none, as one Python cannot decode.
const actionBodyLimit = 1 << 20

// Middleware is the audit stage.
type Middleware struct {
	m       *Map
	ignore  map[string]bool
	notify  Notifier
	log     *slog.Logger
	now     func() time.Time
	newUUID func() string
}

// Options configure New.
type Options struct {
	Map *Map
	// IgnoreMethods are the HTTP methods not audited (any case).
	IgnoreMethods []string
	Notifier      Notifier
	Log           *slog.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// New returns the audit stage.
func New(o Options) *Middleware {
	mw := &Middleware{m: o.Map, ignore: map[string]bool{}, notify: o.Notifier, log: o.Log, now: o.Now, newUUID: uuid.NewString}
	for _, meth := range o.IgnoreMethods {
		mw.ignore[strings.ToUpper(strings.TrimSpace(meth))] = true
	}
	if mw.log == nil {
		mw.log = slog.Default()
	}
	if mw.now == nil {
		mw.now = time.Now
	}
	return mw
}

// InputFileError is Ironic's InputFileError: the audit map file could not
// be read or parsed, which stops the API from starting.
type InputFileError struct {
	File string
	Err  error
}

func (e *InputFileError) Error() string {
	return fmt.Sprintf("Error with file %s. Reason: %v", e.File, e.Err)
}

func (e *InputFileError) Unwrap() error { return e.Err }

// FromConfig returns the audit stage of [audit], nil when it is disabled.
func FromConfig(c *config.Config, n Notifier, log *slog.Logger) (*Middleware, error) {
	if !c.BoolOf(config.AuditEnabled) {
		return nil, nil
	}
	file := c.StringOf(config.AuditAuditMapFile)
	var m *Map
	if file == "" {
		// keystonemiddleware reads no map then: every target is unknown.
		m = &Map{PathKeywords: map[string]string{}, CustomActions: map[string]string{}, ServiceEndpoints: map[string]string{}}
	} else {
		var err error
		if m, err = LoadMap(file); err != nil {
			return nil, &InputFileError{File: file, Err: err}
		}
	}
	return New(Options{Map: m, IgnoreMethods: strings.Split(c.StringOf(config.AuditIgnoreReqList), ","), Notifier: n, Log: log}), nil
}

// Wrap audits the requests next serves.
func (mw *Middleware) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if mw.ignore[r.Method] {
			next.ServeHTTP(w, r)
			return
		}
		ev, err := mw.event(r)
		if err != nil {
			// keystonemiddleware logs the failure and serves the request
			// unaudited; its response event fails the same way.
			mw.log.ErrorContext(r.Context(), "an exception occurred processing the API call", "error", err)
			next.ServeHTTP(w, r)
			return
		}
		mw.notify.Info(r.Context(), EventRequest, ev.payload())
		sw := &statusWriter{ResponseWriter: w}
		completed := false
		defer func() {
			if completed {
				ev.outcome = outcomeFailure
				if sw.status >= 200 && sw.status < 400 {
					ev.outcome = outcomeSuccess
				}
				ev.reason = map[string]any{"reasonType": "HTTP", "reasonCode": strconv.Itoa(sw.status)}
			} else {
				// The application raised: no response to judge.
				ev.outcome = unknown
			}
			ev.reporterchain = []any{map[string]any{
				"role": "modifier", "reporter": map[string]any{"id": "target"}, "reporterTime": mw.now().UTC().Format(cadfTime)}}
			mw.notify.Info(r.Context(), EventResponse, ev.payload())
		}()
		next.ServeHTTP(sw, r)
		if sw.status == 0 {
			sw.status = http.StatusOK
		}
		completed = true
	})
}

// statusWriter records the response's status.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// event is one request's CADF event, completed after the response.
type event struct {
	base          map[string]any
	outcome       string
	reason        map[string]any
	reporterchain []any
}

func (e *event) payload() map[string]any {
	out := make(map[string]any, len(e.base)+3)
	for k, v := range e.base {
		out[k] = v
	}
	out["outcome"] = e.outcome
	if e.reason != nil {
		out["reason"] = e.reason
	}
	if e.reporterchain != nil {
		out["reporterchain"] = e.reporterchain
	}
	return out
}

// identity is what auth_token leaves in the request for the audit
// middleware (the X-User-Id … headers). Under keystone it is the
// validated token's; otherwise the headers come from the client, as they
// reach upstream's middleware.
type identity struct {
	userID, userName, projectID, status string
	catalog                             []catalogEntry
}

// catalogEntry is a service of the X-Service-Catalog header: auth_token
// writes the token's v3 catalog in the v2 shape, one endpoint per region
// with its URLs by interface.
type catalogEntry struct {
	Type      string              `json:"type"`
	Name      *string             `json:"name"`
	Endpoints []map[string]string `json:"endpoints"`
}

func requestIdentity(r *http.Request) (identity, error) {
	id := identity{
		userID: r.Header.Get("X-User-Id"), userName: r.Header.Get("X-User-Name"),
		projectID: r.Header.Get("X-Project-Id"), status: r.Header.Get("X-Identity-Status"),
	}
	if a := auth.FromContext(r.Context()); a != nil && a.Strategy == auth.StrategyKeystone {
		id = identity{userID: a.UserID, userName: a.UserName, projectID: a.ProjectID, status: "Confirmed",
			catalog: v2Catalog(a.ServiceCatalog)}
		return id, nil
	}
	if h := r.Header.Get("X-Service-Catalog"); h != "" {
		if err := json.Unmarshal([]byte(h), &id.catalog); err != nil {
			return identity{}, fmt.Errorf("X-Service-Catalog: %w", err)
		}
	}
	return id, nil
}

// v2Catalog is auth_token's _normalize_catalog.
func v2Catalog(v3 []auth.CatalogService) []catalogEntry {
	out := make([]catalogEntry, 0, len(v3))
	for _, s := range v3 {
		e := catalogEntry{Type: s.Type, Endpoints: []map[string]string{}}
		if s.Name != "" {
			name := s.Name
			e.Name = &name
		}
		byRegion := map[string]map[string]string{}
		for _, ep := range s.Endpoints {
			reg, ok := byRegion[ep.Region]
			if !ok {
				reg = map[string]string{}
				if ep.Region != "" {
					reg["region"] = ep.Region
				}
				byRegion[ep.Region] = reg
				e.Endpoints = append(e.Endpoints, reg)
			}
			reg[strings.ToLower(ep.Interface)+"URL"] = ep.URL
		}
		out = append(out, e)
	}
	return out
}

func orUnknown(s string) string {
	if s == "" {
		return unknown
	}
	return s
}

// event builds the request's event as keystonemiddleware's _create_event.
func (mw *Middleware) event(r *http.Request) (*event, error) {
	id, err := requestIdentity(r)
	if err != nil {
		return nil, err
	}
	target, err := mw.target(r, id.catalog)
	if err != nil {
		return nil, err
	}
	host := map[string]any{"address": clientAddr(r)}
	if ua := r.Header.Get("User-Agent"); ua != "" {
		host["agent"] = ua
	}
	initiator := map[string]any{
		"typeURI": typeAccountUser, "id": orUnknown(id.userID), "name": orUnknown(id.userName),
		"host":       host,
		"credential": map[string]any{"token": maskToken(r.Header.Get("X-Auth-Token")), "identity_status": orUnknown(id.status)},
		"project_id": orUnknown(id.projectID),
	}
	if rid := requestctx.RequestID(r.Context()); rid != "" {
		initiator["request_id"] = rid
	}
	if gid := requestctx.GlobalRequestID(r.Context()); gid != "" {
		initiator["global_request_id"] = gid
	}
	requestPath := r.URL.EscapedPath()
	if r.URL.RawQuery != "" {
		requestPath += "?" + r.URL.RawQuery
	}
	return &event{outcome: outcomePending, base: map[string]any{
		"typeURI":     cadfEventType,
		"eventType":   "activity",
		"id":          mw.newUUID(),
		"eventTime":   mw.now().UTC().Format(cadfTime),
		"action":      mw.action(r),
		"initiator":   initiator,
		"target":      target,
		"observer":    map[string]any{"id": "target"},
		"requestPath": requestPath,
		"tags":        []string{"correlation_id?value=" + mw.newUUID()},
	}}, nil
}

// clientAddr is webob's client_addr: the first X-Forwarded-For entry,
// else the peer's address.
func clientAddr(r *http.Request) string {
	if xff := r.Header.Values("X-Forwarded-For"); len(xff) > 0 {
		first, _, _ := strings.Cut(xff[0], ",")
		return strings.TrimSpace(first)
	}
	host := r.RemoteAddr
	if i := strings.LastIndexByte(host, ':'); i >= 0 {
		host = strings.Trim(host[:i], "[]")
	}
	return host
}

// maskToken is pycadf's mask_value: an eighth of the token (at most 32
// characters) is kept at each end. pycadf keeps the whole token when that
// share rounds to nothing (tokens of four characters or fewer); here the
// ends are then dropped instead, so that no token is ever sent whole.
func maskToken(tok string) string {
	rs := []rune(tok)
	visible := int(math.Min(32, math.RoundToEven(float64(len(rs))*0.125)))
	if visible == 0 {
		return " xxxxxxxx "
	}
	return string(rs[:visible]) + " xxxxxxxx " + string(rs[len(rs)-visible:])
}

// trimJSON is keystonemiddleware's _clean_path.
func trimJSON(s string) string { return strings.TrimSuffix(s, ".json") }

// action is keystonemiddleware's get_action.
func (mw *Middleware) action(r *http.Request) string {
	path := strings.TrimSuffix(r.URL.Path, "/")
	ending := trimJSON(path[strings.LastIndexByte(path, '/')+1:])
	if a, ok := mw.m.CustomActions[ending+"/"+strings.ToLower(r.Method)]; ok {
		return a
	}
	if a, ok := mw.m.CustomActions[ending]; ok {
		return a
	}
	_, known := mw.m.PathKeywords[ending]
	switch r.Method {
	case http.MethodPost:
		switch {
		case ending == "action":
			return bodyAction(r)
		case !known:
			return actionUpdate
		default:
			return actionCreate
		}
	case http.MethodGet:
		if known {
			return actionList
		}
		return actionRead
	case http.MethodPut, http.MethodPatch:
		return actionUpdate
	case http.MethodDelete:
		return actionDelete
	case http.MethodHead:
		return actionRead
	}
	return unknown
}

// bodyAction names a POST …/action by the first key of its JSON body
// ("update/<key>"), "create" when there is none; the body is put back
// for the application.
func bodyAction(r *http.Request) string {
	if r.Body == nil {
		return actionCreate
	}
	head, err := io.ReadAll(io.LimitReader(r.Body, actionBodyLimit+1))
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(head), r.Body), r.Body}
	if err != nil || len(head) > actionBodyLimit {
		return actionCreate
	}
	dec := json.NewDecoder(bytes.NewReader(head))
	tok, err := dec.Token()
	if d, ok := tok.(json.Delim); err != nil || !ok || d != '{' {
		return actionCreate
	}
	key, err := dec.Token()
	if k, ok := key.(string); err == nil && ok {
		return actionUpdate + "/" + k
	}
	return actionCreate
}

// target is keystonemiddleware's get_target_resource: the catalog service
// whose admin or public endpoint is the request's host (with an explicit
// port), else one of the map's default type, else an unknown target.
func (mw *Middleware) target(r *http.Request, catalog []catalogEntry) (map[string]any, error) {
	var found, fallback *catalogEntry
	reqHost := r.Host
	_, port, _ := net.SplitHostPort(reqHost)
	for i := range catalog {
		e := &catalog[i]
		if len(e.Endpoints) == 0 {
			mw.log.Warn("skipping service as it has no endpoints", "service", e.Name)
			continue
		}
		urls := e.Endpoints[0]
		if port != "" && (reqHost == netloc(urls["adminURL"]) || reqHost == netloc(urls["publicURL"])) {
			found = e
			break
		}
		if mw.m.HasDefaultTarget && e.Type == mw.m.DefaultTargetEndpointType {
			fallback = e
		}
	}
	if found == nil {
		found = fallback
	}
	if found == nil {
		return map[string]any{"typeURI": unknown, "id": unknown, "name": unknown}, nil
	}
	if found.Name == nil {
		return nil, errors.New("catalog service of type " + found.Type + " has no name")
	}
	urls := found.Endpoints[0]
	svcType, ok := mw.m.ServiceEndpoints[found.Type]
	if !ok {
		svcType = unknown
	}
	typeURI := unknown
	if svcType != unknown {
		typeURI = mw.typeURI(r, svcType)
	}
	id := *found.Name
	if v, ok := urls["id"]; ok {
		id = v
	}
	addr := func(name, key string) map[string]any {
		u, ok := urls[key]
		if !ok {
			u = unknown
		}
		return map[string]any{"url": u, "name": name}
	}
	return map[string]any{"typeURI": typeURI, "id": id, "name": *found.Name,
		"addresses": []any{addr("admin", "adminURL"), addr("private", "internalURL"), addr("public", "publicURL")}}, nil
}

// netloc is the host[:port] of a URL, "" when it has none.
func netloc(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return ""
	}
	return p.Host
}

// typeURI is keystonemiddleware's _build_typeURI: the service type, then
// each path keyword and, after one, the name its map gives the segment
// that follows.
func (mw *Middleware) typeURI(r *http.Request, serviceType string) string {
	var b strings.Builder
	b.WriteString(serviceType)
	prev, hasPrev := "", false
	for _, key := range strings.Split(r.URL.Path, "/") {
		key = trimJSON(key)
		if _, ok := mw.m.PathKeywords[key]; ok {
			b.WriteString("/" + key)
		} else if name, ok := mw.m.PathKeywords[prev]; ok && hasPrev {
			b.WriteString("/" + name)
		}
		prev, hasPrev = key, true
	}
	return b.String()
}
