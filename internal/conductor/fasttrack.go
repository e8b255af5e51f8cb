package conductor

import (
	"context"
	"time"

	"github.com/openkeel/ironic/internal/conductor/task"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/model"
)

// fastTrack is [deploy]/fast_track on the conductor's clock, the one
// heartbeats are stamped with.
func (c *Conductor) fastTrack() driver.FastTrack {
	return driver.FastTrack{
		Enabled: c.cfg.BoolOf(config.DeployFastTrack),
		Timeout: time.Duration(c.cfg.IntOf(config.DeployFastTrackTimeout)) * time.Second,
		Now:     c.clock.Now,
	}
}

// keepAgentIfFastTrack runs wipe, keeping the agent's URL, token and
// certificate when fast track applies to the node (upstream
// wipe_<flow>_internal_info skip wipe_token_and_url when fast_track_able),
// so the next operation can reach the running ramdisk.
func (c *Conductor) keepAgentIfFastTrack(ctx context.Context, t *task.Task, wipe func()) {
	n := t.Node
	if !c.fastTrack().Able(ctx, t.DriverTask()) {
		wipe()
		return
	}
	kept := map[string]any{}
	for _, k := range []string{model.DIIAgentSecretToken, model.DIIAgentSecretTokenPregenerated, model.DIIAgentURL, model.DIIAgentVerifyCA} {
		if v, ok := n.InternalInfo().Lookup(k); ok {
			kept[k] = v
		}
	}
	wipe()
	for k, v := range kept {
		n.InternalInfo().Set(k, v)
	}
}
