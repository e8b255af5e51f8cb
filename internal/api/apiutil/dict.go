package apiutil

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"unicode/utf8"
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

// MarshalJSON writes the members in order. Nested Dicts (and lists of
// them) are written into the same buffer rather than marshaled on their
// own, because encoding/json validates and compacts every MarshalJSON
// result again at each level of nesting; the bytes are those of
// json.Marshal member by member.
func (d *Dict) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	if err := d.encode(&buf, json.NewEncoder(&buf)); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// encode writes d to buf; enc writes to buf too, HTML escaping on as in
// json.Marshal.
func (d *Dict) encode(buf *bytes.Buffer, enc *json.Encoder) error {
	buf.WriteByte('{')
	for i, k := range d.keys {
		if i > 0 {
			buf.WriteByte(',')
		}
		appendString(buf, k)
		buf.WriteByte(':')
		if err := encodeValue(buf, enc, d.vals[k]); err != nil {
			return fmt.Errorf("dict member %q: %w", k, err)
		}
	}
	buf.WriteByte('}')
	return nil
}

func encodeValue(buf *bytes.Buffer, enc *json.Encoder, v any) error {
	switch x := v.(type) {
	case nil:
		buf.WriteString("null")
		return nil
	case string:
		appendString(buf, x)
		return nil
	case bool:
		buf.WriteString(strconv.FormatBool(x))
		return nil
	case *Dict:
		if x == nil {
			buf.WriteString("null")
			return nil
		}
		return x.encode(buf, enc)
	case []*Dict:
		if x == nil {
			buf.WriteString("null")
			return nil
		}
		buf.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := encodeValue(buf, enc, e); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
		return nil
	}
	if err := enc.Encode(v); err != nil {
		return err
	}
	// Encode ends each value with a newline.
	buf.Truncate(buf.Len() - 1)
	return nil
}

// appendString writes s as json.Marshal does: HTML characters, control
// characters, U+2028 and U+2029 escaped, invalid UTF-8 replaced.
func appendString(buf *bytes.Buffer, s string) {
	const hex = "0123456789abcdef"
	buf.WriteByte('"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
				i++
				continue
			}
			buf.WriteString(s[start:i])
			switch b {
			case '"', '\\':
				buf.WriteByte('\\')
				buf.WriteByte(b)
			case '\b':
				buf.WriteString(`\b`)
			case '\f':
				buf.WriteString(`\f`)
			case '\n':
				buf.WriteString(`\n`)
			case '\r':
				buf.WriteString(`\r`)
			case '\t':
				buf.WriteString(`\t`)
			default:
				buf.Write([]byte{'\\', 'u', '0', '0', hex[b>>4], hex[b&0xf]})
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			buf.WriteString(s[start:i])
			buf.WriteString(`\ufffd`)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			buf.WriteString(s[start:i])
			buf.Write([]byte{'\\', 'u', '2', '0', '2', hex[r&0xf]})
			i += size
			start = i
			continue
		}
		i += size
	}
	buf.WriteString(s[start:])
	buf.WriteByte('"')
}
