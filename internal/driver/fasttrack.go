package driver

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
)

// FastTrack is upstream's [deploy]/fast_track: a ramdisk that is up and
// heartbeating is reused from one operation to the next, skipping the
// power cycle between them. It is here rather than with the agent
// interfaces because the conductor asks it too (upstream's conductor
// utils is_fast_track, fast_track_able, agent_is_alive).
type FastTrack struct {
	// Enabled is [deploy]/fast_track, which driver_info/fast_track
	// overrides per node.
	Enabled bool
	// Timeout is [deploy]/fast_track_timeout: how recent the last
	// heartbeat must be for the agent to count as alive.
	Timeout time.Duration
	// Now reads the clock heartbeats are stamped with; nil is time.Now.
	Now func() time.Time
}

// AgentHeartbeatLayout is how agent_last_heartbeat is stored (upstream's
// isoformat without a zone): the conductor writes it, AgentAlive reads it.
const AgentHeartbeatLayout = "2006-01-02T15:04:05.000000"

// EnabledFor is utils.fast_track_enabled: driver_info's fast_track, a
// strict boolean, over the configured default.
func (f FastTrack) EnabledFor(n *model.Node) (bool, error) {
	v, ok := n.DriverInfo["fast_track"]
	if !ok || v == nil {
		return f.Enabled, nil
	}
	if b, ok := v.(bool); ok {
		return b, nil
	}
	s := strings.ToLower(strings.TrimSpace(fmt.Sprint(v)))
	switch s {
	case "1", "t", "true", "on", "y", "yes":
		return true, nil
	case "0", "f", "false", "off", "n", "no":
		return false, nil
	}
	return false, InvalidParameterValue("Invalid value of fast_track: Unrecognized value '%s', acceptable values are: '0', '1', 'f', 'false', 'n', 'no', 'off', 'on', 't', 'true', 'y', 'yes'", s)
}

// Able is upstream fast_track_able: fast track is on for the node, an
// image is to be written, nothing failed last, and the node is neither
// being serviced nor updating firmware (both need their normal clean-up).
func (f FastTrack) Able(ctx context.Context, task *Task) bool {
	n := task.Node
	on, err := f.EnabledFor(n)
	if err != nil || !on {
		return false
	}
	if n.LastError != nil || states.ServicingStates.Contains(n.ProvisionState) {
		return false
	}
	if n.InternalInfo().Get(model.DIIRedfishFirmwareUpdates) != nil || n.InternalInfo().Get(model.DIIFirmwareUpdates) != nil {
		return false
	}
	return task.Driver.Storage.ShouldWriteImage(ctx, task)
}

// Active is upstream is_fast_track: fast track applies, the node is
// powered on and its agent is alive.
func (f FastTrack) Active(ctx context.Context, task *Task) bool {
	if !f.Able(ctx, task) {
		return false
	}
	st, err := task.Driver.Power.GetPowerState(ctx, task)
	if err != nil || st != states.PowerOn {
		return false
	}
	return f.AgentAlive(task.Node)
}

// AgentAlive is upstream agent_is_alive: a powered-on node inspected
// within the timeout, or an agent that still has a URL (power off drops
// it) and heartbeated within the timeout.
func (f FastTrack) AgentAlive(n *model.Node) bool {
	now := time.Now
	if f.Now != nil {
		now = f.Now
	}
	oldest := now().UTC().Add(-f.Timeout)
	if n.PowerState == states.PowerOn && n.InspectionFinishedAt != nil && !n.InspectionFinishedAt.UTC().Before(oldest) {
		return true
	}
	if n.InternalInfo().Get(model.DIIAgentURL) == nil && n.ProvisionState != states.Inspecting && n.ProvisionState != states.InspectWait {
		return false
	}
	raw, _ := n.InternalInfo().Get(model.DIIAgentLastHeartbeat).(string)
	last, err := time.Parse(AgentHeartbeatLayout, raw)
	if err != nil {
		return false
	}
	return !last.Before(oldest)
}
