package container

import (
	"context"

	"github.com/openkeel/ironic/internal/model"
)

// Fake is upstream's fake provider, the default: no container runs and
// the console points at a TEST-NET-1 address no client can reach.
type Fake struct{}

// Name is "fake".
func (Fake) Name() string { return "fake" }

// Start answers 192.0.2.1:5900.
func (Fake) Start(context.Context, *model.Node, string, map[string]any) (string, int, error) {
	return "192.0.2.1", 5900, nil
}

// Stop does nothing.
func (Fake) Stop(context.Context, *model.Node) error { return nil }

// StopAll does nothing.
func (Fake) StopAll(context.Context) error { return nil }
