package conductor_test

import (
	"context"
	"testing"

	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store/sqldb"
)

func TestInspect(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		n := e.node(states.Manageable)
		if err := e.api.InspectHardware(ctx, "", n.UUID); err != nil {
			t.Fatal(err)
		}
		got := e.waitState(n, states.Manageable)
		e.expect(got, states.Manageable, "", "")
		if got.InspectionStartedAt != nil || got.InspectionFinishedAt == nil {
			t.Fatalf("inspection timestamps: started %v finished %v", got.InspectionStartedAt, got.InspectionFinishedAt)
		}
		if err := e.api.InspectHardware(ctx, "", e.node(states.Active).UUID); class(err) != "InvalidStateRequested" {
			t.Fatalf("inspect active: %v", err)
		}
		ni := e.node(states.Manageable, func(n *model.Node) { n.InspectInterface = "no-inspect" })
		if err := e.api.InspectHardware(ctx, "", ni.UUID); class(err) != "UnsupportedDriverExtension" {
			t.Fatalf("no-inspect: %v", err)
		}
	})
}

func TestAbortInspectWaitWithoutAbortSupport(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		n := e.node(states.InspectWait, func(n *model.Node) { n.TargetProvisionState = states.Manageable })
		err := e.api.DoProvisioningAction(context.Background(), "", n.UUID, "abort")
		if class(err) != "UnsupportedDriverExtension" {
			t.Fatalf("abort with the fake inspect interface: %v", err)
		}
		if got := e.get(n); got.ProvisionState != states.InspectWait || got.Reservation != nil {
			t.Fatalf("node moved: %q", got.ProvisionState)
		}
	})
}
