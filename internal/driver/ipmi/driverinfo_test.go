package ipmi

import (
	"bytes"
	"context"
	"maps"
	"slices"
	"testing"

	"github.com/openkeel/ironic/internal/errs"
)

// TestCommandLines compares the whole ipmitool argument vector with what
// upstream's _get_ipmitool_args, _ipmitool_timing_args and _exec_ipmitool
// build for each driver_info variant ("PW" stands for the password file).
func TestCommandLines(t *testing.T) {
	with := func(extra map[string]any) map[string]any {
		m := baseInfo()
		maps.Copy(m, extra)
		return m
	}
	cases := []struct {
		name   string
		info   map[string]any
		mutate func(*Options)
		want   []string
	}{
		{"defaults", baseInfo(), nil,
			[]string{"ipmitool", "-I", "lanplus", "-H", "10.0.0.9", "-L", "ADMINISTRATOR", "-U", "admin", "-R", "1", "-N", "5", "-f", "PW", "power", "status"}},
		{"null user", map[string]any{"ipmi_address": "bmc.example.org"}, nil,
			[]string{"ipmitool", "-I", "lanplus", "-H", "bmc.example.org", "-L", "ADMINISTRATOR", "-R", "1", "-N", "5", "-f", "PW", "power", "status"}},
		{"port, kg key and cipher suite", with(map[string]any{"ipmi_port": float64(6230), "ipmi_hex_kg_key": "a1b2", "ipmi_cipher_suite": float64(17)}), nil,
			[]string{"ipmitool", "-I", "lanplus", "-H", "10.0.0.9", "-L", "ADMINISTRATOR", "-p", "6230", "-U", "admin", "-y", "a1b2", "-C", "17", "-R", "1", "-N", "5", "-f", "PW", "power", "status"}},
		{"port as string", with(map[string]any{"ipmi_port": "623"}), nil,
			[]string{"ipmitool", "-I", "lanplus", "-H", "10.0.0.9", "-L", "ADMINISTRATOR", "-p", "623", "-U", "admin", "-R", "1", "-N", "5", "-f", "PW", "power", "status"}},
		{"ipmi 1.5", with(map[string]any{"ipmi_protocol_version": "1.5"}), nil,
			[]string{"ipmitool", "-I", "lan", "-H", "10.0.0.9", "-L", "ADMINISTRATOR", "-U", "admin", "-R", "1", "-N", "5", "-f", "PW", "power", "status"}},
		{"operator privilege", with(map[string]any{"ipmi_priv_level": "OPERATOR"}), nil,
			[]string{"ipmitool", "-I", "lanplus", "-H", "10.0.0.9", "-L", "OPERATOR", "-U", "admin", "-R", "1", "-N", "5", "-f", "PW", "power", "status"}},
		{"single bridge", with(map[string]any{"ipmi_bridging": "single", "ipmi_local_address": "0x0", "ipmi_target_channel": float64(7), "ipmi_target_address": "0x72",
			"ipmi_transit_channel": "ignored", "ipmi_transit_address": "ignored"}), nil,
			[]string{"ipmitool", "-I", "lanplus", "-H", "10.0.0.9", "-L", "ADMINISTRATOR", "-U", "admin", "-m", "0x0", "-b", "7", "-t", "0x72", "-R", "1", "-N", "5", "-f", "PW", "power", "status"}},
		{"dual bridge", with(map[string]any{"ipmi_bridging": "dual", "ipmi_target_channel": "0", "ipmi_target_address": "0x72",
			"ipmi_transit_channel": "1", "ipmi_transit_address": "0x82"}), nil,
			[]string{"ipmitool", "-I", "lanplus", "-H", "10.0.0.9", "-L", "ADMINISTRATOR", "-U", "admin", "-B", "1", "-T", "0x82", "-b", "0", "-t", "0x72", "-R", "1", "-N", "5", "-f", "PW", "power", "status"}},
		{"no bridge ignores bridge keys", with(map[string]any{"ipmi_bridging": "no", "ipmi_target_channel": "0", "ipmi_target_address": "0x72"}), nil,
			[]string{"ipmitool", "-I", "lanplus", "-H", "10.0.0.9", "-L", "ADMINISTRATOR", "-U", "admin", "-R", "1", "-N", "5", "-f", "PW", "power", "status"}},
		{"debug", baseInfo(), func(o *Options) { o.Debug = true },
			[]string{"ipmitool", "-I", "lanplus", "-H", "10.0.0.9", "-L", "ADMINISTRATOR", "-U", "admin", "-v", "-R", "1", "-N", "5", "-f", "PW", "power", "status"}},
		{"ipmitool retries", baseInfo(), func(o *Options) { o.UseIpmitoolRetries = true },
			[]string{"ipmitool", "-I", "lanplus", "-H", "10.0.0.9", "-L", "ADMINISTRATOR", "-U", "admin", "-R", "7", "-N", "5", "-f", "PW", "power", "status"}},
		{"no timing support", baseInfo(), func(o *Options) { o.Support = &Support{} },
			[]string{"ipmitool", "-I", "lanplus", "-H", "10.0.0.9", "-L", "ADMINISTRATOR", "-U", "admin", "-f", "PW", "power", "status"}},
		{"password in environment", baseInfo(), func(o *Options) { o.StoreCredInEnv = true },
			[]string{"ipmitool", "-I", "lanplus", "-H", "10.0.0.9", "-L", "ADMINISTRATOR", "-U", "admin", "-R", "1", "-N", "5", "-E", "power", "status"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, bmc, _, logs := testCore(t, tc.mutate)
			task := testTask(tc.info, logs)
			d, err := c.parse(task)
			must(t, err)
			_, _, err = c.exec(context.Background(), d, "power status", execOptions{})
			must(t, err)
			if len(bmc.calls) != 1 {
				t.Fatalf("%d calls", len(bmc.calls))
			}
			got := slices.Clone(bmc.calls[0].Args)
			if i := slices.Index(got, "-f"); i >= 0 {
				got[i+1] = "PW"
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("argv\n got  %q\n want %q", got, tc.want)
			}
		})
	}
}

