package keystoneauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// failure is what JSONClient handed to Failed.
type failure struct {
	method, path string
	status       int
	body         string
	err          error
}

func (f *failure) Error() string { return fmt.Sprintf("%d %s %v", f.status, f.body, f.err) }

func recordFailure(method, path string, status int, body []byte, err error) error {
	return &failure{method: method, path: path, status: status, body: string(body), err: err}
}

func TestJSONClient(t *testing.T) {
	ctx := context.Background()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		switch r.URL.Path {
		case "/v3/things":
			if r.Header.Get("X-Auth-Token") != "tok" || r.Header.Get("Accept") != "application/json" ||
				r.Header.Get("Content-Type") != "application/json" || string(b) != `{"a":1}` {
				http.Error(w, fmt.Sprintf("headers %v body %s", r.Header, b), http.StatusTeapot)
				return
			}
			w.Write([]byte(`{"thing": "made"}`))
		case "/v3/empty":
			if r.Header.Get("Content-Type") != "" || len(b) != 0 {
				http.Error(w, "a body without one to send", http.StatusTeapot)
				return
			}
			w.WriteHeader(http.StatusNoContent)
		case "/v3/garbled":
			w.Write([]byte(`{"thing":`))
		default:
			http.Error(w, `{"fault": {"message": "no such thing"}}`, http.StatusNotFound)
		}
	}))
	t.Cleanup(srv.Close)
	c := &JSONClient{
		Service: "svc",
		Auth:    func(context.Context) (string, string, error) { return "tok", srv.URL + "/v3/project/", nil },
		// The endpoint comes without its trailing slash.
		Endpoint: func(_ context.Context, e string) string { return strings.TrimSuffix(e, "/project") },
		Failed:   recordFailure,
	}

	var out struct {
		Thing string `json:"thing"`
	}
	if err := c.Do(ctx, http.MethodPost, "/things", map[string]int{"a": 1}, &out); err != nil || out.Thing != "made" {
		t.Fatalf("post: %q, %v", out.Thing, err)
	}
	if err := c.Do(ctx, http.MethodDelete, "/empty", nil, &out); err != nil {
		t.Fatalf("an empty answer: %v", err)
	}
	var f *failure
	if err := c.Do(ctx, http.MethodGet, "/missing", nil, &out); !errors.As(err, &f) ||
		f.method != http.MethodGet || f.path != "/missing" || f.status != http.StatusNotFound || !strings.Contains(f.body, "no such thing") || f.err != nil {
		t.Fatalf("an error answer: %#v", err)
	}
	var syntax *json.SyntaxError
	if err := c.Do(ctx, http.MethodGet, "/garbled", nil, &out); !errors.As(err, &syntax) ||
		!strings.HasPrefix(err.Error(), "svc GET /garbled: decode answer: ") {
		t.Fatalf("a garbled answer: %v", err)
	}
	if err := c.Do(ctx, http.MethodPost, "/things", func() {}, nil); err == nil || !strings.HasPrefix(err.Error(), "svc POST /things: encode body: ") {
		t.Fatalf("an unencodable body: %v", err)
	}

	srv.Close()
	if err := c.Do(ctx, http.MethodGet, "/things", nil, nil); !errors.As(err, &f) || f.status != 0 || f.err == nil {
		t.Fatalf("a refused connection: %#v", err)
	}
	refused := errors.New("keystone refused")
	c.Auth = func(context.Context) (string, string, error) { return "", "", refused }
	if err := c.Do(ctx, http.MethodGet, "/things", nil, nil); !errors.Is(err, refused) || err.Error() != "svc credentials: keystone refused" {
		t.Fatalf("failed authentication: %v", err)
	}
	c.Auth = nil
	if err := c.Do(ctx, http.MethodGet, "/things", nil, nil); !errors.As(err, &f) || f.status != 0 || f.err.Error() != "no svc credentials configured" {
		t.Fatalf("no credentials: %#v", err)
	}
}
