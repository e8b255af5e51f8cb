package apiutil

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// memberwise is how Dict rendered before writing into one buffer: each
// key and value through json.Marshal, nested Dicts by their own
// MarshalJSON. The single-buffer rendering must give the same bytes.
func memberwise(t *testing.T, d *Dict) []byte {
	t.Helper()
	b := []byte{'{'}
	for i, k := range d.keys {
		if i > 0 {
			b = append(b, ',')
		}
		kb, err := json.Marshal(k)
		if err != nil {
			t.Fatal(err)
		}
		vb, err := json.Marshal(d.vals[k])
		if err != nil {
			t.Fatal(err)
		}
		b = append(append(append(b, kb...), ':'), vb...)
	}
	return append(b, '}')
}

func trickyStrings() []string {
	var all strings.Builder
	for c := range 256 {
		all.WriteByte(byte(c))
	}
	return []string{"", "plain", all.String(), "<a href=\"x\">&amp;</a>", "tab\tnl\nbs\\q\"",
		"\u2028\u2029", "é\U0001F600", "\xff\xfe broken \xc3", "\x00\x1f\x7f", "ключ"}
}

func TestDictMarshalJSONSameAsMemberwise(t *testing.T) {
	for _, s := range trickyStrings() {
		inner := NewDict()
		inner.Set(s, s)
		inner.Set("n", 1.5)
		inner.Set("none", nil)
		var nilDict *Dict
		d := NewDict()
		d.Set(s, inner)
		d.Set("list", []*Dict{inner, inner})
		d.Set("empty", []*Dict{})
		d.Set("nillist", []*Dict(nil))
		d.Set("nildict", nilDict)
		d.Set("map", map[string]any{s: []any{s, true, false, nil, 3, map[string]any{"z": inner}}})
		d.Set("bool", true)
		d.Set("zero", NewDict())
		got, err := d.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if want := memberwise(t, d); !bytes.Equal(got, want) {
			t.Errorf("string %q:\n got %s\nwant %s", s, got, want)
		}
		if !json.Valid(got) {
			t.Errorf("string %q: invalid JSON %s", s, got)
		}
	}
}

func TestDictMarshalJSONError(t *testing.T) {
	d := NewDict()
	d.Set("bad", make(chan int))
	if _, err := d.MarshalJSON(); err == nil || !strings.Contains(err.Error(), `dict member "bad"`) {
		t.Errorf("error = %v, want the member named", err)
	}
}
