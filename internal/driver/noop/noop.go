// Package noop holds upstream's "no-*" and "noop" implementations
// (ironic/drivers/modules/noop.py, noop_mgmt.py, network/noop.py,
// storage/noop.py): the defaults for optional interfaces. The no-*
// ones fail validation and every user-visible action with
// UnsupportedDriverExtension; the noop ones succeed without doing anything.
package noop

import (
	"context"
	"fmt"

	"github.com/openkeel/ironic/internal/driver"
)

// Register adds every no-op implementation to r under upstream's names.
func Register(r *driver.Registry) error {
	for _, i := range []struct {
		kind driver.Kind
		name string
		impl driver.Interface
	}{
		{driver.KindBIOS, "no-bios", NoBIOS{}},
		{driver.KindConsole, "no-console", NoConsole{}},
		{driver.KindDeploy, "noop", NoDeploy{}},
		{driver.KindFirmware, "no-firmware", NoFirmware{}},
		{driver.KindInspect, "no-inspect", NoInspect{}},
		{driver.KindManagement, "noop", Management{}},
		{driver.KindNetwork, "noop", Network{}},
		{driver.KindRAID, "no-raid", NoRAID{}},
		{driver.KindRescue, "no-rescue", NoRescue{}},
		{driver.KindStorage, "noop", Storage{}},
		{driver.KindVendor, "no-vendor", NoVendor{}},
	} {
		if err := r.Register(i.kind, i.name, i.impl); err != nil {
			return fmt.Errorf("register no-op interfaces: %w", err)
		}
	}
	return nil
}

// base gives every no-op implementation empty properties and no steps.
type base struct{ driver.NoSteps }

func (base) Properties() map[string]string { return map[string]string{} }

// failing is upstream's FailMixin for one kind: validation and actions
// raise UnsupportedDriverExtension naming the node's hardware type.
type failing struct{ base }

func fail(task *driver.Task, kind driver.Kind) error { return driver.Unsupported(task, kind) }

// NoBIOS is "no-bios".
type NoBIOS struct{ failing }

var _ driver.BIOSInterface = NoBIOS{}

// Validate fails.
func (NoBIOS) Validate(_ context.Context, t *driver.Task) error { return fail(t, driver.KindBIOS) }

// ApplyConfiguration fails.
func (NoBIOS) ApplyConfiguration(_ context.Context, t *driver.Task, _ []map[string]any) (string, error) {
	return "", fail(t, driver.KindBIOS)
}

// FactoryReset fails.
func (NoBIOS) FactoryReset(_ context.Context, t *driver.Task) (string, error) {
	return "", fail(t, driver.KindBIOS)
}

// CacheBIOSSettings succeeds: there is nothing to cache, and the conductor
// calls it on every node without checking the interface.
func (NoBIOS) CacheBIOSSettings(context.Context, *driver.Task) error { return nil }

// NoConsole is "no-console".
type NoConsole struct{ failing }

var _ driver.ConsoleInterface = NoConsole{}

// Validate fails.
func (NoConsole) Validate(_ context.Context, t *driver.Task) error {
	return fail(t, driver.KindConsole)
}

// StartConsole fails.
func (NoConsole) StartConsole(_ context.Context, t *driver.Task) error {
	return fail(t, driver.KindConsole)
}

// StopConsole fails.
func (NoConsole) StopConsole(_ context.Context, t *driver.Task) error {
	return fail(t, driver.KindConsole)
}

// GetConsole fails.
func (NoConsole) GetConsole(_ context.Context, t *driver.Task) (map[string]any, error) {
	return nil, fail(t, driver.KindConsole)
}

// NoFirmware is "no-firmware".
type NoFirmware struct{ failing }

var _ driver.FirmwareInterface = NoFirmware{}

// Validate fails.
func (NoFirmware) Validate(_ context.Context, t *driver.Task) error {
	return fail(t, driver.KindFirmware)
}

// Update fails.
func (NoFirmware) Update(_ context.Context, t *driver.Task, _ []map[string]any) (string, error) {
	return "", fail(t, driver.KindFirmware)
}

// CacheFirmwareComponents succeeds with nothing to cache, as upstream.
func (NoFirmware) CacheFirmwareComponents(context.Context, *driver.Task) error { return nil }

// NoInspect is "no-inspect".
type NoInspect struct{ failing }

var _ driver.InspectInterface = NoInspect{}

// Validate fails.
func (NoInspect) Validate(_ context.Context, t *driver.Task) error {
	return fail(t, driver.KindInspect)
}

// InspectHardware fails.
func (NoInspect) InspectHardware(_ context.Context, t *driver.Task) (string, error) {
	return "", fail(t, driver.KindInspect)
}

// NoRAID is "no-raid".
type NoRAID struct{ failing }

var (
	_ driver.RAIDInterface       = NoRAID{}
	_ driver.RAIDConfigValidator = NoRAID{}
)

// Validate fails.
func (NoRAID) Validate(_ context.Context, t *driver.Task) error { return fail(t, driver.KindRAID) }

// CreateConfiguration fails.
func (NoRAID) CreateConfiguration(_ context.Context, t *driver.Task, _, _, _ bool) (string, error) {
	return "", fail(t, driver.KindRAID)
}

// DeleteConfiguration fails.
func (NoRAID) DeleteConfiguration(_ context.Context, t *driver.Task) (string, error) {
	return "", fail(t, driver.KindRAID)
}

// ValidateRAIDConfig fails, so setting a target RAID config is refused.
func (NoRAID) ValidateRAIDConfig(_ context.Context, t *driver.Task, _ map[string]any) error {
	return fail(t, driver.KindRAID)
}

// NoRescue is "no-rescue".
type NoRescue struct{ failing }

var _ driver.RescueInterface = NoRescue{}

// Validate fails.
func (NoRescue) Validate(_ context.Context, t *driver.Task) error {
	return fail(t, driver.KindRescue)
}

// Rescue fails.
func (NoRescue) Rescue(_ context.Context, t *driver.Task) (string, error) {
	return "", fail(t, driver.KindRescue)
}

// Unrescue fails.
func (NoRescue) Unrescue(_ context.Context, t *driver.Task) (string, error) {
	return "", fail(t, driver.KindRescue)
}

// NoVendor is "no-vendor".
type NoVendor struct{ failing }

var (
	_ driver.VendorInterface = NoVendor{}
	_ driver.DriverValidator = NoVendor{}
)

// Validate fails for any method.
func (NoVendor) Validate(_ context.Context, t *driver.Task, _ string, _ map[string]any) error {
	return fail(t, driver.KindVendor)
}

// DriverValidate fails; with no node at hand upstream names the class.
func (NoVendor) DriverValidate(context.Context, string, map[string]any) error {
	return driver.ErrUnsupportedDriverExtension("NoVendor", driver.KindVendor)
}

// VendorRoutes is empty.
func (NoVendor) VendorRoutes() map[string]driver.PassthruRoute { return nil }

// DriverRoutes is empty.
func (NoVendor) DriverRoutes() map[string]driver.PassthruRoute { return nil }
