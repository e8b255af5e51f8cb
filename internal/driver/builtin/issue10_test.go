package builtin

import (
	"maps"
	"testing"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/driver/drivertest"
)

// Every boot, deploy and network interface of issue #10 is in the registry
// the service builds from a stock configuration, under upstream's entry
// point name, implementing its kind and showing upstream's properties.
func TestBootImageNetworkInterfacesRegistered(t *testing.T) {
	spec := drivertest.LoadSpec(t)
	r := registryFrom(t, nil)
	want := map[driver.Kind][]string{
		driver.KindBoot:    {"redfish-virtual-media", "redfish-https", "pxe", "ipxe", "http-ipxe", "http", "fake"},
		driver.KindDeploy:  {"ramdisk", "direct", "fake"},
		driver.KindNetwork: {"noop", "flat", "neutron"},
	}
	for kind, names := range want {
		for _, name := range names {
			impl, ok := r.Implementation(kind, name)
			if !ok {
				t.Errorf("%s interface %s not registered", kind, name)
				continue
			}
			var isKind bool
			switch kind {
			case driver.KindBoot:
				_, isKind = impl.(driver.BootInterface)
			case driver.KindDeploy:
				_, isKind = impl.(driver.DeployInterface)
			case driver.KindNetwork:
				_, isKind = impl.(driver.NetworkInterface)
			}
			if !isKind {
				t.Errorf("%s interface %s is a %T", kind, name, impl)
			}
			class, ok := spec.Interfaces[string(kind)][name]
			if !ok {
				t.Errorf("%s interface %s: upstream has no such entry point", kind, name)
				continue
			}
			if got, want := impl.Properties(), spec.Classes[class].Properties; !maps.Equal(got, want) {
				t.Errorf("%s interface %s (%s) properties:\n got  %v\n want %v", kind, name, class, got, want)
			}
		}
	}
}
