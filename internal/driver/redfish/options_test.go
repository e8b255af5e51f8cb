package redfish

import (
	"reflect"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/swift"
)

func TestOptionsFromConfig(t *testing.T) {
	c, err := config.Load(config.LoadOptions{})
	must(t, err)
	got := OptionsFromConfig(c)
	// Firmware images can go to Swift whatever [redfish]/use_swift says.
	if _, ok := got.FirmwareStaging.Swift.(*swift.Client); !ok {
		t.Fatalf("firmware staging Swift client %T", got.FirmwareStaging.Swift)
	}
	got.FirmwareStaging.Swift = nil
	if want := DefaultOptions(); !reflect.DeepEqual(got, want) {
		t.Fatalf("stock configuration gives\n %+v\nwant upstream defaults\n %+v", got, want)
	}
	c, err = config.Load(config.LoadOptions{Overrides: map[string]map[string]string{
		"redfish":   {"connection_attempts": "2", "connection_retry_interval": "1", "auth_type": "session", "verify_ca": "/etc/ca"},
		"conductor": {"power_state_change_timeout": "7", "soft_power_off_timeout": "9"},
		"deploy":    {"http_root": "/srv/http", "http_url": "http://192.0.2.1:8080", "external_http_url": "https://ext.example"},
	}})
	must(t, err)
	o := OptionsFromConfig(c)
	if o.ConnectionAttempts != 2 || o.ConnectionRetryInterval != time.Second || o.AuthType != "session" || o.VerifyCA != "/etc/ca" ||
		o.PowerStateChangeTimeout != 7*time.Second || o.SoftPowerOffTimeout != 9*time.Second ||
		o.FirmwareStaging.HTTPRoot != "/srv/http" || o.FirmwareStaging.HTTPURL != "http://192.0.2.1:8080" ||
		o.FirmwareStaging.ExternalHTTPURL != "https://ext.example" {
		t.Fatalf("options %+v", o)
	}
}
