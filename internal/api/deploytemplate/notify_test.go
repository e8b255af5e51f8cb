package deploytemplate

import (
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

// Deploy template create, update and delete send start and end
// notifications with DeployTemplateCRUDPayload, and a refused create its
// error notification, as upstream's controller does.
func TestDeployTemplateCRUDNotifications(t *testing.T) {
	rec := &notifytest.Recorder{}
	m := map[string]api.HandlerFunc{}
	Register(m, Deps{Store: store.New(storetest.Backends(t)[0].DB),
		Notifier: notify.New(notify.Options{Service: notify.ServiceAPI, Host: "api-1", Level: "info", Drivers: []notify.Driver{rec}})})
	e := &env{T: t, H: apitest.New(t, api.Deps{Handlers: m, Logger: slog.New(slog.DiscardHandler)})}
	r := e.Do("POST", "/v1/deploy_templates", "1.55", `{"name": "CUSTOM_N", `+stepsJSON+`}`)
	if r.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	u := r.JSON(t)["uuid"].(string)
	if r := e.Do("POST", "/v1/deploy_templates", "1.55", `{"name": "CUSTOM_N", `+stepsJSON+`}`); r.Status != http.StatusConflict {
		t.Fatalf("duplicate: %d %s", r.Status, r.Body)
	}
	if r := e.Do("PATCH", "/v1/deploy_templates/"+u, "1.55", `[{"op": "add", "path": "/extra/x", "value": "1"}]`); r.Status != http.StatusOK {
		t.Fatalf("patch: %d %s", r.Status, r.Body)
	}
	if r := e.Do("DELETE", "/v1/deploy_templates/"+u, "1.55", ""); r.Status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	var events []string
	for _, msg := range rec.Messages() {
		events = append(events, msg.EventType+"/"+msg.Priority)
		d := msg.Payload.Data
		if msg.Payload.Name != "DeployTemplateCRUDPayload" || msg.Payload.Version != notify.DeployTemplateCRUDPayloadVersion || d["name"] != "CUSTOM_N" {
			t.Errorf("%s: %s %s %v", msg.EventType, msg.Payload.Name, msg.Payload.Version, d)
		}
	}
	want := []string{
		"baremetal.deploytemplate.create.start/INFO", "baremetal.deploytemplate.create.end/INFO",
		"baremetal.deploytemplate.create.start/INFO", "baremetal.deploytemplate.create.error/ERROR",
		"baremetal.deploytemplate.update.start/INFO", "baremetal.deploytemplate.update.end/INFO",
		"baremetal.deploytemplate.delete.start/INFO", "baremetal.deploytemplate.delete.end/INFO",
	}
	if !slices.Equal(events, want) {
		t.Errorf("events\n got %v\nwant %v", events, want)
	}
}
