package apiutil

import (
	"encoding/json"
	"reflect"
	"time"
)

// OptString is an optional string, null when unset.
func OptString(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

// EmptyMap renders a nil JSON object column as {} (FlexibleDictField's
// empty value).
func EmptyMap(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// EmptyList renders a nil list column as [] (ListOfStringsField's empty
// value).
func EmptyList(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}

// JSONEqual compares two JSON values as JSON (numbers by value, whatever
// Go type holds them), as patch_update_changed_fields compares a patched
// document with the object.
func JSONEqual(a, b any) bool {
	ra, err1 := json.Marshal(a)
	rb, err2 := json.Marshal(b)
	if err1 != nil || err2 != nil {
		return reflect.DeepEqual(a, b)
	}
	var x, y any
	if json.Unmarshal(ra, &x) != nil || json.Unmarshal(rb, &y) != nil {
		return reflect.DeepEqual(a, b)
	}
	return reflect.DeepEqual(x, y)
}

// RecordDict starts the rendering of a record as upstream's
// object_to_dict does: uuid, created_at and updated_at first.
func RecordDict(uuid string, createdAt time.Time, updatedAt *time.Time) *Dict {
	d := NewDict()
	d.Set("uuid", uuid)
	d.Set("created_at", ISOTime(createdAt))
	d.Set("updated_at", OptISOTime(updatedAt))
	return d
}
