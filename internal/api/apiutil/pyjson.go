package apiutil

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/openkeel/ironic/internal/pyfmt"
)

// The list renderers copy a node's JSON columns from their stored text to
// the answer. The answer must be what decoding the column into Go values
// (numbers as float64) and encoding them as upstream's json.dumps form
// gives: keys sorted, Go's shortest float form, Python's string escapes
// and separators. ColumnWriter does that in one pass over the stored text
// when its objects already have their keys sorted (which is how this
// service stores them), masking secrets on the way when asked; other text
// (rows Python wrote in insertion order, duplicate keys) is decoded and
// encoded instead. Its buffers are reused from one column to the next.

// Masking says how a column's secrets are hidden, as node_sanitize does.
type Masking struct {
	// Dict masks as MaskDict: values under secret keys replaced, strings
	// through MaskPassword, nested objects likewise.
	Dict bool
	// Truthy are top-level keys whose value, when Python would call it
	// true, is replaced by Secret (_mask_fields, configdrive, image_url).
	Truthy []string
}

// ColumnWriter appends JSON object columns in upstream's form. The zero
// value is ready; it is not safe for concurrent use.
type ColumnWriter struct {
	// keys holds the decoded last key of each open object, to check
	// their order; key, the key being read.
	keys [][]byte
	key  []byte
	// str holds a decoded string value being checked for secrets.
	str []byte
}

// AppendObject appends the column text raw ("" or "null" for a NULL
// column, which renders as {}) as upstream renders it, masked as m says.
func (c *ColumnWriter) AppendObject(b []byte, raw string, m Masking) ([]byte, error) {
	if raw == "" || raw == "null" {
		return append(b, "{}"...), nil
	}
	start := len(b)
	p := pyScanner{raw: raw, w: c}
	p.skipSpace()
	if p.i < len(raw) && raw[p.i] == '{' {
		if out, ok := p.object(b, m, 0); ok {
			p.skipSpace()
			if p.i == len(raw) {
				return out, nil
			}
		}
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		return b[:start], fmt.Errorf("decode JSON column: %w", err)
	}
	if v == nil {
		return append(b[:start], "{}"...), nil
	}
	if m.Dict {
		v = MaskDict(v)
	}
	for _, k := range m.Truthy {
		if Truthy(v[k]) {
			v[k] = Secret
		}
	}
	return c.appendValue(b[:start], v)
}

// appendValue appends v, a value of Go types encoding/json encodes, in
// upstream's form.
func (c *ColumnWriter) appendValue(b []byte, v any) ([]byte, error) {
	text, err := json.Marshal(v)
	if err != nil {
		return b, fmt.Errorf("encode JSON value: %w", err)
	}
	p := pyScanner{raw: string(text), w: c}
	out, ok := p.value(b, Masking{}, 0)
	if !ok {
		return b, fmt.Errorf("encode JSON value: unexpected form %.40q", text)
	}
	return out, nil
}

// pyScanner walks one stored JSON text.
type pyScanner struct {
	raw string
	i   int
	w   *ColumnWriter
}

