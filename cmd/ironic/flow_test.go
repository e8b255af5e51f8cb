package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/openkeel/ironic/testing/await"
)

// apiClient speaks to a started ironic at one microversion.
type apiClient struct {
	t       *testing.T
	base    string
	version string
	// header is sent with every request (identity headers under noauth).
	header http.Header
}

func (c *apiClient) do(method, path string, body any) (int, map[string]any) {
	c.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			c.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("X-OpenStack-Ironic-API-Version", c.version)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range c.header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if len(data) > 0 {
		if err := json.Unmarshal(data, &out); err != nil {
			c.t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, data)
		}
	}
	return resp.StatusCode, out
}

// waitState polls the node until its provision state is want.
func (c *apiClient) waitState(node, want string) map[string]any {
	c.t.Helper()
	var n map[string]any
	await.UntilReason(c.t, 30*time.Second, fmt.Sprintf("node %s in %q", node, want), func() (bool, string) {
		_, n = c.do("GET", "/v1/nodes/"+node, nil)
		return n["provision_state"] == want && n["target_provision_state"] == nil, fmt.Sprintf("node %s never reached %q: %v", node, want, n)
	})
	return n
}

// The all-in-one binary enrols a fake-hardware node and walks it through
// manage, provide, deploy and tear down with its in-process conductor.
func TestAllInOneProvisioningFlow(t *testing.T) {
	dir := t.TempDir()
	port := freePort(t)
	conf := writeConf(t, dir, fmt.Sprintf("[api]\nport = %d\n", port))
	p := startIronic(t, dir, "ironic", "--config-file", conf)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	waitHealthy(t, p, base+"/healthcheck")
	c := &apiClient{t: t, base: base, version: "1.80"}

	status, n := c.do("POST", "/v1/nodes", map[string]any{
		"name": "flow-1", "driver": "fake-hardware",
		"driver_info": map[string]any{"ipmi_password": "pw-not-shown"},
	})
	if status != http.StatusCreated || n["provision_state"] != "enroll" {
		t.Fatalf("create: %d %v", status, n)
	}
	if di, _ := n["driver_info"].(map[string]any); di["ipmi_password"] != "******" {
		t.Fatalf("password not masked: %v", n["driver_info"])
	}
	for _, step := range []struct{ target, state string }{
		{"manage", "manageable"},
		{"provide", "available"},
		{"active", "active"},
		{"deleted", "available"},
	} {
		status, body := c.do("PUT", "/v1/nodes/flow-1/states/provision", map[string]any{"target": step.target})
		if status != http.StatusAccepted {
			t.Fatalf("%s: %d %v", step.target, status, body)
		}
		got := c.waitState("flow-1", step.state)
		if got["last_error"] != nil {
			t.Fatalf("%s: last_error %v", step.target, got["last_error"])
		}
	}
	terminate(t, p)
}
