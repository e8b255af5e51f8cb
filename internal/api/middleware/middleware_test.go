package middleware

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	authn "github.com/openkeel/ironic/internal/auth"
	"github.com/openkeel/ironic/internal/errs"
)

func serve(h http.Handler, r *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

var reqIDFormat = regexp.MustCompile(`^req-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestAssignRequestID(t *testing.T) {
	const incoming = "req-0123abcd-0123-4567-89ab-0123456789ab"
	cases := []struct {
		name, header string
		wantGlobal   string
	}{
		{"none", "", ""},
		{"well formed kept as global", incoming, incoming},
		{"upper case refused", strings.ToUpper(incoming), ""},
		{"no prefix refused", incoming[4:], ""},
		{"trailing junk refused", incoming + "x", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var seen, global string
			h := AssignRequestID()(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				seen, global = RequestID(r.Context()), GlobalRequestID(r.Context())
			}))
			r := httptest.NewRequest("GET", "/v1", nil)
			if c.header != "" {
				r.Header.Set("X-Openstack-Request-Id", c.header)
			}
			w := serve(h, r)
			if !reqIDFormat.MatchString(seen) {
				t.Fatalf("request id %q is not req-<uuid4>", seen)
			}
			if seen == c.header {
				t.Fatal("incoming id reused as the request id")
			}
			if global != c.wantGlobal {
				t.Fatalf("global id %q, want %q", global, c.wantGlobal)
			}
			for _, k := range []string{"X-Openstack-Request-Id", "Openstack-Request-Id"} {
				if got := w.Header().Get(k); got != seen {
					t.Fatalf("%s = %q, want %q", k, got, seen)
				}
			}
		})
	}
	t.Run("handler's own header kept", func(t *testing.T) {
		h := AssignRequestID()(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Openstack-Request-Id", "mine")
			w.WriteHeader(204)
		}))
		w := serve(h, httptest.NewRequest("GET", "/", nil))
		if w.Header().Get("Openstack-Request-Id") != "mine" || w.Header().Get("X-Openstack-Request-Id") == "" {
			t.Fatalf("headers %v", w.Header())
		}
	})
	t.Run("distinct ids", func(t *testing.T) {
		h := AssignRequestID()(http.NotFoundHandler())
		a := serve(h, httptest.NewRequest("GET", "/", nil)).Header().Get("X-Openstack-Request-Id")
		b := serve(h, httptest.NewRequest("GET", "/", nil)).Header().Get("X-Openstack-Request-Id")
		if a == b {
			t.Fatal("two requests got the same id")
		}
	})
}

func TestJSONExtension(t *testing.T) {
	cases := []struct {
		name, path, version string
		wantPath            string
		wantSuffix          bool
	}{
		{"no header keeps suffix", "/v1/nodes.json", "", "/v1/nodes.json", false},
		{"1.1 strips", "/v1/nodes.json", "1.1", "/v1/nodes", true},
		{"1.90 strips", "/v1/nodes/n1.json", "1.90", "/v1/nodes/n1", true},
		{"1.91 keeps", "/v1/nodes/n1.json", "1.91", "/v1/nodes/n1.json", false},
		{"1.0 keeps (minor 0)", "/v1/nodes.json", "1.0", "/v1/nodes.json", false},
		{"trailing slash stripped too", "/v1/nodes.json//", "1.5", "/v1/nodes", true},
		{"latest keeps", "/v1/nodes.json", "latest", "/v1/nodes.json", false},
		{"garbage keeps", "/v1/nodes.json", "1.x", "/v1/nodes.json", false},
		{"python int forms", "/v1.json", " 1 . 5_0 ", "/v1", true},
		{"other suffix untouched", "/v1/nodes.xml", "1.5", "/v1/nodes.xml", false},
		{"no suffix", "/v1/nodes/", "1.5", "/v1/nodes/", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var path string
			var suffix bool
			h := JSONExtension()(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				path, suffix = r.URL.Path, HasJSONSuffix(r.Context())
			}))
			r := httptest.NewRequest("GET", c.path, nil)
			if c.version != "" {
				r.Header.Set("X-OpenStack-Ironic-API-Version", c.version)
			}
			serve(h, r)
			if path != c.wantPath || suffix != c.wantSuffix {
				t.Fatalf("got %q %v, want %q %v", path, suffix, c.wantPath, c.wantSuffix)
			}
		})
	}
}

func TestCORS(t *testing.T) {
	cfg := CORSConfig{
		AllowedOrigins:   []string{"https://ui.example.com"},
		AllowCredentials: true,
		ExposeHeaders:    []string{"X-OpenStack-Ironic-API-Maximum-Version", "X-OpenStack-Ironic-API-Minimum-Version", "X-OpenStack-Ironic-API-Version"},
		MaxAge:           3600,
		AllowMethods:     []string{"GET", "PUT", "POST", "DELETE", "PATCH"},
	}
	app := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodOptions {
			w.WriteHeader(http.StatusMethodNotAllowed)
			_, _ = io.WriteString(w, "no options here")
			return
		}
		w.Header().Set("Vary", "X-OpenStack-Ironic-API-Version")
		_, _ = io.WriteString(w, "{}")
	})
	h := CORS(cfg)(app)

	t.Run("actual request from allowed origin", func(t *testing.T) {
		r := httptest.NewRequest("GET", "/v1", nil)
		r.Header.Set("Origin", "https://ui.example.com")
		w := serve(h, r)
		want := map[string]string{
			"Access-Control-Allow-Origin":      "https://ui.example.com",
			"Access-Control-Allow-Credentials": "true",
			"Access-Control-Expose-Headers":    "X-OpenStack-Ironic-API-Maximum-Version,X-OpenStack-Ironic-API-Minimum-Version,X-OpenStack-Ironic-API-Version",
			"Vary":                             "X-OpenStack-Ironic-API-Version,Origin",
		}
		for k, v := range want {
			if got := w.Header().Get(k); got != v {
				t.Errorf("%s = %q, want %q", k, got, v)
			}
		}
		if w.Body.String() != "{}" {
			t.Errorf("body %q", w.Body.String())
		}
	})
	t.Run("actual request from other origin", func(t *testing.T) {
		r := httptest.NewRequest("GET", "/v1", nil)
		r.Header.Set("Origin", "https://evil.example.com")
		w := serve(h, r)
		if w.Header().Get("Access-Control-Allow-Origin") != "" || w.Header().Get("Vary") != "X-OpenStack-Ironic-API-Version" {
			t.Fatalf("headers %v", w.Header())
		}
	})
	t.Run("preflight allowed", func(t *testing.T) {
		r := httptest.NewRequest("OPTIONS", "/v1/nodes", nil)
		r.Header.Set("Origin", "https://ui.example.com")
		r.Header.Set("Access-Control-Request-Method", "PATCH")
		r.Header.Set("Access-Control-Request-Headers", "x-openstack-ironic-api-version, Content-Type")
		w := serve(h, r)
		if w.Code != 200 || w.Body.Len() != 0 {
			t.Fatalf("status %d body %q", w.Code, w.Body.String())
		}
		want := map[string]string{
			"Access-Control-Allow-Origin":      "https://ui.example.com",
			"Access-Control-Allow-Credentials": "true",
			"Access-Control-Max-Age":           "3600",
			"Access-Control-Allow-Methods":     "PATCH",
			"Access-Control-Allow-Headers":     "x-openstack-ironic-api-version,Content-Type",
			"Vary":                             "Origin",
		}
		for k, v := range want {
			if got := w.Header().Get(k); got != v {
				t.Errorf("%s = %q, want %q", k, got, v)
			}
		}
	})
	for _, c := range []struct{ name, method, headers string }{
		{"preflight method refused", "TRACE", ""},
		{"preflight header refused", "GET", "X-Secret"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest("OPTIONS", "/v1/nodes", nil)
			r.Header.Set("Origin", "https://ui.example.com")
			r.Header.Set("Access-Control-Request-Method", c.method)
			if c.headers != "" {
				r.Header.Set("Access-Control-Request-Headers", c.headers)
			}
			w := serve(h, r)
			if w.Code != 200 || w.Header().Get("Access-Control-Allow-Origin") != "" {
				t.Fatalf("status %d headers %v", w.Code, w.Header())
			}
		})
	}
	t.Run("wildcard origin", func(t *testing.T) {
		wc := cfg
		wc.AllowedOrigins = []string{"*"}
		r := httptest.NewRequest("GET", "/v1", nil)
		r.Header.Set("Origin", "https://any.example.com")
		w := serve(CORS(wc)(app), r)
		if w.Header().Get("Access-Control-Allow-Origin") != "*" {
			t.Fatalf("headers %v", w.Header())
		}
	})
	// Observed from upstream 21.4: OPTIONS /v1 is an empty 200 without
	// Content-Type although no origin is configured.
	t.Run("no origins configured still answers OPTIONS", func(t *testing.T) {
		w := serve(CORS(CORSConfig{})(app), httptest.NewRequest("OPTIONS", "/v1", nil))
		if w.Code != http.StatusOK || w.Body.Len() != 0 || w.Header().Get("Content-Type") != "" {
			t.Fatalf("status %d, body %q, headers %v", w.Code, w.Body, w.Header())
		}
	})
}

func TestHealthcheck(t *testing.T) {
	app := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) })
	on := Healthcheck(HealthcheckConfig{Enabled: true, Path: "/healthcheck"})(app)
	off := Healthcheck(HealthcheckConfig{Enabled: false, Path: "/healthcheck"})(app)
	cases := []struct {
		name         string
		h            http.Handler
		method, path string
		accept       string
		status       int
		ctype, body  string
	}{
		{"get", on, "GET", "/healthcheck", "", 200, "text/plain; charset=UTF-8", ""},
		{"head", on, "HEAD", "/healthcheck", "", 204, "text/plain; charset=UTF-8", ""},
		{"post", on, "POST", "/healthcheck", "", 200, "text/plain; charset=UTF-8", ""},
		{"below", on, "GET", "/healthcheck/x", "", 200, "text/plain; charset=UTF-8", ""},
		{"json", on, "GET", "/healthcheck", "application/json", 200, "application/json; charset=UTF-8", "{\n    \"detailed\": false,\n    \"reasons\": []\n}"},
		{"unacceptable falls back to text", on, "GET", "/healthcheck", "image/png", 200, "text/plain; charset=UTF-8", ""},
		{"prefix is not the path", on, "GET", "/healthchecks", "", 418, "", ""},
		{"api path", on, "GET", "/v1", "", 418, "", ""},
		{"disabled", off, "GET", "/healthcheck", "", 418, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest(c.method, c.path, nil)
			if c.accept != "" {
				r.Header.Set("Accept", c.accept)
			}
			w := serve(c.h, r)
			if w.Code != c.status || w.Header().Get("Content-Type") != c.ctype || w.Body.String() != c.body {
				t.Fatalf("got %d %q %q", w.Code, w.Header().Get("Content-Type"), w.Body.String())
			}
		})
	}
	t.Run("html", func(t *testing.T) {
		r := httptest.NewRequest("GET", "/healthcheck", nil)
		r.Header.Set("Accept", "text/html")
		w := serve(on, r)
		if !strings.HasPrefix(w.Body.String(), "<HTML>") || !strings.Contains(w.Body.String(), "Result of 0 checks") {
			t.Fatalf("body %q", w.Body.String())
		}
	})
}

func TestProxyHeaders(t *testing.T) {
	type seen struct{ host, app, ip string }
	capture := func(out *seen) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			*out = seen{HostURL(r), ApplicationURL(r), RealIP(r)}
		})
	}
	cases := []struct {
		name    string
		enabled bool
		headers map[string]string
		want    seen
	}{
		{"disabled ignores headers", false, map[string]string{"X-Forwarded-Proto": "https", "X-Forwarded-Host": "api.example.com"},
			seen{"http://ironic.local:6385", "http://ironic.local:6385", "192.0.2.1"}},
		{"x-forwarded", true, map[string]string{"X-Forwarded-Proto": "https", "X-Forwarded-Host": "api.example.com", "X-Forwarded-Prefix": "/baremetal"},
			seen{"https://api.example.com", "https://api.example.com/baremetal", "192.0.2.1"}},
		{"default port dropped", true, map[string]string{"X-Forwarded-Proto": "https", "X-Forwarded-Host": "api.example.com:443"},
			seen{"https://api.example.com", "https://api.example.com", "192.0.2.1"}},
		{"forwarded wins, first proxy", true, map[string]string{"Forwarded": "for=198.51.100.7;proto=https;host=fw.example.com, for=10.0.0.1;proto=http", "X-Forwarded-Host": "ignored"},
			seen{"https://fw.example.com", "https://fw.example.com", "198.51.100.7"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got seen
			r := httptest.NewRequest("GET", "http://ironic.local:6385/v1", nil)
			r.RemoteAddr = "192.0.2.1:40000"
			for k, v := range c.headers {
				r.Header.Set(k, v)
			}
			serve(ProxyHeaders(c.enabled)(capture(&got)), r)
			if got != c.want {
				t.Fatalf("got %+v, want %+v", got, c.want)
			}
		})
	}
}

type denyAll struct{}

func (denyAll) Authenticate(*http.Request) (*AuthContext, error) {
	return nil, errs.New(errs.ClassUnauthorized, nil)
}

type allowAll struct{}

func (allowAll) Authenticate(*http.Request) (*AuthContext, error) {
	return &AuthContext{Strategy: "test", UserID: "u1"}, nil
}

func TestPublicRoutes(t *testing.T) {
	cases := []struct {
		path   string
		public bool
	}{
		{"/", true}, {"//", false}, {"/.json", true}, {"/.xml", true},
		{"/v1", true}, {"/v1/", true}, {"/v1.json", true}, {"/v1.json/", true}, {"/v1//", true},
		{"/v1/lookup", true}, {"/v1/lookup/", true}, {"/v1/lookup.json", true},
		{"/v1/heartbeat/1be26c0b-03f2-4d2e-ae87-c02d7f33c123", true},
		{"/v1/heartbeat/1be26c0b-03f2-4d2e-ae87-c02d7f33c123/", true},
		{"/v1/heartbeat/node-1.json", true},
		{"/v1/heartbeat/NODE", false}, {"/v1/heartbeat/", false}, {"/v1/heartbeat/a/b", false},
		{"/v1/continue_inspection", true}, {"/v1/continue_inspection.json", true},
		{"/v1/nodes", false}, {"/v1/lookupx", false}, {"/v2", false}, {"/v1/drivers", false},
		{"/v1\n", true}, {"/v1/nodes\n", false},
	}
	for _, c := range cases {
		if got := DefaultPublicRoutes.Match(c.path); got != c.public {
			t.Errorf("Match(%q) = %v, want %v", c.path, got, c.public)
		}
	}
	if _, err := NewPublicRouteMatcher([]string{"/v1/(unclosed"}); !errs.Is(err, errs.ClassConfigInvalid) {
		t.Fatalf("bad pattern: %v", err)
	}
}

func TestAuthenticate(t *testing.T) {
	var called bool
	var auth *AuthContext
	var public bool
	app := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		called, auth, public = true, Auth(r.Context()), IsPublicRoute(r.Context())
	})
	cases := []struct {
		name       string
		a          Authenticator
		path       string
		status     int
		wantCalled bool
		wantPublic bool
		wantUser   string
	}{
		{"deny private", denyAll{}, "/v1/nodes", 401, false, false, ""},
		{"deny public", denyAll{}, "/v1/lookup", 200, true, true, "claimed"},
		{"allow private", allowAll{}, "/v1/nodes", 200, true, false, "u1"},
		{"noauth", authn.NoAuth{}, "/v1/nodes", 200, true, false, "claimed"},
		{"nil is noauth", nil, "/v1/lookup", 200, true, false, "claimed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			called, auth, public = false, nil, false
			r := httptest.NewRequest("GET", c.path, nil)
			r.Header.Set("X-User-Id", "claimed")
			w := serve(Authenticate(c.a, "http_basic", nil)(app), r)
			if w.Code != c.status || called != c.wantCalled || public != c.wantPublic {
				t.Fatalf("status %d called %v public %v", w.Code, called, public)
			}
			if c.wantCalled && (auth == nil || auth.UserID != c.wantUser || auth.IsPublicAPI != c.wantPublic) {
				t.Fatalf("auth %+v", auth)
			}
			if c.wantPublic && auth.Strategy != "http_basic" {
				t.Fatalf("public route context of strategy %q, want http_basic", auth.Strategy)
			}
			if c.status == 401 && !strings.Contains(w.Body.String(), `\"faultcode\": \"Client\"`) {
				t.Fatalf("401 body %s", w.Body.String())
			}
		})
	}
}

