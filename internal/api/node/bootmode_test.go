package node

import (
	"log/slog"
	"net/http"
	"testing"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apitest"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/rpc"
)

// Issue 23 item 7: [api]/disallowed_enrollment_boot_modes refuses to
// enrol a node whose capabilities ask for that boot mode, and a PATCH of
// its capabilities to it, with master's 400 BootModeNotAllowed; other
// modes pass and a refused request changes nothing.
func TestDisallowedEnrollmentBootModes(t *testing.T) {
	e := newEnv(t)
	cfg, err := config.Load(config.LoadOptions{Overrides: map[string]map[string]string{"api": {"disallowed_enrollment_boot_modes": "bios"}}})
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	handlers := map[string]api.HandlerFunc{}
	Register(handlers, Deps{Store: e.s, Conductor: rpc.NewLocal(e.cond, log), Topics: fixedTopics{}, Config: cfg, Logger: log,
		Authorize: apitest.Allow[*model.Node], AuthorizeRunbook: apitest.Allow[*model.Runbook]})
	e.h = apitest.New(t, api.Deps{Logger: log, Handlers: handlers, Config: cfg})

	const refused = "'bios' boot mode is not allowed for provisioning operation."
	r := e.do("POST", "/v1/nodes", "1.115", `{"driver": "fake-hardware", "name": "old", "properties": {"capabilities": "secure_boot:false, boot_mode:BIOS"}}`)
	if r.status != http.StatusBadRequest || r.faultstring(t) != refused {
		t.Fatalf("create of a bios node: %d %s", r.status, r.body)
	}
	if r := e.do("GET", "/v1/nodes/old", "1.115", ""); r.status != http.StatusNotFound {
		t.Errorf("refused node exists: %d", r.status)
	}
	n := e.create(`{"driver": "fake-hardware", "properties": {"capabilities": "boot_mode:uefi"}}`)
	id := n["uuid"].(string)
	r = e.do("PATCH", "/v1/nodes/"+id, "1.115", `[{"op": "replace", "path": "/properties/capabilities", "value": "boot_mode:bios"}]`)
	if r.status != http.StatusBadRequest || r.faultstring(t) != refused {
		t.Fatalf("patch to bios: %d %s", r.status, r.body)
	}
	got := e.do("GET", "/v1/nodes/"+id, "1.115", "").json(t)
	if caps := got["properties"].(map[string]any)["capabilities"]; caps != "boot_mode:uefi" {
		t.Errorf("capabilities after a refused patch: %v", caps)
	}
	if r := e.do("PATCH", "/v1/nodes/"+id, "1.115", `[{"op": "add", "path": "/properties/capabilities", "value": "boot_mode:uefi,secure_boot:true"}]`); r.status != http.StatusOK {
		t.Errorf("patch to uefi: %d %s", r.status, r.body)
	}
}
