package portgroup

import (
	"net/http"
	"slices"
	"testing"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apitest"
	"github.com/openkeel/ironic/internal/notify"
	"github.com/openkeel/ironic/internal/notify/notifytest"
)

// Portgroup create, update and delete send start and end notifications
// with PortgroupCRUDPayload.
func TestPortgroupCRUDNotifications(t *testing.T) {
	ae := apitest.NewEnv(t, apitest.Options{})
	rec := &notifytest.Recorder{}
	deps := ae.NodeBound()
	deps.Notifier = notify.New(notify.Options{Service: notify.ServiceAPI, Host: "api-1", Level: "info", Drivers: []notify.Driver{rec}})
	handlers := map[string]api.HandlerFunc{}
	Register(handlers, deps)
	e := &env{t: t, h: ae.Handler(handlers), s: ae.Store}
	n := e.node("pg-node", nil)
	r := e.do("POST", "/v1/portgroups", "1.115", `{"node_uuid": "`+n.UUID+`", "name": "bond0"}`)
	if r.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	id := r.JSON(t)["uuid"].(string)
	if r := e.do("PATCH", "/v1/portgroups/"+id, "1.115", `[{"op": "add", "path": "/extra/a", "value": "b"}]`); r.Status != http.StatusOK {
		t.Fatalf("patch: %d %s", r.Status, r.Body)
	}
	if r := e.do("DELETE", "/v1/portgroups/"+id, "1.115", ""); r.Status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	var events []string
	for _, m := range rec.Messages() {
		events = append(events, m.EventType)
		if d := m.Payload.Data; m.Payload.Name != "PortgroupCRUDPayload" || d["uuid"] != id || d["node_uuid"] != n.UUID || d["name"] != "bond0" {
			t.Errorf("%s: %s %v", m.EventType, m.Payload.Name, d)
		}
	}
	want := []string{"baremetal.portgroup.create.start", "baremetal.portgroup.create.end", "baremetal.portgroup.update.start",
		"baremetal.portgroup.update.end", "baremetal.portgroup.delete.start", "baremetal.portgroup.delete.end"}
	if !slices.Equal(events, want) {
		t.Errorf("events\n got %v\nwant %v", events, want)
	}
}
