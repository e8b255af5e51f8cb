package conductor_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store/sqldb"
)

// Issue 23 item 5: a manual clean step with execute_on_child_nodes runs
// on the children (those of limit_child_node_execution when given), each
// under its own lock, not on the parent; a child's step that ends
// asynchronously fails the parent's cleaning unless
// permit_child_node_step_async_result.
func TestCleanStepsOnChildNodes(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		e := newEnv(t, db)
		on := func(n *model.Node) { n.PowerState = states.PowerOn }
		parent := e.node(states.Manageable, scriptedNode, on)
		childOf := func(n *model.Node) { n.ParentNode = &parent.UUID }
		c1 := e.node(states.Manageable, scriptedNode, childOf, on)
		c2 := e.node(states.Manageable, scriptedNode, childOf, on)

		steps := []map[string]any{
			{"interface": "vendor", "step": "async_step", "args": map[string]any{},
				"execute_on_child_nodes": true, "limit_child_node_execution": []any{c1.UUID}},
			{"interface": "power", "step": "power_off", "execute_on_child_nodes": true},
		}
		if err := e.api.DoNodeClean(ctx, "", parent.UUID, steps, false); err != nil {
			t.Fatal(err)
		}
		got := e.waitState(parent, states.Manageable)
		e.expect(got, states.Manageable, "", "")
		if ran := e.steps.Ran(); !reflect.DeepEqual(ran, []string{"async_step"}) {
			t.Errorf("steps ran %v, want async_step once (on %s only)", ran, c1.UUID)
		}
		for _, c := range []*model.Node{c1, c2} {
			if got := e.waitUnlocked(c); got.PowerState != states.PowerOff || got.ProvisionState != states.Manageable {
				t.Errorf("child %s: %s %s, want power off and manageable", c.UUID, got.PowerState, got.ProvisionState)
			}
		}
		if got := e.get(parent); got.PowerState != states.PowerOn {
			t.Errorf("parent powered %s by its children's step", got.PowerState)
		}

		// A child's asynchronous result fails the parent's cleaning.
		e.steps.set("async_step", states.CleanWait, nil)
		steps = steps[:1]
		if err := e.api.DoNodeClean(ctx, "", parent.UUID, steps, false); err != nil {
			t.Fatal(err)
		}
		got = e.waitState(parent, states.CleanFail)
		want := "on child node " + c1.UUID + ", step returned invalid value: clean wait"
		if got.LastError == nil || !strings.Contains(*got.LastError, want) {
			t.Errorf("last_error %q, want it to contain %q", deref(got.LastError), want)
		}
	})
}

func TestCleanStepsOnChildNodesAsyncPermitted(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		e := newEnv(t, db, withConf("conductor", "permit_child_node_step_async_result", "true"))
		parent := e.node(states.Manageable, scriptedNode)
		e.node(states.Manageable, scriptedNode, func(n *model.Node) { n.ParentNode = &parent.UUID })
		e.steps.set("async_step", states.CleanWait, nil)
		steps := []map[string]any{{"interface": "vendor", "step": "async_step", "args": map[string]any{}, "execute_on_child_nodes": true}}
		if err := e.api.DoNodeClean(ctx, "", parent.UUID, steps, false); err != nil {
			t.Fatal(err)
		}
		e.expect(e.waitState(parent, states.Manageable), states.Manageable, "", "")
	})
}
