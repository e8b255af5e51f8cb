package model

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// NodeUpdate is a change to one node as a list of edits, each naming the
// column (or the key inside a dict column) it changes. The API builds it
// from the node it read and the node a PATCH made of it; the conductor
// applies it to the node as read under the node's exclusive lock, so a
// write never carries back columns (or dict keys) it did not change: two
// PATCHes adding different keys to extra both survive, and nothing the
// conductor wrote meanwhile (driver_internal_info, last_error, power and
// provision fields, console_enabled) is reverted.
//
// An edit may be conditional (Check): it then applies only if the value
// at its path is still the one the writer saw. A PATCH makes every edit
// conditional, so that it behaves as if it had been applied to the node
// under the lock: when a condition fails, nothing is written and the
// caller re-reads the node and applies its patch again.
type NodeUpdate struct {
	Edits []NodeEdit `json:"edits"`
}

// NodeEdit changes the value at Path: the column (its json name in Node),
// then the keys inside a dict column.
type NodeEdit struct {
	Path []string `json:"path"`
	// Remove deletes the key at Path (dict keys only); otherwise Value,
	// JSON, is stored there.
	Remove bool            `json:"remove,omitempty"`
	Value  json.RawMessage `json:"value,omitempty"`
	// Check makes the edit conditional on the value at Path being Was
	// (JSON), or absent when WasAbsent.
	Check     bool            `json:"check,omitempty"`
	WasAbsent bool            `json:"was_absent,omitempty"`
	Was       json.RawMessage `json:"was,omitempty"`
}

// String names the edit's path as a JSON pointer, for messages.
func (e NodeEdit) String() string { return "/" + strings.Join(e.Path, "/") }

// NodeChangedError is a failed condition: the value at Path is no longer
// the one the writer saw.
type NodeChangedError struct {
	Path string
}

func (e *NodeChangedError) Error() string {
	return fmt.Sprintf("%s changed since the node was read", e.Path)
}

// nodeField is a column of Node: its json name and field index.
type nodeField struct {
	index int
	dict  bool
}

// nodeFields maps each column's json name to its Node field; built once
// from the type.
var nodeFields = func() map[string]nodeField {
	typ := reflect.TypeFor[Node]()
	dictType := reflect.TypeFor[map[string]any]()
	out := make(map[string]nodeField, typ.NumField())
	for i := 0; i < typ.NumField(); i++ {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		out[name] = nodeField{index: i, dict: typ.Field(i).Type == dictType}
	}
	return out
}()

// IsNodeColumn reports whether name is a column of Node.
func IsNodeColumn(name string) bool {
	_, ok := nodeFields[name]
	return ok
}

// Columns lists the columns the update edits, once each, in order.
func (u *NodeUpdate) Columns() []string {
	var out []string
	for _, e := range u.Edits {
		if len(e.Path) > 0 && !slices.Contains(out, e.Path[0]) {
			out = append(out, e.Path[0])
		}
	}
	return out
}

// Empty reports whether the update changes nothing.
func (u *NodeUpdate) Empty() bool { return u == nil || len(u.Edits) == 0 }

// Set adds an unconditional edit storing value in column.
func (u *NodeUpdate) Set(column string, value any) error {
	if !IsNodeColumn(column) {
		return fmt.Errorf("node has no column %q", column)
	}
	raw, err := json.Marshal(value)
	if err != nil {
		return fmt.Errorf("encode node %s: %w", column, err)
	}
	u.Edits = append(u.Edits, NodeEdit{Path: []string{column}, Value: raw})
	return nil
}

// DiffNode is the conditional update that turns old into cur. Columns that
// differ are edited whole, except dict columns under which touched names
// paths (column, then keys, as a JSON patch's paths): those are edited at
// each touched key, so that writers of different keys do not collide. A
// touched path is cut at the first key whose parent is not a dict on both
// sides (a list, a scalar, or a dict that was added or removed).
//
// A touched path whose value old and cur share still gets its edit, which
// then only checks: the PATCH's outcome there depends on the value it read
// (an add then remove of a key leaves it absent only if it was absent), so
// under the lock it must still be that value. Without the check such a
// PATCH was answered as applied while another writer's value stood where
// it had removed or set one (the history checker's find).
func DiffNode(old, cur *Node, touched [][]string) (*NodeUpdate, error) {
	ov, cv := reflect.ValueOf(old).Elem(), reflect.ValueOf(cur).Elem()
	u := &NodeUpdate{}
	for _, name := range sortedColumns() {
		f := nodeFields[name]
		of, cf := ov.Field(f.index).Interface(), cv.Field(f.index).Interface()
		if reflect.DeepEqual(of, cf) && !touches(touched, name) {
			continue
		}
		if f.dict {
			edits, ok, err := dictEdits(name, of.(map[string]any), cf.(map[string]any), touched)
			if err != nil {
				return nil, err
			}
			if ok {
				u.Edits = append(u.Edits, edits...)
				continue
			}
		}
		e, err := conditional([]string{name}, of, true, cf, true)
		if err != nil {
			return nil, err
		}
		u.Edits = append(u.Edits, e)
	}
	return u, nil
}

