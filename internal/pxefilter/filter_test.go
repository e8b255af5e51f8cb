package pxefilter

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store"
	"github.com/openkeel/ironic/internal/store/sqldb"
	"github.com/openkeel/ironic/internal/store/storetest"
	"github.com/openkeel/ironic/testing/fakeclock"
)

// fleet enrols nodes in several states, each with one port, and returns
// the store. The MAC's last byte numbers the node.
type fleetNode struct {
	name, state, inspect string
	mac                  string
	child                bool
}

var fleet = []fleetNode{
	{name: "inspecting", state: states.Inspecting, inspect: "agent", mac: "52:54:00:00:00:01"},
	{name: "inspect-wait", state: states.InspectWait, inspect: "agent", mac: "52:54:00:00:00:02"},
	{name: "redfish-inspecting", state: states.Inspecting, inspect: "redfish", mac: "52:54:00:00:00:03"},
	{name: "manageable", state: states.Manageable, inspect: "agent", mac: "52:54:00:00:00:04"},
	{name: "active", state: states.Active, inspect: "agent", mac: "52:54:00:00:00:05"},
	{name: "enroll", state: states.Enroll, inspect: "agent", mac: "52:54:00:00:00:06"},
	{name: "child-inspecting", state: states.Inspecting, inspect: "agent", mac: "52:54:00:00:00:07", child: true},
}

func newStore(t *testing.T, db *sqldb.DB, nodes []fleetNode) store.Store {
	t.Helper()
	ctx := context.Background()
	st := store.New(db)
	parents := map[string]string{}
	for i, fn := range nodes {
		n := &model.Node{
			UUID: "00000000-0000-4000-8000-00000000000" + string(rune('1'+i)), Name: ptr(fn.name),
			Driver: "fake-hardware", ProvisionState: fn.state, InspectInterface: fn.inspect,
		}
		if fn.child {
			parent := parents["inspecting"]
			n.ParentNode = &parent
		}
		got, err := st.CreateNode(ctx, n)
		if err != nil {
			t.Fatalf("create node %s: %v", fn.name, err)
		}
		parents[fn.name] = got.UUID
		if _, err := st.CreatePort(ctx, &model.Port{
			UUID: "10000000-0000-4000-8000-00000000000" + string(rune('1'+i)), Address: ptr(fn.mac), NodeID: &got.ID,
		}); err != nil {
			t.Fatalf("create port %s: %v", fn.mac, err)
		}
	}
	return st
}

func ptr[T any](v T) *T { return &v }

func TestDecideOverTheStore(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		st := newStore(t, db, fleet)
		cases := []struct {
			name          string
			supported     []string
			autoDiscovery bool
			want          Decision
		}{
			{
				name:      "agent inspection allows its nodes and unknown MACs",
				supported: []string{"agent"},
				want: Decision{
					Allow:        []string{"52:54:00:00:00:01", "52:54:00:00:00:02"},
					Deny:         []string{"52:54:00:00:00:03", "52:54:00:00:00:04", "52:54:00:00:00:05", "52:54:00:00:00:06", "52:54:00:00:00:07"},
					AllowUnknown: true,
				},
			},
			{
				name:      "an unsupported inspect interface is not in-band",
				supported: []string{"redfish"},
				want: Decision{
					Allow:        []string{"52:54:00:00:00:03"},
					Deny:         []string{"52:54:00:00:00:01", "52:54:00:00:00:02", "52:54:00:00:00:04", "52:54:00:00:00:05", "52:54:00:00:00:06", "52:54:00:00:00:07"},
					AllowUnknown: true,
				},
			},
			{
				name:      "no node on inspection denies everything",
				supported: []string{"inspector"},
				want: Decision{
					Deny: []string{"52:54:00:00:00:01", "52:54:00:00:00:02", "52:54:00:00:00:03", "52:54:00:00:00:04", "52:54:00:00:00:05", "52:54:00:00:00:06", "52:54:00:00:00:07"},
				},
			},
			{
				name:          "auto-discovery allows unknown MACs with no inspection",
				supported:     []string{"inspector"},
				autoDiscovery: true,
				want: Decision{
					Deny:         []string{"52:54:00:00:00:01", "52:54:00:00:00:02", "52:54:00:00:00:03", "52:54:00:00:00:04", "52:54:00:00:00:05", "52:54:00:00:00:06", "52:54:00:00:00:07"},
					AllowUnknown: true,
				},
			},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				f, err := New(st, Options{Hostsdir: t.TempDir(), SupportedInspectInterfaces: c.supported, SyncPeriod: time.Second, AutoDiscovery: c.autoDiscovery})
				if err != nil {
					t.Fatal(err)
				}
				got, err := f.Decide(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got.Allow, c.want.Allow) || !slices.Equal(got.Deny, c.want.Deny) || got.AllowUnknown != c.want.AllowUnknown {
					t.Errorf("Decide = %+v\nwant      %+v", got, c.want)
				}
			})
		}
	})
}

// readDir returns the hostsdir's files and contents, failing on a left
// temporary file.
func readDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("temporary file left: %s", e.Name())
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		fi, _ := e.Info()
		if fi.Mode().Perm() != 0o644 {
			t.Errorf("%s has mode %v, want 0644 (dnsmasq reads it as another user)", e.Name(), fi.Mode().Perm())
		}
		files[e.Name()] = string(b)
	}
	return files
}

