package allocation

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apitest"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/notify"
	"github.com/openkeel/ironic/internal/notify/notifytest"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/testing/await"
)

// Allocation create, update and delete send start and end notifications
// with AllocationCRUDPayload; as upstream, only delete names the node.
func TestAllocationCRUDNotifications(t *testing.T) {
	ae := apitest.NewEnv(t, apitest.Options{})
	rec := &notifytest.Recorder{}
	handlers := map[string]api.HandlerFunc{}
	Register(handlers, Deps{Store: ae.Store, Conductor: ae.Local, Topics: &topics{}, Logger: ae.Logger,
		Authorize: apitest.Allow[*string], AuthorizeNode: apitest.Allow[*model.Node], Check: apitest.AllowCheck,
		Scope: apitest.SystemScope, ListProject: apitest.ListAll,
		Notifier: notify.New(notify.Options{Service: notify.ServiceAPI, Host: "api-1", Level: "info", Drivers: []notify.Driver{rec}})})
	h := ae.Handler(handlers)
	n := ae.Node(t, states.Available, nil, func(n *model.Node) { rc := "gold"; n.ResourceClass = &rc })
	r := apitest.Do(t, h, "POST", "/v1/allocations", "1.115", `{"name": "alloc-n", "resource_class": "gold"}`)
	if r.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	id := r.JSON(t)["uuid"].(string)
	if r := apitest.Do(t, h, "PATCH", "/v1/allocations/"+id, "1.115", `[{"op": "add", "path": "/extra/x", "value": "1"}]`); r.Status != http.StatusOK {
		t.Fatalf("patch: %d %s", r.Status, r.Body)
	}
	// The conductor allocates the node in the background.
	await.UntilReason(t, 30*time.Second, "allocation of the node", func() (bool, string) {
		al, err := ae.Store.GetAllocationByUUID(context.Background(), id)
		if err != nil {
			return false, err.Error()
		}
		return al.NodeID != nil && *al.NodeID == n.ID && al.State == "active", "state " + al.State
	})
	if r := apitest.Do(t, h, "DELETE", "/v1/allocations/"+id, "1.115", ""); r.Status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	var events []string
	for _, m := range rec.Messages() {
		events = append(events, m.EventType)
		d := m.Payload.Data
		wantNode := any(nil)
		if m.EventType == "baremetal.allocation.delete.start" || m.EventType == "baremetal.allocation.delete.end" {
			wantNode = n.UUID
		}
		if m.Payload.Name != "AllocationCRUDPayload" || m.Payload.Version != notify.AllocationCRUDPayloadVersion ||
			d["uuid"] != id || d["name"] != "alloc-n" || d["node_uuid"] != wantNode {
			t.Errorf("%s: %s %s %v", m.EventType, m.Payload.Name, m.Payload.Version, d)
		}
	}
	want := []string{"baremetal.allocation.create.start", "baremetal.allocation.create.end", "baremetal.allocation.update.start",
		"baremetal.allocation.update.end", "baremetal.allocation.delete.start", "baremetal.allocation.delete.end"}
	if !slices.Equal(events, want) {
		t.Errorf("events\n got %v\nwant %v", events, want)
	}
}
