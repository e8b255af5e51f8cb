package apiutil

import (
	"encoding/json"
	"fmt"
	"slices"
)

// Dict is a JSON object that keeps its keys in insertion order, like the
// Python dicts upstream serializes. The zero value is empty and usable.
type Dict struct {
	keys []string
	vals map[string]any
}

// NewDict returns an empty Dict.
func NewDict() *Dict { return &Dict{vals: map[string]any{}} }

// Set adds key at the end, or replaces its value in place.
func (d *Dict) Set(key string, v any) {
	if d.vals == nil {
		d.vals = map[string]any{}
	}
	if _, ok := d.vals[key]; !ok {
		d.keys = append(d.keys, key)
	}
	d.vals[key] = v
}

// Get returns key's value and whether it is present.
func (d *Dict) Get(key string) (any, bool) {
	v, ok := d.vals[key]
	return v, ok
}

// Has reports whether key is present.
func (d *Dict) Has(key string) bool {
	_, ok := d.vals[key]
	return ok
}

// Delete removes key (dict.pop(key, None)).
func (d *Dict) Delete(key string) {
	if _, ok := d.vals[key]; !ok {
		return
	}
	delete(d.vals, key)
	d.keys = slices.DeleteFunc(d.keys, func(k string) bool { return k == key })
}

// Keys returns the keys in order.
func (d *Dict) Keys() []string { return slices.Clone(d.keys) }

// Len is the number of keys.
func (d *Dict) Len() int { return len(d.keys) }

// Map returns the members as a plain map (shared values).
func (d *Dict) Map() map[string]any {
	m := make(map[string]any, len(d.keys))
	for _, k := range d.keys {
		m[k] = d.vals[k]
	}
	return m
}

// KeepOnly is sanitize_dict: with a field list, drop every key not listed
// except "links"; nil fields keep everything.
func (d *Dict) KeepOnly(fields []string) {
	if fields == nil {
		return
	}
	for _, k := range d.Keys() {
		if k != "links" && !slices.Contains(fields, k) {
			d.Delete(k)
		}
	}
}

// MarshalJSON writes the members in order.
func (d *Dict) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, k := range d.keys {
		if i > 0 {
			b = append(b, ',')
		}
		kb, err := json.Marshal(k)
		if err != nil {
			return nil, fmt.Errorf("dict key %q: %w", k, err)
		}
		vb, err := json.Marshal(d.vals[k])
		if err != nil {
			return nil, fmt.Errorf("dict member %q: %w", k, err)
		}
		b = append(b, kb...)
		b = append(b, ':')
		b = append(b, vb...)
	}
	return append(b, '}'), nil
}
