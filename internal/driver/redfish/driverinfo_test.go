package redfish

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
)

func TestParseDriverInfo(t *testing.T) {
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	must(t, os.WriteFile(caFile, []byte("x"), 0o600))
	const node = "node-1"
	invalidVerify := func(v string) string {
		return "Invalid value type set in driver_info/redfish_verify_ca on node node-1. The value should be a " +
			`Boolean or the path to a file/directory, not "` + v + `"`
	}
	for _, tc := range []struct {
		name    string
		info    map[string]any
		opts    func(*Options)
		want    DriverInfo
		class   errs.Class
		message string
	}{
		{name: "missing address", info: map[string]any{"redfish_username": "u"}, class: "MissingParameterValue",
			message: "Missing the following Redfish properties in node node-1 driver_info: ['redfish_address']"},
		{name: "empty address", info: map[string]any{"redfish_address": ""}, class: "MissingParameterValue",
			message: "Missing the following Redfish properties in node node-1 driver_info: ['redfish_address']"},
		{name: "defaults", info: map[string]any{"redfish_address": "https://bmc.example.com"},
			want: DriverInfo{Address: "https://bmc.example.com", RootPrefix: "/redfish/v1/", VerifyCA: "true", AuthType: "auto"}},
		{name: "scheme defaults to https", info: map[string]any{"redfish_address": "10.0.0.1:8443"},
			want: DriverInfo{Address: "https://10.0.0.1:8443", RootPrefix: "/redfish/v1/", VerifyCA: "true", AuthType: "auto"}},
		{name: "path is the root prefix", info: map[string]any{"redfish_address": "http://bmc/custom/v1/"},
			want: DriverInfo{Address: "http://bmc", RootPrefix: "/custom/v1/", VerifyCA: "true", AuthType: "auto"}},
		{name: "bare IPv6 is bracketed", info: map[string]any{"redfish_address": "fd00::1"},
			want: DriverInfo{Address: "https://[fd00::1]", RootPrefix: "/redfish/v1/", VerifyCA: "true", AuthType: "auto"}},
		{name: "invalid address", info: map[string]any{"redfish_address": "https://bad host"}, class: "InvalidParameterValue",
			message: "Invalid Redfish address https://bad host set in driver_info/redfish_address on node node-1"},
		{name: "invalid port", info: map[string]any{"redfish_address": "https://bmc:port"}, class: "InvalidParameterValue",
			message: "Invalid Redfish address https://bmc:port set in driver_info/redfish_address on node node-1"},
		{name: "address not a string", info: map[string]any{"redfish_address": 42.0}, class: "InvalidParameterValue",
			message: "Invalid Redfish address 42 set in driver_info/redfish_address on node node-1"},
		{name: "system id quoted", info: map[string]any{"redfish_address": "https://b", "redfish_system_id": "/redfish/v1/Systems/a b"},
			want: DriverInfo{Address: "https://b", RootPrefix: "/redfish/v1/", SystemID: "/redfish/v1/Systems/a%20b", VerifyCA: "true", AuthType: "auto"}},
		{name: "system id not a string", info: map[string]any{"redfish_address": "https://b", "redfish_system_id": 1.0}, class: "InvalidParameterValue",
			message: `Invalid value "1" set in driver_info/redfish_system_id on node node-1. The value should be a path (string) ` +
				"to the resource that the driver will interact with. For example: /redfish/v1/Systems/1"},
		{name: "verify false", info: map[string]any{"redfish_address": "https://b", "redfish_verify_ca": false},
			want: DriverInfo{Address: "https://b", RootPrefix: "/redfish/v1/", VerifyCA: "false", AuthType: "auto"}},
		{name: "verify string boolean", info: map[string]any{"redfish_address": "https://b", "redfish_verify_ca": "No"},
			want: DriverInfo{Address: "https://b", RootPrefix: "/redfish/v1/", VerifyCA: "false", AuthType: "auto"}},
		{name: "verify path", info: map[string]any{"redfish_address": "https://b", "redfish_verify_ca": caFile},
			want: DriverInfo{Address: "https://b", RootPrefix: "/redfish/v1/", VerifyCA: caFile, AuthType: "auto"}},
		{name: "verify from config", info: map[string]any{"redfish_address": "https://b"}, opts: func(o *Options) { o.VerifyCA = caFile },
			want: DriverInfo{Address: "https://b", RootPrefix: "/redfish/v1/", VerifyCA: caFile, AuthType: "auto"}},
		{name: "verify garbage", info: map[string]any{"redfish_address": "https://b", "redfish_verify_ca": "/no/such/ca"},
			class: "InvalidParameterValue", message: invalidVerify("/no/such/ca")},
		{name: "verify number", info: map[string]any{"redfish_address": "https://b", "redfish_verify_ca": 1.0},
			class: "InvalidParameterValue", message: invalidVerify("1")},
		{name: "auth type", info: map[string]any{"redfish_address": "https://b", "redfish_auth_type": "session"},
			want: DriverInfo{Address: "https://b", RootPrefix: "/redfish/v1/", VerifyCA: "true", AuthType: "session"}},
		{name: "auth type from config", info: map[string]any{"redfish_address": "https://b"}, opts: func(o *Options) { o.AuthType = "basic" },
			want: DriverInfo{Address: "https://b", RootPrefix: "/redfish/v1/", VerifyCA: "true", AuthType: "basic"}},
		{name: "bad auth type", info: map[string]any{"redfish_address": "https://b", "redfish_auth_type": "digest"}, class: "InvalidParameterValue",
			message: `Invalid value "digest" set in driver_info/redfish_auth_type on node node-1. The value should be one of "basic", "session" or "auto".`},
		{name: "null auth type", info: map[string]any{"redfish_address": "https://b", "redfish_auth_type": nil}, class: "InvalidParameterValue",
			message: `Invalid value "None" set in driver_info/redfish_auth_type on node node-1. The value should be one of "basic", "session" or "auto".`},
		{name: "bad TLS version", info: map[string]any{"redfish_address": "https://b", "redfish_tls_minimum_version": "1.0"}, class: "InvalidParameterValue",
			message: `Invalid value "1.0" set in driver_info/redfish_tls_minimum_version on node node-1. The value should be one of "1.1", "1.2", or "1.3".`},
		{name: "credentials", info: map[string]any{"redfish_address": "https://b", "redfish_username": "u", "redfish_password": "p", "redfish_tls_minimum_version": "1.3"},
			want: DriverInfo{Address: "https://b", RootPrefix: "/redfish/v1/", VerifyCA: "true", AuthType: "auto", Username: "u", Password: "p", TLSMinimum: "1.3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := DefaultOptions()
			if tc.opts != nil {
				tc.opts(&opts)
			}
			got, err := ParseDriverInfo(&model.Node{UUID: node, DriverInfo: tc.info}, &opts)
			if tc.class != "" {
				wantClass(t, err, tc.class, tc.message)
				return
			}
			must(t, err)
			tc.want.NodeUUID = node
			if got != tc.want {
				t.Fatalf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestDriverInfoStringHidesPassword(t *testing.T) {
	d := DriverInfo{Address: "https://b", Username: "u", Password: "hunter2"}
	if s := d.String(); s == "" || strings.Contains(s, "hunter2") {
		t.Fatalf("String() = %q", s)
	}
}
