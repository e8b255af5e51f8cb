package conductor_test

import (
	"context"
	"testing"

	"github.com/openkeel/ironic/internal/driver/fake"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store/sqldb"
)

func fakeHealth(h string) func(*model.Node) {
	return func(n *model.Node) {
		n.DriverInfo = map[string]any{fake.DriverInfoHealth: h}
		n.PowerState = states.PowerOff
	}
}

// The power sync caches the management interface's health and records a
// change in the node's history (master's node_cache_health); a driver
// without health monitoring, or the option off, leaves it alone.
func TestPowerSyncCachesHealth(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		n := e.node(states.Manageable, fakeHealth("Critical"))
		unsupported := e.node(states.Manageable, func(n *model.Node) { n.PowerState = states.PowerOff })
		e.c.SyncPowerStates(ctx)
		got := e.get(n)
		if deref(got.Health) != "Critical" || got.Reservation != nil {
			t.Fatalf("health %q", deref(got.Health))
		}
		if h := e.history(got); len(h) != 1 || h[0] != "INFO|monitoring|Node health status changed: health='Critical' (previously 'None')|manageable" {
			t.Errorf("history %v", h)
		}
		if got := e.get(unsupported); got.Health != nil {
			t.Errorf("unsupported driver: health %q", deref(got.Health))
		}
		// Unchanged: nothing written.
		e.c.SyncPowerStates(ctx)
		if h := e.history(e.get(n)); len(h) != 1 {
			t.Errorf("history after an unchanged pass %v", h)
		}
	})
}

func TestHealthMonitoringDisabled(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db, withConf("conductor", "enable_health_monitoring", "false"))
		n := e.node(states.Manageable, fakeHealth("Warning"))
		e.c.SyncPowerStates(context.Background())
		if got := e.get(n); got.Health != nil {
			t.Fatalf("health %q with monitoring off", deref(got.Health))
		}
	})
}
