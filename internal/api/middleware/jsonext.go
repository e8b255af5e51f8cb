package middleware

import (
	"net/http"
	"strings"

	"github.com/openkeel/ironic/internal/api/microversion"
	"github.com/openkeel/ironic/internal/pyfmt"
)

// JSONExtension strips a trailing ".json" from the path, as upstream's
// JsonExtensionMiddleware, for clients that ask for a microversion older
// than 1.91 in X-OpenStack-Ironic-API-Version (the standard
// OpenStack-API-Version header is not consulted, nor is a missing header:
// upstream only strips when that header's minor is non-zero and below 91).
// Trailing slashes are removed with the suffix. A version that does not
// parse leaves the path alone (upstream's parser raises, which its server
// turns into a bare 500; the version check later answers it properly).
func JSONExtension() Middleware {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			path := safeRstripSlash(r.URL.Path)
			strip := false
			if strings.HasSuffix(path, ".json") {
				if minor, ok := legacyMinor(r.Header); ok && minor != 0 && minor < microversion.Minor91DotJson {
					strip = true
				}
			}
			if strip {
				r2 := withValue(r, keyJSONSuffix, true)
				u := *r.URL
				u.Path = path[:len(path)-len(".json")]
				u.RawPath = ""
				r2.URL = &u
				r = r2
			}
			next.ServeHTTP(w, r)
		})
	}
}

// legacyMinor parses X-OpenStack-Ironic-API-Version as
// microversion_parse.parse_version_string does: "MAJOR.MINOR", each part
// what Python's int() accepts. Repeated headers arrive joined with ","
// under WSGI, which never parses.
func legacyMinor(h http.Header) (int, bool) {
	vals := h.Values(microversion.HeaderLegacy)
	if len(vals) == 0 {
		return 0, false
	}
	s := strings.Join(vals, ",")
	if s == "" {
		return 0, false
	}
	maj, min, found := strings.Cut(s, ".")
	if !found {
		return 0, false
	}
	if _, ok := pyfmt.Int(maj); !ok {
		return 0, false
	}
	return pyfmt.Int(min)
}

// safeRstripSlash is upstream's utils.safe_rstrip(path, "/"): trailing
// slashes go unless that leaves nothing.
func safeRstripSlash(p string) string {
	if s := strings.TrimRight(p, "/"); s != "" {
		return s
	}
	return p
}
