package agent

import (
	"context"
	"fmt"

	"github.com/openkeel/ironic/internal/agentclient"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/pyfmt"
)

// PostStepHook runs after an in-band step of its interface succeeded on
// the agent, with the agent's command (upstream's post_clean_step_hook
// and post_deploy_step_hook). Name is the upstream function's, which the
// failure message quotes.
type PostStepHook struct {
	Name string
	Fn   func(ctx context.Context, task *driver.Task, cmd *agentclient.CommandResult) error
}

// PostStepHooker is implemented by interfaces with post step hooks, by
// step name. Upstream keeps one registry per step kind for clean and
// deploy steps only; an in-band step of an interface only runs when the
// node uses that interface's agent implementation, so asking the node's
// interface finds the same hook.
type PostStepHooker interface {
	PostStepHooks(kind driver.StepKind) map[string]PostStepHook
}

// runPostStepHook runs the hook of the finished step cur, if any. Its
// failure fails the step, worded as upstream's process_next_step.
func runPostStepHook(ctx context.Context, task *driver.Task, kind driver.StepKind, cur map[string]any, cmd *agentclient.CommandResult) error {
	ifaceName, _ := cur["interface"].(string)
	name, _ := cur["step"].(string)
	h, ok := task.Driver.Get(driver.Kind(ifaceName)).(PostStepHooker)
	if !ok {
		return nil
	}
	hook, ok := h.PostStepHooks(kind)[name]
	if !ok {
		return nil
	}
	task.Logger().DebugContext(ctx, "executing post step hook", "node", task.Node.UUID, "kind", kind, "hook", hook.Name, "step", ifaceName+"."+name)
	if err := hook.Fn(ctx, task, cmd); err != nil {
		return fmt.Errorf("For node %s, post %s step hook %s failed for %s step %s.%s: %w",
			task.Node.UUID, kind, hook.Name, kind, pyfmt.ReprJSON(cur), pyClass(err), err)
	}
	return nil
}

// pyClass names the Python exception class an error stands for.
func pyClass(err error) string {
	if e, ok := errs.As(err); ok {
		return string(e.Class)
	}
	if _, ok := err.(valueError); ok {
		return "ValueError"
	}
	return "Exception"
}
