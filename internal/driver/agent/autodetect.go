package agent

import (
	"context"
	"fmt"
	"slices"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
)

// AutodetectOptions configure the autodetect deploy interface.
type AutodetectOptions struct {
	// Candidates is [DEFAULT]/autodetect_deploy_interfaces, in order of
	// preference; the last one is the fallback.
	Candidates []string
	// Enabled is [DEFAULT]/enabled_deploy_interfaces: every candidate
	// must be in it.
	Enabled []string
}

// Autodetect is upstream AutodetectDeploy: it deploys nothing itself. At
// the start of a deployment it switches the node to the first candidate
// deploy interface that supports the node's image (driver.DeploySupporter,
// true when not implemented), or to the last candidate.
type Autodetect struct {
	reg  *driver.Registry
	opts AutodetectOptions
}

var (
	_ driver.DeployInterface   = (*Autodetect)(nil)
	_ driver.InterfaceSwitcher = (*Autodetect)(nil)
)

// NewAutodetect returns the autodetect deploy interface; candidates are
// looked up in reg when a node switches.
func NewAutodetect(reg *driver.Registry, o AutodetectOptions) *Autodetect {
	return &Autodetect{reg: reg, opts: o}
}

// RegisterAutodetect adds the autodetect deploy interface to r.
func RegisterAutodetect(r *driver.Registry, o AutodetectOptions) error {
	if err := r.Register(driver.KindDeploy, "autodetect", NewAutodetect(r, o)); err != nil {
		return fmt.Errorf("register autodetect deploy: %w", err)
	}
	return nil
}

// CheckConfig is upstream's constructor check, for callers that load the
// interface: every candidate must be enabled.
func (a *Autodetect) CheckConfig() error {
	for _, name := range a.opts.Candidates {
		if err := a.checkEnabled(name); err != nil {
			return err
		}
	}
	return nil
}

func (a *Autodetect) checkEnabled(name string) error {
	if !slices.Contains(a.opts.Enabled, name) {
		return driver.InvalidParameterValue("Deploy interface '%s' is configured in autodetect_deploy_interfaces but is not in enabled_deploy_interfaces. "+
			"Please add '%s' to enabled_deploy_interfaces or remove it from autodetect_deploy_interfaces.", name, name)
	}
	return nil
}

// Properties: none of its own.
func (a *Autodetect) Properties() map[string]string { return map[string]string{} }

// Steps declares the deploy step, which only fails: a deployment always
// switches away first.
func (a *Autodetect) Steps() []driver.StepSpec {
	return []driver.StepSpec{driver.DeployStep("deploy", 100)}
}

// StepHandlers maps the deploy step.
func (a *Autodetect) StepHandlers() map[string]driver.StepFunc {
	return map[string]driver.StepFunc{
		"deploy": func(ctx context.Context, t *driver.Task, _ map[string]any) (string, error) { return a.Deploy(ctx, t) },
	}
}

func notSwitched() error {
	return errs.NewMessage(errs.ClassInstanceDeployFailure, "Autodetect deploy interface did not switch to a concrete interface during "+
		"switch_interface(). This indicates a bug or misconfiguration.")
}

// Validate validates the interface the node would switch to.
func (a *Autodetect) Validate(ctx context.Context, task *driver.Task) error {
	impl, _, _, err := a.detect(ctx, task)
	if err != nil {
		return err
	}
	return impl.Validate(ctx, task)
}

// Deploy fails: the switch did not happen.
func (a *Autodetect) Deploy(context.Context, *driver.Task) (string, error) { return "", notSwitched() }

// Prepare fails for the same reason.
func (a *Autodetect) Prepare(context.Context, *driver.Task) error { return notSwitched() }

// TearDown has nothing to undo.
func (a *Autodetect) TearDown(context.Context, *driver.Task) (string, error) { return "", nil }

// CleanUp has nothing to clean.
func (a *Autodetect) CleanUp(context.Context, *driver.Task) error { return nil }

// TakeOver has nothing to take over.
func (a *Autodetect) TakeOver(context.Context, *driver.Task) error { return nil }

// detect is upstream _create_switchable_interface: the first candidate
// supporting the deployment, else the last one (supported false).
func (a *Autodetect) detect(ctx context.Context, task *driver.Task) (driver.DeployInterface, string, bool, error) {
	ht, ok := a.reg.HardwareType(task.Driver.HardwareType)
	if !ok {
		return nil, "", false, driver.ErrDriverNotFound(task.Driver.HardwareType)
	}
	var (
		impl      driver.DeployInterface
		name      string
		supported bool
	)
	for _, name = range a.opts.Candidates {
		if err := a.checkEnabled(name); err != nil {
			return nil, "", false, err
		}
		if err := driver.GetInterfaceName(ht, driver.KindDeploy, name, a.opts.Enabled); err != nil {
			return nil, "", false, err
		}
		found, ok := a.reg.Implementation(driver.KindDeploy, name)
		if !ok {
			return nil, "", false, driver.ErrInterfaceNotFoundInEntrypoint(name, driver.KindDeploy, a.reg.Names(driver.KindDeploy))
		}
		impl, _ = found.(driver.DeployInterface)
		supported = true
		if s, ok := found.(driver.DeploySupporter); ok {
			supported = s.SupportsDeploy(ctx, task)
		}
		if supported {
			break
		}
	}
	if impl == nil {
		return nil, "", false, driver.InvalidParameterValue("No valid deploy interfaces found in autodetect_deploy_interfaces configuration.")
	}
	return impl, name, supported, nil
}

// SwitchInterface puts the detected interface in the node's
// deploy_interface and in task.Driver, remembering autodetect in
// driver_internal_info["original_deploy_interface"] for the restore.
func (a *Autodetect) SwitchInterface(ctx context.Context, task *driver.Task) error {
	impl, name, supported, err := a.detect(ctx, task)
	if err != nil {
		return err
	}
	log := task.Logger()
	if !supported {
		log.WarnContext(ctx, "no deploy interface in autodetect_deploy_interfaces supports this node/image, using the last one", "interface", name)
	}
	log.InfoContext(ctx, "autodetect switching deploy interface", "node", task.Node.UUID, "interface", name)
	n := task.Node
	n.InternalInfo().Set(model.DIIOriginalDeployInterface, n.DeployInterface)
	n.DeployInterface = name
	task.Driver.Deploy = impl
	if task.Driver.Names != nil {
		task.Driver.Names[driver.KindDeploy] = name
	}
	return nil
}

// RestoreInterface is AgentBaseMixin.restore_interface: the deploy
// interface recorded by a switch comes back.
func (b *base) RestoreInterface(ctx context.Context, task *driver.Task) error {
	n := task.Node
	orig, _ := n.InternalInfo().Get(model.DIIOriginalDeployInterface).(string)
	if orig == "" {
		return nil
	}
	task.Logger().InfoContext(ctx, "restoring deploy interface", "node", n.UUID, "from", n.DeployInterface, "to", orig)
	n.DeployInterface = orig
	n.InternalInfo().Delete(model.DIIOriginalDeployInterface)
	return nil
}
