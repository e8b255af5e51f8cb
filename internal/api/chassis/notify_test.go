package chassis

import (
	"io"
	"log/slog"
	"net/http"
	"slices"
	"testing"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apitest"
	"github.com/openkeel/ironic/internal/notify"
	"github.com/openkeel/ironic/internal/notify/notifytest"
	"github.com/openkeel/ironic/internal/store"
	"github.com/openkeel/ironic/internal/store/storetest"
)

// Chassis create, update and delete send start and end notifications
// with ChassisCRUDPayload.
func TestChassisCRUDNotifications(t *testing.T) {
	s := store.New(storetest.Backends(t)[0].DB)
	rec := &notifytest.Recorder{}
	handlers := map[string]api.HandlerFunc{}
	Register(handlers, Deps{Store: s, Notifier: notify.New(notify.Options{Service: notify.ServiceAPI, Host: "api-1", Level: "info", Drivers: []notify.Driver{rec}})})
	e := &env{t: t, h: apitest.New(t, api.Deps{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Handlers: handlers}), s: s}

	status, _, c := e.do("POST", "/v1/chassis", "1.115", `{"description": "rack 1"}`)
	if status != http.StatusCreated {
		t.Fatalf("create: %d %v", status, c)
	}
	id := c["uuid"].(string)
	if status, _, out := e.do("PATCH", "/v1/chassis/"+id, "1.115", `[{"op": "replace", "path": "/description", "value": "rack 2"}]`); status != http.StatusOK {
		t.Fatalf("patch: %d %v", status, out)
	}
	if status, _, out := e.do("DELETE", "/v1/chassis/"+id, "1.115", ""); status != http.StatusNoContent {
		t.Fatalf("delete: %d %v", status, out)
	}
	var events []string
	for _, m := range rec.Messages() {
		events = append(events, m.EventType)
		if m.Payload.Name != "ChassisCRUDPayload" || m.Payload.Version != "1.0" || m.Payload.Data["uuid"] != id {
			t.Errorf("%s: %s %v", m.EventType, m.Payload.Name, m.Payload.Data)
		}
	}
	want := []string{"baremetal.chassis.create.start", "baremetal.chassis.create.end", "baremetal.chassis.update.start",
		"baremetal.chassis.update.end", "baremetal.chassis.delete.start", "baremetal.chassis.delete.end"}
	if !slices.Equal(events, want) {
		t.Errorf("events\n got %v\nwant %v", events, want)
	}
	if got := rec.Messages()[3].Payload.Data["description"]; got != "rack 2" {
		t.Errorf("update.end description %v", got)
	}
}
