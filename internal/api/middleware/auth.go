package middleware

import (
	"net/http"
	"regexp"

	"github.com/openkeel/ironic/internal/auth"
	"github.com/openkeel/ironic/internal/errs"
)

// AuthContext is who is calling, as the authentication stage established
// it; the policy layer reads it.
type AuthContext = auth.Context

// Authenticator establishes the caller's identity. A failure is the error
// to answer with (upstream's 401 for a missing or bad credential); if it
// implements http.Handler it writes its own response (keystonemiddleware's
// and the basic-auth middleware's bodies differ from Ironic's fault),
// otherwise it is rendered as an Ironic fault.
type Authenticator = auth.Authenticator

// PublicRoutes are upstream's acl_public_routes (ironic/api/config.py):
// the root documents and the ramdisk's endpoints, which answer without
// authentication.
var PublicRoutes = []string{
	"/",
	"/v1",
	"/v1/lookup",
	`/v1/heartbeat/[a-z0-9\-]+`,
	"/v1/continue_inspection",
}

// PublicRouteMatcher tells public paths apart as AuthPublicRoutes does:
// trailing slashes are ignored, an optional ".json" or ".xml" suffix is
// allowed, the pattern is anchored at the start and at the end, where, as
// Python's "$", a single final newline is tolerated.
type PublicRouteMatcher struct {
	res []*regexp.Regexp
}

// NewPublicRouteMatcher compiles route patterns (Python regular
// expressions of the simple kind upstream uses).
func NewPublicRouteMatcher(routes []string) (*PublicRouteMatcher, error) {
	m := &PublicRouteMatcher{}
	for _, r := range routes {
		re, err := regexp.Compile(`^(?:` + r + `)(\.json|\.xml)?\n?\z`)
		if err != nil {
			return nil, errs.New(errs.ClassConfigInvalid, map[string]any{
				"error_msg": "Cannot compile public API routes: " + err.Error()})
		}
		m.res = append(m.res, re)
	}
	return m, nil
}

// Match reports whether path is public.
func (m *PublicRouteMatcher) Match(path string) bool {
	p := safeRstripSlash(path)
	for _, re := range m.res {
		if re.MatchString(p) {
			return true
		}
	}
	return false
}

// DefaultPublicRoutes matches PublicRoutes.
var DefaultPublicRoutes = mustMatcher(PublicRoutes)

func mustMatcher(routes []string) *PublicRouteMatcher {
	m, err := NewPublicRouteMatcher(routes)
	if err != nil {
		panic(err)
	}
	return m
}

// Authenticate runs a on every request except the public routes, which
// are marked (IsPublicRoute) and get the identity their headers claim, as
// upstream's ContextHook builds it for the strategy in force. A nil
// authenticator or auth.NoAuth lets everything pass with that identity, as
// upstream installs no authentication middleware under noauth (so nothing
// is marked public either).
func Authenticate(a Authenticator, strategy string, public *PublicRouteMatcher) Middleware {
	if public == nil {
		public = DefaultPublicRoutes
	}
	if a == nil {
		a = auth.NoAuth{}
	}
	_, noauth := a.(auth.NoAuth)
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !noauth && public.Match(r.URL.Path) {
				r = withValue(r, keyPublicRoute, true)
				next.ServeHTTP(w, r.WithContext(auth.WithContext(r.Context(), auth.ForPublicRoute(r, strategy))))
				return
			}
			ac, err := a.Authenticate(r)
			if err != nil {
				if h, ok := err.(http.Handler); ok {
					h.ServeHTTP(w, r)
					return
				}
				errs.WriteFault(w, r, err, errs.FaultOptions{})
				return
			}
			next.ServeHTTP(w, r.WithContext(auth.WithContext(r.Context(), ac)))
		})
	}
}
