package ipa

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openkeel/ironic/testing/fakeclock"
)

// recorder is a testing.TB that keeps what the fixture logs.
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

func do(t *testing.T, method, url, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("%s %s: %v: %s", method, url, err, data)
	}
	return resp.StatusCode, m
}

func TestAPIShapesAndToken(t *testing.T) {
	rec := &recorder{TB: t}
	a := New(rec).WithToken("very-secret-token")
	base := a.URL()

	if st, m := do(t, "GET", base+"/", ""); st != 200 || m["name"] != "OpenStack Ironic Python Agent API" {
		t.Fatalf("root %d %v", st, m)
	}
	if st, m := do(t, "GET", base+"/v1/status", ""); st != 200 || m["version"] != Version || m["started_at"] == nil {
		t.Fatalf("status %d %v", st, m)
	}
	for _, q := range []string{"", "?agent_token=wrong"} {
		st, m := do(t, "GET", base+"/v1/commands/"+q, "")
		if st != 401 || m["faultstring"] != "401 Unauthorized: Token invalid." || m["faultcode"] != "Client" {
			t.Fatalf("list without token %d %v", st, m)
		}
	}
	tok := "?agent_token=very-secret-token"
	if st, m := do(t, "POST", base+"/v1/commands/"+tok, `{"name": "standby.sync"}`); st != 400 || m["faultstring"] != "400 Bad Request: Missing or invalid name or params" {
		t.Fatalf("missing params %d %v", st, m)
	}
	st, m := do(t, "POST", base+"/v1/commands/"+tok+"&wait=false", `{"name": "clean.execute_clean_step", "params": {"step": {"step": "erase_devices"}}}`)
	if st != 200 || m["command_status"] != Running || m["command_name"] != "execute_clean_step" || m["command_result"] != nil {
		t.Fatalf("run %d %v", st, m)
	}
	id := m["id"].(string)
	if st, m := do(t, "POST", base+"/v1/commands/"+tok, `{"name": "standby.sync", "params": {}}`); st != 409 || m["faultstring"] != "Agent is busy: executing command execute_clean_step" {
		t.Fatalf("busy %d %v", st, m)
	}
	if st, m := do(t, "GET", base+"/v1/commands/"+id+tok, ""); st != 200 || m["command_status"] != Running {
		t.Fatalf("get %d %v", st, m)
	}
	st, m = do(t, "GET", base+"/v1/commands/"+tok, "")
	cmds := m["commands"].([]any)
	c := cmds[0].(map[string]any)
	if st != 200 || len(cmds) != 1 || c["command_status"] != Succeeded ||
		c["command_result"].(map[string]any)["clean_step"].(map[string]any)["step"] != "erase_devices" {
		t.Fatalf("list %d %v", st, m)
	}
	if strings.Contains(rec.all(), "very-secret-token") {
		t.Fatalf("token in the request log:\n%s", rec.all())
	}
	if a.Count("unauthorized") != 2 || a.Count("busy") != 1 || a.Count("status") != 1 || a.Count("get") != 1 {
		t.Fatalf("counters unauthorized %d busy %d status %d get %d", a.Count("unauthorized"), a.Count("busy"), a.Count("status"), a.Count("get"))
	}
}

func TestNoTokenRefusesAll(t *testing.T) {
	a := New(t)
	if st, _ := do(t, "POST", a.URL()+"/v1/commands/?agent_token=x", `{"name": "standby.sync", "params": {}}`); st != 401 {
		t.Fatalf("status %d", st)
	}
}

func TestVersionMismatchAndStringResults(t *testing.T) {
	a := New(t).WithToken("t")
	a.Handle("standby.sync", Sync("done"))
	a.Handle("standby.power_off", Async(0, "bye"))
	base := a.URL() + "/v1/commands/?agent_token=t&wait=true"
	_, m := do(t, "POST", base, `{"name": "clean.execute_clean_step", "params": {"step": {"step": "x"}, "clean_version": {"generic_hardware_manager": "1.0"}}}`)
	if m["command_status"] != VersionMismatch {
		t.Fatalf("mismatch %v", m)
	}
	if _, m = do(t, "POST", base, `{"name": "standby.sync", "params": {}}`); m["command_result"].(map[string]any)["result"] != "done" {
		t.Fatalf("sync %v", m)
	}
	if _, m = do(t, "POST", base, `{"name": "standby.power_off", "params": {}}`); m["command_result"].(map[string]any)["result"] != "power_off: bye" {
		t.Fatalf("power_off %v", m)
	}
}

