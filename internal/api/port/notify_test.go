package port

import (
	"log/slog"
	"net/http"
	"slices"
	"testing"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apitest"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/notify"
	"github.com/openkeel/ironic/internal/notify/notifytest"
)

// Port create, update and delete send start and end notifications with
// PortCRUDPayload naming the node and the port group.
func TestPortCRUDNotifications(t *testing.T) {
	e := newEnv(t)
	rec := &notifytest.Recorder{}
	handlers := map[string]api.HandlerFunc{}
	Register(handlers, Deps{Store: e.s, Conductor: e.cond, Topics: apitest.Topics{}, Authorize: apitest.Allow[*model.Node], ListProject: apitest.ListAll,
		Notifier: notify.New(notify.Options{Service: notify.ServiceAPI, Host: "api-1", Level: "info", Drivers: []notify.Driver{rec}})})
	e.h = apitest.New(t, api.Deps{Logger: slog.New(slog.DiscardHandler), Handlers: handlers})
	n := e.node("n1", nil)
	pg := e.portgroup(n, "pg1", true)

	r := e.do("POST", "/v1/ports", "1.115", `{"node_uuid": "`+n.UUID+`", "address": "52:54:00:00:09:01", "portgroup_uuid": "`+pg.UUID+`"}`)
	if r.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	id := r.JSON(t)["uuid"].(string)
	if r := e.do("PATCH", "/v1/ports/"+id, "1.115", `[{"op": "add", "path": "/extra/slot", "value": "1"}]`); r.Status != http.StatusOK {
		t.Fatalf("patch: %d %s", r.Status, r.Body)
	}
	if r := e.do("DELETE", "/v1/ports/"+id, "1.115", ""); r.Status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	var events []string
	for _, m := range rec.Messages() {
		events = append(events, m.EventType)
		d := m.Payload.Data
		if m.Payload.Name != "PortCRUDPayload" || m.Payload.Version != "1.8" || d["uuid"] != id || d["node_uuid"] != n.UUID ||
			d["portgroup_uuid"] != pg.UUID || d["address"] != "52:54:00:00:09:01" || m.PublisherID != "ironic-api.api-1" {
			t.Errorf("%s: %s %s %v", m.EventType, m.Payload.Name, m.Payload.Version, d)
		}
	}
	want := []string{"baremetal.port.create.start", "baremetal.port.create.end", "baremetal.port.update.start",
		"baremetal.port.update.end", "baremetal.port.delete.start", "baremetal.port.delete.end"}
	if !slices.Equal(events, want) {
		t.Errorf("events\n got %v\nwant %v", events, want)
	}
}
