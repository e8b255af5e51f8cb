package conductor_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store/sqldb"
)

func TestCreateNodeFillsDefaultInterfaces(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		n, err := e.api.CreateNode(ctx, "", &model.Node{Driver: "fake-hardware", ProvisionState: states.Enroll, PowerInterface: "flaky"})
		if err != nil {
			t.Fatal(err)
		}
		if n.PowerInterface != "flaky" || n.DeployInterface != "fake" || n.NetworkInterface != "noop" || n.VendorInterface != "fake" {
			t.Fatalf("interfaces %q %q %q %q", n.PowerInterface, n.DeployInterface, n.NetworkInterface, n.VendorInterface)
		}
		if _, err := e.api.CreateNode(ctx, "", &model.Node{Driver: "ipmi"}); class(err) != "DriverNotFound" {
			t.Fatalf("disabled hardware type: %v", err)
		}
		if _, err := e.api.CreateNode(ctx, "", &model.Node{Driver: "fake-hardware", BootInterface: "pxe"}); class(err) != "InterfaceNotFoundInEntrypoint" {
			t.Fatalf("disabled interface: %v", err)
		}
	})
}

func TestUpdateNodeRules(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		reason := "broken"
		fault := "power failure"
		n := e.node(states.Active, func(n *model.Node) { n.Maintenance = true; n.MaintenanceReason = &reason; n.Fault = &fault })

		// Provision and power fields are the conductor's: an update that
		// edits them is refused and writes nothing.
		_, err := e.update(n, false, func(u *model.Node) {
			u.Maintenance = false
			u.ProvisionState = states.Available
			u.PowerState = states.PowerOn
		})
		if class(err) != "InvalidParameterValue" || !e.get(n).Maintenance {
			t.Fatalf("provision state edit: %v", err)
		}
		// Leaving maintenance clears the reason and the fault.
		got, err := e.update(n, false, func(u *model.Node) { u.Maintenance = false })
		if err != nil {
			t.Fatal(err)
		}
		if got.MaintenanceReason != nil || got.Fault != nil || got.ProvisionState != states.Active || got.PowerState != states.PowerOff {
			t.Fatalf("updated node %+v", got)
		}

		_, err = e.update(n, false, func(u *model.Node) { u.DeployInterface = "fake"; u.PowerInterface = "flaky" })
		want := "Node " + n.UUID + " can not have power_interface updated unless it is in one of allowed (enroll, inspecting, inspect wait, manageable, available) states or in maintenance mode. Current state is 'active'."
		if class(err) != "InvalidState" || err.Error() != want {
			t.Fatalf("interface change in active: %v", err)
		}

		inst := "0b0a1b1c-0000-4000-8000-000000000001"
		cur := e.get(n)
		cur.InstanceUUID = &inst
		if _, err := e.st.UpdateNode(ctx, cur, "instance_uuid"); err != nil {
			t.Fatal(err)
		}
		other := "0b0a1b1c-0000-4000-8000-000000000002"
		if _, err := e.update(n, false, func(u *model.Node) { u.InstanceUUID = &other }); class(err) != "NodeAssociated" {
			t.Fatalf("instance_uuid overwrite: %v", err)
		}

		got, err = e.update(n, false, func(u *model.Node) { u.Protected = true })
		if err != nil || !got.Protected {
			t.Fatalf("protect active node: %v", err)
		}
		m := e.node(states.Manageable)
		before, _ := json.Marshal(e.get(m))
		if _, err := e.update(m, false, func(u *model.Node) { u.Protected = true }); class(err) != "InvalidState" {
			t.Fatalf("protect manageable node: %v", err)
		}
		// Refused before the lock, as upstream does: not even the lock's
		// write (updated_at) happened.
		if after, _ := json.Marshal(e.get(m)); string(after) != string(before) {
			t.Fatalf("a refused update changed the node:\n%s\n%s", before, after)
		}
		r := "why"
		if _, err := e.update(m, false, func(u *model.Node) { u.ProtectedReason = &r }); class(err) != "InvalidParameterValue" ||
			err.Error() != "The protected_reason field can only be set when protected is True" {
			t.Fatalf("protected_reason alone: %v", err)
		}
		av := e.node(states.Available)
		if _, err := e.update(av, false, func(u *model.Node) { u.Retired = true }); class(err) != "InvalidState" {
			t.Fatalf("retire available node: %v", err)
		}

		// Changing the driver with reset_interfaces recomputes them.
		got, err = e.update(m, false, func(u *model.Node) { u.PowerInterface = "flaky" })
		if err != nil || got.PowerInterface != "flaky" {
			t.Fatalf("set power interface: %v", err)
		}
		got, err = e.update(m, true, func(u *model.Node) { u.Driver = "fake-hardware"; u.Extra = map[string]any{"k": "v"} })
		if err != nil || got.PowerInterface != "flaky" || got.Extra["k"] != "v" {
			t.Fatalf("same driver: %v %q", err, got.PowerInterface)
		}
	})
}

