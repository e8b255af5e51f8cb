package api

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/config"
)

// healthAPI serves the API with [healthcheck] set to opts on 127.0.0.1
// under http_basic, so that a request the health check does not answer
// gets the API's 401.
func healthAPI(t *testing.T, opts map[string]string) *httptest.Server {
	t.Helper()
	opts["enabled"] = "true"
	cfg, err := config.Load(config.LoadOptions{Overrides: map[string]map[string]string{"healthcheck": opts}})
	if err != nil {
		t.Fatal(err)
	}
	h, err := Build(Deps{Config: cfg, Authorize: AllowAll, Authenticate: rejectAll{}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// healthGet asks srv's /healthcheck from the local address from (any
// 127.0.0.x) with headers.
func healthGet(t *testing.T, srv *httptest.Server, method, from string, headers map[string]string) (int, string, string) {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{DialContext: (&net.Dialer{
		LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}).DialContext}}
	defer client.CloseIdleConnections()
	req, err := http.NewRequestWithContext(context.Background(), method, srv.URL+"/healthcheck", nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
}

// The disable_by_file back end turns the answer to 503 while its file
// exists, in each form, with details only when detailed.
func TestHealthcheckDisableByFile(t *testing.T) {
	flag := filepath.Join(t.TempDir(), "disabled")
	srv := healthAPI(t, map[string]string{"backends": "disable_by_file", "disable_by_file_path": flag})
	if code, ctype, body := healthGet(t, srv, "GET", "127.0.0.1", nil); code != 200 || ctype != "text/plain; charset=UTF-8" || body != "OK" {
		t.Fatalf("healthy: %d %q %q", code, ctype, body)
	}
	if err := os.WriteFile(flag, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, body := healthGet(t, srv, "GET", "127.0.0.1", nil); code != 503 || body != "DISABLED BY FILE" {
		t.Fatalf("disabled: %d %q", code, body)
	}
	if code, _, body := healthGet(t, srv, "HEAD", "127.0.0.1", nil); code != 503 || body != "" {
		t.Fatalf("disabled HEAD: %d %q", code, body)
	}
	code, ctype, body := healthGet(t, srv, "GET", "127.0.0.1", map[string]string{"Accept": "application/json"})
	if want := "{\n    \"detailed\": false,\n    \"reasons\": [\n        \"DISABLED BY FILE\"\n    ]\n}"; code != 503 || ctype != "application/json; charset=UTF-8" || body != want {
		t.Fatalf("json: %d %q %q", code, ctype, body)
	}
	if err := os.Remove(flag); err != nil {
		t.Fatal(err)
	}
	if code, _, _ := healthGet(t, srv, "HEAD", "127.0.0.1", nil); code != 204 {
		t.Fatalf("healthy again HEAD: %d", code)
	}

	detailed := healthAPI(t, map[string]string{"backends": "disable_by_file", "disable_by_file_path": flag, "detailed": "true"})
	code, _, body = healthGet(t, detailed, "GET", "127.0.0.1", map[string]string{"Accept": "application/json"})
	var doc struct {
		Detailed bool `json:"detailed"`
		Reasons  []struct{ Class, Details, Reason string }
		Threads  []string `json:"threads"`
		Now      string   `json:"now"`
	}
	if err := json.Unmarshal([]byte(body), &doc); err != nil || code != 200 {
		t.Fatalf("detailed json %d: %v\n%s", code, err, body)
	}
	if !doc.Detailed || len(doc.Reasons) != 1 || doc.Reasons[0].Class != "HealthcheckResult" || doc.Reasons[0].Reason != "OK" ||
		doc.Reasons[0].Details != "Path '"+flag+"' was not found" || len(doc.Threads) == 0 || doc.Now == "" {
		t.Fatalf("detailed json: %+v", doc)
	}
	code, ctype, body = healthGet(t, detailed, "GET", "127.0.0.1", map[string]string{"Accept": "text/html"})
	if code != 200 || ctype != "text/html; charset=UTF-8" || !strings.Contains(body, "<H1>Server status</H1>") ||
		!strings.Contains(body, "<TD>Path &#39;"+flag+"&#39; was not found</TD>") {
		t.Fatalf("detailed html %d %q:\n%s", code, ctype, body)
	}
}

// disable_by_files_ports checks the file of the port the request came in
// on, and only that one.
func TestHealthcheckDisableByFilesPorts(t *testing.T) {
	dir := t.TempDir()
	mine, other := filepath.Join(dir, "mine"), filepath.Join(dir, "other")
	for _, f := range []string{mine, other} {
		if err := os.WriteFile(f, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// The listener's port is known only once it listens: start with the
	// other port's file, then build a server that names its own.
	probe := healthAPI(t, map[string]string{"backends": "disable_by_files_ports", "disable_by_file_paths": "1:" + other})
	if code, _, body := healthGet(t, probe, "GET", "127.0.0.1", nil); code != 200 || body != "OK" {
		t.Fatalf("other port's file: %d %q", code, body)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	cfg, err := config.Load(config.LoadOptions{Overrides: map[string]map[string]string{"healthcheck": {
		"enabled": "true", "backends": "disable_by_files_ports", "disable_by_file_paths": "1:" + other + "," + strconv.Itoa(port) + ":" + mine}}})
	if err != nil {
		t.Fatal(err)
	}
	h, err := Build(Deps{Config: cfg, Authorize: AllowAll})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	if code, _, body := healthGet(t, srv, "GET", "127.0.0.1", nil); code != 503 || body != "DISABLED BY FILE" {
		t.Fatalf("own port's file: %d %q", code, body)
	}
}

// allowed_source_ranges and ignore_proxied_requests hand the requests
// they turn away to the API, which asks them to authenticate.
func TestHealthcheckFilters(t *testing.T) {
	ranges := healthAPI(t, map[string]string{"allowed_source_ranges": "10.0.0.0/8,127.0.0.2"})
	if code, _, _ := healthGet(t, ranges, "GET", "127.0.0.2", nil); code != 200 {
		t.Fatalf("allowed source: %d", code)
	}
	if code, _, _ := healthGet(t, ranges, "GET", "127.0.0.1", nil); code != 401 {
		t.Fatalf("other source: %d, want the API's 401", code)
	}
	proxied := healthAPI(t, map[string]string{"ignore_proxied_requests": "true"})
	for _, h := range []string{"X-Forwarded", "X-Forwarded-For", "X-Forwarded-Proto", "X-Forwarded-Host", "X-Forwarded-Prefix"} {
		if code, _, _ := healthGet(t, proxied, "GET", "127.0.0.1", map[string]string{h: "x"}); code != 401 {
			t.Fatalf("%s: %d, want the API's 401", h, code)
		}
	}
	if code, _, _ := healthGet(t, proxied, "GET", "127.0.0.1", map[string]string{"Forwarded": "for=1.2.3.4"}); code != 200 {
		t.Fatalf("Forwarded is not one of oslo's proxy headers: %d", code)
	}
}

// Configurations upstream's API refuses to start with are errors.
func TestHealthcheckConfigErrors(t *testing.T) {
	for _, opts := range []map[string]string{
		{"allowed_source_ranges": "10.0.0.1/8"},
		{"allowed_source_ranges": "not-a-network"},
		{"backends": "disable_by_files_ports", "disable_by_file_paths": "http:/x"},
	} {
		cfg, err := config.Load(config.LoadOptions{Overrides: map[string]map[string]string{"healthcheck": opts}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Build(Deps{Config: cfg, Authorize: AllowAll}); err == nil {
			t.Errorf("%v: no error", opts)
		}
	}
}
