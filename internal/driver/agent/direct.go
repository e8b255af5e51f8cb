package agent

import (
	"context"
	"fmt"
	"strings"

	"github.com/openkeel/ironic/internal/agentclient"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/image"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/pyfmt"
)

// Direct is upstream AgentDeploy ("direct"): custom-agent's steps plus
// write_image, where the agent downloads the image itself and writes it,
// and a prepare_instance_boot that installs the bootloader first.
type Direct struct {
	CustomAgent
	// images resolves, caches and publishes images (ConfigureDirectImages);
	// nil uses upstream's defaults without image services.
	images *Images
}

var (
	_ driver.DeployInterface   = (*Direct)(nil)
	_ driver.StepLister        = (*Direct)(nil)
	_ driver.StepRunner        = (*Direct)(nil)
	_ driver.CleaningPreparer  = (*Direct)(nil)
	_ driver.ServicePreparer   = (*Direct)(nil)
	_ driver.AgentStepper      = (*Direct)(nil)
	_ driver.InterfaceRestorer = (*Direct)(nil)
)

// NewDirect builds the direct deploy interface.
func NewDirect(o Options) *Direct {
	return &Direct{CustomAgent: CustomAgent{base{opts: o, bootByConfig: true}}}
}

// Steps declares the out-of-band deploy steps in upstream's order.
func (d *Direct) Steps() []driver.StepSpec {
	return append(d.CustomAgent.Steps(), driver.DeployStep("write_image", 80))
}

// ListSteps is CustomAgent's with write_image among the declared steps.
func (d *Direct) ListSteps(_ context.Context, task *driver.Task, kind driver.StepKind) ([]driver.StepSpec, error) {
	return d.listSteps(task, kind, d.Steps()), nil
}

// StepHandlers maps the declared deploy steps.
func (d *Direct) StepHandlers() map[string]driver.StepFunc {
	h := d.CustomAgent.StepHandlers()
	h["write_image"] = d.writeImage
	h["prepare_instance_boot"] = d.prepareInstanceBoot
	return h
}

// ExecuteStep runs a declared deploy step, or hands an in-band step to the
// agent.
func (d *Direct) ExecuteStep(ctx context.Context, task *driver.Task, step driver.Step) (string, error) {
	return d.executeStep(ctx, task, step, d.StepHandlers())
}

// Validate is upstream AgentDeploy.validate: the boot interface, an
// image_source, a valid image_type, a checksum for plain URLs (Glance
// images carry theirs, file:// ones are hashed by the conductor), the
// HTTP publishing options when the conductor serves the image, and the
// image proxies.
func (d *Direct) Validate(ctx context.Context, task *driver.Task) error {
	if err := task.Driver.Boot.Validate(ctx, task); err != nil {
		return err
	}
	if !task.Driver.Storage.ShouldWriteImage(ctx, task) {
		return nil
	}
	n := task.Node
	ii := n.InstanceInfo
	src := iiString(n, "image_source")
	if src == "" {
		return driver.MissingParameterValue("Node %s failed to validate deploy image info. Some parameters were missing. Missing are: ['instance_info.image_source']", n.UUID)
	}
	if t, ok := ii["image_type"]; ok && pyfmt.Truthy(t) {
		if s, _ := t.(string); s != imageTypePartition && s != imageTypeWholeDisk {
			return driver.InvalidParameterValue("Invalid image_type \"%s\", valid are %s, %s", pyfmt.Str(t), imageTypePartition, imageTypeWholeDisk)
		}
	}
	if !image.IsGlanceImage(src) && !isFileURL(src) && !strings.HasPrefix(src, "oci://") {
		hashValue, hashAlgo := pyfmt.Truthy(ii["image_os_hash_value"]), pyfmt.Truthy(ii["image_os_hash_algo"])
		if hashValue != hashAlgo || (!hashValue && !pyfmt.Truthy(ii["image_checksum"])) {
			return driver.MissingParameterValue("image_source's \"image_checksum\", or \"image_os_hash_algo\" and \"image_os_hash_value\" must be provided in instance_info for node %s", n.UUID)
		}
	}
	if err := d.validateHTTPProvisioning(n); err != nil {
		return err
	}
	if image.IsGlanceImage(src) && d.imageDownloadSource(n) == DownloadSwift && d.imgs().Swift == nil {
		return driver.InvalidParameterValue("image_download_source swift is not configured on this conductor for Glance image %s; use http or local", src)
	}
	if err := validateImageProxies(n); err != nil {
		return err
	}
	if caps, err := instanceCapabilities(n); err == nil {
		if _, ok := caps["boot_option"]; ok {
			task.Logger().WarnContext(ctx, "The boot_option capability has been deprecated, please unset it", "node", n.UUID)
		}
	}
	return nil
}

