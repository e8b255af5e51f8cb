package storage

import (
	"context"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
)

// External is storage "external": the volumes are attached by someone
// else; Ironic only boots from them.
type External struct{ base }

var _ driver.StorageInterface = External{}

// Validate refuses a boot from volume without iPXE, the only boot
// interface that can boot a volume target here.
func (External) Validate(ctx context.Context, task *driver.Task) error {
	if !shouldWriteImage(ctx, task) && !ipxeEnabled(task) {
		msg := "Failed to validate external storage interface for node " + task.Node.UUID +
			". To support network booting to an iSCSI volume, the boot interface must be set to ``ipxe``."
		task.Logger().ErrorContext(ctx, msg)
		return errs.NewMessage(errs.ClassInvalidParameterValue, msg)
	}
	return nil
}

// AttachVolumes does nothing: the volumes are attached already.
func (External) AttachVolumes(context.Context, *driver.Task) error { return nil }

// DetachVolumes does nothing.
func (External) DetachVolumes(context.Context, *driver.Task) error { return nil }

// ShouldWriteImage is false for a boot volume without an image_source.
func (External) ShouldWriteImage(ctx context.Context, task *driver.Task) bool {
	return shouldWriteImage(ctx, task)
}
