// Package storage holds upstream's storage interfaces that attach remote
// volumes to a node (ironic/drivers/modules/storage/cinder.py and
// external.py): "cinder" attaches the node's volume targets through
// Cinder, "external" leaves that to someone else; both tell the deploy
// interfaces not to write an image when the node boots from a volume.
package storage

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/model"
)

// Register adds "cinder" (c, or one without a Cinder client when nil)
// and "external" to r.
func Register(r *driver.Registry, c *Cinder) error {
	if c == nil {
		c = &Cinder{}
	}
	if err := r.Register(driver.KindStorage, "cinder", c); err != nil {
		return fmt.Errorf("register cinder storage interface: %w", err)
	}
	if err := r.Register(driver.KindStorage, "external", External{}); err != nil {
		return fmt.Errorf("register external storage interface: %w", err)
	}
	return nil
}

// base gives both interfaces upstream's empty properties and no steps.
type base struct{ driver.NoSteps }

func (base) Properties() map[string]string { return map[string]string{} }

// targets is task.volume_targets; a task without a store has none.
func targets(ctx context.Context, task *driver.Task) ([]*model.VolumeTarget, error) {
	if task.VolumeTargets == nil {
		return nil, nil
	}
	return task.VolumeTargets.List(ctx)
}

// connectors is task.volume_connectors.
func connectors(ctx context.Context, task *driver.Task) ([]*model.VolumeConnector, error) {
	if task.VolumeTargets == nil {
		return nil, nil
	}
	return task.VolumeTargets.Connectors(ctx)
}

// shouldWriteImage is both interfaces' should_write_image: no image is
// written when instance_info has no image_source and a target is the
// boot volume (boot_index 0).
func shouldWriteImage(ctx context.Context, task *driver.Task) bool {
	if _, ok := task.Node.InstanceInfo["image_source"]; ok {
		return true
	}
	vts, err := targets(ctx, task)
	if err != nil {
		// Upstream has the targets loaded with the task; not knowing them,
		// the deployment writes the image as it would without a volume.
		task.Logger().ErrorContext(ctx, "cannot read the volume targets, assuming the image is to be written", "node", task.Node.UUID, "error", err)
		return true
	}
	for _, vt := range vts {
		if vt.BootIndex != nil && *vt.BootIndex == 0 {
			return false
		}
	}
	return true
}

// ipxeEnabled is upstream's is_ipxe_enabled: the boot interface boots
// with iPXE.
func ipxeEnabled(task *driver.Task) bool {
	c, ok := task.Driver.Boot.(interface{ Capabilities() []string })
	return ok && slices.Contains(c.Capabilities(), "ipxe_boot")
}

// boolFromString is oslo's bool_from_string (not strict).
func boolFromString(s string) bool {
	return slices.Contains([]string{"1", "t", "true", "on", "y", "yes"}, strings.ToLower(strings.TrimSpace(s)))
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
