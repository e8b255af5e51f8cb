package redfish

import (
	"fmt"

	"github.com/openkeel/ironic/internal/driver"
)

// Register adds the redfish power, management, inspect, bios
// and redfish-virtual-media boot implementations to r. They share one connection cache, so a BMC
// session opened by one is used by the others. The boot interface takes
// boot (at most one); without it, DefaultBootOptions, which can validate
// nodes but cannot publish images.
func Register(r *driver.Registry, opts Options, boot ...BootOptions) error {
	bo := DefaultBootOptions()
	switch len(boot) {
	case 0:
	case 1:
		bo = boot[0]
	default:
		return fmt.Errorf("register redfish interfaces: %d boot option sets given", len(boot))
	}
	c := newCore(opts, opts.Log)
	mgmt := &Management{core: c, images: bo}
	for _, i := range []struct {
		kind driver.Kind
		name string
		impl driver.Interface
	}{
		{driver.KindPower, "redfish", &Power{core: c}},
		{driver.KindManagement, "redfish", mgmt},
		{driver.KindBoot, "redfish-virtual-media", &VirtualMediaBoot{core: c, mgmt: mgmt, opts: bo}},
		{driver.KindBoot, "redfish-https", newHTTPSBoot(c, mgmt, bo)},
		{driver.KindInspect, "redfish", &Inspect{core: c}},
		{driver.KindBIOS, "redfish", &BIOS{core: c}},
		{driver.KindRAID, "redfish", &RAID{core: c}},
		{driver.KindFirmware, "redfish", &Firmware{core: c}},
		{driver.KindVendor, "redfish", &Vendor{core: c}},
	} {
		if err := r.Register(i.kind, i.name, i.impl); err != nil {
			return fmt.Errorf("register redfish interfaces: %w", err)
		}
	}
	return nil
}
