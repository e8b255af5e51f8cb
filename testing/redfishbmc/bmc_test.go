package redfishbmc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// recorder is a testing.TB that keeps what the emulator logs.
type recorder struct {
	testing.TB
	mu   sync.Mutex
	logs []string
}

func (r *recorder) Logf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.logs = append(r.logs, fmt.Sprintf(format, args...))
}

func (r *recorder) Log(args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.logs = append(r.logs, fmt.Sprint(args...))
}

func (r *recorder) all() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.logs, "\n")
}

type call struct {
	t      *testing.T
	base   string
	user   string
	pass   string
	token  string
	header map[string]string
}

func (c call) do(method, path string, body any) (*http.Response, map[string]any) {
	c.t.Helper()
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			c.t.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	if c.user != "" {
		req.SetBasicAuth(c.user, c.pass)
	}
	if c.token != "" {
		req.Header.Set("X-Auth-Token", c.token)
	}
	for k, v := range c.header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	var doc map[string]any
	if len(data) > 0 {
		if err := json.Unmarshal(data, &doc); err != nil {
			c.t.Fatalf("%s %s: body %q: %v", method, path, data, err)
		}
	}
	return resp, doc
}

func wantStatus(t *testing.T, resp *http.Response, status int) {
	t.Helper()
	if resp.StatusCode != status {
		t.Fatalf("%s %s: status %d, want %d", resp.Request.Method, resp.Request.URL.Path, resp.StatusCode, status)
	}
}

func TestAuthenticationAndSessions(t *testing.T) {
	rec := &recorder{TB: t}
	b := New(rec).System("s1").WithBasicAuth("admin", "pw-123").WithSessions()
	anon := call{t: t, base: b.URL()}

	resp, root := anon.do(http.MethodGet, "/redfish/v1/", nil)
	wantStatus(t, resp, http.StatusOK)
	if root["Links"].(map[string]any)["Sessions"].(map[string]any)["@odata.id"] != "/redfish/v1/SessionService/Sessions" {
		t.Fatalf("service root %v", root)
	}
	resp, _ = anon.do(http.MethodGet, "/redfish/v1/Systems", nil)
	wantStatus(t, resp, http.StatusUnauthorized)
	resp, _ = call{t: t, base: b.URL(), user: "admin", pass: "nope"}.do(http.MethodGet, "/redfish/v1/Systems", nil)
	wantStatus(t, resp, http.StatusUnauthorized)
	resp, _ = call{t: t, base: b.URL(), user: "admin", pass: "pw-123"}.do(http.MethodGet, "/redfish/v1/Systems", nil)
	wantStatus(t, resp, http.StatusOK)

	resp, _ = anon.do(http.MethodPost, "/redfish/v1/SessionService/Sessions", map[string]string{"UserName": "admin", "Password": "bad"})
	wantStatus(t, resp, http.StatusUnauthorized)
	resp, _ = anon.do(http.MethodPost, "/redfish/v1/SessionService/Sessions", map[string]string{"UserName": "admin", "Password": "pw-123"})
	wantStatus(t, resp, http.StatusCreated)
	token, loc := resp.Header.Get("X-Auth-Token"), resp.Header.Get("Location")
	if token == "" || loc == "" {
		t.Fatalf("session answer without token or location: %v", resp.Header)
	}
	withToken := call{t: t, base: b.URL(), token: token}
	resp, _ = withToken.do(http.MethodGet, "/redfish/v1/Systems/s1", nil)
	wantStatus(t, resp, http.StatusOK)
	if b.SessionsCreated() != 1 || b.ActiveSessions() != 1 {
		t.Fatalf("sessions %d/%d", b.SessionsCreated(), b.ActiveSessions())
	}

	b.ExpireSessions()
	resp, _ = withToken.do(http.MethodGet, "/redfish/v1/Systems/s1", nil)
	wantStatus(t, resp, http.StatusUnauthorized)

	resp, _ = anon.do(http.MethodPost, "/redfish/v1/SessionService/Sessions", map[string]string{"UserName": "admin", "Password": "pw-123"})
	withToken.token = resp.Header.Get("X-Auth-Token")
	resp, _ = withToken.do(http.MethodDelete, resp.Header.Get("Location"), nil)
	wantStatus(t, resp, http.StatusNoContent)
	if b.ActiveSessions() != 0 {
		t.Fatal("session not deleted")
	}

	logs := rec.all()
	if strings.Contains(logs, "pw-123") || strings.Contains(logs, token) {
		t.Fatalf("credentials in the request log:\n%s", logs)
	}
	if !strings.Contains(logs, "GET /redfish/v1/Systems auth=basic(admin:redacted) -> 200") {
		t.Fatalf("request log lacks the expected line:\n%s", logs)
	}
}