func TestDestroyNodeRules(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db, withConf("conductor", "allow_deleting_available_nodes", "false"))
		ctx := context.Background()
		a := e.node(states.Available)
		err := e.api.DestroyNode(ctx, "", a.UUID)
		want := `Can not delete node "` + a.UUID + `" while it is in provision state "available". Valid provision states to perform deletion are: "('manageable', 'enroll', 'adopt failed')", or set the node into maintenance mode`
		if class(err) != "InvalidState" || err.Error() != want {
			t.Fatalf("delete available: %v", err)
		}
		p := e.node(states.Manageable, func(n *model.Node) { n.Protected = true })
		if err := e.api.DestroyNode(ctx, "", p.UUID); class(err) != "NodeProtected" {
			t.Fatalf("delete protected: %v", err)
		}
		inst := "0b0a1b1c-0000-4000-8000-000000000003"
		i := e.node(states.Manageable, func(n *model.Node) { n.InstanceUUID = &inst })
		if err := e.api.DestroyNode(ctx, "", i.UUID); class(err) != "NodeAssociated" {
			t.Fatalf("delete associated: %v", err)
		}
		mt := e.node(states.Active, func(n *model.Node) { n.Maintenance = true })
		if err := e.api.DestroyNode(ctx, "", mt.UUID); err != nil {
			t.Fatalf("delete active node in maintenance: %v", err)
		}
		m := e.node(states.Manageable, func(n *model.Node) { n.ConsoleEnabled = true })
		if err := e.api.DestroyNode(ctx, "", m.UUID); err != nil {
			t.Fatal(err)
		}
		if _, err := e.st.GetNodeByID(ctx, m.ID); err == nil {
			t.Fatal("node not deleted")
		}
		if err := e.api.DestroyNode(ctx, "", m.UUID); class(err) != "NodeNotFound" {
			t.Fatalf("delete twice: %v", err)
		}
	})
}

func TestValidateDriverInterfaces(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		n := e.node(states.Manageable, func(n *model.Node) {
			n.RescueInterface = "no-rescue"
			n.InstanceInfo = map[string]any{"traits": []any{"CUSTOM_GPU"}}
		})
		got, err := e.api.ValidateDriverInterfaces(context.Background(), "", n.UUID)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 12 {
			t.Fatalf("%d interfaces validated, want the 12 non-vendor ones: %v", len(got), got)
		}
		if _, ok := got["vendor"]; ok {
			t.Fatal("vendor validated")
		}
		if r := got["power"]; r.Result == nil || !*r.Result || r.Reason != "" {
			t.Fatalf("power %+v", r)
		}
		if r := got["rescue"]; r.Result == nil || *r.Result || r.Reason != "Driver fake-hardware does not support rescue (disabled or not implemented)." {
			t.Fatalf("rescue %+v", r)
		}
		if r := got["deploy"]; r.Result == nil || *r.Result || r.Reason != "Cannot specify instance traits that are not also set on the node. Node "+n.UUID+" is missing traits CUSTOM_GPU" {
			t.Fatalf("deploy %+v", r)
		}
	})
}

func TestNodeTraits(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		n := e.node(states.Manageable)
		id := fmtID(n)
		if err := e.api.AddNodeTraits(ctx, "", id, []string{"CUSTOM_A", "CUSTOM_B"}, false); err != nil {
			t.Fatal(err)
		}
		if err := e.api.AddNodeTraits(ctx, "", id, []string{"CUSTOM_C"}, true); err != nil {
			t.Fatal(err)
		}
		if got := e.get(n).Traits; len(got) != 1 || got[0] != "CUSTOM_C" {
			t.Fatalf("traits after replace %v", got)
		}
		err := e.api.RemoveNodeTraits(ctx, "", id, []string{"CUSTOM_A"})
		// Upstream's NodeTraitNotFound names the node by its id.
		if class(err) != "NodeTraitNotFound" || err.Error() != "Node "+id+" doesn't have a trait 'CUSTOM_A'" {
			t.Fatalf("remove missing trait: %v", err)
		}
		if err := e.api.RemoveNodeTraits(ctx, "", id, nil); err != nil {
			t.Fatal(err)
		}
		if got := e.get(n).Traits; len(got) != 0 {
			t.Fatalf("traits after remove all %v", got)
		}
	})
}

