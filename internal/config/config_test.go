package config

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// write creates a file under dir and returns its path.
func write(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func load(t *testing.T, files ...string) *Config {
	t.Helper()
	dir := t.TempDir()
	var paths []string
	for i, body := range files {
		paths = append(paths, write(t, dir, "f"+string(rune('a'+i))+".conf", body))
	}
	c, err := Load(LoadOptions{Files: paths})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return c
}

func loadErr(t *testing.T, body string) error {
	t.Helper()
	p := write(t, t.TempDir(), "ironic.conf", body)
	_, err := Load(LoadOptions{Files: []string{p}})
	if err == nil {
		t.Fatalf("Load accepted:\n%s", body)
	}
	return err
}

func TestInvalidValuesNameSectionAndOption(t *testing.T) {
	cases := []struct {
		name, body, want string
	}{
		{"integer", "[api]\nport = abc\n", `invalid value for option [api]/port: "abc" is not an integer`},
		{"port range", "[api]\nport = 70000\n", "invalid value for option [api]/port: 70000"},
		{"integer min", "[api]\nmax_json_body_depth = 2\n", "invalid value for option [api]/max_json_body_depth: 2 is less than the minimum 8"},
		{"integer max", "[database]\nconnection_debug = 101\n", "invalid value for option [database]/connection_debug: 101 is greater than the maximum 100"},
		{"float", "[DEFAULT]\nraw_image_growth_factor = big\n", `invalid value for option [DEFAULT]/raw_image_growth_factor: "big" is not a float`},
		{"float min", "[DEFAULT]\nraw_image_growth_factor = 0.5\n", "invalid value for option [DEFAULT]/raw_image_growth_factor: 0.5 is less than the minimum 1"},
		{"boolean", "[api]\nenable_ssl_api = maybe\n", `invalid value for option [api]/enable_ssl_api: "maybe" is not a boolean`},
		{"choices", "[DEFAULT]\nauth_strategy = ldap\n", `invalid value for option [DEFAULT]/auth_strategy: "ldap" is not one of noauth, keystone, http_basic`},
		{"list item choices", "[api]\ndisallowed_enrollment_boot_modes = uefi, floppy\n", `invalid value for option [api]/disallowed_enrollment_boot_modes: "floppy" is not one of uefi, bios`},
		{"dict", "[mdns]\nparams = a:1,b\n", "invalid value for option [mdns]/params: "},
		{"ip address", "[console]\nsocat_address = not-an-ip\n", `invalid value for option [console]/socat_address: "not-an-ip" is not an IPv4 or IPv6 address`},
		{"host address", "[api]\nhost_ip = -bad-\n", `invalid value for option [api]/host_ip: "-bad-" is not a valid host address`},
		{"uri", "[deploy]\nhttp_url = not a uri\n", "invalid value for option [deploy]/http_url: "},
		{"uri scheme", "[deploy]\nhttp_url = ftp://example.com/\n", `invalid value for option [deploy]/http_url: "ftp://example.com/" has scheme "ftp"`},
		{"octal", "[api]\nunix_socket_mode = 0789\n", `invalid value for option [api]/unix_socket_mode: "0789" is not an octal integer`},
		{"port range item", "[console]\nport_range = 20000:10000\n", `invalid value for option [console]/port_range: "20000:10000": start is greater than end`},
		{"absolute path item", "[conductor]\nfile_url_allowed_paths = /var/lib/../../etc\n", `invalid value for option [conductor]/file_url_allowed_paths: "/var/lib/../../etc" is not an explicit absolute path`},
		{"unknown substitution", "[DEFAULT]\nstate_path = $nosuch/x\n", "invalid value for option [DEFAULT]/state_path: cannot substitute $nosuch: no such option"},
		{"substitution cycle", "[DEFAULT]\nstate_path = $tempdir\ntempdir = $state_path\n", "interpolation refers back to this option"},
		{"deprecated name", "[conductor]\nsend_sensor_data_interval = often\n", `invalid value for option [sensor_data]/interval: "often" is not an integer`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := loadErr(t, tc.body)
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q\ndoes not contain %q", err, tc.want)
			}
		})
	}
}