func TestSessionsOnlyRefusesBasic(t *testing.T) {
	b := New(t).System("s1").WithSessionsOnly("admin", "pw")
	resp, _ := call{t: t, base: b.URL(), user: "admin", pass: "pw"}.do(http.MethodGet, "/redfish/v1/Systems", nil)
	wantStatus(t, resp, http.StatusUnauthorized)
}

func TestResetAndSettle(t *testing.T) {
	b := New(t).System("s1", SettleAfter(2))
	c := call{t: t, base: b.URL()}
	resp, _ := c.do(http.MethodPost, "/redfish/v1/Systems/s1/Actions/ComputerSystem.Reset", map[string]string{"ResetType": "On"})
	wantStatus(t, resp, http.StatusNoContent)
	_, doc := c.do(http.MethodGet, "/redfish/v1/Systems/s1", nil)
	if doc["PowerState"] != Off {
		t.Fatalf("first poll shows %v, want the old state", doc["PowerState"])
	}
	_, doc = c.do(http.MethodGet, "/redfish/v1/Systems/s1", nil)
	if doc["PowerState"] != On {
		t.Fatalf("second poll shows %v", doc["PowerState"])
	}
	resp, _ = c.do(http.MethodPost, "/redfish/v1/Systems/s1/Actions/ComputerSystem.Reset", map[string]string{"ResetType": "Bogus"})
	wantStatus(t, resp, http.StatusBadRequest)
	if got := b.Snapshot("s1").Resets; len(got) != 1 || got[0] != "On" {
		t.Fatalf("resets %v", got)
	}
	if n := b.Count(http.MethodGet, "/redfish/v1/Systems/s1"); n != 2 {
		t.Fatalf("count %d", n)
	}
}

func TestBootOverridePatch(t *testing.T) {
	b := New(t).System("s1", RejectContinuousBoot())
	c := call{t: t, base: b.URL()}
	resp, _ := c.do(http.MethodPatch, "/redfish/v1/Systems/s1", map[string]any{"Boot": map[string]string{
		"BootSourceOverrideTarget": "Pxe", "BootSourceOverrideEnabled": "Continuous"}})
	wantStatus(t, resp, http.StatusBadRequest)
	resp, _ = c.do(http.MethodPatch, "/redfish/v1/Systems/s1", map[string]any{"Boot": map[string]string{"BootSourceOverrideTarget": "Pxe"}})
	wantStatus(t, resp, http.StatusNoContent)
	_, doc := c.do(http.MethodGet, "/redfish/v1/Systems/s1", nil)
	boot := doc["Boot"].(map[string]any)
	if boot["BootSourceOverrideTarget"] != "Pxe" || boot["BootSourceOverrideEnabled"] != "Once" {
		t.Fatalf("boot %v", boot)
	}
	resp, _ = c.do(http.MethodPatch, "/redfish/v1/Systems/s1", map[string]any{"Boot": map[string]string{"BootSourceOverrideTarget": "Usb"}})
	wantStatus(t, resp, http.StatusBadRequest)
}

func TestETags(t *testing.T) {
	b := New(t).System("s1").WithETags()
	c := call{t: t, base: b.URL()}
	resp, _ := c.do(http.MethodGet, "/redfish/v1/Systems/s1", nil)
	tag := resp.Header.Get("ETag")
	if tag == "" {
		t.Fatal("no ETag")
	}
	b.SetPower("s1", On)
	stale := call{t: t, base: b.URL(), header: map[string]string{"If-Match": tag}}
	resp, _ = stale.do(http.MethodPatch, "/redfish/v1/Systems/s1", map[string]any{"IndicatorLED": "Lit"})
	wantStatus(t, resp, http.StatusPreconditionFailed)
	resp, _ = c.do(http.MethodGet, "/redfish/v1/Systems/s1", nil)
	fresh := call{t: t, base: b.URL(), header: map[string]string{"If-Match": resp.Header.Get("ETag")}}
	resp, _ = fresh.do(http.MethodPatch, "/redfish/v1/Systems/s1", map[string]any{"IndicatorLED": "Lit"})
	wantStatus(t, resp, http.StatusNoContent)
}

