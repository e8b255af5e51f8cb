// Package driver holds Ironic's driver composition model: the thirteen
// interface kinds, the hardware types that list which implementations they
// support, the registry of implementations built at start-up, default
// interface resolution (upstream ironic/common/driver_factory.py) and the
// step declarations that implementations carry as data.
//
// Implementations live in sub-packages (fake, noop, redfish, ipmi, ...) and
// register themselves through their own Register function; nothing is found
// by reflection.
package driver

// Kind names an interface kind exactly as upstream does (the suffix of the
// node's <kind>_interface column and of [DEFAULT]enabled_<kind>_interfaces).
type Kind string

// The thirteen interface kinds of upstream BareDriver.
const (
	KindBIOS       Kind = "bios"
	KindBoot       Kind = "boot"
	KindConsole    Kind = "console"
	KindDeploy     Kind = "deploy"
	KindFirmware   Kind = "firmware"
	KindInspect    Kind = "inspect"
	KindManagement Kind = "management"
	KindNetwork    Kind = "network"
	KindPower      Kind = "power"
	KindRAID       Kind = "raid"
	KindRescue     Kind = "rescue"
	KindStorage    Kind = "storage"
	KindVendor     Kind = "vendor"
)

// AllKinds lists every interface kind in alphabetical order. Upstream walks
// a Python set here, so no order is significant; a fixed one keeps error
// reporting deterministic.
var AllKinds = []Kind{
	KindBIOS, KindBoot, KindConsole, KindDeploy, KindFirmware, KindInspect,
	KindManagement, KindNetwork, KindPower, KindRAID, KindRescue, KindStorage,
	KindVendor,
}

// CoreKinds are the interfaces every driver must provide (BareDriver.core_interfaces).
var CoreKinds = []Kind{KindBoot, KindDeploy, KindManagement, KindNetwork, KindPower}

// OptionalKinds are BareDriver.optional_interfaces; vendor is separate upstream.
var OptionalKinds = []Kind{KindBIOS, KindConsole, KindFirmware, KindInspect, KindRAID, KindRescue, KindStorage}

// Valid reports whether k is one of the thirteen kinds.
func (k Kind) Valid() bool {
	for _, x := range AllKinds {
		if x == k {
			return true
		}
	}
	return false
}

// Entrypoint is the name of upstream's stevedore namespace for the kind; it
// appears verbatim in error messages clients may show.
func (k Kind) Entrypoint() string {
	return "ironic.hardware.interfaces." + string(k)
}

// HardwareTypesEntrypoint is the stevedore namespace of hardware types.
const HardwareTypesEntrypoint = "ironic.hardware.types"
