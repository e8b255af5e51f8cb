// Package auth establishes who is calling the API (or the JSON-RPC server):
// [DEFAULT]/auth_strategy noauth, http_basic (an Apache htpasswd file with
// bcrypt entries) or keystone (tokens validated against Keystone's /v3 API
// as keystonemiddleware's auth_token does). The result is a Context, the
// request context upstream builds with oslo.context's from_environ, which
// the policy layer turns into oslo.policy credentials.
package auth

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"
)

// Strategy names, as [DEFAULT]/auth_strategy spells them.
const (
	StrategyNoAuth    = "noauth"
	StrategyHTTPBasic = "http_basic"
	StrategyKeystone  = "keystone"
)

// Context is the caller's identity. An empty string stands for Python's
// None (the header or token attribute was absent).
type Context struct {
	// Strategy is the auth_strategy that produced this context.
	Strategy string

	UserID          string
	UserName        string
	UserDomainID    string
	UserDomainName  string
	ProjectID       string
	ProjectName     string
	ProjectDomainID string
	// ProjectDomainName is the project's domain name.
	ProjectDomainName string
	// DomainID and DomainName are set for domain-scoped tokens.
	DomainID   string
	DomainName string
	// SystemScope is "all" for a system-scoped token.
	SystemScope string
	Roles       []string
	// IsAdminProject is keystone's is_admin_project, true when the token
	// does not say (oslo.context's default, kept so old policies work).
	IsAdminProject bool

	// The service token (X-Service-Token) identity, set only when it was
	// validated and passed the service_token_roles check.
	ServiceUserID            string
	ServiceUserName          string
	ServiceUserDomainID      string
	ServiceUserDomainName    string
	ServiceProjectID         string
	ServiceProjectName       string
	ServiceProjectDomainID   string
	ServiceProjectDomainName string
	ServiceRoles             []string

	// ServiceCatalog is the token's catalog (keystone v3 shape), nil when
	// the token has none or include_service_catalog is off.
	ServiceCatalog []CatalogService
	// TokenInfo is the raw validation response (upstream's
	// auth_token_info / keystone.token_info), for calls made on behalf of
	// the user. It contains no token id.
	TokenInfo json.RawMessage
	// ExpiresAt is the token's expiry; zero outside keystone.
	ExpiresAt time.Time

	// IsPublicAPI is set on the routes that skip authentication.
	IsPublicAPI bool

	// AuthToken is the caller's token, kept only under keystone (upstream's
	// ContextHook drops it otherwise). Never log it: String and LogValue
	// leave it out.
	AuthToken string `json:"-"`
	// ServiceToken is the X-Service-Token sent along, same rules.
	ServiceToken string `json:"-"`
}

// CatalogService is one service of a keystone v3 catalog.
type CatalogService struct {
	ID        string            `json:"id,omitempty"`
	Type      string            `json:"type"`
	Name      string            `json:"name,omitempty"`
	Endpoints []CatalogEndpoint `json:"endpoints"`
}

// CatalogEndpoint is one endpoint of a catalog service.
type CatalogEndpoint struct {
	ID        string `json:"id,omitempty"`
	Interface string `json:"interface"`
	Region    string `json:"region,omitempty"`
	RegionID  string `json:"region_id,omitempty"`
	URL       string `json:"url"`
}

// Authenticator establishes the caller's identity from a request. On
// failure the error is also an http.Handler writing the response upstream's
// authentication middleware gives (its bodies are not Ironic faults).
type Authenticator interface {
	Authenticate(r *http.Request) (*Context, error)
}

type ctxKey struct{}

// WithContext returns ctx carrying a.
func WithContext(ctx context.Context, a *Context) context.Context {
	return context.WithValue(ctx, ctxKey{}, a)
}

// FromContext returns the Context stored by WithContext, nil if none.
func FromContext(ctx context.Context) *Context {
	a, _ := ctx.Value(ctxKey{}).(*Context)
	return a
}

// Credentials are oslo.policy credentials: the keys of Ironic's
// RequestContext.to_policy_values (oslo.context's plus project_name and
// is_public_api). Absent values are nil, as Python's None.
type Credentials map[string]any

// ToPolicyCredentials returns the credentials policy checks read. The
// config-dependent "config.service_project_name" key Ironic adds is the
// policy layer's to add.
func (c *Context) ToPolicyCredentials() Credentials {
	roles := c.Roles
	if roles == nil {
		roles = []string{}
	}
	sroles := c.ServiceRoles
	if sroles == nil {
		sroles = []string{}
	}
	return Credentials{
		"user_id":                   none(c.UserID),
		"user_domain_id":            none(c.UserDomainID),
		"system_scope":              none(c.SystemScope),
		"domain_id":                 none(c.DomainID),
		"project_id":                none(c.ProjectID),
		"project_domain_id":         none(c.ProjectDomainID),
		"roles":                     roles,
		"is_admin_project":          c.IsAdminProject,
		"service_user_id":           none(c.ServiceUserID),
		"service_user_domain_id":    none(c.ServiceUserDomainID),
		"service_project_id":        none(c.ServiceProjectID),
		"service_project_domain_id": none(c.ServiceProjectDomainID),
		"service_roles":             sroles,
		"project_name":              none(c.ProjectName),
		"is_public_api":             c.IsPublicAPI,
	}
}