func TestApplyWritesUpstreamsFiles(t *testing.T) {
	dir := t.TempDir()
	const a, b, c = "52:54:00:00:00:0a", "52:54:00:00:00:0b", "52:54:00:00:00:0c"
	ch, err := Apply(dir, Decision{Allow: []string{a}, Deny: []string{b, c}, AllowUnknown: true})
	if err != nil {
		t.Fatal(err)
	}
	if ch != (Changes{Allowed: 1, Denied: 2, Unknown: true}) {
		t.Errorf("first apply changes = %+v", ch)
	}
	want := map[string]string{a: a + "\n", b: b + ",ignore\n", c: c + ",ignore\n", UnknownHostsFile: "*:*:*:*:*:*\n"}
	if got := readDir(t, dir); !mapsEqual(got, want) {
		t.Fatalf("hostsdir = %q\nwant %q", got, want)
	}

	// The same decision writes nothing: dnsmasq re-reads nothing.
	if ch, err := Apply(dir, Decision{Allow: []string{a}, Deny: []string{b, c}, AllowUnknown: true}); err != nil || ch != (Changes{}) {
		t.Fatalf("repeated apply = %+v, %v; want no change", ch, err)
	}

	// Inspection over, c's port deleted: a is denied, c's file (stale)
	// follows the unknown MACs, now denied; nothing is deleted.
	ch, err = Apply(dir, Decision{Deny: []string{a, b}})
	if err != nil {
		t.Fatal(err)
	}
	if ch != (Changes{Denied: 1, Unknown: true}) {
		t.Errorf("second apply changes = %+v", ch)
	}
	want = map[string]string{a: a + ",ignore\n", b: b + ",ignore\n", c: c + ",ignore\n", UnknownHostsFile: "*:*:*:*:*:*,ignore\n"}
	if got := readDir(t, dir); !mapsEqual(got, want) {
		t.Fatalf("hostsdir = %q\nwant %q", got, want)
	}

	// Discovery on: the stale MAC is allowed again, in case its machine
	// is re-enrolled by discovery.
	if _, err := Apply(dir, Decision{Deny: []string{a, b}, AllowUnknown: true}); err != nil {
		t.Fatal(err)
	}
	if got := readDir(t, dir)[c]; got != c+"\n" {
		t.Errorf("stale MAC file = %q, want allowed", got)
	}
}

// A hostsdir written by upstream's filter (same names and contents) is
// taken over as it is; a file of another shape is rewritten.
func TestApplyTakesOverAHostsdir(t *testing.T) {
	dir := t.TempDir()
	const a, b = "52:54:00:00:00:0a", "52:54:00:00:00:0b"
	for name, content := range map[string]string{a: a + ",ignore\n", b: b + ",ignore,extra\n", UnknownHostsFile: "*:*:*:*:*:*,ignore\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ch, err := Apply(dir, Decision{Deny: []string{a, b}})
	if err != nil {
		t.Fatal(err)
	}
	if ch != (Changes{Denied: 1}) {
		t.Errorf("changes = %+v, want only b rewritten", ch)
	}
}

func TestApplyIgnoresAddressesThatAreNoFileName(t *testing.T) {
	dir := t.TempDir()
	if _, err := Apply(dir, Decision{Deny: []string{"../escape", "52:54:00:00:00:0a"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "escape")); err == nil {
		t.Fatal("an address wrote outside the hostsdir")
	}
	if got := len(readDir(t, dir)); got != 2 {
		t.Errorf("hostsdir has %d files, want the MAC and the wildcard", got)
	}
}

func TestNewChecksTheHostsdir(t *testing.T) {
	if _, err := New(nil, Options{SyncPeriod: time.Second}); err == nil || !strings.Contains(err.Error(), "dhcp_hostsdir option is required") {
		t.Errorf("no hostsdir: %v", err)
	}
	if _, err := New(nil, Options{Hostsdir: filepath.Join(t.TempDir(), "missing"), SyncPeriod: time.Second}); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("missing hostsdir: %v", err)
	}
}

// Run syncs at once and then once per period; a change in the database
// reaches the hostsdir at the next period.
func TestRunSyncsEveryPeriod(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *sqldb.DB) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		st := newStore(t, db, fleet[:1])
		clk := fakeclock.NewBlocking(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
		dir := t.TempDir()
		f, err := New(st, Options{Hostsdir: dir, SupportedInspectInterfaces: []string{"agent"}, SyncPeriod: 45 * time.Second, Clock: clk})
		if err != nil {
			t.Fatal(err)
		}
		slept := make(chan int, 4)
		clk.OnSleep(func(n int, _ time.Duration) { slept <- n })
		done := make(chan error, 1)
		go func() { done <- f.Run(ctx) }()
		<-slept
		mac := fleet[0].mac
		if got := readDir(t, dir)[mac]; got != mac+"\n" {
			t.Fatalf("after the first sync %s = %q, want allowed", mac, got)
		}
		n, err := st.GetNodeByName(ctx, fleet[0].name)
		if err != nil {
			t.Fatal(err)
		}
		n.ProvisionState = states.Manageable
		if _, err := st.UpdateNode(ctx, n, "provision_state"); err != nil {
			t.Fatal(err)
		}
		clk.Advance(45 * time.Second)
		<-slept
		if got := readDir(t, dir)[mac]; got != mac+",ignore\n" {
			t.Fatalf("after the second sync %s = %q, want denied", mac, got)
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("Run = %v", err)
		}
	})
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
