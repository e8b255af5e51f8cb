package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"unicode/utf8"
)

// Object is a JSON object whose members keep their order: upstream builds
// its documents as Python dicts and clients that compare raw bodies see
// insertion order.
type Object []Member

// Member is one key of an Object.
type Member struct {
	Key   string
	Value any
}

// MarshalJSON writes the members in order.
func (o Object) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, m := range o {
		if i > 0 {
			b = append(b, ',')
		}
		k, err := json.Marshal(m.Key)
		if err != nil {
			return nil, fmt.Errorf("object key %q: %w", m.Key, err)
		}
		v, err := json.Marshal(m.Value)
		if err != nil {
			return nil, fmt.Errorf("object member %q: %w", m.Key, err)
		}
		b = append(b, k...)
		b = append(b, ':')
		b = append(b, v...)
	}
	return append(b, '}'), nil
}

// Marshal encodes v as Python's json.dumps does with its defaults, which is
// how upstream serializes every answer: ", " and ": " separators and only
// printable ASCII left literal (everything else \uXXXX, surrogate pairs
// above the BMP).
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encode answer: %w", err)
	}
	return pythonize(bytes.TrimRight(buf.Bytes(), "\n")), nil
}

// pythonize rewrites compact JSON from encoding/json into json.dumps form.
func pythonize(in []byte) []byte {
	const hex = "0123456789abcdef"
	out := make([]byte, 0, len(in)+len(in)/8)
	inString := false
	for i := 0; i < len(in); {
		c := in[i]
		if !inString {
			out = append(out, c)
			switch c {
			case '"':
				inString = true
			case ',', ':':
				out = append(out, ' ')
			}
			i++
			continue
		}
		switch {
		case c == '\\' && in[i+1] == 'u' && isPrintableEscape(in[i+2:i+6]):
			// encoding/json escapes <, > and & inside nested
			// MarshalJSON output; Python leaves them literal.
			v, _ := strconv.ParseUint(string(in[i+2:i+6]), 16, 8)
			out = append(out, byte(v))
			i += 6
			continue
		case c == '\\':
			out = append(out, c, in[i+1])
			i += 2
			continue
		case c == '"':
			inString = false
			out = append(out, c)
			i++
			continue
		case c == 0x7f:
			// encoding/json leaves DEL literal; Python's ensure_ascii
			// escapes everything outside printable ASCII.
			out = append(out, `\u007f`...)
			i++
			continue
		case c < utf8.RuneSelf:
			out = append(out, c)
			i++
			continue
		}
		r, size := utf8.DecodeRune(in[i:])
		i += size
		units := []rune{r}
		if r > 0xffff {
			r -= 0x10000
			units = []rune{0xd800 + (r>>10)&0x3ff, 0xdc00 + r&0x3ff}
		}
		for _, u := range units {
			out = append(out, '\\', 'u', hex[u>>12&0xf], hex[u>>8&0xf], hex[u>>4&0xf], hex[u&0xf])
		}
	}
	return out
}

// WriteJSON answers status with v in upstream's serialization and
// Content-Type application/json.
func WriteJSON(w http.ResponseWriter, status int, v any) error {
	body, err := Marshal(v)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, err = w.Write(body)
	if err != nil && err != http.ErrBodyNotAllowed {
		return fmt.Errorf("write answer: %w", err)
	}
	return nil
}

// WriteEmpty answers status without a body, as upstream does for 204 and
// for 202 without a result (no Content-Type either).
func WriteEmpty(w http.ResponseWriter, status int) {
	w.Header().Del("Content-Type")
	w.WriteHeader(status)
}

// isPrintableEscape reports whether hex4 is the code of printable ASCII
// other than the quote and the backslash.
func isPrintableEscape(hex4 []byte) bool {
	v, err := strconv.ParseUint(string(hex4), 16, 16)
	return err == nil && v >= 0x20 && v < 0x7f && v != '"' && v != '\\'
}
