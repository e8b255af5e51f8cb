package volume

import (
	"net/http"
	"slices"
	"testing"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apitest"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/notify"
	"github.com/openkeel/ironic/internal/notify/notifytest"
)

// Volume connector and target create, update and delete send start and
// end notifications with their CRUD payloads naming the node.
func TestVolumeCRUDNotifications(t *testing.T) {
	ae := apitest.NewEnv(t, apitest.Options{})
	rec := &notifytest.Recorder{}
	handlers := map[string]api.HandlerFunc{}
	Register(handlers, Deps{Store: ae.Store, Conductor: ae.Local, Topics: apitest.Topics{}, Authorize: apitest.Allow[*model.Node],
		ListProject: apitest.ListAll,
		Notifier:    notify.New(notify.Options{Service: notify.ServiceAPI, Host: "api-1", Level: "info", Drivers: []notify.Driver{rec}})})
	h := ae.Handler(handlers)
	n := apitest.StoredNode(t, ae.Store, "vol-node", func(n *model.Node) { n.PowerState = "power off" })
	do := func(method, path, body string, want int) map[string]any {
		t.Helper()
		r := apitest.Do(t, h, method, path, "1.115", body)
		if r.Status != want {
			t.Fatalf("%s %s: %d %s", method, path, r.Status, r.Body)
		}
		if len(r.Body) == 0 {
			return nil
		}
		return r.JSON(t)
	}
	c := do("POST", "/v1/volume/connectors", `{"node_uuid": "`+n.UUID+`", "type": "iqn", "connector_id": "iqn.2026-12.org.example:n1"}`, http.StatusCreated)
	do("PATCH", "/v1/volume/connectors/"+c["uuid"].(string), `[{"op": "add", "path": "/extra/x", "value": "1"}]`, http.StatusOK)
	do("DELETE", "/v1/volume/connectors/"+c["uuid"].(string), "", http.StatusNoContent)
	tg := do("POST", "/v1/volume/targets", `{"node_uuid": "`+n.UUID+`", "volume_type": "iscsi", "boot_index": 0, "volume_id": "v1"}`, http.StatusCreated)
	do("PATCH", "/v1/volume/targets/"+tg["uuid"].(string), `[{"op": "add", "path": "/extra/x", "value": "1"}]`, http.StatusOK)
	do("DELETE", "/v1/volume/targets/"+tg["uuid"].(string), "", http.StatusNoContent)
	var events []string
	for _, m := range rec.Messages() {
		events = append(events, m.EventType)
		if m.Payload.Data["node_uuid"] != n.UUID {
			t.Errorf("%s: node_uuid %v", m.EventType, m.Payload.Data["node_uuid"])
		}
	}
	var want []string
	for _, obj := range []string{"volumeconnector", "volumetarget"} {
		for _, action := range []string{"create", "update", "delete"} {
			want = append(want, "baremetal."+obj+"."+action+".start", "baremetal."+obj+"."+action+".end")
		}
	}
	if !slices.Equal(events, want) {
		t.Errorf("events\n got %v\nwant %v", events, want)
	}
	for _, m := range rec.Messages() {
		switch m.Payload.Name {
		case "VolumeConnectorCRUDPayload":
			if m.Payload.Data["connector_id"] != "iqn.2026-12.org.example:n1" {
				t.Errorf("%s: %v", m.EventType, m.Payload.Data)
			}
		case "VolumeTargetCRUDPayload":
			if m.Payload.Data["volume_id"] != "v1" {
				t.Errorf("%s: %v", m.EventType, m.Payload.Data)
			}
		default:
			t.Errorf("%s: payload %s", m.EventType, m.Payload.Name)
		}
	}
}