func TestFaultInjection(t *testing.T) {
	b := New(t).System("s1")
	c := call{t: t, base: b.URL()}
	b.FailNext(2, http.StatusServiceUnavailable)
	for range 2 {
		resp, doc := c.do(http.MethodGet, "/redfish/v1/Systems/s1", nil)
		wantStatus(t, resp, http.StatusServiceUnavailable)
		if doc["error"] == nil {
			t.Fatalf("injected failure without a Redfish error body: %v", doc)
		}
	}
	resp, _ := c.do(http.MethodGet, "/redfish/v1/Systems/s1", nil)
	wantStatus(t, resp, http.StatusOK)

	b.FailNextMatching(Match{Method: http.MethodPost, Path: "Reset"}, 1, http.StatusConflict, "Base.1.8.ActionParameterValueConflict")
	resp, _ = c.do(http.MethodGet, "/redfish/v1/Systems/s1", nil)
	wantStatus(t, resp, http.StatusOK)
	resp, doc := c.do(http.MethodPost, "/redfish/v1/Systems/s1/Actions/ComputerSystem.Reset", map[string]string{"ResetType": "On"})
	wantStatus(t, resp, http.StatusConflict)
	if doc["error"].(map[string]any)["code"] != "Base.1.8.ActionParameterValueConflict" {
		t.Fatalf("error %v", doc)
	}

	b.DropNext(1)
	// A fresh connection: the transport would silently retry an
	// idempotent request on a reused one.
	fresh := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	if _, err := fresh.Get(b.URL() + "/redfish/v1/"); err == nil {
		t.Fatal("dropped request answered")
	}

	b.SlowNext(1, 100*time.Millisecond)
	start := time.Now()
	resp, _ = c.do(http.MethodGet, "/redfish/v1/", nil)
	wantStatus(t, resp, http.StatusOK)
	if time.Since(start) < 100*time.Millisecond {
		t.Fatal("slow answer was not slow")
	}
}

func TestSecureBootAndManager(t *testing.T) {
	b := New(t).System("s1")
	c := call{t: t, base: b.URL()}
	resp, _ := c.do(http.MethodPatch, "/redfish/v1/Systems/s1/SecureBoot", map[string]bool{"SecureBootEnable": true})
	wantStatus(t, resp, http.StatusNoContent)
	resp, _ = c.do(http.MethodPost, "/redfish/v1/Systems/s1/SecureBoot/Actions/SecureBoot.ResetKeys", map[string]string{"ResetKeysType": "DeleteAllKeys"})
	wantStatus(t, resp, http.StatusNoContent)
	if on, resets := b.SecureBoot("s1"); !on || len(resets) != 1 {
		t.Fatalf("secure boot %v %v", on, resets)
	}
	resp, _ = c.do(http.MethodPatch, "/redfish/v1/Managers/BMC", map[string]string{"DateTime": "2030-01-01T00:00:00+00:00"})
	wantStatus(t, resp, http.StatusNoContent)
	if got := b.ManagerDateTime(); got != "2030-01-01T00:00:00+00:00" {
		t.Fatalf("clock %s", got)
	}
	resp, _ = c.do(http.MethodPost, "/redfish/v1/Managers/BMC/VirtualMedia/Cd/Actions/VirtualMedia.InsertMedia", map[string]string{"Image": "http://x/a.iso"})
	wantStatus(t, resp, http.StatusNoContent)
	_, doc := c.do(http.MethodGet, "/redfish/v1/Managers/BMC/VirtualMedia/Cd", nil)
	if doc["Inserted"] != true || doc["Image"] != "http://x/a.iso" {
		t.Fatalf("virtual media %v", doc)
	}
	resp, _ = c.do(http.MethodGet, "/redfish/v1/Systems/missing", nil)
	wantStatus(t, resp, http.StatusNotFound)
}
