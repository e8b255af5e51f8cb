package conductor_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store/sqldb"
)

// runbook stores a runbook of the scripted interface's needs_args step.
func (e *env) runbook(name string, traits ...string) *model.Runbook {
	e.t.Helper()
	ctx := context.Background()
	rb, err := e.st.CreateRunbook(ctx, &model.Runbook{UUID: uuid.NewString(), Name: name, Steps: []model.RunbookStep{
		{Interface: "vendor", Step: "needs_args", Args: map[string]any{"size": 10}, Order: 1},
	}})
	if err != nil {
		e.t.Fatalf("create runbook: %v", err)
	}
	if len(traits) > 0 {
		if _, err := e.st.SetRunbookTraits(ctx, rb.ID, traits, "1.0"); err != nil {
			e.t.Fatalf("runbook traits: %v", err)
		}
	}
	return rb
}

// Issue 23 item 3: automated cleaning runs the runbook configured for the
// node's resource class (automated_cleaning_step_source = hybrid) instead
// of the drivers' prioritised steps, on provide and after tear down; a
// node of another class gets the prioritised steps.
func TestAutomatedCleaningByRunbook(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		e := newEnv(t, db, withConf("conductor", "automated_cleaning_step_source", "hybrid"),
			withConf("conductor", "automated_cleaning_runbook_by_resource_class", "gold:CUSTOM_WIPE"))
		e.runbook("CUSTOM_WIPE", "CUSTOM_WIPE")
		close(gate(e))
		gold := "gold"
		n := e.node(states.Manageable, scriptedNode, func(n *model.Node) { n.ResourceClass = &gold })
		// automated_cleaning_runbook_validate_traits is on by default.
		if _, err := e.st.AddNodeTrait(ctx, n.ID, "CUSTOM_WIPE", "1.0"); err != nil {
			t.Fatal(err)
		}
		if err := e.api.DoProvisioningAction(ctx, "", n.UUID, "provide"); err != nil {
			t.Fatal(err)
		}
		e.expect(e.waitState(n, states.Available), states.Available, "", "")
		if ran := e.steps.Ran(); !reflect.DeepEqual(ran, []string{"needs_args"}) {
			t.Fatalf("provide ran %v, want the runbook's needs_args only", ran)
		}
		// Tear down cleans with the runbook too.
		if err := e.api.DoNodeDeploy(ctx, "", n.UUID, false, nil, nil); err != nil {
			t.Fatal(err)
		}
		e.waitState(n, states.Active)
		if err := e.api.DoNodeTearDown(ctx, "", n.UUID); err != nil {
			t.Fatal(err)
		}
		e.expect(e.waitState(n, states.Available), states.Available, "", "")
		// deploy_wait is the scripted interface's deploy step.
		if ran := e.steps.Ran(); !reflect.DeepEqual(ran, []string{"needs_args", "deploy_wait", "needs_args"}) {
			t.Fatalf("deploy and tear down ran %v", ran)
		}
		// Another resource class: the prioritised steps (block).
		m := e.node(states.Manageable, scriptedNode)
		if err := e.api.DoProvisioningAction(ctx, "", m.UUID, "provide"); err != nil {
			t.Fatal(err)
		}
		e.waitState(m, states.Available)
		if ran := e.steps.Ran(); !reflect.DeepEqual(ran, []string{"needs_args", "deploy_wait", "needs_args", "block"}) {
			t.Fatalf("node without a runbook ran %v", ran)
		}
	})
}

// With the step source "runbook" a node without a runbook is refused, and
// with automated_cleaning_runbook_validate_traits a runbook none of whose
// traits the node has is refused, with master's NodeCleaningFailure.
func TestAutomatedCleaningRunbookRefusals(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		e := newEnv(t, db, withConf("conductor", "automated_cleaning_step_source", "runbook"))
		n := e.node(states.Manageable, scriptedNode)
		err := e.api.DoProvisioningAction(ctx, "", n.UUID, "provide")
		want := "Failed to clean node " + n.UUID + ": Unable to perform cleaning for node " + n.UUID + ": configuration requires runbook for automated cleaning and none was configured."
		if ee, ok := errs.As(err); !ok || ee.Class != errs.ClassNodeCleaningFailure || ee.Message != want {
			t.Fatalf("provide without a runbook: %v", err)
		}
		if got := e.get(n); got.ProvisionState != states.Manageable {
			t.Errorf("refused provide moved the node to %s", got.ProvisionState)
		}
	})
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		e := newEnv(t, db, withConf("conductor", "automated_cleaning_step_source", "hybrid"),
			withConf("conductor", "automated_cleaning_runbook_from_node", "true"),
			withConf("conductor", "automated_cleaning_runbook_validate_traits", "true"))
		e.runbook("CUSTOM_WIPE", "CUSTOM_GPU")
		n := e.node(states.Manageable, scriptedNode, func(n *model.Node) {
			n.DriverInfo = map[string]any{"cleaning_runbook": "CUSTOM_WIPE"}
		})
		err := e.api.DoProvisioningAction(ctx, "", n.UUID, "provide")
		if ee, ok := errs.As(err); !ok || ee.Class != errs.ClassNodeCleaningFailure ||
			!strings.Contains(ee.Message, "None of the runbook's traits ['CUSTOM_GPU'] match a node trait.") {
			t.Fatalf("provide with a runbook of other traits: %v", err)
		}
		if _, err := e.st.AddNodeTrait(ctx, n.ID, "CUSTOM_GPU", "1.0"); err != nil {
			t.Fatal(err)
		}
		close(gate(e))
		if err := e.api.DoProvisioningAction(ctx, "", n.UUID, "provide"); err != nil {
			t.Fatalf("provide with a matching trait: %v", err)
		}
		e.waitState(n, states.Available)
		if ran := e.steps.Ran(); !reflect.DeepEqual(ran, []string{"needs_args"}) {
			t.Fatalf("ran %v", ran)
		}
	})
}
