package agent

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/image/configdrive"
)

// BootcOptions are the credentials the bootc deploy interface may hand
// the agent for pulling the container image.
type BootcOptions struct {
	// ImageServerUser and ImageServerPassword are [deploy]/
	// image_server_user and image_server_password, the last resort.
	ImageServerUser     string
	ImageServerPassword string
	// OCIAuthConfig is [oci]/authentication_config: a JSON file of
	// pre-shared registry secrets, {"auths": {"<host>": {"auth": "…"}}}.
	OCIAuthConfig string
}

// Bootc is upstream BootcAgentDeploy: the custom-agent flow in which the
// agent installs a bootc container image (instance_info image_source
// oci://…) with its in-band execute_bootc_install step, and the node is
// then set to boot from disk.
//
// Upstream's supports_deploy (autodetect's question) asks the registry
// whether the image is a bootc one. There is no OCI registry client here;
// the answer is upstream's answer when that lookup fails: not supported.
// A node with deploy_interface bootc deploys normally.
type Bootc struct {
	CustomAgent
	bopts BootcOptions
}

var (
	_ driver.DeployInterface   = (*Bootc)(nil)
	_ driver.DeploySupporter   = (*Bootc)(nil)
	_ driver.CleaningPreparer  = (*Bootc)(nil)
	_ driver.AgentStepper      = (*Bootc)(nil)
	_ driver.InterfaceRestorer = (*Bootc)(nil)
)

// NewBootc builds the bootc deploy interface.
func NewBootc(o Options) *Bootc {
	return &Bootc{CustomAgent: CustomAgent{base{opts: o, bootByConfig: true}}, bopts: o.Bootc}
}

// Steps are custom-agent's plus the bootc install and the boot device.
func (d *Bootc) Steps() []driver.StepSpec {
	return append(d.CustomAgent.Steps(),
		driver.DeployStep("execute_bootc_install", 80),
		driver.DeployStep("set_boot_to_disk", 60))
}

// ListSteps is custom-agent's with the bootc steps declared.
func (d *Bootc) ListSteps(_ context.Context, task *driver.Task, kind driver.StepKind) ([]driver.StepSpec, error) {
	return d.listSteps(task, kind, d.Steps()), nil
}

// StepHandlers maps the declared deploy steps.
func (d *Bootc) StepHandlers() map[string]driver.StepFunc {
	h := d.CustomAgent.StepHandlers()
	h["execute_bootc_install"] = d.executeBootcInstall
	h["set_boot_to_disk"] = d.setBootToDisk
	return h
}

// ExecuteStep runs a declared deploy step, or hands an in-band step to
// the agent.
func (d *Bootc) ExecuteStep(ctx context.Context, task *driver.Task, step driver.Step) (string, error) {
	return d.executeStep(ctx, task, step, d.StepHandlers())
}

// Validate is custom-agent's, and the image must be an oci:// reference.
func (d *Bootc) Validate(ctx context.Context, task *driver.Task) error {
	if err := d.CustomAgent.Validate(ctx, task); err != nil {
		return err
	}
	src, _ := task.Node.InstanceInfo["image_source"].(string)
	if !strings.HasPrefix(src, "oci://") {
		var href any
		if src != "" {
			href = src
		}
		return errs.New(errs.ClassInvalidImageRef, map[string]any{"image_href": href})
	}
	return nil
}

// SupportsDeploy: not an oci:// image, or no registry to ask whether the
// image is bootc; see Bootc.
func (d *Bootc) SupportsDeploy(ctx context.Context, task *driver.Task) bool {
	src, _ := task.Node.InstanceInfo["image_source"].(string)
	if src != "" && !strings.HasPrefix(src, "oci://") {
		return false
	}
	task.Logger().ErrorContext(ctx, "failed to detect bootc image: no OCI registry client to inspect the image", "node", task.Node.UUID)
	return false
}

