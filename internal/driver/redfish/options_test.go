package redfish

import (
	"reflect"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/config"
)

func TestOptionsFromConfig(t *testing.T) {
	c, err := config.Load(config.LoadOptions{})
	must(t, err)
	if got, want := OptionsFromConfig(c), DefaultOptions(); !reflect.DeepEqual(got, want) {
		t.Fatalf("stock configuration gives\n %+v\nwant upstream defaults\n %+v", got, want)
	}
	c, err = config.Load(config.LoadOptions{Overrides: map[string]map[string]string{
		"redfish":   {"connection_attempts": "2", "connection_retry_interval": "1", "auth_type": "session", "verify_ca": "/etc/ca"},
		"conductor": {"power_state_change_timeout": "7", "soft_power_off_timeout": "9"},
	}})
	must(t, err)
	o := OptionsFromConfig(c)
	if o.ConnectionAttempts != 2 || o.ConnectionRetryInterval != time.Second || o.AuthType != "session" || o.VerifyCA != "/etc/ca" ||
		o.PowerStateChangeTimeout != 7*time.Second || o.SoftPowerOffTimeout != 9*time.Second {
		t.Fatalf("options %+v", o)
	}
}
