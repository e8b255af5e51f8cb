package node

import (
	"net/http"
	"slices"
	"testing"

	"github.com/openkeel/ironic/internal/notify"
	"github.com/openkeel/ironic/internal/notify/notifytest"
)

// The API's node notifications: start and end around create, update,
// delete and maintenance, published as ironic-api.<host>, with the
// payload classes upstream's controllers send and secrets masked.
func TestNodeCRUDNotifications(t *testing.T) {
	rec := &notifytest.Recorder{}
	e := newEnvWith(t, func(d *Deps) {
		d.Notifier = notify.New(notify.Options{Service: notify.ServiceAPI, Host: "api-1", Level: "info", Drivers: []notify.Driver{rec},
			Mask: func(m map[string]any) map[string]any {
				out := map[string]any{}
				for k, v := range m {
					if k == "ipmi_password" {
						v = "******"
					}
					out[k] = v
				}
				return out
			}})
	})
	n := e.create(`{"driver": "fake-hardware", "name": "notified", "driver_info": {"ipmi_password": "s3cret"}}`)
	id := n["uuid"].(string)
	if r := e.do("PATCH", "/v1/nodes/"+id, "1.115", `[{"op": "add", "path": "/extra/rack", "value": "r1"}]`); r.status != http.StatusOK {
		t.Fatalf("patch: %d %s", r.status, r.body)
	}
	if r := e.do("PUT", "/v1/nodes/"+id+"/maintenance", "1.115", `{"reason": "fan"}`); r.status != http.StatusAccepted {
		t.Fatalf("maintenance: %d %s", r.status, r.body)
	}
	if r := e.do("DELETE", "/v1/nodes/"+id, "1.115", ""); r.status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	msgs := rec.Take()
	var events []string
	for _, m := range msgs {
		events = append(events, m.EventType)
		if m.PublisherID != "ironic-api.api-1" || m.Priority != "INFO" || m.Payload.Data["uuid"] != id {
			t.Errorf("%s: publisher %s priority %s uuid %v", m.EventType, m.PublisherID, m.Priority, m.Payload.Data["uuid"])
		}
		want := "NodeCRUDPayload"
		if m.EventType == "baremetal.node.maintenance_set.start" || m.EventType == "baremetal.node.maintenance_set.end" {
			want = "NodePayload"
		}
		if m.Payload.Name != want {
			t.Errorf("%s: payload %s, want %s", m.EventType, m.Payload.Name, want)
		}
		if di, ok := m.Payload.Data["driver_info"].(map[string]any); ok && di["ipmi_password"] != "******" {
			t.Errorf("%s: driver_info not masked: %v", m.EventType, di)
		}
	}
	want := []string{
		"baremetal.node.create.start", "baremetal.node.create.end",
		"baremetal.node.update.start", "baremetal.node.update.end",
		"baremetal.node.maintenance_set.start", "baremetal.node.maintenance_set.end",
		"baremetal.node.delete.start", "baremetal.node.delete.end",
	}
	if !slices.Equal(events, want) {
		t.Fatalf("events\n got %v\nwant %v", events, want)
	}
	if ex, _ := msgs[3].Payload.Data["extra"].(map[string]any); ex["rack"] != "r1" {
		t.Errorf("update.end extra %v", msgs[3].Payload.Data["extra"])
	}
	if msgs[5].Payload.Data["maintenance"] != true || msgs[5].Payload.Data["maintenance_reason"] != "fan" {
		t.Errorf("maintenance_set.end %v %v", msgs[5].Payload.Data["maintenance"], msgs[5].Payload.Data["maintenance_reason"])
	}

	// A failed delete (the node is gone) sends nothing: upstream looks the
	// node up before the start notification.
	e.do("DELETE", "/v1/nodes/"+id, "1.115", "")
	if got := rec.Take(); len(got) != 0 {
		t.Errorf("notifications for a missing node: %d", len(got))
	}
}
