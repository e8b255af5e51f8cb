// Package ansible is upstream's ansible deploy interface
// (drivers/modules/ansible/deploy.py): the agent ramdisk boots, and at
// its first heartbeat the conductor runs ansible-playbook against it over
// SSH to write the image, then shuts it down with another playbook.
// Cleaning boots the same ramdisk and runs the clean playbook once per
// clean step of the clean steps file, with the step's tags.
package ansible

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/openkeel/ironic/internal/clock"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/driver/agent"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
)

// Deploy is upstream AnsibleDeploy. It shares the agent deploys' prepare,
// clean up, tear down and network steps (CustomAgent's), and replaces the
// agent's command API with playbooks: no step runs on the agent.
type Deploy struct {
	*agent.CustomAgent
	opts   Options
	runner *Runner
	// erasePriority and eraseMetadataPriority are
	// [deploy]/erase_devices_priority and erase_devices_metadata_priority
	// (nil: the clean steps file's priority).
	erasePriority, eraseMetadataPriority *int
	fastTrack                            driver.FastTrack
}

var (
	_ driver.DeployInterface = (*Deploy)(nil)
	_ driver.StepLister      = (*Deploy)(nil)
	_ driver.StepRunner      = (*Deploy)(nil)
	_ driver.AgentStepper    = (*Deploy)(nil)
)

// New builds the ansible deploy interface.
func New(o Options, ao agent.Options) *Deploy {
	// The zero Options (tests') get upstream's defaults where one is
	// needed to run at all.
	if o.EmbeddedDir == "" {
		o.EmbeddedDir = filepath.Join(os.TempDir(), "openkeel-ansible-playbooks")
	}
	if o.DefaultDeployPlaybook == "" {
		o.DefaultDeployPlaybook = "deploy.yaml"
	}
	if o.DefaultShutdownPlaybook == "" {
		o.DefaultShutdownPlaybook = "shutdown.yaml"
	}
	if o.DefaultCleanPlaybook == "" {
		o.DefaultCleanPlaybook = "clean.yaml"
	}
	if o.DefaultCleanStepsConfig == "" {
		o.DefaultCleanStepsConfig = "clean_steps.yaml"
	}
	return &Deploy{CustomAgent: agent.NewCustomAgent(ao), opts: o, runner: NewRunner(o),
		erasePriority: ao.ErasePriority, eraseMetadataPriority: ao.EraseMetadataPriority, fastTrack: ao.FastTrack}
}

// Register adds the ansible deploy interface to r.
func Register(r *driver.Registry, o Options, ao agent.Options) error {
	if err := r.Register(driver.KindDeploy, "ansible", New(o, ao)); err != nil {
		return fmt.Errorf("register ansible deploy: %w", err)
	}
	return nil
}

// Properties are upstream's COMMON_PROPERTIES of the ansible deploy with
// the agent's vendor properties.
func (d *Deploy) Properties() map[string]string {
	return map[string]string{
		"ansible_username":           "Deploy ramdisk username for Ansible. This user must have passwordless sudo permissions. Optional.",
		"ansible_key_file":           "Full path to private SSH key file. If not specified, default keys for user running ironic-conductor process will be used. Note that for keys with password, those must be pre-loaded into ssh-agent. Optional.",
		"ansible_playbooks_path":     "Path to folder holding playbooks to use for this node. Optional. Default is set in ironic config.",
		"ansible_deploy_playbook":    "Name of the Ansible playbook file inside the \"ansible_playbooks_path\" folder which is used for node deployment. Optional.",
		"ansible_shutdown_playbook":  "Name of the Ansible playbook file inside the \"ansible_playbooks_path\" folder which is used for node shutdown. Optional.",
		"ansible_clean_playbook":     "Name of the Ansible playbook file inside the \"ansible_playbooks_path\" folder which is used for node cleaning. Optional.",
		"ansible_clean_steps_config": "Name of the file inside the \"ansible_playbooks_path\" folder with cleaning steps configuration. Optional.",
		"ansible_python_interpreter": "Absolute path to the python interpreter on the managed machines. Optional.",
		"deploy_forces_oob_reboot":   "Whether Ironic should force a reboot of the Node via the out-of-band channel after deployment is complete. Provides compatibility with older deploy ramdisks. Defaults to False. Optional.",
		"agent_verify_ca":            "Either a Boolean value, a path to a CA_BUNDLE file or directory with certificates of trusted CAs. If set to True ironic will verify the agent's certificate; if False the driver will ignore verifying the SSL certificate. If it's a path the driver will use the specified certificate or one of the certificates in the directory. Defaults to True. Optional",
	}
}

// Steps are upstream's deploy steps of AnsibleDeploy.
func (d *Deploy) Steps() []driver.StepSpec {
	return []driver.StepSpec{
		driver.DeployStep("deploy", 100),
		driver.DeployStep("write_image", 80),
		driver.DeployStep("tear_down_agent", 40),
		driver.DeployStep("switch_to_tenant_network", 30),
		driver.DeployStep("boot_instance", 20),
	}
}

