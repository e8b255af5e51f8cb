package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
)

// Under noauth every policy passes, so a node created with an
// X-Project-Id header belongs to that project, and one created with an
// owner needs a system scope, as upstream answers (checked against
// Ironic 21.4).
func TestNoAuthCreateOwner(t *testing.T) {
	dir := t.TempDir()
	port := freePort(t)
	conf := writeConf(t, dir, fmt.Sprintf("[api]\nport = %d\n", port))
	p := startIronic(t, dir, "ironic", "--config-file", conf)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	waitHealthy(t, p, base+"/healthcheck")

	project := &apiClient{t: t, base: base, version: "1.80", header: http.Header{"X-Project-Id": {"proj-abc"}}}
	if status, n := project.do("POST", "/v1/nodes", map[string]any{"driver": "fake-hardware"}); status != http.StatusCreated || n["owner"] != "proj-abc" {
		t.Errorf("create with X-Project-Id: %d owner %v", status, n["owner"])
	}
	anon := &apiClient{t: t, base: base, version: "1.80"}
	if status, n := anon.do("POST", "/v1/nodes", map[string]any{"driver": "fake-hardware"}); status != http.StatusCreated || n["owner"] != nil {
		t.Errorf("create without a project: %d owner %v", status, n["owner"])
	}
	status, body := anon.do("POST", "/v1/nodes", map[string]any{"driver": "fake-hardware", "name": "refused", "owner": "foo"})
	if status != http.StatusBadRequest || faultstring(t, body) != "Cannot create a node as a project scoped admin with an owner other than your own project." {
		t.Errorf("create with an owner and no scope: %d %v", status, body)
	}
	if status, _ := anon.do("GET", "/v1/nodes/refused", nil); status != http.StatusNotFound {
		t.Errorf("refused node exists: %d", status)
	}
	system := &apiClient{t: t, base: base, version: "1.80", header: http.Header{"Openstack-System-Scope": {"all"}}}
	if status, n := system.do("POST", "/v1/nodes", map[string]any{"driver": "fake-hardware", "owner": "foo"}); status != http.StatusCreated || n["owner"] != "foo" {
		t.Errorf("create with an owner under system scope: %d owner %v", status, n["owner"])
	}
}

// faultstring unpacks the error envelope of an answer decoded by
// apiClient.do.
func faultstring(t *testing.T, body map[string]any) string {
	t.Helper()
	em, _ := body["error_message"].(string)
	var inner struct{ Faultstring string }
	if err := json.Unmarshal([]byte(em), &inner); err != nil {
		t.Fatalf("error envelope %v: %v", body, err)
	}
	return inner.Faultstring
}
