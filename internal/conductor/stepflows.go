package conductor

import (
	"context"
	"fmt"
	"strings"

	"github.com/openkeel/ironic/internal/conductor/task"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/secrets"
)

// Step flow milestones (upstream conductor utils.log_step_flow_history):
// the start and the end of a cleaning, deployment or servicing, with the
// steps it runs, go to node history ([conductor]/
// record_step_flows_in_history, on by default) and to the service log
// ([conductor]/log_step_flows_to_syslog). The event types and texts are
// upstream's, since operators read them through /v1/nodes/{id}/history
// and match on them.

// flowMilestone is the name upstream's StepFlow enum gives a flow: the
// prefix of the history event type and, with "_" as a space, how the
// texts call it.
type flowMilestone string

const (
	milestoneManualCleaning    flowMilestone = "manual_cleaning"
	milestoneAutomatedCleaning flowMilestone = "automated_cleaning"
	milestoneDeployment        flowMilestone = "deployment"
	milestoneServicing         flowMilestone = "servicing"
)

// words is the flow's name in a sentence ("automated cleaning").
func (m flowMilestone) words() string { return strings.ReplaceAll(string(m), "_", " ") }

// title is the name as Python's str.title() writes it at the start of a
// sentence ("Automated Cleaning").
func (m flowMilestone) title() string {
	w := strings.Fields(m.words())
	for i, s := range w {
		w[i] = strings.ToUpper(s[:1]) + s[1:]
	}
	return strings.Join(w, " ")
}

// flowStarted records the start of the flow with the steps it will run.
func (c *Conductor) flowStarted(ctx context.Context, t *task.Task, f *stepFlow) {
	c.recordFlowMilestone(ctx, t, f, "start", "")
}

// flowEnded records the successful end of the flow.
func (c *Conductor) flowEnded(ctx context.Context, t *task.Task, f *stepFlow) {
	c.recordFlowMilestone(ctx, t, f, "end", "")
}

// flowAborted records the end of the flow at a step that failed: an
// error event, so that, as upstream, it is also last_error until the
// flow's error handler writes its own.
func (c *Conductor) flowAborted(ctx context.Context, t *task.Task, f *stepFlow, step map[string]any) {
	name, _ := step["step"].(string)
	c.recordFlowMilestone(ctx, t, f, "end", name)
}

// recordFlowMilestone writes one milestone. The steps are those of
// driver_internal_info at the time, as upstream reads them: the end of a
// cleaning or a servicing comes after the step list was wiped and so
// lists none.
func (c *Conductor) recordFlowMilestone(ctx context.Context, t *task.Task, f *stepFlow, status, abortedStep string) {
	toHistory := c.cfg.BoolOf(config.ConductorRecordStepFlowsInHistory)
	toLog := c.cfg.BoolOf(config.ConductorLogStepFlowsToSyslog)
	if !toHistory && !toLog {
		return
	}
	m := f.milestone(t.Node)
	steps := t.Node.InternalInfo().Steps(f.stepsKey)
	list := make([]any, len(steps))
	for i, s := range steps {
		list[i] = c.maskStepArgs(s)
	}
	repr := pyRepr(list)
	var event string
	isErr := false
	switch {
	case status == "start":
		event = fmt.Sprintf("Starting %s with steps=%s", m.words(), repr)
	case abortedStep != "":
		isErr = true
		event = fmt.Sprintf("%s aborted at step '%s' with steps=%s", m.title(), abortedStep, repr)
	default:
		event = fmt.Sprintf("%s completed successfully with steps=%s", m.title(), repr)
	}
	if toLog {
		msg := fmt.Sprintf("Node %s: %s", t.Node.UUID, event)
		if isErr {
			t.Log().WarnContext(ctx, msg)
		} else {
			t.Log().InfoContext(ctx, msg)
		}
	}
	if toHistory {
		record(ctx, t, event, string(m)+"_"+status, isErr)
	}
}

// maskStepArgs is a copy of step whose args have their secrets masked
// (upstream passes them through mask_dict_password): with the API's
// masking when the conductor was given it, else the values under secret
// keys.
func (c *Conductor) maskStepArgs(step map[string]any) map[string]any {
	args, ok := step["args"].(map[string]any)
	if !ok {
		return step
	}
	out := cloneMap(step)
	if c.mask != nil {
		out["args"] = c.mask(args)
	} else {
		out["args"] = maskSecretKeys(args)
	}
	return out
}

// maskSecretKeys is a copy of m with the values under secret keys, at any
// depth, replaced.
func maskSecretKeys(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		switch sub, isMap := v.(map[string]any); {
		case isMap:
			out[k] = maskSecretKeys(sub)
		case secrets.IsSecretKey(k):
			out[k] = maskedSecret
		default:
			out[k] = v
		}
	}
	return out
}

// maskedSecret is what a masked value reads, as in the API.
const maskedSecret = "******"