// ListSteps is upstream's get_<kind>_steps: the declared deploy steps,
// and the clean steps of the node's clean steps file (upstream
// get_clean_steps).
func (d *Deploy) ListSteps(_ context.Context, task *driver.Task, kind driver.StepKind) ([]driver.StepSpec, error) {
	if kind == driver.StepClean {
		steps, err := d.cleanSteps(task.Node)
		if err != nil {
			return nil, err
		}
		out := make([]driver.StepSpec, len(steps))
		for i, s := range steps {
			out[i] = s.spec
		}
		return out, nil
	}
	var out []driver.StepSpec
	for _, s := range d.Steps() {
		if s.Kind == kind {
			out = append(out, s)
		}
	}
	return out, nil
}

// StepHandlers maps the declared steps; the network and boot steps are
// the agent deploys' (upstream's AgentOobStepsMixin).
func (d *Deploy) StepHandlers() map[string]driver.StepFunc {
	shared := d.CustomAgent.StepHandlers()
	return map[string]driver.StepFunc{
		"deploy":                   func(ctx context.Context, t *driver.Task, _ map[string]any) (string, error) { return d.Deploy(ctx, t) },
		"write_image":              d.writeImage,
		"tear_down_agent":          d.tearDownAgent,
		"switch_to_tenant_network": shared["switch_to_tenant_network"],
		"boot_instance":            shared["boot_instance"],
	}
}

// ExecuteStep runs a declared deploy step, or a clean step through the
// clean playbook; no step runs on the agent.
func (d *Deploy) ExecuteStep(ctx context.Context, task *driver.Task, step driver.Step) (string, error) {
	if step.Kind == driver.StepClean {
		return d.executeCleanStep(ctx, task, step)
	}
	fn, ok := d.StepHandlers()[step.Name]
	if !ok || step.Kind != driver.StepDeploy {
		return "", fmt.Errorf("%s step %s.%s has not been found.", step.Kind, step.Interface, step.Name)
	}
	return fn(ctx, task, step.Args)
}

// RefreshSteps has nothing to fetch: the ramdisk's agent runs no step.
func (d *Deploy) RefreshSteps(context.Context, *driver.Task, driver.StepKind) error { return nil }

// PollStep is upstream's process_next_step override: a heartbeat while
// deploy.deploy waits for the ramdisk moves the deployment on (to
// write_image); any other heartbeat changes nothing.
func (d *Deploy) PollStep(_ context.Context, task *driver.Task, kind driver.StepKind) (driver.AgentStepState, error) {
	step := task.Node.DeployStep
	if kind == driver.StepDeploy && step["interface"] == "deploy" && step["step"] == "deploy" {
		return driver.AgentStepFreshBoot, nil
	}
	return driver.AgentStepRunning, nil
}

// Validate is upstream AnsibleDeploy.validate: the boot interface, the
// image source, and root device hints ansible can match.
func (d *Deploy) Validate(ctx context.Context, task *driver.Task) error {
	if err := task.Driver.Boot.Validate(ctx, task); err != nil {
		return err
	}
	n := task.Node
	if src, _ := n.InstanceInfo["image_source"].(string); src == "" {
		return errs.New(errs.ClassMissingParameterValue, map[string]any{"err": fmt.Sprintf(
			"Node %s failed to validate deploy image info. Some parameters were missing. Missing are: ['instance_info.image_source']", n.UUID)})
	}
	_, err := rootDeviceHints(n)
	return err
}

// Deploy boots the ramdisk (prepared by Prepare, as upstream's
// prepare_agent_boot) and waits for its heartbeat.
func (d *Deploy) Deploy(ctx context.Context, task *driver.Task) (string, error) {
	d.recordMemoryRequirement(ctx, task)
	if err := task.Driver.Boot.PrepareRamdisk(ctx, task, nil); err != nil {
		return "", fmt.Errorf("prepare ramdisk: %w", err)
	}
	wipeOnPowerAction(task.Node)
	if err := task.Driver.Power.Reboot(ctx, task, 0); err != nil {
		return "", fmt.Errorf("reboot into the ramdisk: %w", err)
	}
	task.Node.PowerState = "power on"
	return "wait call-back", nil
}

// recordMemoryRequirement is upstream's _required_image_info: the image's
// size in MiB plus [ansible]/extra_memory, as instance_info's
// image_mem_req, which the playbooks see as ironic.image.mem_req. The size
// is read from an HTTP(S) image's Content-Length; an image whose size
// this cannot learn (a Glance UUID) gets no requirement, with a warning.
func (d *Deploy) recordMemoryRequirement(ctx context.Context, task *driver.Task) {
	n := task.Node
	src, _ := n.InstanceInfo["image_url"].(string)
	if src == "" {
		src, _ = n.InstanceInfo["image_source"].(string)
	}
	size, err := downloadSize(ctx, src)
	if err != nil {
		task.Logger().WarnContext(ctx, "image size unknown, no image_mem_req recorded", "node", n.UUID, "error", err)
		return
	}
	n.InstanceInfo["image_mem_req"] = size/(1<<20) + int64(d.opts.ExtraMemory)
}

