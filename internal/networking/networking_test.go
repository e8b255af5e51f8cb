package networking

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/testing/sshswitch"
)

const switchMAC = "aa:bb:cc:dd:ee:ff"

func wantErr(t *testing.T, err error, class errs.Class, msg string) {
	t.Helper()
	if !errs.Is(err, class) || !strings.Contains(err.Error(), msg) {
		t.Fatalf("error = %v, want %s containing %q", err, class, msg)
	}
}

func TestParsePortConfig(t *testing.T) {
	for _, tc := range []struct {
		in    string
		want  PortConfig
		valid bool
	}{
		{"access/native_vlan=100", PortConfig{Mode: "access", NativeVLAN: 100}, true},
		{"trunk/native_vlan=10/allowed_vlans=10,20-22", PortConfig{Mode: "trunk", NativeVLAN: 10, AllowedVLANs: []int{10, 20, 21, 22}}, true},
		{"trunk/native_vlan=10", PortConfig{Mode: "trunk", NativeVLAN: 10}, false},
	} {
		got, err := ParsePortConfig(tc.in, "provisioning")
		if err != nil || got.Mode != tc.want.Mode || got.NativeVLAN != tc.want.NativeVLAN || !slices.Equal(got.AllowedVLANs, tc.want.AllowedVLANs) || got.Valid() != tc.valid {
			t.Errorf("%q: %+v valid=%v, %v; want %+v valid=%v", tc.in, got, got.Valid(), err, tc.want, tc.valid)
		}
	}
	prefix := "Invalid cleaning network value '%s'. Expected: {access|trunk|hybrid}/native_vlan=VLAN_ID[/allowed_vlans=V1,V2,Vn-Vm,...]. Error: %s"
	for in, reason := range map[string]string{
		"":                     "mode is empty",
		"bridge/native_vlan=1": "mode must be one of ('access', 'trunk', 'hybrid'), got 'bridge'",
		"access":               "expected at least mode/native_vlan=N",
		"access/native_vlan":   "expected key=value, got 'native_vlan'",
		"access/native_vlan=x": "invalid literal for int() with base 10: 'x'",
	} {
		_, err := ParsePortConfig(in, "cleaning")
		if !errs.Is(err, errs.ClassInvalidParameterValue) || err.Error() != fmt.Sprintf(prefix, in, reason) {
			t.Errorf("%q: %v", in, err)
		}
	}
	_, err := ParsePortConfig("trunk/native_vlan=1/allowed_vlans=5000", "cleaning")
	wantErr(t, err, errs.ClassInvalidParameterValue, "VLAN ID must be between 1 and 4094, got 5000")
	_, err = PortConfigFromSwitchport(map[string]any{"mode": "access", "native_vlan": "12"})
	wantErr(t, err, errs.ClassInvalidParameterValue, "native_vlan must be an integer, got str.")
}