// imageInfo is what standby's write_image needs (upstream
// AgentDeploy.write_image), from the instance_info Prepare built.
func (d *Direct) imageInfo(ctx context.Context, n *model.Node, configdrive any) (map[string]any, error) {
	ii := n.InstanceInfo
	src := iiString(n, "image_source")
	im := d.imgs()
	info := map[string]any{
		"id":                src[strings.LastIndex(src, "/")+1:],
		"urls":              []any{ii["image_url"]},
		"disk_format":       ii["image_disk_format"],
		"container_format":  ii["image_container_format"],
		"stream_raw_images": im.StreamRaw,
	}
	if s := im.ImageServerAuthStrategy; s != "" && s != "noauth" {
		info["image_server_auth_strategy"] = s
		info["image_server_user"] = im.ImageServerUser
		info["image_server_password"] = im.ImageServerPassword
	}
	if v := ii["image_checksum"]; pyfmt.Truthy(v) {
		info["checksum"] = v
	}
	if pyfmt.Truthy(ii["image_os_hash_algo"]) && pyfmt.Truthy(ii["image_os_hash_value"]) {
		info["os_hash_algo"] = ii["image_os_hash_algo"]
		info["os_hash_value"] = ii["image_os_hash_value"]
	}
	if s := iiString(n, "image_request_authorization_secret"); s != "" {
		info["image_request_authorization"] = imageRequestAuthorization(s)
	}
	proxies := map[string]any{}
	for _, scheme := range []string{"http", "https"} {
		if p := n.DriverInfo["image_"+scheme+"_proxy"]; pyfmt.Truthy(p) {
			proxies[scheme] = p
		}
	}
	if len(proxies) > 0 {
		info["proxies"] = proxies
		if np, ok := n.DriverInfo["image_no_proxy"]; ok && np != nil {
			info["no_proxy"] = np
		}
	}
	info["node_uuid"] = n.UUID
	whole := wholeDisk(n)
	if whole {
		// IPA writes anything but "partition" as a whole disk; the key is
		// kept so that the agent's log shows the decision.
		info["image_type"] = imageTypeWholeDisk
	} else {
		for _, k := range partitionImageLabels {
			info[k] = ii[k]
		}
		info["deploy_boot_mode"] = d.bootMode(n)
		info["boot_option"] = "local"
		label, err := d.diskLabel(n)
		if err != nil {
			return nil, err
		}
		if label != "" {
			info["disk_label"] = label
		}
	}
	if pyfmt.Truthy(configdrive) {
		info["configdrive"] = configdrive
	}
	return info, nil
}

// wholeDisk is driver_internal_info's is_whole_disk_image when the
// deployment recorded it; otherwise a partition image names its kernel
// and ramdisk, anything else is written as a whole disk (upstream's
// image_type default).
func wholeDisk(n *model.Node) bool {
	if b, ok := n.InternalInfo().Bool(model.DIIIsWholeDiskImage); ok {
		return b
	}
	if t, ok := n.InstanceInfo["image_type"].(string); ok {
		return t != imageTypePartition
	}
	return n.InstanceInfo["kernel"] == nil
}