func downloadSize(ctx context.Context, src string) (int64, error) {
	if !strings.HasPrefix(src, "http://") && !strings.HasPrefix(src, "https://") {
		return 0, fmt.Errorf("not an HTTP(S) image: %q", src)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, src, nil)
	if err != nil {
		return 0, fmt.Errorf("image size: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("image size: %w", err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.ContentLength < 0 {
		return 0, fmt.Errorf("image size: HEAD %s answered %s without a length", src, resp.Status)
	}
	return resp.ContentLength, nil
}

// TakeOver: upstream does not support taking over an ansible-deployed
// node and only logs; the node must be redeployed.
func (d *Deploy) TakeOver(ctx context.Context, task *driver.Task) error {
	task.Logger().ErrorContext(ctx, "ansible deploy does not support take over, the node must be redeployed explicitly", "node", task.Node.UUID)
	return nil
}

// writeImage is upstream write_image: the deploy playbook against the
// ramdisk, then the node boots from disk.
func (d *Deploy) writeImage(ctx context.Context, task *driver.Task, _ map[string]any) (string, error) {
	n := task.Node
	vars, err := d.deployVars(n)
	if err != nil {
		return "", err
	}
	if err := d.runPlaybook(ctx, n, "deploy", vars, nil); err != nil {
		return "", err
	}
	task.Logger().InfoContext(ctx, "ansible completed the deployment", "node", n.UUID)
	if err := task.Driver.Management.SetBootDevice(ctx, task, "disk", true); err != nil {
		return "", fmt.Errorf("set boot device to disk: %w", err)
	}
	return "", nil
}

// runPlaybook runs the node's playbook of action against the ramdisk at
// the agent's address.
func (d *Deploy) runPlaybook(ctx context.Context, n *model.Node, action string, vars map[string]any, tags []string) error {
	pb, err := d.playbookFor(n, action)
	if err != nil {
		return err
	}
	ip := nodeIP(n)
	extra := map[string]any{"nodes": []map[string]any{{"name": n.UUID, "ip": ip, "user": pb.User, "extra": n.Extra}}}
	for k, v := range vars {
		extra[k] = v
	}
	if _, err := d.runner.Run(ctx, pb, extra, tags); err != nil {
		return errs.New(errs.ClassInstanceDeployFailure, map[string]any{"reason": err.Error()})
	}
	return nil
}

// tearDownAgent is upstream's tear_down_agent: the shutdown playbook
// powers the ramdisk off, which the power interface must then report
// within the retries; otherwise, or when driver_info forces it, the node
// is powered off out of band.
func (d *Deploy) tearDownAgent(ctx context.Context, task *driver.Task, _ map[string]any) (string, error) {
	n := task.Node
	oob, _ := n.DriverInfo["deploy_forces_oob_reboot"].(bool)
	if s, ok := n.DriverInfo["deploy_forces_oob_reboot"].(string); ok {
		oob = strings.EqualFold(s, "true") || s == "1" || strings.EqualFold(s, "yes")
	}
	if !oob {
		err := d.runPlaybook(ctx, n, "shutdown", nil, nil)
		if err == nil {
			err = d.waitPoweredOff(ctx, task)
		}
		if err == nil {
			n.PowerState = "power off"
			return "", nil
		}
		task.Logger().WarnContext(ctx, "soft power off through ansible failed, powering off out of band", "node", n.UUID, "error", err)
	}
	if err := task.Driver.Power.SetPowerState(ctx, task, "power off", 0); err != nil {
		return "", errs.New(errs.ClassInstanceDeployFailure, map[string]any{"reason": fmt.Sprintf("Error rebooting node %s after deploy. Error: %s", n.UUID, err)})
	}
	wipeOnPowerAction(n)
	n.PowerState = "power off"
	return "", nil
}

func (d *Deploy) waitPoweredOff(ctx context.Context, task *driver.Task) error {
	clk := d.opts.Clock
	if clk == nil {
		clk = clock.Real{}
	}
	var last string
	for attempt := 0; ; attempt++ {
		st, err := task.Driver.Power.GetPowerState(ctx, task)
		if err == nil && st == "power off" {
			return nil
		}
		last = st
		if err != nil {
			last = err.Error()
		}
		if attempt >= d.opts.PowerOffRetries {
			return fmt.Errorf("node still %s after %d power state reads", last, attempt+1)
		}
		if err := clk.Sleep(ctx, d.opts.PowerOffInterval); err != nil {
			return err
		}
	}
}

// wipeOnPowerAction is what every power action does to the agent's
// records (upstream wipe_internal_info_on_power_off, as the agent
// package's): the ramdisk that answered at agent_url is gone.
func wipeOnPowerAction(n *model.Node) {
	ii := n.InternalInfo()
	ii.Delete(model.DIIAgentURL, model.DIIAgentCachedDeploySteps, model.DIIAgentCachedCleanSteps, model.DIIAgentVerifyCA, model.DIIAgentStartAttempted)
	if !ii.AgentTokenPregenerated() {
		ii.Delete(model.DIIAgentSecretToken)
	}
}
