package conductor

import (
	"context"

	"github.com/openkeel/ironic/internal/conductor/task"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
)

// nodeCacheVendor is upstream node_cache_vendor: a vendor the management
// interface detects is kept in properties/vendor, once (vendors do not
// change on the fly). Caching never fails the caller.
func (c *Conductor) nodeCacheVendor(ctx context.Context, t *task.Task) {
	n := t.Node
	if v, _ := n.Properties["vendor"].(string); v != "" {
		return
	}
	d, ok := t.Driver.Management.(driver.VendorDetector)
	if !ok {
		return
	}
	vendor, err := d.DetectVendor(ctx, t.DriverTask())
	switch {
	case errs.Is(err, errs.ClassUnsupportedDriverExtension):
		return
	case err != nil:
		t.Log().WarnContext(ctx, "unexpected exception when trying to detect vendor", "error", err)
		return
	case vendor == "":
		return
	}
	// Power sync calls this under a shared lock; the exclusive one reloads
	// the node, so the vendor goes into what it read.
	if err := upgradeFor(ctx, t, "caching node vendor"); err != nil {
		t.Log().WarnContext(ctx, "could not lock the node to cache its vendor", "error", err)
		return
	}
	n = t.Node
	if n.Properties == nil {
		n.Properties = map[string]any{}
	}
	n.Properties["vendor"] = vendor
	if err := t.Save(ctx); err != nil {
		t.Log().ErrorContext(ctx, "saving the detected vendor", "error", err)
		return
	}
	t.Log().InfoContext(ctx, "detected vendor", "vendor", vendor)
}

// nodeCacheBootMode is upstream node_cache_boot_mode: the boot mode and
// secure boot state the management interface reads replace the node's
// (null where it cannot read them); an unexpected failure of either read
// leaves both alone. Caching never fails the caller.
func (c *Conductor) nodeCacheBootMode(ctx context.Context, t *task.Task) {
	dt := t.DriverTask()
	var mode *string
	if m, ok := t.Driver.Management.(driver.BootModeManager); ok {
		v, err := m.GetBootMode(ctx, dt)
		switch {
		case err == nil:
			mode = &v
		case !errs.Is(err, errs.ClassUnsupportedDriverExtension):
			t.Log().WarnContext(ctx, "unexpected exception when trying to detect boot_mode", "error", err)
			return
		}
	}
	var secure *bool
	if s, ok := t.Driver.Management.(driver.SecureBootManager); ok {
		v, err := s.GetSecureBootState(ctx, dt)
		switch {
		case err == nil:
			secure = &v
		case !errs.Is(err, errs.ClassUnsupportedDriverExtension):
			t.Log().WarnContext(ctx, "unexpected exception when trying to detect secure_boot state", "error", err)
			return
		}
	}
	if sameValue(mode, t.Node.BootMode) && sameBool(secure, t.Node.SecureBoot) {
		return
	}
	if err := upgradeFor(ctx, t, "caching boot_mode or secure_boot state"); err != nil {
		t.Log().WarnContext(ctx, "could not lock the node to cache its boot mode", "error", err)
		return
	}
	n := t.Node
	n.BootMode, n.SecureBoot = mode, secure
	if err := t.Save(ctx); err != nil {
		t.Log().ErrorContext(ctx, "saving boot_mode and secure_boot", "error", err)
		return
	}
	t.Log().InfoContext(ctx, "updated boot_mode and secure_boot", "boot_mode", derefStr(mode), "secure_boot", secure != nil && *secure)
}

// upgradeFor takes the exclusive lock for purpose when the task holds a
// shared one, leaving an exclusive task's purpose as it was.
func upgradeFor(ctx context.Context, t *task.Task, purpose string) error {
	if !t.Shared() {
		return nil
	}
	return t.UpgradeLock(ctx, task.UpgradeOptions{Purpose: purpose})
}

func sameBool(a, b *bool) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}