func TestRequestLogNeverLogsSecrets(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, nil))
	h := Chain(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		w.WriteHeader(http.StatusAccepted)
	}), RequestLog(log), AssignRequestID())
	r := httptest.NewRequest("POST", "/v1/lookup?addresses=aa:bb&agent_token=s3cr3t&node_uuid=x", strings.NewReader(`{"password": "hunter2"}`))
	r.Header.Set("X-Auth-Token", "tok-123")
	w := serve(h, r)
	var entry map[string]any
	if err := json.Unmarshal(buf.Bytes(), &entry); err != nil {
		t.Fatalf("log line %q: %v", buf.String(), err)
	}
	for _, secret := range []string{"s3cr3t", "hunter2", "tok-123"} {
		if strings.Contains(buf.String(), secret) {
			t.Fatalf("log contains %q: %s", secret, buf.String())
		}
	}
	if entry["method"] != "POST" || entry["status"] != float64(202) ||
		entry["path"] != "/v1/lookup?addresses=aa:bb&agent_token=***&node_uuid=x" ||
		entry["request_id"] != w.Header().Get("X-Openstack-Request-Id") || entry["request_id"] == "" {
		t.Fatalf("log entry %v", entry)
	}
	if _, ok := entry["duration_ms"].(float64); !ok {
		t.Fatalf("no duration: %v", entry)
	}
}

func TestChainOrder(t *testing.T) {
	var order []string
	mw := func(name string) Middleware {
		return func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				order = append(order, name)
				next.ServeHTTP(w, r)
			})
		}
	}
	serve(Chain(http.NotFoundHandler(), mw("a"), nil, mw("b"), mw("c")), httptest.NewRequest("GET", "/", nil))
	if strings.Join(order, "") != "abc" {
		t.Fatalf("order %v", order)
	}
}
