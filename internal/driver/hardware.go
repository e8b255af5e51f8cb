package driver

// HardwareType is a hardware type (upstream AbstractHardwareType subclass):
// for each interface kind, the implementation names it supports, in order
// of preference; the first enabled one is the default.
type HardwareType struct {
	// Name is the entry-point name (node.driver).
	Name string
	// ClassName is upstream's class name, which error messages show.
	ClassName string
	// Supported lists implementation names per kind, first = preferred.
	Supported map[Kind][]string
	// AnyInterface lets a node use any enabled implementation whatever the
	// supported lists say; upstream grants this to fake-hardware only, so
	// tests can combine any interfaces. The lists still give its defaults.
	AnyInterface bool
}

// Supports reports whether name is in the supported list of kind.
func (h *HardwareType) Supports(kind Kind, name string) bool {
	for _, n := range h.Supported[kind] {
		if n == name {
			return true
		}
	}
	return false
}

// StockHardwareTypes returns the declarations of upstream's hardware types.
// The lists are upstream's supported_<kind>_interfaces resolved to
// entry-point names; a supported class without an entry point (fake-hardware
// also lists FakeVendorA) cannot be named by a node and is left out.
// Implementations of these names are registered by their own packages.
func StockHardwareTypes() []HardwareType {
	return []HardwareType{
		{
			Name: "fake-hardware", ClassName: "FakeHardware",
			AnyInterface: true,
			Supported: map[Kind][]string{
				KindBIOS:       {"fake", "no-bios"},
				KindBoot:       {"fake", "ipxe", "pxe", "http-ipxe", "http"},
				KindConsole:    {"fake", "no-console", "fake-graphical"},
				KindDeploy:     {"fake", "autodetect", "direct", "ansible", "ramdisk", "anaconda", "bootc", "custom-agent"},
				KindFirmware:   {"fake", "no-firmware"},
				KindInspect:    {"fake", "agent", "no-inspect"},
				KindManagement: {"fake"},
				KindNetwork:    {"flat", "neutron", "ironic-networking", "noop"},
				KindPower:      {"fake"},
				KindRAID:       {"fake", "no-raid", "agent"},
				KindRescue:     {"fake", "no-rescue", "agent"},
				KindStorage:    {"fake", "noop", "cinder", "external"},
				KindVendor:     {"fake", "no-vendor"},
			},
		},
		{
			Name: "idrac", ClassName: "IDRACHardware",
			Supported: map[Kind][]string{
				KindBIOS:       {"idrac-redfish", "redfish", "no-bios"},
				KindBoot:       {"ipxe", "pxe", "http-ipxe", "http", "idrac-redfish-virtual-media", "redfish-https"},
				KindConsole:    {"redfish-graphical", "ipmitool-socat", "no-console", "fake-graphical"},
				KindDeploy:     {"autodetect", "direct", "ansible", "ramdisk", "anaconda", "bootc", "custom-agent"},
				KindFirmware:   {"redfish", "no-firmware"},
				KindInspect:    {"idrac-redfish", "agent", "no-inspect"},
				KindManagement: {"idrac-redfish"},
				KindNetwork:    {"flat", "neutron", "ironic-networking", "noop"},
				KindPower:      {"idrac-redfish", "redfish"},
				KindRAID:       {"idrac-redfish", "no-raid", "agent"},
				KindRescue:     {"no-rescue", "agent"},
				KindStorage:    {"noop", "cinder", "external"},
				KindVendor:     {"idrac-redfish", "redfish", "no-vendor"},
			},
		},
		{
			Name: "intel-ipmi", ClassName: "IntelIPMIHardware",
			Supported: map[Kind][]string{
				KindBIOS:       {"no-bios"},
				KindBoot:       {"ipxe", "pxe", "http-ipxe", "http"},
				KindConsole:    {"ipmitool-socat", "no-console", "fake-graphical"},
				KindDeploy:     {"autodetect", "direct", "ansible", "ramdisk", "anaconda", "bootc", "custom-agent"},
				KindFirmware:   {"no-firmware"},
				KindInspect:    {"agent", "no-inspect"},
				KindManagement: {"intel-ipmitool"},
				KindNetwork:    {"flat", "neutron", "ironic-networking", "noop"},
				KindPower:      {"ipmitool"},
				KindRAID:       {"no-raid", "agent"},
				KindRescue:     {"no-rescue", "agent"},
				KindStorage:    {"noop", "cinder", "external"},
				KindVendor:     {"ipmitool", "no-vendor"},
			},
		},
		{
			Name: "ipmi", ClassName: "IPMIHardware",
			Supported: map[Kind][]string{
				KindBIOS:       {"no-bios"},
				KindBoot:       {"ipxe", "pxe", "http-ipxe", "http"},
				KindConsole:    {"ipmitool-socat", "no-console", "fake-graphical"},
				KindDeploy:     {"autodetect", "direct", "ansible", "ramdisk", "anaconda", "bootc", "custom-agent"},
				KindFirmware:   {"no-firmware"},
				KindInspect:    {"agent", "no-inspect"},
				KindManagement: {"ipmitool", "noop"},
				KindNetwork:    {"flat", "neutron", "ironic-networking", "noop"},
				KindPower:      {"ipmitool"},
				KindRAID:       {"no-raid", "agent"},
				KindRescue:     {"no-rescue", "agent"},
				KindStorage:    {"noop", "cinder", "external"},
				KindVendor:     {"ipmitool", "no-vendor"},
			},
		},
		{
			Name: "manual-management", ClassName: "ManualManagementHardware",
			Supported: map[Kind][]string{
				KindBIOS:       {"no-bios"},
				KindBoot:       {"ipxe", "pxe", "http-ipxe", "http"},
				KindConsole:    {"no-console", "fake-graphical"},
				KindDeploy:     {"autodetect", "direct", "ansible", "ramdisk", "anaconda", "bootc", "custom-agent", "noop"},
				KindFirmware:   {"no-firmware"},
				KindInspect:    {"agent", "no-inspect"},
				KindManagement: {"noop", "fake"},
				KindNetwork:    {"flat", "neutron", "ironic-networking", "noop"},
				KindPower:      {"agent", "fake"},
				KindRAID:       {"no-raid", "agent"},
				KindRescue:     {"no-rescue", "agent"},
				KindStorage:    {"noop", "cinder", "external"},
				KindVendor:     {"no-vendor"},
			},
		},
		{
			Name: "redfish", ClassName: "RedfishHardware",
			Supported: map[Kind][]string{
				KindBIOS:       {"redfish", "no-bios"},
				KindBoot:       {"ipxe", "pxe", "http-ipxe", "http", "redfish-virtual-media", "redfish-https"},
				KindConsole:    {"redfish-graphical", "ipmitool-socat", "no-console", "fake-graphical"},
				KindDeploy:     {"autodetect", "direct", "ansible", "ramdisk", "anaconda", "bootc", "custom-agent"},
				KindFirmware:   {"redfish", "no-firmware"},
				KindInspect:    {"redfish", "agent", "no-inspect"},
				KindManagement: {"redfish", "noop"},
				KindNetwork:    {"flat", "neutron", "ironic-networking", "noop"},
				KindPower:      {"redfish"},
				KindRAID:       {"redfish", "no-raid", "agent"},
				KindRescue:     {"no-rescue", "agent"},
				KindStorage:    {"noop", "cinder", "external"},
				KindVendor:     {"redfish", "no-vendor"},
			},
		},
	}
}