func TestTypedValues(t *testing.T) {
	c := load(t, `[DEFAULT]
raw_image_growth_factor = 1.5
enabled_hardware_types =  ipmi , redfish,fake-hardware,
[api]
port = 6390
unix_socket_mode = 0o640
host_ip = ironic.example.com
enable_ssl_api = YES
restrict_lookup = off
[json_rpc]
unix_socket_mode = 600
[mdns]
params = a:1, b : x:y ,c:
[inspector]
cpu_capabilities =
[console]
port_range = 10000:10100
socat_address = ::1
[deploy]
http_url = https://boot.example.com:8080/x
[conductor]
heartbeat_timeout = 90
[healthcheck]
enabled = 1
`)
	checks := []struct {
		name      string
		got, want any
	}{
		{"float", c.Float("DEFAULT", "raw_image_growth_factor"), 1.5},
		{"list trimmed", c.List("DEFAULT", "enabled_hardware_types"), []string{"ipmi", "redfish", "fake-hardware"}},
		{"port", c.Int("api", "port"), 6390},
		{"octal 0o", c.Int("api", "unix_socket_mode"), 0o640},
		{"octal bare", c.Int("json_rpc", "unix_socket_mode"), 0o600},
		{"host name", c.String("api", "host_ip"), "ironic.example.com"},
		{"bool YES", c.Bool("api", "enable_ssl_api"), true},
		{"bool off", c.Bool("api", "restrict_lookup"), false},
		{"bool 1", c.Bool("healthcheck", "enabled"), true},
		{"dict", c.Dict("mdns", "params"), map[string]string{"a": "1", "b": "x:y", "c": ""}},
		{"empty dict", c.Dict("inspector", "cpu_capabilities"), map[string]string{}},
		{"port range list", c.List("console", "port_range"), []string{"10000:10100"}},
		{"ip", c.String("console", "socat_address"), "::1"},
		{"uri", c.String("deploy", "http_url"), "https://boot.example.com:8080/x"},
		{"duration", c.Duration("conductor", "heartbeat_timeout"), 90 * time.Second},
		{"unset list default", c.List("DEFAULT", "enabled_power_interfaces"), []string(nil)},
	}
	for _, ck := range checks {
		if !reflect.DeepEqual(ck.got, ck.want) {
			t.Errorf("%s: got %#v, want %#v", ck.name, ck.got, ck.want)
		}
	}
}

func TestBooleanSpellings(t *testing.T) {
	for _, s := range []string{"true", "True", "TRUE", "yes", "Yes", "on", "ON", "1"} {
		if v, err := parseBool(s); err != nil || v != true {
			t.Errorf("%q: %v, %v", s, v, err)
		}
	}
	for _, s := range []string{"false", "False", "no", "NO", "off", "Off", "0"} {
		if v, err := parseBool(s); err != nil || v != false {
			t.Errorf("%q: %v, %v", s, v, err)
		}
	}
	for _, s := range []string{"", "y", "2", "enabled"} {
		if _, err := parseBool(s); err == nil {
			t.Errorf("%q accepted", s)
		}
	}
}

func TestLaterFileWins(t *testing.T) {
	c := load(t,
		"[api]\nport = 1000\nmax_limit = 10\n",
		"[api]\nport = 2000\nport = 3000\n",
	)
	if got := c.Int("api", "port"); got != 3000 {
		t.Errorf("port = %d, want 3000 (last assignment of the last file)", got)
	}
	if got := c.Int("api", "max_limit"); got != 10 {
		t.Errorf("max_limit = %d, want 10 from the first file", got)
	}
	if len(c.Sources()) != 2 {
		t.Errorf("sources %v", c.Sources())
	}
}

