package middleware

import (
	"net/http"
	"strings"
)

// ProxyHeaders is oslo.middleware's HTTPProxyToWSGI: when enabled
// ([oslo_middleware]/enable_proxy_headers_parsing), the scheme, host and
// client address the application sees come from the first entry of an RFC
// 7239 Forwarded header, or else from X-Forwarded-Proto, X-Forwarded-Host
// and X-Forwarded-For; X-Forwarded-Prefix becomes the script name that
// ApplicationURL includes. Disabled, it changes nothing.
func ProxyHeaders(enabled bool) Middleware {
	return func(next http.Handler) http.Handler {
		if !enabled {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			r2 := r.Clone(r.Context())
			proto, host, forAddr := "", "", ""
			if fwd := r.Header.Get("Forwarded"); fwd != "" {
				first, _, _ := strings.Cut(fwd, ",")
				for _, kv := range strings.Split(first, ";") {
					k, v, _ := strings.Cut(kv, "=")
					v = strings.TrimSpace(v)
					switch strings.ToLower(strings.TrimSpace(k)) {
					case "proto":
						proto = v
					case "host":
						host = v
					case "for":
						forAddr = v
					}
				}
			} else {
				proto = r.Header.Get("X-Forwarded-Proto")
				host = r.Header.Get("X-Forwarded-Host")
				forAddr = r.Header.Get("X-Forwarded-For")
			}
			if proto != "" {
				r2.URL.Scheme = proto
			}
			if host != "" {
				r2.Host = host
				r2.URL.Host = host
			}
			if forAddr != "" {
				r2.RemoteAddr = forAddr
			}
			if prefix := r.Header.Get("X-Forwarded-Prefix"); prefix != "" {
				r2 = withValue(r2, keyScriptName, prefix+scriptName(r))
			}
			next.ServeHTTP(w, r2)
		})
	}
}

func scriptName(r *http.Request) string {
	s, _ := r.Context().Value(keyScriptName).(string)
	return s
}

// Scheme is the request's scheme as the application sees it
// (wsgi.url_scheme): the one set by ProxyHeaders, else https for TLS
// connections, else http.
func Scheme(r *http.Request) string {
	if r.URL.Scheme != "" {
		return r.URL.Scheme
	}
	if r.TLS != nil {
		return "https"
	}
	return "http"
}

// HostURL is webob's request.host_url: scheme://host with the port
// dropped when it is the scheme's default.
func HostURL(r *http.Request) string {
	scheme := Scheme(r)
	host, port := r.Host, ""
	if i := strings.LastIndexByte(host, ':'); i >= 0 && !strings.HasSuffix(host, "]") {
		host, port = host[:i], host[i+1:]
	}
	if (scheme == "https" && port == "443") || (scheme == "http" && port == "80") {
		port = ""
	}
	if port != "" {
		return scheme + "://" + host + ":" + port
	}
	return scheme + "://" + host
}

// ApplicationURL is webob's request.application_url: HostURL plus the
// script name (the X-Forwarded-Prefix when proxy headers are parsed).
func ApplicationURL(r *http.Request) string {
	return HostURL(r) + scriptName(r)
}
