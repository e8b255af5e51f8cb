package redfishbmc

// What a machine behind the BMC sees when it starts (testing/vbm drives
// machines from these): the device it boots from and the media inserted.

// BootDevice is where a system starts after a power on or a reset.
type BootDevice struct {
	// Target is BootSourceOverrideTarget when an override is enabled,
	// "Hdd" otherwise (the machine's own boot order starts the disk).
	Target string
	// HTTPBootURI is the UEFI HTTP boot URI for a UefiHttp target.
	HTTPBootURI string
	// Media is the image URL inserted in the virtual CD, "" when none.
	Media string
}

// StartBoot returns the device system id boots from now, and, as a BMC
// does at POST, clears a one-time override.
func (b *BMC) StartBoot(id string) BootDevice {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.mustSystem(id)
	d := BootDevice{Target: "Hdd", HTTPBootURI: s.HTTPBootURI}
	if s.BootEnabled == "Once" || s.BootEnabled == "Continuous" {
		d.Target = s.BootTarget
	}
	if d.Target == "None" {
		d.Target = "Hdd"
	}
	if s.BootEnabled == "Once" {
		s.BootEnabled = "Disabled"
	}
	if vm := b.manager.VirtualMedia["Cd"]; vm != nil && vm.Inserted {
		d.Media = vm.Image
	}
	return d
}
