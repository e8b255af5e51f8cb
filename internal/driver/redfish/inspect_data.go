package redfish

import (
	"context"

	"github.com/openkeel/ironic/internal/driver"
)

// DiscoveredHardware is DiscoverHardware in plain values: the conductor,
// which persists the ports, inventory and properties, matches it through a
// capability interface and so never depends on this package's types.
func (i *Inspect) DiscoveredHardware(ctx context.Context, task *driver.Task) (properties map[string]any, macs []string, inventory map[string]any, err error) {
	res, err := i.DiscoverHardware(ctx, task)
	if err != nil {
		return nil, nil, nil, err
	}
	return res.Properties, res.MACs, res.Inventory, nil
}
