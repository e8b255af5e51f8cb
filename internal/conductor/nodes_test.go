package conductor_test

import (
	"context"
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

		// Leaving maintenance clears the reason and the fault; provision
		// and power fields sent by the caller are not taken.
		upd := e.get(n)
		upd.Maintenance = false
		upd.ProvisionState = states.Available
		upd.PowerState = states.PowerOn
		got, err := e.api.UpdateNode(ctx, "", upd, false)
		if err != nil {
			t.Fatal(err)
		}
		if got.MaintenanceReason != nil || got.Fault != nil || got.ProvisionState != states.Active || got.PowerState != states.PowerOff {
			t.Fatalf("updated node %+v", got)
		}

		upd = e.get(n)
		upd.DeployInterface = "fake"
		upd.PowerInterface = "flaky"
		_, err = e.api.UpdateNode(ctx, "", upd, false)
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
		upd = e.get(n)
		upd.InstanceUUID = &other
		if _, err := e.api.UpdateNode(ctx, "", upd, false); class(err) != "NodeAssociated" {
			t.Fatalf("instance_uuid overwrite: %v", err)
		}

		upd = e.get(n)
		upd.Protected = true
		got, err = e.api.UpdateNode(ctx, "", upd, false)
		if err != nil || !got.Protected {
			t.Fatalf("protect active node: %v", err)
		}
		m := e.node(states.Manageable)
		upd = e.get(m)
		upd.Protected = true
		if _, err := e.api.UpdateNode(ctx, "", upd, false); class(err) != "InvalidState" {
			t.Fatalf("protect manageable node: %v", err)
		}
		upd = e.get(m)
		r := "why"
		upd.ProtectedReason = &r
		if _, err := e.api.UpdateNode(ctx, "", upd, false); class(err) != "InvalidParameterValue" ||
			err.Error() != "The protected_reason field can only be set when protected is True" {
			t.Fatalf("protected_reason alone: %v", err)
		}
		av := e.node(states.Available)
		upd = e.get(av)
		upd.Retired = true
		if _, err := e.api.UpdateNode(ctx, "", upd, false); class(err) != "InvalidState" {
			t.Fatalf("retire available node: %v", err)
		}

		// Changing the driver with reset_interfaces recomputes them.
		upd = e.get(m)
		upd.PowerInterface = "flaky"
		got, err = e.api.UpdateNode(ctx, "", upd, false)
		if err != nil || got.PowerInterface != "flaky" {
			t.Fatalf("set power interface: %v", err)
		}
		upd = e.get(m)
		upd.Driver = "fake-hardware"
		upd.Extra = map[string]any{"k": "v"}
		got, err = e.api.UpdateNode(ctx, "", upd, true)
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
		if class(err) != "InvalidParameterValue" || err.Error() != "Node "+id+" doesn't have a trait 'CUSTOM_A'" {
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
