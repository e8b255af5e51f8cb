package ovo

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	"github.com/openkeel/ironic/internal/model"
)

// Changes lists the fields of old's class whose values differ in cur (two
// values of one model type), as upstream's object tracks the fields a
// caller set: what its save() writes.
func Changes(old, cur any) ([]string, error) {
	class := classOf(cur)
	if class == nil || reflect.TypeOf(old) != reflect.TypeOf(cur) {
		return nil, fmt.Errorf("changes of %T against %T: not two objects of one class", cur, old)
	}
	a, err := fieldsJSON(old)
	if err != nil {
		return nil, err
	}
	b, err := fieldsJSON(cur)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range class.Fields {
		if f == "created_at" || f == "updated_at" {
			continue
		}
		if !jsonEqual(a[f], b[f]) {
			out = append(out, f)
		}
	}
	return out, nil
}

func fieldsJSON(v any) (map[string]json.RawMessage, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode %T: %w", v, err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("encode %T: %w", v, err)
	}
	return m, nil
}

// jsonEqual compares two JSON values whatever their spelling (key order,
// number formats), null and absent alike.
func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if len(a) > 0 {
		if err := json.Unmarshal(a, &x); err != nil {
			return false
		}
	}
	if len(b) > 0 {
		if err := json.Unmarshal(b, &y); err != nil {
			return false
		}
	}
	return reflect.DeepEqual(x, y)
}

// notUpdated are the node fields upstream's update_node may list as
// changed but never writes through it: keys and timestamps, and traits,
// which have their own calls (an object whose TraitList was loaded lists
// it among its changes).
var notUpdated = map[string]bool{"id": true, "uuid": true, "created_at": true, "updated_at": true, "traits": true}

// NodeUpdateFromObject is upstream's update_node argument (the node
// object and the fields its sender changed) as our edits: each changed
// field set whole to the object's value, unconditionally, as upstream's
// save() writes the changed fields. The conductor applies them to the
// node as read under its lock, so fields the sender did not change are
// never written back.
func NodeUpdateFromObject(n *model.Node, changes []string) (*model.NodeUpdate, error) {
	all, err := fieldsJSON(n)
	if err != nil {
		return nil, err
	}
	upd := &model.NodeUpdate{}
	for _, f := range changes {
		if notUpdated[f] || !NodeClass.has(f) {
			continue
		}
		upd.Edits = append(upd.Edits, model.NodeEdit{Path: []string{f}, Value: slices.Clone(all[f])})
	}
	return upd, nil
}

// NodeObjectForUpdate is our update_node argument (the edits) as
// upstream's: the stored node with upd applied and the fields upd changes.
// A failed condition of upd is a *model.NodeChangedError. Upstream's API
// does the same (it applies a PATCH to the node it read and sends the
// result), so the conditions hold against this read, not under the lock.
func NodeObjectForUpdate(stored *model.Node, upd *model.NodeUpdate) (*model.Node, []string, error) {
	raw, err := json.Marshal(stored)
	if err != nil {
		return nil, nil, fmt.Errorf("copy node %s: %w", stored.UUID, err)
	}
	n := &model.Node{}
	if err := json.Unmarshal(raw, n); err != nil {
		return nil, nil, fmt.Errorf("copy node %s: %w", stored.UUID, err)
	}
	if err := upd.Apply(n); err != nil {
		return nil, nil, err
	}
	changes, err := Changes(stored, n)
	if err != nil {
		return nil, nil, err
	}
	return n, changes, nil
}
