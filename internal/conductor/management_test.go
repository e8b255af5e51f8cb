package conductor_test

import (
	"context"
	"testing"

	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store/sqldb"
)

// The fake RAID interface checks a target with the base interface's
// schema; a refused one leaves the stored target alone, an empty one
// unsets it unchecked.
func TestSetTargetRAIDConfigValidatesWithTheSchema(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		n := e.node(states.Manageable)
		good := map[string]any{"logical_disks": []any{
			map[string]any{"size_gb": 100.0, "raid_level": "1", "is_root_volume": true},
			map[string]any{"size_gb": "MAX", "raid_level": "0", "disk_type": "ssd"},
		}}
		if err := e.api.SetTargetRAIDConfig(ctx, "", n.UUID, good); err != nil {
			t.Fatalf("valid target: %v", err)
		}
		bad := map[string]any{"logical_disks": []any{map[string]any{"size_gb": 100.0, "raid_level": "7"}}}
		err := e.api.SetTargetRAIDConfig(ctx, "", n.UUID, bad)
		want := "RAID config validation error: '7' is not one of ['JBOD', '0', '1', '2', '5', '6', '1+0', '5+0', '6+0']"
		if class(err) != "InvalidParameterValue" || err.Error() != want {
			t.Fatalf("level 7: %v", err)
		}
		if got := e.get(n); len(got.TargetRAIDConfig["logical_disks"].([]any)) != 2 {
			t.Fatalf("target after a refused one: %v", got.TargetRAIDConfig)
		}
		if err := e.api.SetTargetRAIDConfig(ctx, "", n.UUID, map[string]any{}); err != nil {
			t.Fatalf("unset: %v", err)
		}
		if got := e.get(n); len(got.TargetRAIDConfig) != 0 {
			t.Fatalf("target after unset: %v", got.TargetRAIDConfig)
		}
	})
}
