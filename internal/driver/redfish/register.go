package redfish

import (
	"fmt"

	"github.com/openkeel/ironic/internal/driver"
)

// Register adds the redfish power and management implementations to r.
// They share one connection cache, so a BMC session opened by one is used
// by the other.
func Register(r *driver.Registry, opts Options) error {
	c := newCore(opts, opts.Log)
	for _, i := range []struct {
		kind driver.Kind
		impl driver.Interface
	}{
		{driver.KindPower, &Power{core: c}},
		{driver.KindManagement, &Management{core: c}},
	} {
		if err := r.Register(i.kind, "redfish", i.impl); err != nil {
			return fmt.Errorf("register redfish interfaces: %w", err)
		}
	}
	return nil
}
