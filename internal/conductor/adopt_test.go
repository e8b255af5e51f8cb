package conductor_test

import (
	"context"
	"testing"

	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store/sqldb"
)

func TestAdopt(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		n := e.node(states.Manageable, func(n *model.Node) { n.PowerState = states.PowerOn })
		if err := e.api.DoProvisioningAction(ctx, "", n.UUID, "adopt"); err != nil {
			t.Fatal(err)
		}
		got := e.waitState(n, states.Active)
		e.expect(got, states.Active, "", "")
		if got.ConductorAffinity == nil || *got.ConductorAffinity != e.c.ID() {
			t.Fatalf("conductor_affinity %v", got.ConductorAffinity)
		}
		if err := e.api.DoProvisioningAction(ctx, "", e.node(states.Available).UUID, "adopt"); class(err) != "InvalidStateRequested" {
			t.Fatalf("adopt of an available node: %v", err)
		}
	})
}
