package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/spectest"
)

// The committed reference is what the generator writes from the current
// option table and source.
func TestCommittedReferenceIsCurrent(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	want, err := generate(root)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(root, docPath))
	if err != nil {
		t.Fatalf("%v: run go run ./internal/config/cmd/genconfdoc", err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := range max(len(gl), len(wl)) {
			var g, w string
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Fatalf("%s is stale (first difference at line %d):\n committed: %s\n generated: %s\nrun go run ./internal/config/cmd/genconfdoc", docPath, i+1, g, w)
			}
		}
	}
	for _, row := range []string{
		"| [`host`](" + upstreamRef + "#DEFAULT.host) | string | *(machine)* | yes |",
		"| [`auth_strategy`](" + upstreamRef + "#DEFAULT.auth_strategy) | string | `keystone` | yes | one of `noauth`, `keystone`, `http_basic` |",
		"| [`connection`](" + upstreamRef + "#database.connection) | string | `sqlite:///$state_path/ironic.sqlite` | yes | secret (masked in logs)",
	} {
		if !bytes.Contains(want, []byte(row)) {
			t.Errorf("the reference lacks the row %q", row)
		}
	}
}

// The scan follows how the code names options: literals, constants,
// helpers (to any depth), closures, range loops and built names.
func TestScanUses(t *testing.T) {
	root := t.TempDir()
	src := `package x

const section = "conductor"

var sections = []string{"glance", "neutron"}

func read(c cfg, s, n string) string { return c.String(s, n) }

func viaHelper(c cfg, s string) string { return read(c, s, "username") }

func f(c cfg, kind string) {
	c.Bool("DEFAULT", "debug")
	c.Int(section, "heartbeat_interval")
	secs := func(name string) int { return c.Int("agent", name) }
	secs("command_timeout")
	for _, s := range sections {
		viaHelper(c, s)
	}
	for _, n := range []string{"a", "b"} {
		c.String("api", n)
	}
	c.List("DEFAULT", "enabled_"+kind+"_interfaces")
	c.String(other(), "unknown_section")
}
`
	if err := os.MkdirAll(filepath.Join(root, "internal", "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "internal", "x", "x.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	uses, err := scanUses(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []use{
		{"DEFAULT", "debug"}, {"conductor", "heartbeat_interval"}, {"agent", "command_timeout"},
		{"glance", "username"}, {"neutron", "username"}, {"api", "a"}, {"api", "b"},
		{"DEFAULT", "enabled_*_interfaces"}, {"*", "unknown_section"},
	} {
		if !uses[u] {
			t.Errorf("scan missed [%s]/%s; found %v", u.section, u.name, uses)
		}
	}
}

// A typed key counts as a read wherever it is named: in a call, in a
// package-level table or as a helper's argument; keys not named are not.
func TestScanTypedKeys(t *testing.T) {
	root := t.TempDir()
	keys := `package config

var (
	ConductorAutomatedClean = BoolOpt{Name{"conductor", "automated_clean"}}
	RedfishConnectionAttempts = IntOpt{Name{"redfish", "connection_attempts"}}
	AgentCommandTimeout = IntOpt{Name{"agent", "command_timeout"}}
	DefaultDebug = BoolOpt{Name{"DEFAULT", "debug"}}
)
`
	src := `package x

import cfgpkg "github.com/openkeel/ironic/internal/config"

var table = []cfgpkg.IntOpt{cfgpkg.RedfishConnectionAttempts}

func seconds(c *cfgpkg.Config, k cfgpkg.IntOpt) int { return c.IntOf(k) }

func f(c *cfgpkg.Config) {
	c.BoolOf(cfgpkg.ConductorAutomatedClean)
	seconds(c, cfgpkg.AgentCommandTimeout)
}
`
	for p, body := range map[string]string{"internal/config/keys_gen.go": keys, "internal/x/x.go": src} {
		if err := os.MkdirAll(filepath.Join(root, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, p), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	uses, err := scanUses(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []use{{"conductor", "automated_clean"}, {"redfish", "connection_attempts"}, {"agent", "command_timeout"}} {
		if !uses[u] {
			t.Errorf("scan missed [%s]/%s; found %v", u.section, u.name, uses)
		}
	}
	if uses[use{"DEFAULT", "debug"}] {
		t.Errorf("scan counts [DEFAULT]/debug, which no code names")
	}
}

// No silent options: every option of upstream's configuration reference
// (and every library option and ours) is read by the code, or listed in
// internal/config/unread.go with why it is not; a listed option must not be
// read, so that the list stays honest as the code grows.
func TestEveryOptionReadOrListed(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	uses, err := scanUses(root)
	if err != nil {
		t.Fatal(err)
	}
	opts := config.Options()
	usages := classifyAll(opts, uses)
	var doc struct {
		Options []struct {
			Section string `json:"section"`
			Dest    string `json:"dest"`
		} `json:"options"`
	}
	spectest.LoadJSON(t, "ironic/core/config-options.json", &doc)
	if len(doc.Options) == 0 {
		t.Fatal("config-options.json lists no options")
	}
	names := map[config.Name]bool{}
	for _, s := range doc.Options {
		names[config.Name{Section: s.Section, Name: s.Dest}] = true
	}
	for _, o := range opts {
		names[config.Name{Section: o.Section, Name: o.Name}] = true
	}
	counts := map[string]int{}
	for n := range names {
		u, known := usages[n]
		if !known {
			t.Errorf("%s is in config-options.json but not in the option table", n)
			continue
		}
		r, listed := config.UnreadReason(n.Section, n.Name)
		switch {
		case u == unused && !listed:
			t.Errorf("%s is neither read nor listed in internal/config/unread.go: read it, or list it with the reason it has no effect", n)
		case u != unused && listed && config.UnreadSection(n.Section):
			t.Errorf("%s is read now: list the unread options of [%s] by name in internal/config/unread.go instead of the whole section", n, n.Section)
		case u != unused && listed:
			t.Errorf("%s is read now: remove it from internal/config/unread.go (%s)", n, r)
		case u != unused:
			counts["read"]++
		default:
			counts["not applicable"]++
		}
	}
	t.Logf("%d options: %d read, %d not applicable", len(names), counts["read"], counts["not applicable"])
}
