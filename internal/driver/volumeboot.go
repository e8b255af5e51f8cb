package driver

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
)

// BootVolume is upstream's get_remote_boot_volume: the node's volume
// target with boot_index 0, or nil.
func BootVolume(ctx context.Context, task *Task) (*model.VolumeTarget, error) {
	if task.VolumeTargets == nil {
		return nil, nil
	}
	vts, err := task.VolumeTargets.List(ctx)
	if err != nil {
		return nil, err
	}
	for _, vt := range vts {
		if vt.BootIndex != nil && *vt.BootIndex == 0 {
			return vt, nil
		}
	}
	return nil, nil
}

// hasCapability tells whether impl declares capability (upstream's
// check_interface_capability on an interface's capabilities list).
func hasCapability(impl any, capability string) bool {
	c, ok := impl.(interface{ Capabilities() []string })
	return ok && slices.Contains(c.Capabilities(), capability)
}

// PopulateStorageDriverInternalInfo is upstream's
// populate_storage_driver_internal_info, run when a deploy interface
// prepares a node: a boot volume needs the node's iscsi_boot or
// fibre_channel_boot capability (StorageError otherwise), and
// driver_internal_info records it as boot_from_volume when the boot
// interface can boot that type of volume (<type>_volume_boot), and as
// boot_from_volume_deploy when the deploy interface deploys to it
// (<type>_volume_deploy) and an image is to be written.
func PopulateStorageDriverInternalInfo(ctx context.Context, task *Task) error {
	vol, err := BootVolume(ctx, task)
	if err != nil || vol == nil {
		return err
	}
	n := task.Node
	typ := "None"
	if vol.VolumeType != nil {
		typ = strings.ToLower(*vol.VolumeType)
	}
	caps := n.Properties["capabilities"]
	switch {
	case typ == "iscsi" && !capabilityPresent(caps, "iscsi_boot"):
		return errs.NewMessage(errs.ClassStorageError, fmt.Sprintf("Node %s has an iSCSI boot volume defined and no iSCSI boot support available.", n.UUID))
	case typ == "fibre_channel" && !capabilityPresent(caps, "fibre_channel_boot"):
		return errs.NewMessage(errs.ClassStorageError, fmt.Sprintf("Node %s has a Fibre Channel boot volume defined and no Fibre Channel boot support available.", n.UUID))
	}
	if hasCapability(task.Driver.Boot, typ+"_volume_boot") {
		n.InternalInfo().Set(model.DIIBootFromVolume, vol.UUID)
	}
	if hasCapability(task.Driver.Deploy, typ+"_volume_deploy") && task.Driver.Storage.ShouldWriteImage(ctx, task) {
		n.InternalInfo().Set(model.DIIBootFromVolumeDeploy, vol.UUID)
	}
	return nil
}

// capabilityPresent tells whether key is among the capabilities, whatever
// its value (upstream checks the key of capabilities_to_dict).
func capabilityPresent(caps any, key string) bool {
	switch c := caps.(type) {
	case map[string]any:
		_, ok := c[key]
		return ok
	case string:
		for item := range strings.SplitSeq(c, ",") {
			if k, _, ok := strings.Cut(item, ":"); ok && strings.TrimSpace(k) == key {
				return true
			}
		}
	}
	return false
}

// IsISCSIBoot is upstream's is_iscsi_boot: the node boots from a volume
// target of type iscsi recorded by PopulateStorageDriverInternalInfo.
func IsISCSIBoot(ctx context.Context, task *Task) bool {
	vol, err := BootVolumeFromInternalInfo(ctx, task)
	return err == nil && vol != nil && vol.VolumeType != nil && *vol.VolumeType == "iscsi"
}

// BootVolumeFromInternalInfo is the target driver_internal_info's
// boot_from_volume names, or nil.
func BootVolumeFromInternalInfo(ctx context.Context, task *Task) (*model.VolumeTarget, error) {
	id, _ := task.Node.InternalInfo().Get(model.DIIBootFromVolume).(string)
	if id == "" || task.VolumeTargets == nil {
		return nil, nil
	}
	vts, err := task.VolumeTargets.List(ctx)
	if err != nil {
		return nil, err
	}
	for _, vt := range vts {
		if vt.UUID == id {
			return vt, nil
		}
	}
	return nil, nil
}