// writeImage asks the agent to write the image, through its in-band
// write_image deploy step. A deployment whose Prepare did not resolve the
// image (it started before this conductor did) resolves it now.
func (d *Direct) writeImage(ctx context.Context, task *driver.Task, _ map[string]any) (string, error) {
	if !task.Driver.Storage.ShouldWriteImage(ctx, task) {
		return "", nil
	}
	n := task.Node
	if !pyfmt.Truthy(n.InstanceInfo["image_url"]) {
		if err := d.updateInstanceInfo(ctx, task); err != nil {
			return "", err
		}
	}
	n.InternalInfo().Set(model.DIIIsWholeDiskImage, wholeDisk(n))
	cd, err := configdriveImage(ctx, n)
	if err != nil {
		return "", err
	}
	info, err := d.imageInfo(ctx, n, cd)
	if err != nil {
		return "", err
	}
	step := map[string]any{
		"step": "write_image", "interface": "deploy",
		"args": map[string]any{"image_info": info, "configdrive": cd},
	}
	return d.executeInband(ctx, task, driver.StepDeploy, step)
}

// bootMode is instance_info.deploy_boot_mode, then the boot_mode
// capability, then [deploy]/default_boot_mode.
func (b *base) bootMode(n *model.Node) string {
	if m, ok := n.InstanceInfo["deploy_boot_mode"].(string); ok && m != "" {
		return m
	}
	if caps, ok := n.Properties["capabilities"].(string); ok {
		for _, kv := range strings.Split(caps, ",") {
			if k, v, ok := strings.Cut(kv, ":"); ok && strings.TrimSpace(k) == "boot_mode" {
				return strings.TrimSpace(v)
			}
		}
	}
	return b.opts.DefaultBootMode
}

// prepareInstanceBoot installs the bootloader through the agent when the
// image needs one (a partition image, or a UEFI whole disk image with an
// EFI partition), then prepares the instance boot. The image written, the
// conductor's published copy of it is no longer needed and goes, as
// upstream removes it at this step. A node booting from a volume has no
// image written and only gets its instance boot.
func (d *Direct) prepareInstanceBoot(ctx context.Context, task *driver.Task, _ map[string]any) (string, error) {
	n := task.Node
	if !task.Driver.Storage.ShouldWriteImage(ctx, task) {
		if err := task.Driver.Boot.PrepareInstance(ctx, task); err != nil {
			return "", fmt.Errorf("Failed to prepare instance for booting: %w", err)
		}
		return "", nil
	}
	mode := d.bootMode(n)
	n.InternalInfo().Set(model.DIIDeployBootMode, mode)
	res, err := d.client().GetPartitionUUIDs(ctx, targetFor(n))
	if err != nil {
		return "", fmt.Errorf("get partition UUIDs from the agent: %w", err)
	}
	uuids := res.ResultMap()
	root, _ := uuids["root uuid"].(string)
	efi, _ := uuids["efi system partition uuid"].(string)
	if root != "" {
		n.InternalInfo().Set(model.DIIRootUUIDOrDiskID, root)
	}
	whole := wholeDisk(n)
	if (!whole && root != "") || (whole && mode == "uefi" && efi != "") {
		p := agentclient.BootloaderParams{RootUUID: root, TargetBootMode: mode, EFISystemPartUUID: efi}
		r, err := d.client().InstallBootloader(ctx, targetFor(n), p)
		if err != nil {
			return "", fmt.Errorf("Failed to install a bootloader when deploying node %s. Error: %w", n.UUID, err)
		}
		if r.Status == agentclient.StatusFailed {
			return "", fmt.Errorf("Failed to install a bootloader when deploying node %s. Error: %s", n.UUID, agentclient.CommandError(r))
		}
	}
	if err := task.Driver.Boot.PrepareInstance(ctx, task); err != nil {
		return "", fmt.Errorf("Failed to prepare instance for booting: %w", err)
	}
	d.destroyHTTPInstanceImages(ctx, task)
	return "", nil
}
