package driver_test

import (
	"reflect"
	"testing"

	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/driver"
)

func TestSettingsFromConfig(t *testing.T) {
	c, err := config.Load(config.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := driver.SettingsFromConfig(c)
	want := stockSettings(t)
	// nil and empty lists both mean "computed"; compare them alike.
	for _, k := range driver.AllKinds {
		if len(got.EnabledInterfaces[k]) == 0 && len(want.EnabledInterfaces[k]) == 0 {
			got.EnabledInterfaces[k], want.EnabledInterfaces[k] = nil, nil
		}
		if _, ok := want.DefaultInterfaces[k]; !ok {
			want.DefaultInterfaces[k] = ""
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("stock settings:\n got  %+v\n want %+v", got, want)
	}

	c, err = config.Load(config.LoadOptions{Overrides: map[string]map[string]string{"DEFAULT": {
		"enabled_hardware_types":   "fake-hardware",
		"enabled_power_interfaces": "fake",
		"default_deploy_interface": "fake",
	}}})
	if err != nil {
		t.Fatal(err)
	}
	s := driver.SettingsFromConfig(c)
	if !reflect.DeepEqual(s.EnabledHardwareTypes, []string{"fake-hardware"}) ||
		!reflect.DeepEqual(s.EnabledInterfaces[driver.KindPower], []string{"fake"}) ||
		s.DefaultInterfaces[driver.KindDeploy] != "fake" || s.DefaultInterfaces[driver.KindStorage] != "noop" {
		t.Errorf("overridden settings = %+v", s)
	}
}
