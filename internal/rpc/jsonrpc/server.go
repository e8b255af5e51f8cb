package jsonrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"reflect"
	"slices"

	"github.com/openkeel/ironic/internal/auth"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/httpserver"
	"github.com/openkeel/ironic/internal/rpc"
	"github.com/openkeel/ironic/internal/rpc/ovo"
)

// DefaultMaxBodyBytes bounds a request body. Upstream has no bound; ours
// leaves room for the largest argument, a configdrive, which the API
// already limits.
const DefaultMaxBodyBytes = 128 << 20

// ServerOptions configure a Server. Authentication is not the server's
// business: the process wraps it with internal/auth's JSON-RPC
// authenticator ([json_rpc]auth_strategy), as upstream stacks its
// middleware in front of the JSON-RPC application.
type ServerOptions struct {
	// MaxBodyBytes bounds request bodies (413 beyond); 0 is
	// DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// MaxJSONDepth bounds nesting, as [api]max_json_body_depth; 0 is 25.
	MaxJSONDepth int
	Logger       *slog.Logger
	// Codec encodes the objects answered at the versions of
	// [DEFAULT]/pin_release_version; nil is unpinned.
	Codec *ovo.Codec
	// AllowedRoles, under keystone authentication, are the roles of which
	// a caller's token must hold one ([json_rpc]/allowed_roles); nil
	// checks none (the other strategies).
	AllowedRoles []string
}

// ServerOptionsFromConfig reads the [json_rpc] server options.
func ServerOptionsFromConfig(cfg *config.Config) ServerOptions {
	// A pin older than 21.4 is left unpinned here: the conductor behind
	// the server refuses to start with it (conductor.New).
	codec, _ := ovo.NewCodec(cfg.StringOf(config.DefaultPinReleaseVersion))
	var roles []string
	if AuthStrategy(cfg) == "keystone" {
		roles = append([]string{}, cfg.ListOf(config.JSONRPCAllowedRoles)...)
	}
	return ServerOptions{
		MaxJSONDepth: cfg.IntOf(config.APIMaxJSONBodyDepth),
		Codec:        codec,
		AllowedRoles: roles,
	}
}

// ListenOptions are the [json_rpc] listener options for httpserver.Listen.
func ListenOptions(cfg *config.Config) httpserver.Options {
	return httpserver.Options{
		HostIP:         cfg.StringOf(config.JSONRPCHostIP),
		Port:           cfg.IntOf(config.JSONRPCPort),
		UnixSocket:     cfg.StringOf(config.JSONRPCUnixSocket),
		UnixSocketMode: fs.FileMode(cfg.IntOf(config.JSONRPCUnixSocketMode)),
		EnableSSL:      cfg.BoolOf(config.JSONRPCUseSSL),
		CertFile:       cfg.StringOf(config.JSONRPCCertFile),
		KeyFile:        cfg.StringOf(config.JSONRPCKeyFile),
		TLSMinVersion:  cfg.StringOf(config.JSONRPCTLSMinimumVersion),
		Limits:         httpserver.LimitsFromConfig(cfg),
	}
}

// Server answers JSON-RPC requests by calling a conductor.
type Server struct {
	h    rpc.ConductorAPI
	opts ServerOptions
	log  *slog.Logger
}