func (p *pyScanner) skipSpace() {
	for p.i < len(p.raw) {
		switch p.raw[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// value appends the value at p.i; ok is false when the text is not valid
// JSON or an object's keys are not in encoding/json's order.
func (p *pyScanner) value(b []byte, m Masking, depth int) ([]byte, bool) {
	p.skipSpace()
	if p.i >= len(p.raw) {
		return b, false
	}
	switch c := p.raw[p.i]; {
	case c == '{':
		return p.object(b, m, depth)
	case c == '[':
		return p.array(b, depth)
	case c == '"':
		return p.string(b)
	case c == 't':
		return p.literal(b, "true")
	case c == 'f':
		return p.literal(b, "false")
	case c == 'n':
		return p.literal(b, "null")
	default:
		return p.number(b)
	}
}

func (p *pyScanner) literal(b []byte, lit string) ([]byte, bool) {
	if len(p.raw)-p.i < len(lit) || p.raw[p.i:p.i+len(lit)] != lit {
		return b, false
	}
	p.i += len(lit)
	return append(b, lit...), true
}

// maxDepth bounds nesting, as a stack the text cannot overflow.
const maxDepth = 1000

func (p *pyScanner) object(b []byte, m Masking, depth int) ([]byte, bool) {
	if depth >= maxDepth {
		return b, false
	}
	for len(p.w.keys) <= depth {
		p.w.keys = append(p.w.keys, nil)
	}
	p.i++ // {
	b = append(b, '{')
	p.skipSpace()
	if p.i < len(p.raw) && p.raw[p.i] == '}' {
		p.i++
		return append(b, '}'), true
	}
	c := p.w
	for first := true; ; first = false {
		p.skipSpace()
		if p.i >= len(p.raw) || p.raw[p.i] != '"' {
			return b, false
		}
		keyStart := p.i
		key, ok := p.decodeString(c.key[:0])
		c.key = key
		// encoding/json writes a map's keys sorted; a key not above the
		// previous one (unsorted, or a duplicate the decoder would have
		// merged) means this text is not what it would write.
		if !ok || !first && bytes.Compare(key, c.keys[depth]) <= 0 {
			return b, false
		}
		c.keys[depth] = append(c.keys[depth][:0], key...)
		if !first {
			b = append(b, ", "...)
		}
		if b, ok = p.reString(b, keyStart, p.i); !ok {
			return b, false
		}
		p.skipSpace()
		if p.i >= len(p.raw) || p.raw[p.i] != ':' {
			return b, false
		}
		p.i++
		b = append(b, ": "...)
		if b, ok = p.member(b, m, depth, c.keys[depth]); !ok {
			return b, false
		}
		p.skipSpace()
		if p.i >= len(p.raw) {
			return b, false
		}
		switch p.raw[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			return append(b, '}'), true
		default:
			return b, false
		}
	}
}

// member appends the value of key in an object masked as m (its Truthy
// applying at depth 0 only).
func (p *pyScanner) member(b []byte, m Masking, depth int, key []byte) ([]byte, bool) {
	if !m.Dict && len(m.Truthy) == 0 {
		return p.value(b, m, depth+1)
	}
	p.skipSpace()
	if p.i >= len(p.raw) {
		return b, false
	}
	if depth == 0 {
		for _, k := range m.Truthy {
			if k == string(key) && p.truthy() {
				return p.replace(b, m, depth)
			}
		}
	}
	if !m.Dict {
		return p.value(b, Masking{}, depth+1)
	}
	switch {
	case p.raw[p.i] == '{':
		return p.object(b, Masking{Dict: true}, depth+1)
	case p.w.isSecretKey(key):
		return p.replace(b, m, depth)
	case p.raw[p.i] == '"':
		return p.maskedString(b)
	}
	return p.value(b, Masking{}, depth+1)
}

// replace appends Secret in place of the value at p.i, which it checks
// and skips.
func (p *pyScanner) replace(b []byte, m Masking, depth int) ([]byte, bool) {
	mark := len(b)
	b, ok := p.value(b, Masking{Dict: m.Dict}, depth+1)
	if !ok {
		return b, false
	}
	return pyfmt.AppendJSONString(b[:mark], Secret), true
}

// truthy is Python's truth of the value at p.i, read ahead without
// moving.
func (p *pyScanner) truthy() bool {
	rest := p.raw[p.i:]
	switch rest[0] {
	case 'n', 'f':
		return false
	case 't':
		return true
	case '"':
		return len(rest) > 1 && rest[1] != '"'
	case '{', '[':
		for j := 1; j < len(rest); j++ {
			switch rest[j] {
			case ' ', '\t', '\n', '\r':
				continue
			case '}', ']':
				return false
			}
			return true
		}
		return true
	}
	end := 0
	for end < len(rest) && isNumberByte(rest[end]) {
		end++
	}
	f, err := strconv.ParseFloat(rest[:end], 64)
	return err != nil || f != 0
}

// maskedString appends the string at p.i through MaskPassword.
func (p *pyScanner) maskedString(b []byte) ([]byte, bool) {
	start := p.i
	s, ok := p.decodeString(p.w.str[:0])
	p.w.str = s
	if !ok {
		return b, false
	}
	if !p.w.mayHoldSecret(s) {
		return p.reString(b, start, p.i)
	}
	return pyfmt.AppendJSONString(b, MaskPassword(string(s))), true
}

// mayHoldSecret is MaskPassword's test of whether any pattern can apply
// to s, without lower-casing s into a new string when it is ASCII.
func (c *ColumnWriter) mayHoldSecret(s []byte) bool {
	if !isASCII(s) {
		return true
	}
	return holdsSanitizeKey(s)
}

// isSecretKey is IsSecretKey of a decoded key.
func (c *ColumnWriter) isSecretKey(k []byte) bool {
	if !isASCII(k) {
		return IsSecretKey(string(k))
	}
	return holdsSanitizeKey(k)
}

func isASCII(s []byte) bool {
	for _, ch := range s {
		if ch >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func (p *pyScanner) array(b []byte, depth int) ([]byte, bool) {
	if depth >= maxDepth {
		return b, false
	}
	p.i++ // [
	b = append(b, '[')
	p.skipSpace()
	if p.i < len(p.raw) && p.raw[p.i] == ']' {
		p.i++
		return append(b, ']'), true
	}
	for first := true; ; first = false {
		if !first {
			b = append(b, ", "...)
		}
		var ok bool
		if b, ok = p.value(b, Masking{}, depth+1); !ok {
			return b, false
		}
		p.skipSpace()
		if p.i >= len(p.raw) {
			return b, false
		}
		switch p.raw[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			return append(b, ']'), true
		default:
			return b, false
		}
	}
}

func isNumberByte(c byte) bool {
	return '0' <= c && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}

// number appends the number at p.i as encoding/json writes the float64
// it decodes to.
func (p *pyScanner) number(b []byte) ([]byte, bool) {
	start := p.i
	for p.i < len(p.raw) && isNumberByte(p.raw[p.i]) {
		p.i++
	}
	lit := p.raw[start:p.i]
	if !validNumber(lit) {
		return b, false
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil {
		return b, false
	}
	return AppendGoFloat(b, f), true
}

// validNumber is JSON's number grammar.
func validNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && '1' <= s[i] && s[i] <= '9':
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if i == len(s) || s[i] < '0' || s[i] > '9' {
			return false
		}
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i == len(s) || s[i] < '0' || s[i] > '9' {
			return false
		}
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
	}
	return i == len(s)
}

// AppendGoFloat appends f as encoding/json writes a float64: the shortest
// form that reads back, positional from 1e-6 to 1e21, exponents without a
// leading zero.
func AppendGoFloat(b []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-09 becomes e-9, as encoding/json writes it.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// string appends the string at p.i in Python's escaping.
func (p *pyScanner) string(b []byte) ([]byte, bool) {
	start := p.i
	if !p.skipString() {
		return b, false
	}
	return p.reString(b, start, p.i)
}

// skipString moves past the string at p.i, reporting whether it is
// well formed as far as its end.
func (p *pyScanner) skipString() bool {
	p.i++ // "
	for p.i < len(p.raw) {
		switch c := p.raw[p.i]; {
		case c == '"':
			p.i++
			return true
		case c == '\\':
			p.i += 2
		case c < 0x20:
			return false
		default:
			p.i++
		}
	}
	return false
}

// reString appends the string text raw[start:end] (quotes included),
// valid as decodeString found, as Python escapes its value: printable
// ASCII is copied, the rest goes through the decoder.
func (p *pyScanner) reString(b []byte, start, end int) ([]byte, bool) {
	s := p.raw[start+1 : end-1]
	plain := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '\\' {
			plain = false
			break
		}
	}
	if plain {
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"'), true
	}
	q := pyScanner{raw: p.raw, i: start, w: p.w}
	dec, ok := q.decodeString(p.w.str[:0])
	p.w.str = dec
	if !ok {
		return b, false
	}
	return pyfmt.AppendJSONString(b, string(dec)), true
}

// decodeString appends the value of the string at p.i to dst, as
// encoding/json decodes it (invalid UTF-8 and lone surrogates become
// U+FFFD), and moves past it.
func (p *pyScanner) decodeString(dst []byte) ([]byte, bool) {
	p.i++ // "
	for p.i < len(p.raw) {
		c := p.raw[p.i]
		switch {
		case c == '"':
			p.i++
			return dst, true
		case c < 0x20:
			return dst, false
		case c < utf8.RuneSelf && c != '\\':
			dst = append(dst, c)
			p.i++
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRuneInString(p.raw[p.i:])
			dst = utf8.AppendRune(dst, r)
			p.i += size
		default:
			if p.i+1 >= len(p.raw) {
				return dst, false
			}
			e := p.raw[p.i+1]
			p.i += 2
			switch e {
			case '"', '\\', '/':
				dst = append(dst, e)
			case 'b':
				dst = append(dst, '\b')
			case 'f':
				dst = append(dst, '\f')
			case 'n':
				dst = append(dst, '\n')
			case 'r':
				dst = append(dst, '\r')
			case 't':
				dst = append(dst, '\t')
			case 'u':
				r, ok := hex4(p.raw, p.i)
				if !ok {
					return dst, false
				}
				p.i += 4
				if utf16.IsSurrogate(r) {
					if p.i+1 < len(p.raw) && p.raw[p.i] == '\\' && p.raw[p.i+1] == 'u' {
						if r2, ok := hex4(p.raw, p.i+2); ok {
							if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
								p.i += 6
								dst = utf8.AppendRune(dst, dec)
								continue
							}
						}
					}
					r = utf8.RuneError
				}
				dst = utf8.AppendRune(dst, r)
			default:
				return dst, false
			}
		}
	}
	return dst, false
}

func hex4(s string, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var r rune
	for _, c := range []byte(s[i : i+4]) {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
