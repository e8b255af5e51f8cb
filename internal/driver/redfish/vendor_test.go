package redfish

import (
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/errs"
)

func newVendorEnv(t *testing.T) (*env, *Vendor) {
	t.Helper()
	e := newMgmtEnv(t)
	return e, &Vendor{core: e.core}
}

func TestVendorEjectVMedia(t *testing.T) {
	e, v := newVendorEnv(t)
	must(t, e.mgmt.AttachVirtualMedia(e.ctx, e.task, "cdrom", "http://127.0.0.1:9/boot.iso"))
	must(t, e.mgmt.AttachVirtualMedia(e.ctx, e.task, "floppy", "http://127.0.0.1:9/cfg.img"))
	route := v.VendorRoutes()["eject_vmedia"]
	if !route.Async || !route.RequireExclusiveLock || len(route.HTTPMethods) != 1 || route.HTTPMethods[0] != "POST" {
		t.Fatalf("route %+v", route)
	}
	inserted := func() map[string]bool {
		list, err := e.mgmt.GetVirtualMedia(e.ctx, e.task)
		must(t, err)
		out := map[string]bool{}
		for _, d := range list {
			if d["inserted"] == true {
				out[d["media_types"].([]string)[0]] = true
			}
		}
		return out
	}
	if got := inserted(); len(got) != 2 {
		t.Fatalf("inserted %v", got)
	}
	// Upstream checks the device type against every virtual media device:
	// the emulator's CD drive takes no floppy, so "floppy" is refused.
	wantClass(t, v.Validate(e.ctx, e.task, "eject_vmedia", map[string]any{"boot_device": "floppy"}),
		"InvalidParameterValue", "Boot device floppy is not a valid value ")
	must(t, v.Validate(e.ctx, e.task, "eject_vmedia", map[string]any{}))
	_, err := route.Func(e.ctx, e.task, "POST", map[string]any{"boot_device": "cd"})
	must(t, err)
	if got := inserted(); got["CD"] || !got["Floppy"] {
		t.Fatalf("after ejecting cd: %v", got)
	}
	_, err = route.Func(e.ctx, e.task, "POST", map[string]any{})
	must(t, err)
	if got := inserted(); len(got) != 0 {
		t.Fatalf("after ejecting all: %v", got)
	}
}

func TestVendorSubscriptions(t *testing.T) {
	e, v := newVendorEnv(t)
	routes := v.VendorRoutes()
	args := map[string]any{"Destination": "https://127.0.0.1:9/events", "Context": "ironic",
		"HttpHeaders": []any{map[string]any{"X-Auth": "secret"}}}
	must(t, v.Validate(e.ctx, e.task, "create_subscription", args))
	wantClass(t, v.Validate(e.ctx, e.task, "create_subscription", map[string]any{"Destination": "not a uri"}),
		"InvalidParameterValue", "Destination 'not a uri' is not a valid URI")
	err := v.Validate(e.ctx, e.task, "create_subscription", map[string]any{"Destination": "https://127.0.0.1:9/e",
		"EventTypes": []any{"Bogus"}})
	wantClass(t, err, "InvalidParameterValue", "EventTypes ['Bogus'] is not a valid value, allowed values "+
		"{'Alert', 'ResourceAdded', 'ResourceRemoved', 'ResourceUpdated', 'StatusChange'}")
	wantClass(t, v.Validate(e.ctx, e.task, "delete_subscription", map[string]any{}), "InvalidParameterValue", "id can't be None")

	out, err := routes["create_subscription"].Func(e.ctx, e.task, "POST", args)
	must(t, err)
	sub := out.(map[string]any)
	if sub["Destination"] != "https://127.0.0.1:9/events" || sub["Context"] != "ironic" || sub["Protocol"] != "Redfish" ||
		len(sub) != 5 {
		t.Fatalf("created %v", sub)
	}
	id := sub["Id"].(string)
	if subs := e.bmc.Subscriptions(); len(subs) != 1 || subs[0].EventTypes[0] != "Alert" {
		t.Fatalf("subscriptions on the BMC %+v", subs)
	}
	out, err = routes["get_subscription"].Func(e.ctx, e.task, "GET", map[string]any{"id": id})
	must(t, err)
	if out.(map[string]any)["Id"] != id {
		t.Fatalf("get %v", out)
	}
	out, err = routes["get_all_subscriptions"].Func(e.ctx, e.task, "GET", nil)
	must(t, err)
	if out.(map[string]any)["Members@odata.count"] != float64(1) {
		t.Fatalf("all %v", out)
	}
	_, err = routes["delete_subscription"].Func(e.ctx, e.task, "DELETE", map[string]any{"id": id})
	must(t, err)
	if len(e.bmc.Subscriptions()) != 0 {
		t.Fatal("subscription not deleted")
	}
	_, err = routes["delete_subscription"].Func(e.ctx, e.task, "DELETE", map[string]any{"id": id})
	wantClass(t, err, "RedfishError", "")
	if re, _ := errs.As(err); re.Code != 404 || !strings.Contains(re.Message, "Redfish delete_subscription failed for subscription "+id) {
		t.Fatalf("deleting a missing subscription: %d %q", re.Code, re.Message)
	}
}