// touches reports whether a touched path is in column.
func touches(touched [][]string, column string) bool {
	for _, p := range touched {
		if len(p) > 0 && p[0] == column {
			return true
		}
	}
	return false
}

// sortedColumns is every column in the order of Node's fields, so that
// updates are deterministic.
func sortedColumns() []string {
	out := make([]string, 0, len(nodeFields))
	for name := range nodeFields {
		out = append(out, name)
	}
	slices.SortFunc(out, func(a, b string) int { return nodeFields[a].index - nodeFields[b].index })
	return out
}

// dictEdits are the key-level edits of column between old and cur for the
// touched paths under it; ok is false when a column-level edit is needed
// (the column itself was touched, or the key edits would not reproduce
// cur).
func dictEdits(column string, old, cur map[string]any, touched [][]string) ([]NodeEdit, bool, error) {
	var paths [][]string
	for _, p := range touched {
		if len(p) == 0 || p[0] != column {
			continue
		}
		if len(p) == 1 {
			return nil, false, nil
		}
		paths = append(paths, cutAtDict(p, old, cur))
	}
	if len(paths) == 0 {
		return nil, false, nil
	}
	// A path under another touched path is covered by it.
	slices.SortFunc(paths, func(a, b []string) int { return len(a) - len(b) })
	var keep [][]string
	for _, p := range paths {
		covered := false
		for _, k := range keep {
			if len(k) <= len(p) && slices.Equal(k, p[:len(k)]) {
				covered = true
				break
			}
		}
		if !covered {
			keep = append(keep, p)
		}
	}
	probe := cloneJSON(old)
	var edits []NodeEdit
	for _, p := range keep {
		ow, oHas := lookup(old, p[1:])
		cw, cHas := lookup(cur, p[1:])
		e, err := conditional(p, ow, oHas, cw, cHas)
		if err != nil {
			return nil, false, err
		}
		edits = append(edits, e)
		if err := applyDictEdit(&probe, e, true); err != nil {
			return nil, false, nil
		}
	}
	if !jsonEqual(probe, cur) {
		return nil, false, nil
	}
	return edits, true, nil
}

// cutAtDict shortens p (column first) to end at the first key whose parent
// is not a dict in both old and cur.
func cutAtDict(p []string, old, cur map[string]any) []string {
	om, cm := old, cur
	for i := 1; i < len(p)-1; i++ {
		on, ok1 := om[p[i]].(map[string]any)
		cn, ok2 := cm[p[i]].(map[string]any)
		if !ok1 || !ok2 {
			return p[:i+1]
		}
		om, cm = on, cn
	}
	return p
}

// lookup returns the value at keys inside m.
func lookup(m map[string]any, keys []string) (any, bool) {
	var v any = m
	for _, k := range keys {
		d, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = d[k]; !ok {
			return nil, false
		}
	}
	return v, true
}

// conditional is the edit at path from (was, wasHas) to (now, nowHas).
func conditional(path []string, was any, wasHas bool, now any, nowHas bool) (NodeEdit, error) {
	e := NodeEdit{Path: slices.Clone(path), Check: true, WasAbsent: !wasHas, Remove: !nowHas}
	var err error
	if wasHas {
		if e.Was, err = json.Marshal(was); err != nil {
			return e, fmt.Errorf("encode node %s: %w", e, err)
		}
	}
	if nowHas {
		if e.Value, err = json.Marshal(now); err != nil {
			return e, fmt.Errorf("encode node %s: %w", e, err)
		}
	}
	return e, nil
}