func fmtID(n *model.Node) string {
	return fmtInt(n.ID)
}

// update has the conductor apply to n the change that mut makes to the
// node as stored now, as the API sends a PATCH.
func (e *env) update(n *model.Node, reset bool, mut func(*model.Node)) (*model.Node, error) {
	old := e.get(n)
	cur := e.get(n)
	mut(cur)
	upd, err := model.DiffNode(old, cur, nil)
	if err != nil {
		return nil, err
	}
	return e.api.UpdateNode(context.Background(), "", n.UUID, upd, reset)
}

// TestUpdateNodeWritesOnlyItsEdits: updates built from a node read before
// other writers changed it write only what they edit, under the lock: the
// conductor's own fields and other writers' keys survive, and a
// conditional edit of a key another writer changed writes nothing.
func TestUpdateNodeWritesOnlyItsEdits(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		n := e.node(states.Manageable, func(n *model.Node) { n.Extra = map[string]any{"a": 1.0} })
		stale := e.get(n)

		// The conductor writes its own fields after the API read the node.
		cur := e.get(n)
		cur.DriverInternalInfo = map[string]any{"agent_url": "http://127.0.0.1:9999"}
		cur.LastError = model.Ptr("boom")
		cur.ConsoleEnabled = true
		if _, err := e.st.UpdateNode(ctx, cur, "driver_internal_info", "last_error", "console_enabled"); err != nil {
			t.Fatal(err)
		}
		stalePatch := func(paths [][]string, mut func(*model.Node)) error {
			after := e.get(n)
			*after = *stale
			after.Extra = map[string]any{}
			for k, v := range stale.Extra {
				after.Extra[k] = v
			}
			after.Properties = map[string]any{}
			for k, v := range stale.Properties {
				after.Properties[k] = v
			}
			mut(after)
			upd, err := model.DiffNode(stale, after, paths)
			if err != nil {
				t.Fatal(err)
			}
			_, err = e.api.UpdateNode(ctx, "", n.UUID, upd, false)
			return err
		}
		if err := stalePatch([][]string{{"extra", "e1"}}, func(u *model.Node) { u.Extra["e1"] = "x" }); err != nil {
			t.Fatal(err)
		}
		if err := stalePatch([][]string{{"extra", "e2"}, {"properties", "p1"}}, func(u *model.Node) {
			u.Extra["e2"] = "y"
			u.Properties["p1"] = 2.0
		}); err != nil {
			t.Fatal(err)
		}
		got := e.get(n)
		if got.Extra["a"] != 1.0 || got.Extra["e1"] != "x" || got.Extra["e2"] != "y" || got.Properties["p1"] != 2.0 {
			t.Fatalf("extra %v properties %v", got.Extra, got.Properties)
		}
		if got.InternalInfo().AgentURL() != "http://127.0.0.1:9999" || got.LastError == nil || *got.LastError != "boom" || !got.ConsoleEnabled {
			t.Fatalf("conductor fields reverted: dii %v last_error %v console %v", got.DriverInternalInfo, got.LastError, got.ConsoleEnabled)
		}

		// Another writer replaces extra/a; a stale removal of it fails
		// its condition and writes nothing, not even its other edits.
		if _, err := e.update(n, false, func(u *model.Node) { u.Extra["a"] = 2.0 }); err != nil {
			t.Fatal(err)
		}
		err := stalePatch([][]string{{"extra", "a"}, {"extra", "e3"}}, func(u *model.Node) {
			delete(u.Extra, "a")
			u.Extra["e3"] = "z"
		})
		if class(err) != "NodeChanged" {
			t.Fatalf("stale removal: %v", err)
		}
		got = e.get(n)
		if got.Extra["a"] != 2.0 || got.Extra["e3"] != nil {
			t.Fatalf("a failed update wrote: %v", got.Extra)
		}
	})
}