func TestDriverInfoErrors(t *testing.T) {
	with := func(extra map[string]any) map[string]any {
		m := baseInfo()
		maps.Copy(m, extra)
		return m
	}
	cases := []struct {
		name    string
		info    map[string]any
		support Support
		class   errs.Class
		msg     string
	}{
		{"missing address", map[string]any{"ipmi_username": "admin"}, *allSupported, "MissingParameterValue",
			"Missing the following IPMI credentials in node's driver_info: ['ipmi_address']."},
		{"empty address", map[string]any{"ipmi_address": ""}, *allSupported, "MissingParameterValue",
			"Missing the following IPMI credentials in node's driver_info: ['ipmi_address']."},
		{"protocol version", with(map[string]any{"ipmi_protocol_version": "3.0"}), *allSupported, "InvalidParameterValue",
			"Invalid IPMI protocol version value 3.0, the valid value can be one of 2.0, 1.5"},
		{"terminal port", with(map[string]any{"ipmi_terminal_port": float64(70000)}), *allSupported, "InvalidParameterValue",
			`ipmi_terminal_port "70000" is not a valid port.`},
		{"bmc port", with(map[string]any{"ipmi_port": "abc"}), *allSupported, "InvalidParameterValue",
			`ipmi_port "abc" is not a valid port.`},
		{"bridging value", with(map[string]any{"ipmi_bridging": "triple"}), *allSupported, "InvalidParameterValue",
			"Invalid value for ipmi_bridging: triple, the valid value can be one of: ['single', 'dual', 'no']"},
		{"single bridge unsupported", with(map[string]any{"ipmi_bridging": "single"}), Support{Timing: true}, "InvalidParameterValue",
			"Value for ipmi_bridging is provided as single, but IPMI bridging is not supported by the IPMI utility installed on host. Ensure ipmitool version is > 1.8.11"},
		{"single bridge targets", with(map[string]any{"ipmi_bridging": "single"}), *allSupported, "MissingParameterValue",
			"['ipmi_target_channel', 'ipmi_target_address'] not provided"},
		{"dual bridge transit", with(map[string]any{"ipmi_bridging": "dual", "ipmi_target_channel": "0", "ipmi_target_address": "0x72"}), *allSupported, "MissingParameterValue",
			"['ipmi_transit_channel', 'ipmi_transit_address'] not provided"},
		{"privilege", with(map[string]any{"ipmi_priv_level": "ROOT"}), *allSupported, "InvalidParameterValue",
			"Invalid privilege level value:ROOT, the valid value can be one of ADMINISTRATOR, CALLBACK, OPERATOR, USER"},
		{"kg key", with(map[string]any{"ipmi_hex_kg_key": "abc"}), *allSupported, "InvalidParameterValue",
			"Number of ipmi_hex_kg_key characters is not even"},
		{"cipher suite", with(map[string]any{"ipmi_cipher_suite": "strong"}), *allSupported, "InvalidParameterValue",
			"Invalid cipher suite strong, expected a number"},
		{"cipher suite on 1.5", with(map[string]any{"ipmi_cipher_suite": "3", "ipmi_protocol_version": "1.5"}), *allSupported, "InvalidParameterValue",
			"Cipher suites cannot be used with IPMI 1.5"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			task := testTask(tc.info, &bytes.Buffer{})
			_, err := ParseDriverInfo(task.Node, tc.support, task.Logger())
			e, ok := errs.As(err)
			if !ok || e.Class != tc.class || e.Message != tc.msg {
				t.Fatalf("error %v (%T)\nwant %s: %s", err, err, tc.class, tc.msg)
			}
		})
	}
}

func TestPowerValidateChecksAddress(t *testing.T) {
	c, _, _, logs := testCore(t, nil)
	p := &Power{core: c}
	for addr, ok := range map[string]bool{"10.0.0.9": true, "fd00::9": true, "bmc-1.rack.example": true, "bad host!": false, "UPPER": false} {
		task := testTask(map[string]any{"ipmi_address": addr}, logs)
		err := p.Validate(context.Background(), task)
		if ok != (err == nil) {
			t.Errorf("%q: %v", addr, err)
		}
		if !ok && (err == nil || err.Error() != `Invalid IPMI address "`+addr+`" for node `+task.Node.UUID+`. Must be a valid IP address or hostname.`) {
			t.Errorf("%q: message %v", addr, err)
		}
	}
}