// fakeIronic answers GET /, lookup and heartbeat and records what came.
type fakeIronic struct {
	mu      sync.Mutex
	version string
	got     []*http.Request
	bodies  []map[string]any
	status  int
}

func (f *fakeIronic) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var body map[string]any
	_ = json.NewDecoder(r.Body).Decode(&body)
	f.got = append(f.got, r)
	f.bodies = append(f.bodies, body)
	switch {
	case r.URL.Path == "/":
		_ = json.NewEncoder(w).Encode(map[string]any{"default_version": map[string]any{"version": f.version}})
	case r.URL.Path == "/v1/lookup":
		_ = json.NewEncoder(w).Encode(map[string]any{"node": map[string]any{"uuid": "n1"}, "config": map[string]any{"agent_token": "issued"}})
	case strings.HasPrefix(r.URL.Path, "/v1/heartbeat/"):
		if f.status != 0 {
			w.WriteHeader(f.status)
			_, _ = w.Write([]byte(`{"error_message": "{\"faultcode\": \"Client\", \"faultstring\": \"Node n1 is locked by host c1, please retry after the current operation is completed.\", \"debuginfo\": null}"}`))
			return
		}
		w.WriteHeader(http.StatusAccepted)
	}
}

func TestIronicClient(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		server, lookupHdr, hbHdr string
		token, verifyCA          bool
	}{
		{"1.115", "1.62", "1.68", true, true},
		{"1.65", "1.62", "1.65", true, false},
		{"1.40", "1.40", "1.40", false, false},
	} {
		t.Run(tc.server, func(t *testing.T) {
			f := &fakeIronic{version: tc.server}
			srv := httptest.NewServer(f)
			t.Cleanup(srv.Close)
			c := &IronicClient{BaseURL: srv.URL}
			if _, err := c.Lookup(ctx, []string{"52:54:00:00:00:01", "52:54:00:00:00:02"}, "n1"); err != nil {
				t.Fatal(err)
			}
			if err := c.Heartbeat(ctx, "n1", "https://127.0.0.1:9999", "PEM"); err != nil {
				t.Fatal(err)
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			lookup, hb := f.got[1], f.got[2]
			if lookup.URL.Query().Get("addresses") != "52:54:00:00:00:01,52:54:00:00:00:02" || lookup.URL.Query().Get("node_uuid") != "n1" ||
				lookup.Header.Get("X-OpenStack-Ironic-API-Version") != tc.lookupHdr {
				t.Fatalf("lookup %v %v", lookup.URL, lookup.Header)
			}
			body := f.bodies[2]
			if hb.Method != "POST" || hb.URL.Path != "/v1/heartbeat/n1" || hb.Header.Get("X-OpenStack-Ironic-API-Version") != tc.hbHdr ||
				body["callback_url"] != "https://127.0.0.1:9999" || (body["agent_token"] == "issued") != tc.token ||
				(body["agent_verify_ca"] == "PEM") != tc.verifyCA || body["agent_version"] != Version {
				t.Fatalf("heartbeat %v %v %v", hb.URL, hb.Header, body)
			}
		})
	}
	t.Run("conflict", func(t *testing.T) {
		f := &fakeIronic{version: "1.115", status: http.StatusConflict}
		srv := httptest.NewServer(f)
		t.Cleanup(srv.Close)
		err := (&IronicClient{BaseURL: srv.URL, Token: "x"}).Heartbeat(ctx, "n1", "https://127.0.0.1:1", "")
		var apiErr *APIError
		if !errors.As(err, &apiErr) || apiErr.Status != 409 ||
			apiErr.Text != "Error 409: Node n1 is locked by host c1, please retry after the current operation is completed." {
			t.Fatalf("error %v", err)
		}
	})
}

