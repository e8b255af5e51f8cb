package pxe

import (
	"slices"
	"testing"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/driver/drivertest"
)

// TestRegisteredClassesMatchDriversJSON checks every interface Register
// adds against its upstream class in drivers.json: entry point, kind,
// get_properties() and steps (none).
func TestRegisteredClassesMatchDriversJSON(t *testing.T) {
	r := driver.NewRegistry()
	if err := Register(r, DefaultOptions()); err != nil {
		t.Fatal(err)
	}
	if checked := drivertest.CheckRegistered(t, drivertest.LoadSpec(t), r, &driver.Task{}); len(checked) != 4 {
		t.Fatalf("checked %v, want pxe, ipxe, http and http-ipxe", checked)
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