func none(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// String describes the identity without any token, so that a context
// printed by mistake leaks nothing.
func (c *Context) String() string {
	if c == nil {
		return "<nil>"
	}
	return fmt.Sprintf("auth.Context{strategy=%s user=%s project=%s domain=%s system_scope=%s roles=%s public=%t}",
		c.Strategy, dash(c.UserID), dash(c.ProjectID), dash(c.DomainID), dash(c.SystemScope),
		strings.Join(c.Roles, ","), c.IsPublicAPI)
}

// GoString is String, so %#v does not print the tokens either.
func (c *Context) GoString() string { return c.String() }

// LogValue is what slog records: identity, never tokens.
func (c *Context) LogValue() slog.Value {
	if c == nil {
		return slog.Value{}
	}
	return slog.GroupValue(
		slog.String("strategy", c.Strategy),
		slog.String("user_id", c.UserID),
		slog.String("project_id", c.ProjectID),
		slog.String("domain_id", c.DomainID),
		slog.String("system_scope", c.SystemScope),
		slog.String("roles", strings.Join(c.Roles, ",")),
	)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// headerValue is a WSGI environ value: repeated headers joined by commas
// (as the WSGI servers upstream runs under do), and whether any was sent.
func headerValue(h http.Header, name string) (string, bool) {
	// name is in http.Header's canonical form (TestFromHeadersNames):
	// looked up as is, without canonicalizing the 30 names every request
	// (issue 29).
	v := h[name]
	if len(v) == 0 {
		return "", false
	}
	return strings.Join(v, ","), true
}

// first returns the first of names present in h, as oslo.context tries its
// alternative header names in order.
func first(h http.Header, names ...string) string {
	for _, n := range names {
		if v, ok := headerValue(h, n); ok {
			return v
		}
	}
	return ""
}

func splitRoles(s string) []string {
	if s == "" {
		return []string{}
	}
	parts := strings.Split(s, ",")
	for i, p := range parts {
		parts[i] = strings.TrimSpace(p)
	}
	return parts
}

// FromHeaders builds a context from identity headers as oslo.context's
// RequestContext.from_environ does. Upstream builds every request context
// this way: under keystone from the headers auth_token set after
// validation, under noauth and http_basic (and on public routes) from
// whatever the client sent. The auth token is kept; callers drop it where
// upstream's ContextHook does.
func FromHeaders(h http.Header) *Context {
	c := &Context{
		AuthToken:                first(h, "X-Auth-Token", "X-Storage-Token"),
		UserID:                   first(h, "X-User-Id", "X-User"),
		ProjectID:                first(h, "X-Project-Id", "X-Tenant-Id", "X-Tenant"),
		DomainID:                 first(h, "X-Domain-Id"),
		DomainName:               first(h, "X-Domain-Name"),
		SystemScope:              first(h, "Openstack-System-Scope"),
		UserDomainID:             first(h, "X-User-Domain-Id"),
		ProjectDomainID:          first(h, "X-Project-Domain-Id"),
		UserName:                 first(h, "X-User-Name"),
		ProjectName:              first(h, "X-Project-Name", "X-Tenant-Name"),
		UserDomainName:           first(h, "X-User-Domain-Name"),
		ProjectDomainName:        first(h, "X-Project-Domain-Name"),
		ServiceToken:             first(h, "X-Service-Token"),
		ServiceUserID:            first(h, "X-Service-User-Id"),
		ServiceUserName:          first(h, "X-Service-User-Name"),
		ServiceUserDomainID:      first(h, "X-Service-User-Domain-Id"),
		ServiceUserDomainName:    first(h, "X-Service-User-Domain-Name"),
		ServiceProjectID:         first(h, "X-Service-Project-Id"),
		ServiceProjectName:       first(h, "X-Service-Project-Name"),
		ServiceProjectDomainID:   first(h, "X-Service-Project-Domain-Id"),
		ServiceProjectDomainName: first(h, "X-Service-Project-Domain-Name"),
		Roles:                    splitRoles(first(h, "X-Roles", "X-Role")),
		ServiceRoles:             splitRoles(first(h, "X-Service-Roles")),
		IsAdminProject:           true,
	}
	if v, ok := headerValue(h, "X-Is-Admin-Project"); ok {
		c.IsAdminProject = strings.EqualFold(v, "true")
	}
	return c
}

// ForPublicRoute is the context of a request on a route that skips
// authentication: built from the client's headers and marked public, with
// the token dropped unless the strategy is keystone (upstream's
// AuthPublicRoutes plus ContextHook).
func ForPublicRoute(r *http.Request, strategy string) *Context {
	c := FromHeaders(r.Header)
	c.Strategy = strategy
	c.IsPublicAPI = true
	if strategy != StrategyKeystone {
		c.AuthToken = ""
		c.ServiceToken = ""
	}
	return c
}

// NoAuth is auth_strategy = noauth: every request is trusted, and its
// context is whatever identity headers the client sent, as upstream
// (policy checks are skipped for noauth, but a few field-visibility checks
// still read the roles).
type NoAuth struct{}

// Authenticate accepts every request.
func (NoAuth) Authenticate(r *http.Request) (*Context, error) {
	c := FromHeaders(r.Header)
	c.Strategy = StrategyNoAuth
	c.AuthToken = ""
	c.ServiceToken = ""
	return c, nil
}

// Handler runs a in front of next (the JSON-RPC server's use; the API
// pipeline has its own stage that knows the public routes): failures are
// answered by the error itself, success stores the context.
func Handler(a Authenticator, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := a.Authenticate(r)
		if err != nil {
			WriteError(w, r, err)
			return
		}
		next.ServeHTTP(w, r.WithContext(WithContext(r.Context(), c)))
	})
}

// WriteError answers with err's own response when it has one, 500
// otherwise.
func WriteError(w http.ResponseWriter, r *http.Request, err error) {
	if h, ok := err.(http.Handler); ok {
		h.ServeHTTP(w, r)
		return
	}
	http.Error(w, http.StatusText(http.StatusInternalServerError), http.StatusInternalServerError)
}