// switchFile writes a switch configuration file for the fixture.
func switchFile(t *testing.T, sw *sshswitch.Switch, extra string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "switches.conf")
	conf := fmt.Sprintf(`[switch:sw1]
driver_type = generic-switch
device_type = netmiko_cisco_ios
address = %s
port = %d
username = admin
password = pa55
enable_secret = s3cret
mac_address = %s
%s
[other]
ignored = yes
`, sw.Address(), sw.Port, switchMAC, extra)
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func service(t *testing.T, file string, allowed []string) *Service {
	t.Helper()
	svc, err := New(Options{EnabledSwitchDrivers: []string{GenericSwitchName, "noop"}, SwitchConfigFile: file, AllowedVLANs: allowed,
		Factories: map[string]DriverFactory{"noop": NewNoop, GenericSwitchName: NewGenericSwitch}, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// The SSH driver configures the port as networking-generic-switch does
// for Cisco IOS: enable with the secret, configure terminal, the
// interface's commands, end, write mem when persisting.
func TestGenericSwitchConfiguresIOS(t *testing.T) {
	ctx := context.Background()
	sw := sshswitch.Start(t, sshswitch.Options{User: "admin", Password: "pa55", EnableSecret: "s3cret", Delay: 2 * time.Millisecond})
	svc := service(t, switchFile(t, sw, "persist = true\nallowed_vlans = 10,100-110,200,300"), nil)

	if err := svc.UpdatePort(ctx, strings.ToUpper(switchMAC), "Gi1/0/1", "Ironic Port x", ModeAccess, 100, nil, 10); err != nil {
		t.Fatal(err)
	}
	if got := sw.PortState("Gi1/0/1"); got.AccessVLAN != 100 || got.Mode != "access" {
		t.Fatalf("port after update: %+v", got)
	}
	want := []string{"terminal length 0", "enable", "configure terminal",
		"interface Gi1/0/1", "no switchport access vlan 10", "no switchport mode trunk", "switchport trunk allowed vlan none",
		"interface Gi1/0/1", "switchport mode access", "switchport access vlan 100", "end", "write mem"}
	if got := sw.Lines(); !slices.Equal(got[:len(want)], want) {
		t.Fatalf("session lines:\n got  %q\n want %q", got, want)
	}
	for _, l := range sw.Lines() {
		if strings.Contains(l, "s3cret") {
			t.Fatalf("the enable secret was echoed and recorded: %q", l)
		}
	}
	if err := svc.ResetPort(ctx, "sw1", "Gi1/0/1", 100, nil, 10); err != nil {
		t.Fatal(err)
	}
	if got := sw.PortState("Gi1/0/1"); got.AccessVLAN != 10 {
		t.Fatalf("port after reset: %+v", got)
	}
	if err := svc.UpdatePort(ctx, switchMAC, "Gi1/0/2", "", ModeTrunk, 100, []int{100, 200, 300}, 0); err != nil {
		t.Fatal(err)
	}
	if got := sw.PortState("Gi1/0/2"); got.Mode != "trunk" || got.NativeVLAN != 100 || !slices.Equal(got.Allowed, []int{100, 200, 300}) {
		t.Fatalf("trunk port: %+v", got)
	}
	if err := svc.ResetPort(ctx, switchMAC, "Gi1/0/2", 100, []int{100, 200, 300}, 0); err != nil {
		t.Fatal(err)
	}
	if got := sw.PortState("Gi1/0/2"); got.Mode != "" || got.NativeVLAN != 1 || len(got.Allowed) != 0 {
		t.Fatalf("trunk port after reset: %+v", got)
	}
	if sw.Logins() != 4 || sw.Saves() != 4 {
		t.Fatalf("%d logins, %d saves; want one session and one save per call", sw.Logins(), sw.Saves())
	}

	// The switch's allowed_vlans and the service's checks come before
	// any session.
	err := svc.UpdatePort(ctx, switchMAC, "Gi1/0/1", "", ModeAccess, 400, nil, 0)
	wantErr(t, err, errs.ClassInvalidParameterValue, "VLANs [400] are not allowed for update_port on switch "+switchMAC+". Allowed VLANs: [10, 100, 101")
	err = svc.UpdatePort(ctx, switchMAC, "Gi1/0/1", "", ModeHybrid, 100, []int{100}, 0)
	wantErr(t, err, errs.ClassInvalidParameterValue, "mode must be one of: access, trunk")
	if sw.Logins() != 4 {
		t.Fatalf("refused calls reached the switch: %d logins", sw.Logins())
	}
}

// A rejected command, a dropped connection, a bad login and a switch
// too slow for the session's bound are NetworkErrors naming the cause.
func TestGenericSwitchFaults(t *testing.T) {
	ctx := context.Background()
	sw := sshswitch.Start(t, sshswitch.Options{User: "admin", Password: "pa55", EnableSecret: "s3cret"})
	svc := service(t, switchFile(t, sw, ""), []string{"100-200"})

	err := svc.UpdatePort(ctx, switchMAC, "Gi1/0/1", "", ModeAccess, 300, nil, 0)
	wantErr(t, err, errs.ClassInvalidParameterValue, "VLANs [300] are not allowed for update_port on switch "+switchMAC)

	sw.RejectCommand("switchport access vlan 150")
	err = svc.UpdatePort(ctx, switchMAC, "Gi1/0/1", "", ModeAccess, 150, nil, 0)
	wantErr(t, err, errs.ClassNetworkError, "Failed to configure network port: switch sw1: Found invalid configuration in device response. Operation: switchport access vlan 150. Output: switchport access vlan 150")
	if got := sw.PortState("Gi1/0/1"); got.AccessVLAN == 150 {
		t.Fatalf("rejected command applied: %+v", got)
	}
	sw.Heal()
	sw.DropOn("interface")
	err = svc.ResetPort(ctx, switchMAC, "Gi1/0/1", 150, nil, 0)
	wantErr(t, err, errs.ClassNetworkError, "Failed to reset network port: switch sw1: after \"interface Gi1/0/1\": connection closed by the switch")
	sw.Heal()

	wrong := service(t, switchFile(t, sw, "password = wrong"), nil)
	err = wrong.UpdatePort(ctx, switchMAC, "Gi1/0/1", "", ModeAccess, 150, nil, 0)
	wantErr(t, err, errs.ClassNetworkError, "SSH login to 127.0.0.1:")

	slow := sshswitch.Start(t, sshswitch.Options{User: "admin", Password: "pa55", EnableSecret: "s3cret", Delay: 50 * time.Millisecond})
	svc = service(t, switchFile(t, slow, ""), nil)
	svc.drivers[0].(*GenericSwitch).SessionTimeout = 120 * time.Millisecond
	err = svc.UpdatePort(ctx, switchMAC, "Gi1/0/1", "", ModeAccess, 150, nil, 0)
	wantErr(t, err, errs.ClassNetworkError, "session timed out after 120ms")

	err = svc.UpdatePort(ctx, "11:22:33:44:55:66", "Gi1/0/1", "", ModeAccess, 150, nil, 0)
	if err != nil {
		t.Fatalf("noop driver manages every other switch: %v", err)
	}
}

func TestServiceConfiguration(t *testing.T) {
	factories := map[string]DriverFactory{"noop": NewNoop, GenericSwitchName: NewGenericSwitch}
	dir := t.TempDir()
	write := func(text string) string {
		p := filepath.Join(dir, fmt.Sprintf("s%d.conf", len(text)))
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		o     Options
		class errs.Class
		msg   string
	}{
		{Options{}, errs.ClassConfigInvalid, "No switch drivers loaded"},
		{Options{EnabledSwitchDrivers: []string{"noop", "noop"}}, errs.ClassConfigInvalid, `The switch driver(s) "noop" is/are duplicated`},
		{Options{EnabledSwitchDrivers: []string{"netconf"}}, errs.ClassDriverNotFoundInEntrypoint, "Could not find the following items in the 'ironic.networking.switch_drivers' entrypoint: ['netconf']."},
		{Options{EnabledSwitchDrivers: []string{"noop"}, SwitchConfigFile: filepath.Join(dir, "missing")}, errs.ClassNetworkError, "Switch configuration file " + filepath.Join(dir, "missing") + " does not exist"},
		{Options{EnabledSwitchDrivers: []string{GenericSwitchName}, SwitchConfigFile: write("[switch:a]\ndriver_type = generic-switch\naddress = 127.0.0.1\n")},
			errs.ClassNetworkError, "Invalid configuration for switch 'a': missing required fields: device_type, username, mac_address; must specify either 'password' or 'key_file'"},
		{Options{EnabledSwitchDrivers: []string{"noop"}, SwitchConfigFile: write("[switch:b]\ndriver_type = generic-switch\ndevice_type = netmiko_cisco_ios\naddress = x\nusername = u\npassword = p\nmac_address = m\n")},
			errs.ClassNetworkError, "No driver translator registered for switch: b, with driver type: generic-switch"},
		{Options{EnabledSwitchDrivers: []string{GenericSwitchName}, SwitchConfigFile: write("[switch:c]\ndriver_type = generic-switch\ndevice_type = netmiko_juniper\naddress = x\nusername = u\npassword = p\nmac_address = m\n")},
			errs.ClassConfigInvalid, `device_type "netmiko_juniper" is not supported`},
		{Options{EnabledSwitchDrivers: []string{"noop"}, AllowedVLANs: []string{"10-5"}}, errs.ClassInvalidParameterValue, "Invalid VLAN range 10-5: start must be less than or equal to end"},
	} {
		tc.o.Factories = factories
		_, err := New(tc.o)
		wantErr(t, err, tc.class, tc.msg)
	}
	svc, err := New(Options{EnabledSwitchDrivers: []string{GenericSwitchName}, Factories: factories})
	if err != nil {
		t.Fatal(err)
	}
	err = svc.UpdatePort(context.Background(), switchMAC, "Gi1/0/1", "", ModeAccess, 100, nil, 0)
	wantErr(t, err, errs.ClassSwitchNotFound, "Switch "+switchMAC+" could not be found or is not supported by any configured switch driver.")
}
