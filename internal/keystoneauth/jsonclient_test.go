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

// fault reads a {"fault": {"type", "message"}} document.
func fault(data []byte) (typ, message string) {
	var doc struct {
		Fault struct{ Type, Message string } `json:"fault"`
	}
	if json.Unmarshal(data, &doc) != nil {
		return "", ""
	}
	return doc.Fault.Type, doc.Fault.Message
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
		case "/v3/conflict":
			http.Error(w, `{"fault": {"type": "InUse", "message": "taken"}}`, http.StatusConflict)
		case "/v3/bare":
			http.Error(w, "plain text", http.StatusBadGateway)
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
		Fault:    fault,
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
	for _, c2 := range []struct {
		path, text string
		status     int
	}{
		{"/missing", "svc GET /missing: 404: no such thing", http.StatusNotFound},
		{"/conflict", "svc GET /conflict: 409 InUse: taken", http.StatusConflict},
		{"/bare", "svc GET /bare: 502: plain text", http.StatusBadGateway},
	} {
		err := c.Do(ctx, http.MethodGet, c2.path, nil, &out)
		if err == nil || err.Error() != c2.text || !IsStatus(err, "svc", c2.status) || IsStatus(err, "other", c2.status) || IsStatus(err, "svc", 200) {
			t.Errorf("GET %s: %v", c2.path, err)
		}
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
	var ae *APIError
	if err := c.Do(ctx, http.MethodGet, "/things", nil, nil); !errors.As(err, &ae) || ae.Status != 0 || ae.Err == nil ||
		!strings.HasPrefix(err.Error(), "svc GET /things: connection failed: ") || IsStatus(err, "svc", 0) {
		t.Fatalf("a refused connection: %v", err)
	}
	refused := errors.New("keystone refused")
	c.Auth = func(context.Context) (string, string, error) { return "", "", refused }
	if err := c.Do(ctx, http.MethodGet, "/things", nil, nil); !errors.Is(err, refused) || err.Error() != "svc credentials: keystone refused" {
		t.Fatalf("failed authentication: %v", err)
	}
	c.Auth = nil
	if err := c.Do(ctx, http.MethodGet, "/things", nil, nil); err == nil || err.Error() != "svc GET /things: connection failed: no svc credentials configured" {
		t.Fatalf("no credentials: %v", err)
	}
}
