package pxe

import (
	"maps"
	"slices"
	"testing"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/spectest"
)

// TestRegisteredClassesMatchDriversJSON checks every interface Register
// adds against its upstream class in drivers.json: entry point, kind and
// get_properties().
func TestRegisteredClassesMatchDriversJSON(t *testing.T) {
	var spec struct {
		Interfaces map[string]map[string]string `json:"interfaces"`
		Classes    map[string]struct {
			InterfaceType string            `json:"interface_type"`
			Properties    map[string]string `json:"properties"`
		} `json:"classes"`
	}
	spectest.LoadJSON(t, "ironic/core/drivers.json", &spec)
	r := driver.NewRegistry()
	if err := Register(r, DefaultOptions()); err != nil {
		t.Fatal(err)
	}
	names := r.Names(driver.KindBoot)
	if len(names) != 4 {
		t.Fatalf("registered %v, want pxe, ipxe, http and http-ipxe", names)
	}
	for _, name := range names {
		class, ok := spec.Interfaces["boot"][name]
		if !ok {
			t.Errorf("boot %s: no such entry point upstream", name)
			continue
		}
		c := spec.Classes[class]
		impl, _ := r.Implementation(driver.KindBoot, name)
		if c.InterfaceType != "boot" {
			t.Errorf("%s: interface_type %q", class, c.InterfaceType)
		}
		if got := impl.Properties(); !maps.Equal(got, c.Properties) {
			t.Errorf("%s properties differ:\n got  %v\n want %v", class, got, c.Properties)
		}
	}
}

// TestCapabilities checks the capabilities upstream's classes declare
// (pxe.py PXEBoot/HttpBoot, ipxe.py iPXEBoot/iPXEHttpBoot); drivers.json
// does not carry them.
func TestCapabilities(t *testing.T) {
	o := DefaultOptions()
	for _, tc := range []struct {
		b    *Boot
		want []string
	}{
		{NewPXE(o), []string{"ramdisk_boot", "pxe_boot"}},
		{NewHTTP(o), []string{"ramdisk_boot", "pxe_boot"}},
		{NewIPXE(o), []string{"iscsi_volume_boot", "ramdisk_boot", "ipxe_boot", "pxe_boot"}},
		{NewHTTPIPXE(o), []string{"iscsi_volume_boot", "ramdisk_boot", "ipxe_boot", "pxe_boot"}},
	} {
		if got := tc.b.Capabilities(); !slices.Equal(got, tc.want) {
			t.Errorf("ipxe=%v http=%v: capabilities %v, want %v", tc.b.ipxe, tc.b.httpBoot, got, tc.want)
		}
	}
}