// NewServer returns the JSON-RPC http.Handler for h.
func NewServer(h rpc.ConductorAPI, opts ServerOptions) *Server {
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.MaxJSONDepth <= 0 {
		opts.MaxJSONDepth = 25
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Server{h: h, opts: opts, log: opts.Logger}
}

// ServeHTTP answers one request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		writeHTTPError(w, http.StatusMethodNotAllowed, "Only POST method can be used", nil)
		return
	}
	if s.opts.AllowedRoles != nil && !s.allowed(auth.FromContext(r.Context())) {
		// Upstream checks the roles the token validation put in the
		// request (X-Roles) before it reads the frame.
		writeHTTPError(w, http.StatusForbidden, "Forbidden", nil)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opts.MaxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeHTTPError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("Request body exceeds %d bytes", s.opts.MaxBodyBytes), nil)
			return
		}
		writeHTTPError(w, http.StatusBadRequest, "Cannot read request body", nil)
		return
	}
	if jsonDepth(body) > s.opts.MaxJSONDepth {
		writeHTTPError(w, http.StatusBadRequest, fmt.Sprintf("JSON body nesting exceeds the maximum depth of %d", s.opts.MaxJSONDepth), nil)
		return
	}
	// As upstream, a call runs to its end even when the caller gives up;
	// the conductor decides what is cancellable.
	resp := s.call(context.WithoutCancel(r.Context()), body)
	if resp == nil {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	out, err := json.Marshal(resp)
	if err != nil {
		s.log.ErrorContext(r.Context(), "cannot encode JSON-RPC response", "error", err)
		out, _ = json.Marshal(&response{JSONRPC: "2.0", ID: resp.ID, Error: encodeError(err)})
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.Write(out)
}

// allowed reports whether the caller's token holds one of AllowedRoles.
func (s *Server) allowed(a *auth.Context) bool {
	if a == nil {
		return false
	}
	for _, r := range a.Roles {
		if slices.Contains(s.opts.AllowedRoles, r) {
			return true
		}
	}
	return false
}

func writeHTTPError(w http.ResponseWriter, code int, msg string, headers map[string]string) {
	for k, v := range headers {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": code, "message": msg}})
}

// call handles one frame and returns the response, or nil for a cast. A
// malformed frame is answered even without an id, as upstream.
func (s *Server) call(ctx context.Context, body []byte) *response {
	var frame map[string]json.RawMessage
	if err := json.Unmarshal(body, &frame); err != nil {
		if !json.Valid(body) {
			return errorResponse(nil, parseError())
		}
		// Valid JSON that is not an object: a batch or a scalar.
		return errorResponse(nil, invalidRequest())
	}
	id := frame["id"]
	var req request
	if err := json.Unmarshal(body, &req); err != nil {
		return errorResponse(id, invalidRequest())
	}
	params := map[string]json.RawMessage{}
	if p := frame["params"]; p != nil && !isNull(p) {
		if err := json.Unmarshal(p, &params); err != nil {
			return errorResponse(id, invalidRequest())
		}
	}
	if req.JSONRPC != "2.0" || req.Method == "" {
		return errorResponse(id, invalidRequest())
	}
	result, err := s.dispatch(ctx, req.Method, params)
	if isNull(id) {
		if err != nil {
			s.log.DebugContext(ctx, "RPC cast failed", "method", req.Method, "error", err)
		}
		return nil
	}
	if err != nil {
		return errorResponse(id, err)
	}
	raw, err := json.Marshal(result)
	if err != nil {
		return errorResponse(id, fmt.Errorf("encode result of %s: %w", req.Method, err))
	}
	return &response{JSONRPC: "2.0", Result: raw, ID: id}
}

func isNull(raw json.RawMessage) bool {
	return len(raw) == 0 || string(bytes.TrimSpace(raw)) == "null"
}

func errorResponse(id json.RawMessage, err error) *response {
	if isNull(id) {
		id = json.RawMessage("null")
	}
	return &response{JSONRPC: "2.0", ID: id, Error: encodeError(err)}
}

// Dispatch runs one call for another transport (oslo.messaging): params
// are what a JSON-RPC frame's params would hold. Its errors are the
// conductor's, or the protocol errors IsMethodNotFound and IsInvalidParams
// recognise.
func (s *Server) Dispatch(ctx context.Context, method string, params map[string]json.RawMessage) (any, error) {
	return s.dispatch(ctx, method, params)
}

// IsMethodNotFound reports whether err is Dispatch's answer to a method
// the conductor does not have.
func IsMethodNotFound(err error) bool {
	var p *protocolError
	return errors.As(err, &p) && p.code == CodeMethodNotFound
}

// IsInvalidParams reports whether err is Dispatch's answer to kwargs that
// do not fit the method's signature.
func IsInvalidParams(err error) bool {
	var p *protocolError
	return errors.As(err, &p) && p.code == CodeInvalidParams
}

// dispatch checks the kwargs against the method's signature and calls it.
func (s *Server) dispatch(ctx context.Context, name string, params map[string]json.RawMessage) (any, error) {
	m, ok := methods[name]
	if !ok {
		return nil, methodNotFound(name)
	}
	delete(params, "rpc.version") // upstream does no server-side version check
	names := make([]string, 0, len(params))
	for k := range params {
		names = append(names, k)
	}
	slices.Sort(names)
	if raw, ok := params["context"]; ok {
		var rc rpc.RequestContext
		if err := json.Unmarshal(raw, &rc); err != nil || !isObject(raw) {
			return nil, invalidParams(names, name, "Context must be a dictionary, if provided")
		}
		ctx = rpc.WithRequestContext(ctx, &rc)
		delete(params, "context")
	}
	known := map[string]bool{}
	for _, k := range kwargs(m.params) {
		known[k.name] = true
		if _, ok := params[k.name]; k.required && !ok {
			return nil, invalidParams(names, name, fmt.Sprintf("missing required argument: '%s'", k.name))
		}
	}
	for _, k := range names {
		if k != "context" && !known[k] {
			return nil, invalidParams(names, name, fmt.Sprintf("got an unexpected keyword argument '%s'", k))
		}
	}
	p := reflect.New(m.params)
	if len(params) > 0 {
		raw, _ := json.Marshal(params)
		if err := json.Unmarshal(raw, p.Interface()); err != nil {
			return nil, invalidParams(names, name, err.Error())
		}
	}
	result, err := m.serve(ctx, s.h, s.opts.Codec, p.Interface())
	if err != nil {
		var protocol *protocolError
		if _, ok := errs.As(err); !ok && !errors.As(err, &protocol) {
			s.log.ErrorContext(ctx, "unexpected RPC error", "method", name, "error", err)
		}
		return nil, err
	}
	return result, nil
}

func isObject(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && t[0] == '{'
}

// jsonDepth returns the deepest nesting of arrays and objects in data,
// which need not be valid JSON: the parser reports that afterwards.
func jsonDepth(data []byte) int {
	depth, deepest := 0, 0
	inString, escaped := false, false
	for _, c := range data {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
			deepest = max(deepest, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return deepest
}
