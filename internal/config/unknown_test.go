package config

import (
	"reflect"
	"strings"
	"testing"
)

// The misspellings of issue 20 are listed with the name probably meant;
// an unrelated name gets no suggestion.
func TestUnknownListedWithClosestName(t *testing.T) {
	p := write(t, t.TempDir(), "ironic.conf", `[DEFAULT]
debug = true
port = 7000
[api]
prot = 7000
[apii]
port = 1
host_ip = 127.0.0.1
[conductor]
heartbeat_intervall = 5
[DEFAULT]
heartbeat_intervall = 5
[no_such_section]
x = 1
[glance]
xyzzy_plugh = 1
`)
	c, err := Load(LoadOptions{Files: []string{p}})
	if err != nil {
		t.Fatal(err)
	}
	want := []Unknown{
		{Section: "DEFAULT", Option: "port", File: p, Suggestion: "[api]/port"},
		{Section: "api", Option: "prot", File: p, Suggestion: "[api]/port"},
		{Section: "apii", File: p, Suggestion: "[api]"},
		{Section: "conductor", Option: "heartbeat_intervall", File: p, Suggestion: "[conductor]/heartbeat_interval"},
		{Section: "DEFAULT", Option: "heartbeat_intervall", File: p, Suggestion: "[conductor]/heartbeat_interval"},
		{Section: "no_such_section", File: p},
		{Section: "glance", Option: "xyzzy_plugh", File: p},
	}
	if got := c.Unknown(); !reflect.DeepEqual(got, want) {
		t.Errorf("Unknown() =\n%+v\nwant\n%+v", got, want)
	}
	if got, want := want[1].String(), "unknown option [api]/prot in "+p+" is ignored; did you mean [api]/port?"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if got, want := want[5].String(), "unknown section [no_such_section] in "+p+" is ignored"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"port", "port", 0},
		{"prot", "port", 1},
		{"apii", "api", 1},
		{"heartbeat_intervall", "heartbeat_interval", 1},
		{"kitten", "sitting", 3},
		{"", "abc", 3},
		{"ca", "abc", 3},
	} {
		if got := editDistance(tc.a, tc.b); got != tc.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

// Options a file sets away from their default that no code reads are
// listed with their reason; the same value as the default (interpolated
// as it would be) is not.
func TestIneffective(t *testing.T) {
	f := write(t, t.TempDir(), "ironic.conf", "[profiler]\nenabled = true\nhmac_keys = SECRET_KEY\n[DEFAULT]\nbindir = $pybasedir/bin\n"+
		"log_file = /var/log/ironic.log\n[metrics]\nbackend = noop\n[api]\nport = 1234\n")
	c, err := Load(LoadOptions{Files: []string{f}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, i := range c.Ineffective() {
		got = append(got, i.Name.String())
		if i.Reason == "" {
			t.Errorf("%s has no reason", i.Name)
		}
	}
	want := []string{"[DEFAULT]/log_file", "[profiler]/enabled"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("Ineffective() = %v, want %v", got, want)
	}
}