// A ramdisk booted again is a new agent: the conductor reads an empty
// command list (a fresh boot), not the previous session's last step.
func TestRebootStartsNewSession(t *testing.T) {
	a := New(t).WithToken("tok")
	base := a.URL()
	q := "?agent_token=tok"
	if st, m := do(t, "POST", base+"/v1/commands/"+q, `{"name": "clean.execute_clean_step", "params": {"step": {"step": "erase_devices_metadata", "interface": "deploy"}}}`); st != 200 || m["command_status"] != Running {
		t.Fatalf("execute %d %v", st, m)
	}
	_, before := do(t, "GET", base+"/v1/status", "")
	a.Down()
	a.Up()
	st, m := do(t, "GET", base+"/v1/commands/"+q, "")
	if st != 200 || len(m["commands"].([]any)) != 0 {
		t.Fatalf("commands after reboot %d %v, want none", st, m)
	}
	if _, after := do(t, "GET", base+"/v1/status", ""); after["started_at"] == before["started_at"] {
		t.Fatalf("started_at unchanged across a reboot: %v", after["started_at"])
	}
	// The previous session's running command does not make the new agent busy.
	if st, m := do(t, "POST", base+"/v1/commands/"+q+"&wait=true", `{"name": "clean.get_clean_steps", "params": {"node": {}, "ports": []}}`); st != 200 || m["command_status"] != Succeeded {
		t.Fatalf("get_clean_steps after reboot %d %v", st, m)
	}
	if got := a.Commands(); len(got) != 2 || got[0].Method != "clean.execute_clean_step" || got[1].Method != "clean.get_clean_steps" {
		t.Fatalf("history %+v", got)
	}
	// Up without Down is no reboot.
	a.Up()
	if _, m := do(t, "GET", base+"/v1/commands/"+q, ""); len(m["commands"].([]any)) != 1 {
		t.Fatalf("Up on a running agent dropped its commands: %v", m)
	}
}

// TestPowerOffTakesItsTime: standby.power_off is answered at once, but
// the machine stays on (and the agent answers) for the power off delay of
// the fixture's clock, as IPA flushing the disks; then the API is gone
// until the machine boots the ramdisk again. A hung shutdown never ends.
func TestPowerOffTakesItsTime(t *testing.T) {
	answers := func(base string) bool {
		resp, err := http.Get(base + "/v1/status")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}
	cases := []struct {
		name  string
		setup func(a *Agent)
		// off is how long after the command the machine is off; 0: never.
		off time.Duration
	}{
		{"default delay", func(*Agent) {}, DefaultPowerOffDelay},
		{"39 s flush", func(a *Agent) { a.WithPowerOffDelay(39 * time.Second) }, 39 * time.Second},
		{"hung shutdown", func(a *Agent) { a.NeverPowerOff() }, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			clk := fakeclock.New(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
			a := New(t).WithToken("tok").WithClock(clk)
			c.setup(a)
			base := a.URL()
			if st, m := do(t, "POST", base+"/v1/commands/?agent_token=tok", `{"name": "standby.power_off", "params": {}}`); st != 200 || m["command_status"] != Running {
				t.Fatalf("power_off %d %v", st, m)
			}
			if a.PoweredOff() || !answers(base) {
				t.Fatalf("machine off as soon as standby.power_off was answered")
			}
			if c.off == 0 {
				clk.Advance(time.Hour)
				if a.PoweredOff() || !answers(base) {
					t.Fatalf("a hung shutdown powered off")
				}
				return
			}
			clk.Advance(c.off - time.Millisecond)
			if a.PoweredOff() || !answers(base) {
				t.Fatalf("machine off before its delay")
			}
			clk.Advance(time.Millisecond)
			if !a.PoweredOff() || answers(base) {
				t.Fatalf("machine still on, or its agent answering, after its delay")
			}
			a.Up()
			if a.PoweredOff() || !answers(base) {
				t.Fatalf("machine booted again is off")
			}
		})
	}
}