// executeBootcInstall starts the agent's execute_bootc_install with the
// image, the config drive and the pull secret (base64, which hides it
// from casual reading only), then waits for it as for any in-band step.
func (d *Bootc) executeBootcInstall(ctx context.Context, task *driver.Task, _ map[string]any) (string, error) {
	n := task.Node
	src, _ := n.InstanceInfo["image_source"].(string)
	cd := n.InstanceInfo["configdrive"]
	if m, ok := cd.(map[string]any); ok {
		name := ""
		if n.Name != nil {
			name = *n.Name
		}
		built, err := configdrive.Build(ctx, n.UUID, name, m)
		if err != nil {
			return "", fmt.Errorf("build the config drive of node %s: %w", n.UUID, err)
		}
		cd = built
	}
	var secret any
	if s := d.pullSecret(ctx, task, src); s != "" {
		secret = base64.StdEncoding.EncodeToString([]byte(s))
	}
	step := map[string]any{
		"interface": "deploy", "step": "execute_bootc_install",
		"args": map[string]any{"image_source": src, "configdrive": cd, "oci_pull_secret": secret},
	}
	return d.executeInband(ctx, task, driver.StepDeploy, step)
}

// pullSecret is the password of upstream's get_image_service_auth_override
// (instance_info, then driver_info image_pull_secret, then the
// configured image server credentials), else the registry's pre-shared
// secret from [oci]/authentication_config.
func (d *Bootc) pullSecret(ctx context.Context, task *driver.Task, src string) string {
	n := task.Node
	for _, info := range []map[string]any{n.InstanceInfo, n.DriverInfo} {
		if s, _ := info["image_pull_secret"].(string); s != "" {
			if _, pass, ok := strings.Cut(s, ":"); ok {
				return pass
			}
			return s
		}
	}
	if d.bopts.ImageServerUser != "" && d.bopts.ImageServerPassword != "" {
		return d.bopts.ImageServerPassword
	}
	u, err := url.Parse(src)
	if err != nil {
		return ""
	}
	return registryAuth(ctx, task, d.bopts.OCIAuthConfig, u.Host)
}

// registryAuth is RegistrySessionHelper.get_token_from_config: a
// missing or malformed file is logged and means no secret.
func registryAuth(ctx context.Context, task *driver.Task, path, host string) string {
	if path == "" {
		return ""
	}
	data, err := os.ReadFile(path)
	if err != nil {
		task.Logger().ErrorContext(ctx, "failed to load pre-shared authentication token data", "error", err)
		return ""
	}
	var doc struct {
		Auths map[string]struct {
			Auth string `json:"auth"`
		} `json:"auths"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		task.Logger().ErrorContext(ctx, "unable to decode pre-shared authentication token data", "error", err)
		return ""
	}
	return doc.Auths[host].Auth
}

// setBootToDisk is upstream's set_boot_to_disk helper as the bootc step
// calls it (target boot mode UEFI): the next boot is from disk,
// persistently unless driver_info's force_persistent_boot_device says
// Never; Lenovo machines are left alone, where the extra NVRAM write can
// be rolled back. An IPMI failure in UEFI mode is only logged.
func (d *Bootc) setBootToDisk(ctx context.Context, task *driver.Task, _ map[string]any) (string, error) {
	n := task.Node
	if vendor, _ := n.Properties["vendor"].(string); strings.EqualFold(vendor, "lenovo") {
		return "", nil
	}
	persistent := true
	switch n.DriverInfo["force_persistent_boot_device"] {
	case "Never":
		persistent = false
	case "Always":
		persistent = true
	}
	err := task.Driver.Management.Validate(ctx, task)
	if err == nil {
		err = task.Driver.Management.SetBootDevice(ctx, task, "disk", persistent)
	}
	if err != nil && errs.Is(err, errs.ClassIPMIFailure) && d.bootMode(n) == "uefi" {
		// IPMI cannot always set a UEFI boot device; the NVRAM entry the
		// image installed boots it anyway.
		task.Logger().WarnContext(ctx, "could not set the boot device to disk in UEFI mode", "node", n.UUID, "error", err)
		err = nil
	}
	if err != nil {
		return "", fmt.Errorf("Failed to change the boot device to disk when deploying node %s: %w", n.UUID, err)
	}
	return "", nil
}
