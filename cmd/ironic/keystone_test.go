package main

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/openkeel/ironic/testing/keystone"
)

// The binary under auth_strategy = keystone against a Keystone on
// loopback: tokens are validated with the service's own credentials,
// a project sees its nodes and not another project's (404, as upstream
// conceals them), bad tokens get 401 (on /metrics too) and an
// unreachable Keystone 503.
func TestKeystoneAuthentication(t *testing.T) {
	// Keystone expands implied roles (admin ⇒ member ⇒ reader) into
	// tokens; the fixture is given them explicitly.
	ks := keystone.New(t).
		Project("service").Project("alpha").Project("beta").
		User("ironic", "svc-pw").Grant("ironic", "service", "admin", "service").
		User("admin", "adm-pw").GrantSystem("admin", "admin", "member", "reader").
		User("alice", "a-pw").Grant("alice", "alpha", "member", "reader").
		User("bob", "b-pw").Grant("bob", "beta", "member", "reader")
	base, p := startKeystoneIronic(t, ks)

	call := func(method, path, token, body string) (int, http.Header, string) {
		t.Helper()
		req, err := http.NewRequest(method, base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-OpenStack-Ironic-API-Version", "1.80")
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("X-Auth-Token", token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		out, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, resp.Header, string(out)
	}

	status, hdr, _ := call("GET", "/v1/nodes", "", "")
	if status != http.StatusUnauthorized || hdr.Get("WWW-Authenticate") != fmt.Sprintf(`Keystone uri="%s"`, ks.URL()) {
		t.Fatalf("no token: %d %q", status, hdr.Get("WWW-Authenticate"))
	}
	admin := ks.SystemToken("admin")
	body := fmt.Sprintf(`{"driver": "fake-hardware", "name": "alpha-1", "owner": %q}`, ks.ProjectID("alpha"))
	if status, _, out := call("POST", "/v1/nodes", admin, body); status != http.StatusCreated {
		t.Fatalf("system admin create: %d %s", status, out)
	}
	if status, _, out := call("GET", "/v1/nodes/alpha-1", ks.Token("alice", "alpha"), ""); status != http.StatusOK {
		t.Fatalf("owner project reads its node: %d %s", status, out)
	}
	status, _, out := call("GET", "/v1/nodes/alpha-1", ks.Token("bob", "beta"), "")
	if status != http.StatusNotFound || !strings.Contains(out, "Node alpha-1 could not be found.") {
		t.Fatalf("another project: %d %s", status, out)
	}
	// /metrics is behind the same authentication as the API.
	if status, _, _ := call("GET", "/metrics", "", ""); status != http.StatusUnauthorized {
		t.Errorf("/metrics without a token: %d, want 401", status)
	}
	if status, _, out := call("GET", "/metrics", admin, ""); status != http.StatusOK || !strings.Contains(out, `ironic_nodes{maintenance="false",power_state="none",provision_state="enroll"} 1`) {
		t.Errorf("/metrics with a token: %d\n%s", status, out)
	}
	revoked := ks.Token("alice", "alpha")
	ks.Revoke(revoked)
	if status, _, _ := call("GET", "/v1/nodes", revoked, ""); status != http.StatusUnauthorized {
		t.Fatalf("revoked token: %d", status)
	}
	if status, _, _ := call("GET", "/metrics", revoked, ""); status != http.StatusUnauthorized {
		t.Errorf("/metrics with a revoked token: %d, want 401", status)
	}
	fresh := ks.Token("alice", "alpha")
	ks.Down()
	if status, _, _ := call("GET", "/v1/nodes", fresh, ""); status != http.StatusServiceUnavailable {
		t.Fatalf("Keystone down: %d, want 503", status)
	}
	ks.Up()
	terminate(t, p)
}

// startKeystoneIronic runs the all-in-one service validating tokens with
// ks, whose user "ironic" (password svc-pw, admin of project service) is
// the service's own, and answers its base URL and process once it is
// healthy.
func startKeystoneIronic(t *testing.T, ks *keystone.Fixture) (string, *process) {
	t.Helper()
	dir := t.TempDir()
	port := freePort(t)
	conf := writeConf(t, dir, fmt.Sprintf(`[DEFAULT]
auth_strategy = keystone
[api]
port = %d
[keystone_authtoken]
auth_type = password
auth_url = %s
www_authenticate_uri = %s
username = ironic
password = svc-pw
project_name = service
user_domain_name = Default
project_domain_name = Default
`, port, ks.URL(), ks.URL()))
	p := startIronic(t, dir, "ironic", "--config-file", conf)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	waitHealthy(t, p, base+"/healthcheck")
	return base, p
}
