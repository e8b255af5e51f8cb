package model

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

func TestDiffNodeEdits(t *testing.T) {
	base := func() *Node {
		return &Node{
			Extra:        map[string]any{"a": 1.0, "nest": map[string]any{"x": "1"}, "list": []any{"p"}},
			Properties:   map[string]any{"cpus": 8.0},
			InstanceInfo: map[string]any{},
			Name:         Ptr("n1"),
		}
	}
	cases := []struct {
		name    string
		touched [][]string
		mut     func(*Node)
		want    []string // edit paths as JSON pointers
	}{
		{"key added", [][]string{{"extra", "b"}}, func(n *Node) { n.Extra["b"] = "v" }, []string{"/extra/b"}},
		{"key removed", [][]string{{"extra", "a"}}, func(n *Node) { delete(n.Extra, "a") }, []string{"/extra/a"}},
		{"nested key", [][]string{{"extra", "nest", "y"}}, func(n *Node) { n.Extra["nest"].(map[string]any)["y"] = "2" }, []string{"/extra/nest/y"}},
		{"list element cut at the list", [][]string{{"extra", "list", "0"}}, func(n *Node) { n.Extra["list"] = []any{"q"} }, []string{"/extra/list"}},
		{"under a new dict cut at it", [][]string{{"extra", "new", "k"}}, func(n *Node) { n.Extra["new"] = map[string]any{"k": 1.0} }, []string{"/extra/new"}},
		{"whole column", [][]string{{"extra"}}, func(n *Node) { n.Extra = map[string]any{"z": 1.0} }, []string{"/extra"}},
		{"covered path dropped", [][]string{{"extra", "nest"}, {"extra", "nest", "y"}}, func(n *Node) { n.Extra["nest"] = map[string]any{"y": "2"} }, []string{"/extra/nest"}},
		{"no path: column", nil, func(n *Node) { n.Properties["cpus"] = 4.0 }, []string{"/properties"}},
		{"scalar column", [][]string{{"name"}}, func(n *Node) { n.Name = Ptr("n2") }, []string{"/name"}},
		{"untouched change: column", [][]string{{"extra", "b"}}, func(n *Node) { n.Extra["b"] = "v"; n.Extra["a"] = 3.0 }, []string{"/extra"}},
		{"same value: checked", [][]string{{"extra", "a"}}, func(n *Node) { n.Extra["a"] = 1.0 }, []string{"/extra/a"}},
		{"absent key removed again: checked", [][]string{{"extra", "b"}}, func(*Node) {}, []string{"/extra/b"}},
		{"same scalar: checked", [][]string{{"name"}}, func(*Node) {}, []string{"/name"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			old, cur := base(), base()
			tc.mut(cur)
			u, err := DiffNode(old, cur, tc.touched)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range u.Edits {
				if !e.Check {
					t.Errorf("%s is not conditional", e)
				}
				got = append(got, e.String())
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("edits %v, want %v", got, tc.want)
			}
			// Applied to the node it was built from (through the wire),
			// the update gives the changed node.
			raw, err := json.Marshal(u)
			if err != nil {
				t.Fatal(err)
			}
			var wire NodeUpdate
			if err := json.Unmarshal(raw, &wire); err != nil {
				t.Fatal(err)
			}
			n := base()
			if err := wire.Apply(n); err != nil {
				t.Fatal(err)
			}
			if !jsonEqual(n, cur) {
				t.Fatalf("applied %+v, want %+v", n, cur)
			}
		})
	}
}

func TestApplyMergesKeysOfOtherWriters(t *testing.T) {
	old := &Node{Extra: map[string]any{"a": 1.0}}
	mine := &Node{Extra: map[string]any{"a": 1.0, "mine": "m"}}
	u, err := DiffNode(old, mine, [][]string{{"extra", "mine"}})
	if err != nil {
		t.Fatal(err)
	}
	stored := &Node{Extra: map[string]any{"a": 1.0, "theirs": "t"}, LastError: Ptr("kept")}
	if err := u.Apply(stored); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"a": 1.0, "mine": "m", "theirs": "t"}
	if !reflect.DeepEqual(stored.Extra, want) || *stored.LastError != "kept" {
		t.Fatalf("extra %v last_error %v", stored.Extra, *stored.LastError)
	}
}

func TestApplyFailedConditionChangesNothing(t *testing.T) {
	old := &Node{Extra: map[string]any{"a": 1.0}, Properties: map[string]any{}}
	cur := &Node{Extra: map[string]any{}, Properties: map[string]any{"p": 1.0}}
	u, err := DiffNode(old, cur, [][]string{{"properties", "p"}, {"extra", "a"}})
	if err != nil {
		t.Fatal(err)
	}
	for name, stored := range map[string]*Node{
		"key changed":      {Extra: map[string]any{"a": 2.0}, Properties: map[string]any{}},
		"key gone":         {Extra: map[string]any{}, Properties: map[string]any{}},
		"key added by one": {Extra: map[string]any{"a": 1.0}, Properties: map[string]any{"p": 5.0}},
	} {
		before, _ := json.Marshal(stored)
		err := u.Apply(stored)
		var changed *NodeChangedError
		if !errors.As(err, &changed) {
			t.Fatalf("%s: %v", name, err)
		}
		after, _ := json.Marshal(stored)
		if string(before) != string(after) {
			t.Fatalf("%s: node changed from %s to %s", name, before, after)
		}
	}
}

// A PATCH that adds a key and removes it again changes nothing on the node
// it read, yet on a node where another writer set that key meanwhile it
// must remove it: the update checks the key is still absent, so the writer
// re-reads instead of being answered with the other writer's key standing
// (a history the linearizability checker of test/history found).
func TestUnchangedTouchedKeyIsChecked(t *testing.T) {
	read := &Node{DriverInfo: map[string]any{"h1": "c1"}}
	patched := &Node{DriverInfo: map[string]any{"h1": "c1"}}
	u, err := DiffNode(read, patched, [][]string{{"driver_info", "h2"}, {"driver_info", "h2"}})
	if err != nil {
		t.Fatal(err)
	}
	stored := &Node{DriverInfo: map[string]any{"h1": "c1", "h2": "theirs"}}
	var changed *NodeChangedError
	if err := u.Apply(stored); !errors.As(err, &changed) || changed.Path != "/driver_info/h2" {
		t.Fatalf("applied over another writer's key: %v, driver_info %v", err, stored.DriverInfo)
	}
	same := &Node{DriverInfo: map[string]any{"h1": "c1"}}
	if err := u.Apply(same); err != nil || !reflect.DeepEqual(same.DriverInfo, read.DriverInfo) {
		t.Fatalf("on the node as read: %v, driver_info %v", err, same.DriverInfo)
	}
}

func TestSetIsUnconditional(t *testing.T) {
	u := &NodeUpdate{}
	if err := u.Set("maintenance", true); err != nil {
		t.Fatal(err)
	}
	if err := u.Set("maintenance_reason", (*string)(nil)); err != nil {
		t.Fatal(err)
	}
	if err := u.Set("no_such_column", 1); err == nil {
		t.Fatal("unknown column accepted")
	}
	n := &Node{MaintenanceReason: Ptr("old")}
	if err := u.Apply(n); err != nil {
		t.Fatal(err)
	}
	if !n.Maintenance || n.MaintenanceReason != nil {
		t.Fatalf("maintenance %v reason %v", n.Maintenance, n.MaintenanceReason)
	}
	if got := u.Columns(); !reflect.DeepEqual(got, []string{"maintenance", "maintenance_reason"}) {
		t.Fatalf("columns %v", got)
	}
}
