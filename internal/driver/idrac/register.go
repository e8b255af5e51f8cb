// Package idrac is upstream's idrac hardware type interfaces
// (ironic/drivers/modules/drac): the redfish implementations composed with
// the Dell OEM behaviour of iDRAC (Managers/iDRAC.Embedded.1 Oem/Dell
// services): the Lifecycle Controller job queue, the iDRAC reset, the
// boot from virtual media through a system configuration profile import,
// and the conversion of physical disks to RAID mode before volumes are
// created.
//
// Master dropped the configuration molds (the export_configuration,
// import_configuration and import_export_configuration steps and the
// [molds] section) in 2026.1 after bug 2148317, so this package offers
// neither: drivers.json lists the steps of master's classes.
package idrac

import (
	"fmt"
	"time"

	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/driver/redfish"
)

// Options are the [drac] options the redfish-based interfaces read.
type Options struct {
	// RAIDJobTimeout bounds the wait for a RAID job started inside a step
	// (the conversion of drives to RAID mode): [drac]/raid_job_timeout.
	RAIDJobTimeout time.Duration
	// QueryRAIDConfigJobStatusInterval is the period of the poll of the
	// iDRAC jobs a RAID step left: [drac]/query_raid_config_job_status_interval.
	QueryRAIDConfigJobStatusInterval time.Duration
}

// DefaultOptions are the [drac] defaults.
func DefaultOptions() Options {
	return Options{RAIDJobTimeout: 300 * time.Second, QueryRAIDConfigJobStatusInterval: 120 * time.Second}
}

// OptionsFromConfig reads [drac].
func OptionsFromConfig(c *config.Config) Options {
	return Options{
		RAIDJobTimeout:                   time.Duration(c.IntOf(config.DracRAIDJobTimeout)) * time.Second,
		QueryRAIDConfigJobStatusInterval: time.Duration(c.IntOf(config.DracQueryRAIDConfigJobStatusInterval)) * time.Second,
	}
}

// Register adds the idrac-redfish implementations of power, management,
// inspect, bios, raid and vendor and the idrac-redfish-virtual-media boot
// interface to r. They share one connection cache of their own; the
// plain redfish implementations the idrac type also supports (redfish
// power, bios, vendor, redfish-https boot) are registered by the redfish
// package.
func Register(r *driver.Registry, ropts redfish.Options, boot redfish.BootOptions, opts Options) error {
	if opts.RAIDJobTimeout <= 0 {
		opts.RAIDJobTimeout = DefaultOptions().RAIDJobTimeout
	}
	d := &dell{opts: opts}
	d.set = redfish.NewSet(ropts, boot, redfish.Extensions{
		VirtualBootDevice: d.setVirtualBootDevice,
		AcceptableMediaID: d.acceptableMediaID,
		BeforeRAIDCreate:  d.convertDrivesToRAID,
		SystemVendor:      serviceTagAsSerial,
		PXEPortMACs:       d.pxePortMACs,
		LLDP:              d.switchLLDP,
	})
	for _, i := range []struct {
		kind driver.Kind
		name string
		impl driver.Interface
	}{
		{driver.KindPower, "idrac-redfish", &Power{Power: d.set.Power}},
		{driver.KindManagement, "idrac-redfish", &Management{Management: d.set.Management, dell: d}},
		{driver.KindBoot, "idrac-redfish-virtual-media", &VirtualMediaBoot{VirtualMediaBoot: d.set.VirtualMedia}},
		{driver.KindInspect, "idrac-redfish", &Inspect{Inspect: d.set.Inspect}},
		{driver.KindBIOS, "idrac-redfish", &BIOS{BIOS: d.set.BIOS}},
		{driver.KindRAID, "idrac-redfish", &RAID{RAID: d.set.RAID, dell: d}},
		{driver.KindVendor, "idrac-redfish", &Vendor{Vendor: d.set.Vendor}},
	} {
		if err := r.Register(i.kind, i.name, i.impl); err != nil {
			return fmt.Errorf("register idrac interfaces: %w", err)
		}
	}
	return nil
}

// Power is upstream DracRedfishPower: the redfish power interface as is.
type Power struct{ *redfish.Power }

// BIOS is upstream DracRedfishBIOS: the redfish BIOS interface as is.
type BIOS struct{ *redfish.BIOS }

// Vendor is upstream DracRedfishVendorPassthru: the redfish vendor
// passthru as is.
type Vendor struct{ *redfish.Vendor }

// Inspect is upstream DracRedfishInspect: out-of-band inspection as the
// redfish interface does it, with the service tag as serial number, the
// PXE interface from the BIOS settings (or the exported NIC configuration
// in legacy BIOS mode) and LLDP from the iDRAC's switch connections.
type Inspect struct{ *redfish.Inspect }

// VirtualMediaBoot is upstream DracRedfishVirtualMediaBoot: the redfish
// virtual media boot whose boot from the virtual CD goes through the Dell
// OEM configuration import (setVirtualBootDevice) and whose inserts use
// only slot 1 on iDRAC10 (acceptableMediaID).
type VirtualMediaBoot struct{ *redfish.VirtualMediaBoot }

var (
	_ driver.PowerInterface      = (*Power)(nil)
	_ driver.BIOSInterface       = (*BIOS)(nil)
	_ driver.VendorInterface     = (*Vendor)(nil)
	_ driver.InspectInterface    = (*Inspect)(nil)
	_ driver.BootInterface       = (*VirtualMediaBoot)(nil)
	_ driver.ManagementInterface = (*Management)(nil)
	_ driver.RAIDInterface       = (*RAID)(nil)
)
