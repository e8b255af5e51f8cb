package task

import (
	"reflect"
	"strings"

	"github.com/openkeel/ironic/internal/model"
)

// Upstream's node.save() writes the fields assigned since the object was
// loaded; here the task keeps a deep copy of the node and writes the columns
// that differ from it, so code that changes several fields and then moves
// the state (driver_internal_info, then process_event) saves them all.

// nodeColumn is a field of model.Node that is a nodes column.
type nodeColumn struct {
	name  string
	index int
}

// notWritten are model.Node fields a save never writes: keys, timestamps the
// store maintains, and the traits and tags that live in their own tables.
var notWritten = map[string]bool{
	"id": true, "uuid": true, "created_at": true, "updated_at": true,
	"traits": true, "tags": true,
}

// nodeColumns lists the writable columns; model.Node names each field by
// its column in the json tag.
var nodeColumns = func() []nodeColumn {
	typ := reflect.TypeFor[model.Node]()
	var cols []nodeColumn
	for i := 0; i < typ.NumField(); i++ {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		if name == "" || name == "-" || notWritten[name] {
			continue
		}
		cols = append(cols, nodeColumn{name: name, index: i})
	}
	return cols
}()

// changedColumns names the columns whose values differ between old and cur.
func changedColumns(old, cur *model.Node) []string {
	ov, cv := reflect.ValueOf(old).Elem(), reflect.ValueOf(cur).Elem()
	var out []string
	for _, c := range nodeColumns {
		if !reflect.DeepEqual(ov.Field(c.index).Interface(), cv.Field(c.index).Interface()) {
			out = append(out, c.name)
		}
	}
	return out
}

// cloneNode copies n deeply enough that changing anything reachable from n
// (a pointed-to value, a nested map) leaves the copy as it was.
func cloneNode(n *model.Node) model.Node {
	c := *n
	v := reflect.ValueOf(&c).Elem()
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.Pointer:
			if !f.IsNil() {
				p := reflect.New(f.Type().Elem())
				p.Elem().Set(f.Elem())
				f.Set(p)
			}
		case reflect.Map:
			if m, ok := f.Interface().(map[string]any); ok && m != nil {
				f.Set(reflect.ValueOf(cloneValue(m)))
			}
		case reflect.Slice:
			if !f.IsNil() {
				s := reflect.MakeSlice(f.Type(), f.Len(), f.Len())
				reflect.Copy(s, f)
				f.Set(s)
			}
		}
	}
	return c
}

// cloneValue deep-copies the JSON-like values held in the node's dict
// columns.
func cloneValue[T any](v T) T {
	return any(cloneAny(v)).(T)
}

func cloneAny(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if x == nil {
			return x
		}
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = cloneAny(e)
		}
		return m
	case []any:
		if x == nil {
			return x
		}
		s := make([]any, len(x))
		for i, e := range x {
			s[i] = cloneAny(e)
		}
		return s
	case []string:
		return append([]string(nil), x...)
	case []map[string]any:
		s := make([]map[string]any, len(x))
		for i, e := range x {
			s[i] = cloneValue(e)
		}
		return s
	}
	return v
}
