package node

import (
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apitest"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/rpc"
)

// operatorNetworkData is an operator's network_data schema unlike
// upstream's: links only, each named eth*, checked through a definition
// (which upstream's node_schema lifts into the node schema's definitions).
const operatorNetworkData = `{
  "$schema": "http://json-schema.org/draft-07/schema#",
  "type": "object",
  "definitions": {"link": {"type": "object", "required": ["id"], "properties": {"id": {"type": "string", "pattern": "^eth"}}}},
  "properties": {"links": {"type": "array", "items": {"$ref": "#/definitions/link"}}},
  "required": ["links"],
  "additionalProperties": false
}`

// withNetworkDataSchema serves e's node routes with [api]/network_data_schema
// set to file.
func withNetworkDataSchema(t *testing.T, e *env, file string) {
	t.Helper()
	cfg, err := config.Load(config.LoadOptions{Overrides: map[string]map[string]string{"api": {"network_data_schema": file}}})
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	handlers := map[string]api.HandlerFunc{}
	Register(handlers, Deps{Store: e.s, Conductor: rpc.NewLocal(e.cond, log), Topics: fixedTopics{}, Config: cfg, Logger: log,
		Authorize: apitest.Allow[*model.Node], AuthorizeRunbook: apitest.Allow[*model.Runbook]})
	e.h = apitest.New(t, api.Deps{Logger: log, Handlers: handlers, Config: cfg})
}

// Issue 23 item 7: [api]/network_data_schema naming an operator's file
// replaces upstream's schema for node creation and for patches of
// network_data, as master's node.py loads it; refused requests change
// nothing.
func TestOperatorNetworkDataSchema(t *testing.T) {
	e := newEnv(t)
	// Upstream's embedded schema refuses the operator's shape (a link
	// needs its type, MAC…), so success below proves the file is used.
	if r := e.do("POST", "/v1/nodes", "1.115", `{"driver": "fake-hardware", "network_data": {"links": [{"id": "eth0"}]}}`); r.status != http.StatusBadRequest {
		t.Fatalf("embedded schema took the operator's shape: %d %s", r.status, r.body)
	}
	file := filepath.Join(t.TempDir(), "network-data-schema.json")
	if err := os.WriteFile(file, []byte(operatorNetworkData), 0o644); err != nil {
		t.Fatal(err)
	}
	withNetworkDataSchema(t, e, file)

	n := e.create(`{"driver": "fake-hardware", "name": "nd", "network_data": {"links": [{"id": "eth0"}]}}`)
	id := n["uuid"].(string)
	r := e.do("POST", "/v1/nodes", "1.115", `{"driver": "fake-hardware", "name": "bad", "network_data": {"links": [{"id": "bond0"}]}}`)
	if r.status != http.StatusBadRequest || !strings.Contains(r.faultstring(t), "Schema error for node") {
		t.Fatalf("create with a link the operator's schema refuses: %d %s", r.status, r.body)
	}
	if r := e.do("GET", "/v1/nodes/bad", "1.115", ""); r.status != http.StatusNotFound {
		t.Errorf("refused node exists: %d", r.status)
	}
	// An empty object and null stay allowed, as upstream's anyOf.
	e.create(`{"driver": "fake-hardware", "network_data": {}}`)

	r = e.do("PATCH", "/v1/nodes/"+id, "1.115", `[{"op": "replace", "path": "/network_data", "value": {"links": [{"id": "wlan0"}]}}]`)
	if want := "Invalid network_data: 'wlan0' does not match '^eth' "; r.status != http.StatusBadRequest || r.faultstring(t) != want {
		t.Fatalf("patch refused by the operator's schema: %d %s, want 400 %q", r.status, r.body, want)
	}
	got := e.do("GET", "/v1/nodes/"+id, "1.115", "").json(t)
	if links := got["network_data"].(map[string]any)["links"].([]any); links[0].(map[string]any)["id"] != "eth0" {
		t.Errorf("network_data after a refused patch: %v", got["network_data"])
	}
	if r := e.do("PATCH", "/v1/nodes/"+id, "1.115", `[{"op": "replace", "path": "/network_data", "value": {"links": [{"id": "eth1"}, {"id": "eth2"}]}}]`); r.status != http.StatusOK {
		t.Errorf("patch the operator's schema accepts: %d %s", r.status, r.body)
	}
}

// A network_data_schema file that is missing or not a schema is refused
// at start (CheckConfig); handlers built anyway answer 503, not 500.
func TestOperatorNetworkDataSchemaMissing(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"type": 7}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{filepath.Join(dir, "missing.json"), bad} {
		cfg, err := config.Load(config.LoadOptions{Overrides: map[string]map[string]string{"api": {"network_data_schema": file}}})
		if err != nil {
			t.Fatal(err)
		}
		if err := CheckConfig(cfg); err == nil || !strings.Contains(err.Error(), file) {
			t.Errorf("CheckConfig with %s: %v", file, err)
		}
	}
	e := newEnv(t)
	withNetworkDataSchema(t, e, filepath.Join(dir, "missing.json"))
	r := e.do("POST", "/v1/nodes", "1.115", `{"driver": "fake-hardware"}`)
	if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" {
		t.Errorf("create without its schema: %d %s", r.status, r.body)
	}
	cfg, err := config.Load(config.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckConfig(cfg); err != nil {
		t.Errorf("default (upstream's file under $pybasedir, embedded): %v", err)
	}
}
