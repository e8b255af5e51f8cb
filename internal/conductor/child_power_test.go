package conductor_test

import (
	"context"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store/sqldb"
)

// Issue 23 item 5: powering a parent off powers off first the children
// that draw their power from it, not those with a dedicated power supply;
// powering such a child on powers its parent on first; a child another
// conductor holds fails the parent's action with ChildNodeLocked, before
// any power changes (upstream _handle_child_power_on/off).
func TestParentPowerReachesChildren(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		e := newEnv(t, db, withConf("conductor", "node_locked_retry_attempts", "0"))
		on := func(n *model.Node) { n.PowerState = states.PowerOn }
		parent := e.node(states.Active, on)
		childOf := func(n *model.Node) { n.ParentNode = &parent.UUID }
		dpu := e.node(states.Active, on, childOf)
		dedicated := e.node(states.Active, on, childOf, func(n *model.Node) {
			n.DriverInfo = map[string]any{"has_dedicated_power_supply": true}
		})

		if err := e.api.ChangeNodePowerState(ctx, "", parent.UUID, states.PowerOff, 0); err != nil {
			t.Fatal(err)
		}
		if got := e.waitUnlocked(parent); got.PowerState != states.PowerOff || got.LastError != nil {
			t.Fatalf("parent: %s, last_error %q", got.PowerState, deref(got.LastError))
		}
		if got := e.waitUnlocked(dpu); got.PowerState != states.PowerOff {
			t.Errorf("child powered by the parent is %s, want power off", got.PowerState)
		}
		if got := e.waitUnlocked(dedicated); got.PowerState != states.PowerOn {
			t.Errorf("child with a dedicated power supply is %s, want power on", got.PowerState)
		}

		// The child going on brings its parent up first.
		if err := e.api.ChangeNodePowerState(ctx, "", dpu.UUID, states.PowerOn, 0); err != nil {
			t.Fatal(err)
		}
		if got := e.waitUnlocked(dpu); got.PowerState != states.PowerOn || got.LastError != nil {
			t.Fatalf("child: %s, last_error %q", got.PowerState, deref(got.LastError))
		}
		if got := e.waitUnlocked(parent); got.PowerState != states.PowerOn {
			t.Errorf("parent of a child powered on is %s, want power on", got.PowerState)
		}

		// A child held elsewhere stops the parent's power off.
		if _, err := e.st.ReserveNode(ctx, "other-conductor", dpu.ID); err != nil {
			t.Fatal(err)
		}
		if err := e.api.ChangeNodePowerState(ctx, "", parent.UUID, states.PowerOff, 0); err != nil {
			t.Fatal(err)
		}
		got := e.waitUnlocked(parent)
		want := "Node " + parent.UUID + " child_node " + dpu.UUID + " is presently locked"
		if got.PowerState != states.PowerOn || got.LastError == nil || !strings.Contains(*got.LastError, want) {
			t.Errorf("parent with a locked child: %s, last_error %q; want power on and %q", got.PowerState, deref(got.LastError), want)
		}
		if got := e.get(dpu); got.PowerState != states.PowerOn {
			t.Errorf("locked child is %s", got.PowerState)
		}
	})
}