func TestConfigDirOrder(t *testing.T) {
	dir := t.TempDir()
	file := write(t, t.TempDir(), "ironic.conf", "[api]\nport = 1\nmax_limit = 5\n[conductor]\nworkers_pool_size = 7\n")
	write(t, dir, "20-late.conf", "[api]\nport = 20\n")
	write(t, dir, "10-early.conf", "[api]\nport = 10\nmax_limit = 11\n")
	write(t, dir, "99-ignored.txt", "[api]\nport = 99\n")
	c, err := Load(LoadOptions{Files: []string{file}, Dirs: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Int("api", "port"); got != 20 {
		t.Errorf("port = %d, want 20 (last *.conf in lexical order)", got)
	}
	if got := c.Int("api", "max_limit"); got != 11 {
		t.Errorf("max_limit = %d, want 11 (dir files after --config-file)", got)
	}
	if got := c.Int("conductor", "workers_pool_size"); got != 7 {
		t.Errorf("workers_pool_size = %d, want 7", got)
	}
	want := []string{file, filepath.Join(dir, "10-early.conf"), filepath.Join(dir, "20-late.conf")}
	if !reflect.DeepEqual(c.Sources(), want) {
		t.Errorf("sources %v, want %v", c.Sources(), want)
	}
	if _, err := Load(LoadOptions{Dirs: []string{filepath.Join(dir, "missing")}}); err == nil {
		t.Error("missing config dir accepted")
	}
	if _, err := Load(LoadOptions{Files: []string{filepath.Join(dir, "missing.conf")}}); err == nil {
		t.Error("missing config file accepted")
	}
}

func TestDeprecatedNames(t *testing.T) {
	c := load(t, `[conductor]
send_sensor_data_interval = 42
send_sensor_data = true
configdrive_use_swift = true
[DEFAULT]
graceful_shutdown_timeout = 33
[glance]
tenant_name = service
[sensor_data]
send_sensor_data = false
`)
	if got := c.Int("sensor_data", "interval"); got != 42 {
		t.Errorf("[sensor_data]/interval = %d, want 42 from [conductor]/send_sensor_data_interval", got)
	}
	if !c.IsSet("sensor_data", "interval") {
		t.Error("a deprecated name should count as set")
	}
	if c.Bool("sensor_data", "send_sensor_data") {
		t.Error("the current name must beat the deprecated one in the same file")
	}
	if !c.Bool("deploy", "configdrive_use_object_store") {
		t.Error("[conductor]/configdrive_use_swift not honoured")
	}
	if got := c.Int("conductor", "graceful_shutdown_timeout"); got != 33 {
		t.Errorf("graceful_shutdown_timeout = %d, want 33 from [DEFAULT]", got)
	}
	if got := c.String("glance", "project_name"); got != "service" {
		t.Errorf("[glance]/project_name = %q, want service from tenant_name", got)
	}
	// A deprecated name in a later file beats the current name in an earlier
	// one, as oslo.config looks at files newest first.
	c = load(t, "[sensor_data]\ninterval = 1\n", "[conductor]\nsend_sensor_data_interval = 2\n")
	if got := c.Int("sensor_data", "interval"); got != 2 {
		t.Errorf("interval = %d, want 2", got)
	}
}

func TestInterpolation(t *testing.T) {
	c := load(t, `[DEFAULT]
state_path = /var/lib/ironic
tempdir = ${state_path}/tmp
my_ip = 10.0.0.5
[console]
socat_address = $my_ip
[deploy]
http_root = $state_path/httpboot
http_url = http://${DEFAULT.my_ip}:${json_rpc.port}/x
[api]
public_endpoint = http://$host_ip:$port/cost$$5\$6 $ $1
`)
	checks := map[string][2]string{
		"database default":   {c.String("database", "connection"), "sqlite:////var/lib/ironic/ironic.sqlite"},
		"braced":             {c.String("DEFAULT", "tempdir"), "/var/lib/ironic/tmp"},
		"typed after subst":  {c.String("console", "socat_address"), "10.0.0.5"},
		"file value":         {c.String("deploy", "http_root"), "/var/lib/ironic/httpboot"},
		"section.name":       {c.String("deploy", "http_url"), "http://10.0.0.5:8089/x"},
		"own section first":  {c.String("api", "public_endpoint"), "http://0.0.0.0:6385/cost$5$6 $ $1"},
		"pybasedir template": {c.String("DEFAULT", "grub_config_template"), c.String("DEFAULT", "pybasedir") + "/common/grub_conf.template"},
	}
	for name, ck := range checks {
		if ck[0] != ck[1] {
			t.Errorf("%s: got %q, want %q", name, ck[0], ck[1])
		}
	}
}

func TestMultiValued(t *testing.T) {
	c := load(t,
		"[inspector]\npci_device_alias = {\"a\": 1}\npci_device_alias = {\"b\": 2}\n[conductor]\nclean_step_priority_override = deploy.erase_devices:0\n",
		"[inspector]\npci_device_alias = {\"c\": 3}\n[conductor]\nclean_step_priority_override = deploy.erase_devices:5, bios.apply:10\n[oslo_policy]\npolicy_dirs = a.d\n[DEFAULT]\npolicy_dirs = b.d\n",
	)
	if got, want := c.List("inspector", "pci_device_alias"), []string{`{"a": 1}`, `{"b": 2}`, `{"c": 3}`}; !reflect.DeepEqual(got, want) {
		t.Errorf("pci_device_alias = %q, want %q", got, want)
	}
	if got, want := c.Dict("conductor", "clean_step_priority_override"), map[string]string{"deploy.erase_devices": "5", "bios.apply": "10"}; !reflect.DeepEqual(got, want) {
		t.Errorf("clean_step_priority_override = %v, want %v", got, want)
	}
	if got, want := c.List("oslo_policy", "policy_dirs"), []string{"a.d", "b.d"}; !reflect.DeepEqual(got, want) {
		t.Errorf("policy_dirs = %q, want %q (current and deprecated names accumulate)", got, want)
	}
	if got, want := load(t).List("oslo_policy", "policy_dirs"), []string{"policy.d"}; !reflect.DeepEqual(got, want) {
		t.Errorf("policy_dirs default = %q, want %q", got, want)
	}
}

// allInOne is the override set cmd/ironic uses for the all-in-one mode.
var allInOne = map[string]map[string]string{
	"api":      {"host_ip": "127.0.0.1"},
	"DEFAULT":  {"auth_strategy": "noauth", "rpc_transport": "none", "enabled_hardware_types": "fake-hardware", "enabled_power_interfaces": "fake", "enabled_management_interfaces": "fake"},
	"database": {"connection": "sqlite:///ironic-data/ironic.sqlite"},
}

func TestOverridesSitBetweenDefaultsAndFiles(t *testing.T) {
	p := write(t, t.TempDir(), "ironic.conf", "[DEFAULT]\nauth_strategy = keystone\n")
	c, err := Load(LoadOptions{Files: []string{p}, Overrides: allInOne})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.String("DEFAULT", "auth_strategy"); got != "keystone" {
		t.Errorf("auth_strategy = %q, want the file's keystone", got)
	}
	if got := c.String("api", "host_ip"); got != "127.0.0.1" {
		t.Errorf("host_ip = %q, want the override", got)
	}
	if c.IsSet("api", "host_ip") {
		t.Error("an override is not set by a file")
	}
	if got := c.List("DEFAULT", "enabled_hardware_types"); !reflect.DeepEqual(got, []string{"fake-hardware"}) {
		t.Errorf("enabled_hardware_types = %q", got)
	}
	if got := c.String("DEFAULT", "rpc_transport"); got != "none" {
		t.Errorf("rpc_transport = %q", got)
	}
	if got := c.String("database", "connection"); got != "sqlite:///ironic-data/ironic.sqlite" {
		t.Errorf("connection = %q", got)
	}
	if _, err := Load(LoadOptions{Overrides: map[string]map[string]string{"api": {"port": "x"}}}); err == nil || !strings.Contains(err.Error(), "[api]/port") {
		t.Errorf("bad override: %v", err)
	}
	if _, err := Load(LoadOptions{Overrides: map[string]map[string]string{"api": {"nosuch": "x"}}}); err == nil {
		t.Error("override of an unknown option accepted")
	}
}

func TestUnknownOptionsIgnoredAndReported(t *testing.T) {
	p := write(t, t.TempDir(), "ironic.conf", "[api]\nport = 7000\nno_such_option = 1\n[no_such_section]\nx = 1\ny = 2\n[conductor]\nsend_sensor_data_interval = 5\n")
	var got []string
	c, err := Load(LoadOptions{Files: []string{p}, Unknown: func(section, name, file string) {
		if file != p {
			t.Errorf("file %q, want %q", file, p)
		}
		got = append(got, section+"/"+name)
	}})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"api/no_such_option", "no_such_section/"}; !reflect.DeepEqual(got, want) {
		t.Errorf("reported %q, want %q", got, want)
	}
	if c.Int("api", "port") != 7000 {
		t.Error("known option next to an unknown one was lost")
	}
	// Without a callback the report goes to slog at debug level.
	if _, err := Load(LoadOptions{Files: []string{p}}); err != nil {
		t.Fatal(err)
	}
}

func TestINISyntax(t *testing.T) {
	c := load(t, `# comment
; another
[API]
port: 7001
public_endpoint = "http://quoted/"
[DEFAULT]
enabled_hardware_types = ipmi,
  redfish

[conductor]
deploy_kernel_by_arch = x86_64:/k # not a comment
`)
	if got := c.Int("api", "port"); got != 7001 {
		t.Errorf("[API] port: = %d, want 7001 (section names fold to lower case, ':' assigns)", got)
	}
	if got := c.String("api", "public_endpoint"); got != "http://quoted/" {
		t.Errorf("quotes not stripped: %q", got)
	}
	if got := c.List("DEFAULT", "enabled_hardware_types"); !reflect.DeepEqual(got, []string{"ipmi", "redfish"}) {
		t.Errorf("continuation line: %q", got)
	}
	if got := c.Dict("conductor", "deploy_kernel_by_arch")["x86_64"]; got != "/k # not a comment" {
		t.Errorf("inline '#' must stay in the value: %q", got)
	}
	for _, bad := range []string{"port = 1\n", "[api]\nport\n", "[api\n", "[]\n", "  indented = 1\n", "[api]\n = 1\n"} {
		if _, err := parseINI("x.conf", []byte(bad)); err == nil {
			t.Errorf("parsed %q", bad)
		}
	}
	// [default] is not [DEFAULT]: oslo.config only folds other sections.
	var unknown []string
	p := write(t, t.TempDir(), "d.conf", "[default]\nauth_strategy = noauth\n")
	c, err := Load(LoadOptions{Files: []string{p}, Unknown: func(s, n, _ string) { unknown = append(unknown, s+"/"+n) }})
	if err != nil {
		t.Fatal(err)
	}
	if c.String("DEFAULT", "auth_strategy") != "keystone" || len(unknown) != 1 {
		t.Errorf("[default] was read as DEFAULT (unknown %q)", unknown)
	}
}

func TestGettersPanicOnProgrammingErrors(t *testing.T) {
	c := load(t)
	cases := map[string]func(){
		"unknown option": func() { c.String("api", "no_such_option") },
		"wrong type":     func() { c.Bool("api", "port") },
		"unknown IsSet":  func() { c.IsSet("nope", "x") },
	}
	for name, f := range cases {
		t.Run(name, func(t *testing.T) {
			defer func() {
				r := recover()
				if r == nil {
					t.Fatal("no panic")
				}
				if msg, _ := r.(string); !strings.Contains(msg, "[") {
					t.Errorf("panic %v does not name the option", r)
				}
			}()
			f()
		})
	}
}

func TestSecretsMasked(t *testing.T) {
	c := load(t, "[keystone_authtoken]\npassword = s3cr3t\nusername = ironic\n[database]\nconnection = mysql+pymysql://ironic:dbpass@db/ironic\n[glance]\npassword = gpass\n")
	if got := c.String("keystone_authtoken", "password"); got != "s3cr3t" {
		t.Errorf("getter must return the real secret, got %q", got)
	}
	if got := c.Display("keystone_authtoken", "password"); got != "****" {
		t.Errorf("Display = %q", got)
	}
	if got := c.Display("keystone_authtoken", "username"); got != "ironic" {
		t.Errorf("Display of a non-secret = %q", got)
	}
	var b bytes.Buffer
	if err := c.Dump(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, secret := range []string{"s3cr3t", "dbpass", "gpass"} {
		if strings.Contains(out, secret) {
			t.Errorf("Dump leaks %q", secret)
		}
	}
	for _, line := range []string{"[keystone_authtoken] password = ****", "[database] connection = ****", "[api] port = 6385", "[keystone_authtoken] cafile = None"} {
		if !strings.Contains(out, line+"\n") {
			t.Errorf("Dump lacks %q", line)
		}
	}
}

func TestRegisterFlags(t *testing.T) {
	fs := flag.NewFlagSet("ironic", flag.ContinueOnError)
	opts := RegisterFlags(fs)
	if err := fs.Parse([]string{"--config-file", "a.conf", "--config-dir=/etc/ironic/ironic.conf.d", "--config-file=b.conf", "rest"}); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(opts.Files, []string{"a.conf", "b.conf"}) || !reflect.DeepEqual(opts.Dirs, []string{"/etc/ironic/ironic.conf.d"}) {
		t.Errorf("files %q dirs %q", opts.Files, opts.Dirs)
	}
	if fs.Arg(0) != "rest" {
		t.Errorf("args %q", fs.Args())
	}
}

func TestLibraryDefaults(t *testing.T) {
	c := load(t)
	checks := []struct {
		name      string
		got, want any
	}{
		{"policy_file", c.String("oslo_policy", "policy_file"), "policy.yaml"},
		{"enforce_scope", c.Bool("oslo_policy", "enforce_scope"), true},
		{"cors methods", c.List("cors", "allow_methods"), []string{"GET", "PUT", "POST", "DELETE", "PATCH"}},
		{"body size", c.Int("oslo_middleware", "max_request_body_size"), 114688},
		{"token cache", c.Duration("keystone_authtoken", "token_cache_time"), 300 * time.Second},
		{"db retries", c.Int("database", "max_retries"), 10},
		{"healthcheck path", c.String("healthcheck", "path"), "/healthcheck"},
		{"glance service type", c.String("glance", "service_type"), "image"},
		{"neutron valid interfaces", c.List("neutron", "valid_interfaces"), []string{"internal", "public"}},
		{"json_rpc auth type", c.String("json_rpc", "auth_type"), "password"},
		{"json_rpc timeout", c.Int("json_rpc", "timeout"), 120},
		{"notification driver", c.List("oslo_messaging_notifications", "driver"), []string{}},
	}
	for _, ck := range checks {
		if !reflect.DeepEqual(ck.got, ck.want) {
			t.Errorf("%s: got %#v, want %#v", ck.name, ck.got, ck.want)
		}
	}
	if c.Has("keystone_authtoken", "auth_url") || c.IsSet("keystone_authtoken", "auth_url") {
		t.Error("auth_url has no default")
	}
}
