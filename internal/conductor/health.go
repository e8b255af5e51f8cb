package conductor

import (
	"context"

	"github.com/openkeel/ironic/internal/conductor/task"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/states"
)

// healthStates are the values the 1.109 health field takes (upstream
// ironic.common.health_states).
var healthStates = []string{"OK", "Warning", "Critical"}

// nodeCacheHealth records the BMC's health rollup in the node's health
// field during the power sync (master's node_cache_health, with
// [conductor]/enable_health_monitoring). A management interface without
// health monitoring is skipped silently; a failure to read is logged and
// changes nothing; a change is saved and written to the node's history.
func (c *Conductor) nodeCacheHealth(ctx context.Context, t *task.Task) {
	if !c.cfg.BoolOf(config.ConductorEnableHealthMonitoring) {
		return
	}
	getter, ok := t.Driver.Management.(driver.NodeHealthGetter)
	if !ok {
		return
	}
	health, err := getter.GetNodeHealth(ctx, t.DriverTask())
	switch {
	case errs.Is(err, errs.ClassUnsupportedDriverExtension):
		return
	case err != nil:
		t.Log().WarnContext(ctx, "could not retrieve health status", "error", err)
		return
	case health != "" && !containsStr(healthStates, health):
		t.Log().WarnContext(ctx, "node reports an invalid health value, ignoring", "health", health)
		return
	}
	old := ""
	if t.Node.Health != nil {
		old = *t.Node.Health
	}
	if health == old {
		return
	}
	if err := upgradeFor(ctx, t, "caching health status"); err != nil {
		t.Log().WarnContext(ctx, "could not lock the node to cache its health", "error", err)
		return
	}
	n := t.Node
	n.Health = nil
	if health != "" {
		n.Health = &health
	}
	record(ctx, t, "Node health status changed: health='"+pyNone(health)+"' (previously '"+pyNone(old)+"')", states.HistoryMonitoring, false)
	if err := t.Save(ctx); err != nil {
		t.Log().ErrorContext(ctx, "saving health", "error", err)
		return
	}
	if health == "Warning" || health == "Critical" {
		t.Log().WarnContext(ctx, "node health status indicates a problem", "health", health)
	}
}
