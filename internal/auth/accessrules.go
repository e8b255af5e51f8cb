package auth

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
)

// accessRule is one access rule of an application credential token.
type accessRule struct {
	Method  string `json:"method"`
	Path    string `json:"path"`
	Service string `json:"service"`
}

// allowedRequest is auth_token's validate_allowed_request: a token of an
// application credential with access rules may make only the requests a
// rule allows for this service's type ([keystone_authtoken]/service_type),
// and only when that type is in the token's catalog. A request carrying a
// service token is part of a chain between services and is not matched.
func (k *Keystone) allowedRequest(r *http.Request, d *tokenData) bool {
	ac := d.Token.ApplicationCredential
	if ac == nil {
		return true
	}
	var rules []accessRule
	if err := json.Unmarshal(ac.AccessRules, &rules); err != nil {
		slog.Warn("invalid access rules in token", "error", err)
		return false
	}
	myType := k.cfg.ServiceType
	if myType == "" {
		slog.Warn("cannot validate request with restricted access rules; set service_type in [keystone_authtoken] to allow access rule validation")
		return false
	}
	if myType == "identity" && r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/v3/auth/tokens") {
		return true
	}
	inCatalog := false
	for _, s := range d.Token.Catalog {
		inCatalog = inCatalog || s.Type == myType
	}
	if !inCatalog {
		slog.Warn("cannot validate request with restricted access rules: service_type in [keystone_authtoken] is not a valid service type in the catalog", "service_type", myType)
		return false
	}
	if r.Header.Get("X-Service-Token") != "" {
		return true
	}
	for _, rule := range rules {
		if r.Method == rule.Method && rule.Service == myType && pathMatches(r.URL.Path, rule.Path) {
			return true
		}
	}
	return false
}

// ruleToken splits an access rule's path template as auth_token does:
// a {tag} or a lone * stands for one path segment, ** for any number.
var ruleToken = regexp.MustCompile(`\{[^}]*\}|\*\*|\*|[^{}*]`)

// pathMatches is auth_token's _path_matches. The template's other
// characters go into the expression as auth_token puts them, unescaped
// (so "." matches any character there too); a template that does not
// compile matches nothing.
func pathMatches(path, template string) bool {
	var b strings.Builder
	b.WriteString("^")
	for _, tok := range ruleToken.FindAllString(template, -1) {
		switch {
		case tok == "**":
			b.WriteString(".*")
		case tok == "*" || strings.HasPrefix(tok, "{"):
			b.WriteString(`[^\/]+`)
		default:
			b.WriteString(tok)
		}
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		slog.Warn("access rule path does not compile", "path", template, "error", err)
		return false
	}
	return re.MatchString(path)
}
