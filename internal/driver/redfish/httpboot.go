package redfish

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
)

// HTTPSBoot is upstream RedfishHttpsBoot: the deploy or rescue ramdisk is
// built into an ISO and published under http_root exactly as for virtual
// media, but instead of inserting it into a virtual CD the BMC is told to
// boot it over UEFI HTTP (Boot.HttpBootUri with the UefiHttp override).
type HTTPSBoot struct {
	driver.NoSteps
	// vm parses driver_info and builds and publishes the ISO.
	vm *VirtualMediaBoot
}

var _ driver.BootInterface = (*HTTPSBoot)(nil)

func newHTTPSBoot(c *core, mgmt *Management, opts BootOptions) *HTTPSBoot {
	return &HTTPSBoot{vm: &VirtualMediaBoot{core: c, mgmt: mgmt, opts: opts}}
}

// uefiHTTPURLKey is the driver_internal_info field through which the boot
// interface hands the URL to the management interface's SetBootDevice.
const uefiHTTPURLKey = model.DIIRedfishUEFIHTTPURL

// Properties are upstream's REQUIRED_PROPERTIES, all get_properties shows.
func (b *HTTPSBoot) Properties() map[string]string { return b.vm.Properties() }

// Capabilities are upstream's capabilities of the class.
func (b *HTTPSBoot) Capabilities() []string { return []string{"ramdisk_boot"} }

// validateHardware is upstream _validate_hardware: the system must offer
// UefiHttp among its boot override targets. A BMC that lists no allowed
// targets is taken as lacking it (upstream fails on the missing list).
func (b *HTTPSBoot) validateHardware(ctx context.Context, task *driver.Task) error {
	sys, err := b.vm.core.getSystem(ctx, task)
	if err != nil {
		return err
	}
	if !slices.Contains(sys.allowedBootTargets(), "UefiHttp") {
		return errs.New(errs.ClassUnsupportedHardwareFeature, map[string]any{"node": task.Node.UUID, "feature": "UefiHttp boot"})
	}
	return nil
}

// Validate is upstream validate: UEFI HTTP boot on the BMC, then the agent
// images and the BMC address, and for a ramdisk deployment what the
// instance boots from, as for virtual media.
func (b *HTTPSBoot) Validate(ctx context.Context, task *driver.Task) error {
	if err := b.validateHardware(ctx, task); err != nil {
		return err
	}
	return b.vm.Validate(ctx, task)
}

// ValidateInspection is upstream validate_inspection: driver_info only.
func (b *HTTPSBoot) ValidateInspection(_ context.Context, task *driver.Task) error {
	_, err := b.vm.parseDriverInfo(task)
	return err
}

// PrepareRamdisk builds and publishes the deploy or rescue ISO with the
// node powered off, then sets a one-time UEFI HTTP boot from its URL.
func (b *HTTPSBoot) PrepareRamdisk(ctx context.Context, task *driver.Task, ramdiskParams map[string]any) error {
	if err := requireExclusive(task); err != nil {
		return err
	}
	n := task.Node
	if !driver.NeedPrepareRamdisk(n) {
		return nil
	}
	d, err := b.vm.parseDriverInfo(task)
	if err != nil {
		return err
	}
	params := maps.Clone(ramdiskParams)
	if params == nil {
		params = map[string]any{}
	}
	if d.canProvideConfig {
		token, err := pregeneratedToken()
		if err != nil {
			return err
		}
		n.InternalInfo().Set(model.DIIAgentSecretToken, token)
		n.InternalInfo().Set(model.DIIAgentSecretTokenPregenerated, true)
		params["ipa-agent-token"] = token
	}
	if err := b.vm.powerOff(ctx, task); err != nil {
		return err
	}
	if _, ok := params["ipa-api-url"]; !ok && b.vm.opts.APIURL != "" {
		params["ipa-api-url"] = strings.TrimRight(b.vm.opts.APIURL, "/")
	}
	if _, ok := params["ipa-debug"]; b.vm.opts.Debug && !ok {
		params["ipa-debug"] = "1"
	}
	mac, err := b.vm.deployNICMAC(ctx, task)
	if err != nil {
		return err
	}
	if mac != "" {
		params["BOOTIF"] = mac
	}
	// The agent reads its configuration from the ISO it booted, as with
	// virtual media.
	params["boot_method"] = "vmedia"
	isoURL, err := b.vm.prepareDeployISO(ctx, task, d, params)
	if err != nil {
		return err
	}
	if err := b.setBootDevice(ctx, task, "uefihttp", false, isoURL); err != nil {
		return err
	}
	task.Logger().Debug("node set to one time boot over UEFI HTTP", "node", n.UUID, "url", isoURL)
	return nil
}

// setBootDevice is upstream _set_boot_device: the URL, when given, goes
// to driver_internal_info for the management interface to send as
// HttpBootUri with the override.
func (b *HTTPSBoot) setBootDevice(ctx context.Context, task *driver.Task, device string, persistent bool, url string) error {
	if url != "" {
		task.Node.InternalInfo().Set(uefiHTTPURLKey, url)
	}
	return b.vm.setBootDevice(ctx, task, device, persistent)
}

// cleanUp is upstream cleanup_iso_image: the published ISO goes. The BMC
// keeps its HttpBootUri until the next boot override replaces it.
func (b *HTTPSBoot) cleanUp(ctx context.Context, task *driver.Task) error {
	return b.vm.opts.unpublish(ctx, task, isoName(task.Node))
}

// CleanUpRamdisk removes the published ramdisk ISO.
func (b *HTTPSBoot) CleanUpRamdisk(ctx context.Context, task *driver.Task) error {
	if err := requireExclusive(task); err != nil {
		return err
	}
	task.Logger().Debug("cleaning up deploy boot", "node", task.Node.UUID)
	return b.cleanUp(ctx, task)
}

// PrepareInstance sets a persistent boot from disk for a local boot or a
// whole disk image, and a persistent UEFI HTTP boot of the instance's ISO
// for a ramdisk deployment. Upstream's remaining case, a partition image
// booted from an ISO carrying its root UUID, needs a boot ISO this
// project does not build, and is refused.
func (b *HTTPSBoot) PrepareInstance(ctx context.Context, task *driver.Task) error {
	if err := requireExclusive(task); err != nil {
		return err
	}
	n := task.Node
	if err := b.cleanUp(ctx, task); err != nil {
		return err
	}
	iwdi, _ := n.InternalInfo().Bool(model.DIIIsWholeDiskImage)
	switch opt := bootOption(n); {
	case opt == "local" || iwdi:
		if err := b.setBootDevice(ctx, task, "disk", true, ""); err != nil {
			return err
		}
		task.Logger().Debug("node set to permanently boot from disk", "node", n.UUID)
		return nil
	case opt != "ramdisk":
		return errs.New(errs.ClassInstanceDeployFailure, map[string]any{
			"reason": fmt.Sprintf("Boot option %s over UEFI HTTP is not supported for node %s", opt, n.UUID)})
	}
	isoURL, err := b.vm.instanceISO(ctx, task)
	if err != nil {
		return err
	}
	if err := b.setBootDevice(ctx, task, "uefihttp", true, isoURL); err != nil {
		return err
	}
	task.Logger().Debug("node set to permanently boot over UEFI HTTP", "node", n.UUID, "url", isoURL)
	return nil
}

// CleanUpInstance removes the published ISO.
func (b *HTTPSBoot) CleanUpInstance(ctx context.Context, task *driver.Task) error {
	if err := requireExclusive(task); err != nil {
		return err
	}
	return b.cleanUp(ctx, task)
}
