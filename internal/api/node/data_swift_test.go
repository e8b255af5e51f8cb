package node

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apitest"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/store"
	"github.com/openkeel/ironic/internal/store/storetest"
	"github.com/openkeel/ironic/testing/keystone"
	fakeswift "github.com/openkeel/ironic/testing/swift"
)

// TestInventoryFromSwift: with [inventory]/data_backend swift the node's
// inventory is read from the inspector_data-<uuid>-inventory and -plugin
// objects of swift_data_container; a missing object is
// NodeInventoryNotFound.
func TestInventoryFromSwift(t *testing.T) {
	ctx := context.Background()
	ks := keystone.New(t).Project("service").User("ironic", "secret").Grant("ironic", "service", "admin")
	sw := fakeswift.New(t).ValidateTokens(ks.TokenValid)
	sw.Register(ks, ks.ProjectID("service"))
	account := fakeswift.AccountName(ks.ProjectID("service"))
	cfg, err := config.Load(config.LoadOptions{Overrides: map[string]map[string]string{
		"inventory": {"data_backend": "swift", "swift_data_container": "inv"},
		"swift":     fakeswift.IronicSection(ks, "ironic", "secret", "service"),
	}})
	if err != nil {
		t.Fatal(err)
	}
	s := store.New(storetest.Backends(t)[0].DB)
	n, err := s.CreateNode(ctx, &model.Node{Driver: "fake-hardware"})
	if err != nil {
		t.Fatal(err)
	}
	// The database's inventory is not the one answered.
	if _, err := s.CreateNodeInventory(ctx, &model.NodeInventory{NodeID: &n.ID, InventoryData: map[string]any{"from": "db"}}); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(&syncBuffer{}, nil))
	handlers := map[string]api.HandlerFunc{}
	Register(handlers, Deps{Store: s, Config: cfg, Logger: log, Authorize: apitest.Allow[*model.Node]})
	h := apitest.New(t, api.Deps{Config: cfg, Logger: log, Handlers: handlers})
	get := func() (int, map[string]any) {
		req := httptest.NewRequest("GET", "http://127.0.0.1:6385/v1/nodes/"+n.UUID+"/inventory", nil)
		req.Header.Set("X-OpenStack-Ironic-API-Version", "1.81")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		var body map[string]any
		if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
			t.Fatalf("body %s: %v", w.Body.Bytes(), err)
		}
		return w.Code, body
	}

	sw.PutObject(account, "inv", "inspector_data-"+n.UUID+"-inventory", []byte(`{"cpu": {"count": 4}}`))
	status, body := get()
	if status != http.StatusNotFound {
		t.Fatalf("without the plugin object: %d %v", status, body)
	}
	if msg, _ := body["error_message"].(string); !strings.Contains(msg, "Node inventory record for node "+n.UUID+" could not be found.") {
		t.Fatalf("error body %v", body)
	}

	sw.PutObject(account, "inv", "inspector_data-"+n.UUID+"-plugin", []byte(`{"root_disk": "sda"}`))
	status, body = get()
	if status != http.StatusOK {
		t.Fatalf("inventory: %d %v", status, body)
	}
	inv, _ := body["inventory"].(map[string]any)
	plug, _ := body["plugin_data"].(map[string]any)
	if cpu, _ := inv["cpu"].(map[string]any); cpu["count"] != 4.0 || plug["root_disk"] != "sda" || len(body) != 2 {
		t.Fatalf("inventory body %v", body)
	}
}
