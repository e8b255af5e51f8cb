package fake

import (
	"context"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/states"
)

// Inspect is upstream FakeInspect: inspection ends at once in manageable.
type Inspect struct {
	driver.NoSteps
	noProperties
	accept
	delay delay
}

var _ driver.InspectInterface = (*Inspect)(nil)

// InspectHardware answers "manageable".
func (i *Inspect) InspectHardware(ctx context.Context, _ *driver.Task) (string, error) {
	if err := i.delay.sleep(ctx); err != nil {
		return "", err
	}
	return states.Manageable, nil
}

// RAID is upstream FakeRAID: creating and deleting succeed without effect;
// configurations are checked as by the base RAIDInterface it inherits.
type RAID struct {
	driver.NoSteps
	noProperties
	delay delay
}

var (
	_ driver.RAIDInterface       = (*RAID)(nil)
	_ driver.RAIDConfigValidator = (*RAID)(nil)
)

// Validate checks target_raid_config when one is set.
func (r *RAID) Validate(_ context.Context, task *driver.Task) error {
	if len(task.Node.TargetRAIDConfig) == 0 {
		return nil
	}
	return driver.ValidateRAIDConfig(task.Node.TargetRAIDConfig)
}

// ValidateRAIDConfig checks raidConfig against the RAID schema.
func (r *RAID) ValidateRAIDConfig(_ context.Context, _ *driver.Task, raidConfig map[string]any) error {
	return driver.ValidateRAIDConfig(raidConfig)
}

// CreateConfiguration does nothing.
func (r *RAID) CreateConfiguration(ctx context.Context, _ *driver.Task, _, _, _ bool) (string, error) {
	return "", r.delay.sleep(ctx)
}

// DeleteConfiguration does nothing.
func (r *RAID) DeleteConfiguration(ctx context.Context, _ *driver.Task) (string, error) {
	return "", r.delay.sleep(ctx)
}

// Storage is upstream FakeStorage.
type Storage struct {
	driver.NoSteps
	noProperties
	accept
	delay delay
}

var _ driver.StorageInterface = (*Storage)(nil)

// AttachVolumes does nothing.
func (s *Storage) AttachVolumes(ctx context.Context, _ *driver.Task) error { return s.delay.sleep(ctx) }

// DetachVolumes does nothing.
func (s *Storage) DetachVolumes(ctx context.Context, _ *driver.Task) error { return s.delay.sleep(ctx) }

// ShouldWriteImage answers true: the fake node boots from its own disk.
func (s *Storage) ShouldWriteImage(context.Context, *driver.Task) bool { return true }

// Rescue is upstream FakeRescue.
type Rescue struct {
	driver.NoSteps
	noProperties
	accept
	delay delay
}

var _ driver.RescueInterface = (*Rescue)(nil)

// Rescue answers "rescue".
func (r *Rescue) Rescue(ctx context.Context, _ *driver.Task) (string, error) {
	if err := r.delay.sleep(ctx); err != nil {
		return "", err
	}
	return states.Rescue, nil
}

// Unrescue answers "active".
func (r *Rescue) Unrescue(ctx context.Context, _ *driver.Task) (string, error) {
	if err := r.delay.sleep(ctx); err != nil {
		return "", err
	}
	return states.Active, nil
}
