package fake

import (
	"context"

	"github.com/openkeel/ironic/internal/driver"
)

// Console is upstream FakeConsole: starting and stopping succeed and the
// console description is empty.
type Console struct {
	driver.NoSteps
	noProperties
	accept
}

var _ driver.ConsoleInterface = (*Console)(nil)

// StartConsole does nothing.
func (Console) StartConsole(context.Context, *driver.Task) error { return nil }

// StopConsole does nothing.
func (Console) StopConsole(context.Context, *driver.Task) error { return nil }

// GetConsole returns an empty description.
func (Console) GetConsole(context.Context, *driver.Task) (map[string]any, error) {
	return map[string]any{}, nil
}