// Apply checks every condition against n and then applies every edit, so
// that a failed condition (a *NodeChangedError) leaves n as it was. n's
// dicts are changed in place.
func (u *NodeUpdate) Apply(n *Node) error {
	v := reflect.ValueOf(n).Elem()
	for _, e := range u.Edits {
		if len(e.Path) == 0 {
			return fmt.Errorf("node update: an edit has no path")
		}
		f, ok := nodeFields[e.Path[0]]
		if !ok {
			return fmt.Errorf("node update: node has no column %q", e.Path[0])
		}
		if len(e.Path) > 1 && !f.dict {
			return fmt.Errorf("node update: %s is not a dict", e.Path[0])
		}
		if !e.Check {
			continue
		}
		fv := v.Field(f.index).Interface()
		var cur any = fv
		has := true
		if len(e.Path) > 1 {
			cur, has = lookup(fv.(map[string]any), e.Path[1:])
		}
		if !sameValue(cur, has, e.Was, !e.WasAbsent, f.dict && len(e.Path) == 1) {
			return &NodeChangedError{Path: e.String()}
		}
	}
	for _, e := range u.Edits {
		f := nodeFields[e.Path[0]]
		field := v.Field(f.index)
		if len(e.Path) > 1 {
			m := field.Interface().(map[string]any)
			if err := applyDictEdit(&m, e, !e.Check); err != nil {
				return err
			}
			field.Set(reflect.ValueOf(m))
			continue
		}
		if e.Remove {
			return fmt.Errorf("node update: column %s cannot be removed", e.Path[0])
		}
		nv := reflect.New(field.Type())
		if err := json.Unmarshal(e.Value, nv.Interface()); err != nil {
			return fmt.Errorf("node update: decode %s: %w", e, err)
		}
		field.Set(nv.Elem())
	}
	return nil
}

// applyDictEdit applies a key-level edit to *m (column first in e.Path).
// Missing parents are created only when create is set: a conditional edit
// was checked, so its parents exist.
func applyDictEdit(m *map[string]any, e NodeEdit, create bool) error {
	if *m == nil {
		*m = map[string]any{}
	}
	d := *m
	keys := e.Path[1:]
	for _, k := range keys[:len(keys)-1] {
		next, ok := d[k].(map[string]any)
		if !ok {
			if !create {
				return &NodeChangedError{Path: e.String()}
			}
			next = map[string]any{}
			d[k] = next
		}
		d = next
	}
	last := keys[len(keys)-1]
	if e.Remove {
		delete(d, last)
		return nil
	}
	var val any
	if err := json.Unmarshal(e.Value, &val); err != nil {
		return fmt.Errorf("node update: decode %s: %w", e, err)
	}
	d[last] = val
	return nil
}

// sameValue compares the current value (cur, present when has) with the
// JSON a writer saw (was, present when wasHas). A dict column read as NULL
// is the empty dict, as the store writes it.
func sameValue(cur any, has bool, was json.RawMessage, wasHas, dictColumn bool) bool {
	if has != wasHas {
		return false
	}
	if !has {
		return true
	}
	raw, err := json.Marshal(cur)
	if err != nil {
		return false
	}
	if bytes.Equal(raw, was) {
		return true
	}
	var a, b any
	if json.Unmarshal(raw, &a) != nil || json.Unmarshal(was, &b) != nil {
		return false
	}
	if dictColumn {
		a, b = emptyDictIfNull(a), emptyDictIfNull(b)
	}
	return reflect.DeepEqual(a, b)
}

func emptyDictIfNull(v any) any {
	if v == nil {
		return map[string]any{}
	}
	return v
}

// jsonEqual compares two values as JSON documents.
func jsonEqual(a, b any) bool {
	ra, err1 := json.Marshal(a)
	rb, err2 := json.Marshal(b)
	if err1 != nil || err2 != nil {
		return false
	}
	var x, y any
	if json.Unmarshal(ra, &x) != nil || json.Unmarshal(rb, &y) != nil {
		return false
	}
	return reflect.DeepEqual(emptyDictIfNull(x), emptyDictIfNull(y))
}

// cloneJSON deep-copies a dict through JSON.
func cloneJSON(m map[string]any) map[string]any {
	raw, err := json.Marshal(m)
	if err != nil {
		return nil
	}
	var out map[string]any
	if json.Unmarshal(raw, &out) != nil {
		return nil
	}
	return out
}
