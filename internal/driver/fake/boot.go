package fake

import (
	"context"

	"github.com/openkeel/ironic/internal/driver"
)

// Boot is upstream FakeBoot: every operation succeeds after the delay.
type Boot struct {
	driver.NoSteps
	noProperties
	accept
	delay delay
}

var _ driver.BootInterface = (*Boot)(nil)

// Capabilities are upstream FakeBoot.capabilities, which unit tests of boot
// option handling rely on.
func (b *Boot) Capabilities() []string { return []string{"ipxe_boot", "pxe_boot"} }

// PrepareRamdisk does nothing.
func (b *Boot) PrepareRamdisk(ctx context.Context, _ *driver.Task, _ map[string]any) error {
	return b.delay.sleep(ctx)
}

// CleanUpRamdisk does nothing.
func (b *Boot) CleanUpRamdisk(ctx context.Context, _ *driver.Task) error { return b.delay.sleep(ctx) }

// PrepareInstance does nothing.
func (b *Boot) PrepareInstance(ctx context.Context, _ *driver.Task) error { return b.delay.sleep(ctx) }

// CleanUpInstance does nothing.
func (b *Boot) CleanUpInstance(ctx context.Context, _ *driver.Task) error { return b.delay.sleep(ctx) }
