package middleware

import (
	"strconv"
	"strings"
)

// PythonJSONError returns the message Python's json.loads (CPython 3.12's
// C scanner, strict mode) raises for text, "" when it parses. Clients see
// upstream's error text, so the positions are Python's: characters, not
// bytes, as "line L column C (char P)". text must be valid UTF-8.
func PythonJSONError(text []byte) string {
	s := []rune(string(text))
	p := &pyScanner{s: s}
	if len(s) > 0 && s[0] == '\ufeff' {
		return p.msg("Unexpected UTF-8 BOM (decode using utf-8-sig)", 0)
	}
	idx := p.ws(0)
	end, errMsg := p.value(idx)
	if errMsg != "" {
		return errMsg
	}
	if end = p.ws(end); end != len(s) {
		return p.msg("Extra data", end)
	}
	return ""
}

type pyScanner struct{ s []rune }

func (p *pyScanner) msg(m string, pos int) string {
	line := 1
	lastNL := -1
	for i := 0; i < pos && i < len(p.s); i++ {
		if p.s[i] == '\n' {
			line++
			lastNL = i
		}
	}
	return m + ": line " + strconv.Itoa(line) + " column " + strconv.Itoa(pos-lastNL) + " (char " + strconv.Itoa(pos) + ")"
}

func (p *pyScanner) ws(i int) int {
	for i < len(p.s) && (p.s[i] == ' ' || p.s[i] == '\t' || p.s[i] == '\n' || p.s[i] == '\r') {
		i++
	}
	return i
}

func (p *pyScanner) has(i int, lit string) bool {
	r := []rune(lit)
	if i+len(r) > len(p.s) {
		return false
	}
	for k, c := range r {
		if p.s[i+k] != c {
			return false
		}
	}
	return true
}

// value scans one JSON value at i (no leading whitespace) and returns the
// index after it, or the error message. Nesting is iterative: each open
// container is a frame, so deep input cannot exhaust the stack.
func (p *pyScanner) value(i int) (int, string) {
	type frame struct{ object bool }
	var stack []frame
	s := p.s
	for {
		// Scan one value at i.
		if i >= len(s) {
			return 0, p.msg("Expecting value", i)
		}
		switch c := s[i]; {
		case c == '"':
			end, m := p.str(i + 1)
			if m != "" {
				return 0, m
			}
			i = end
		case c == '{':
			i = p.ws(i + 1)
			if i < len(s) && s[i] == '}' {
				i++
				break
			}
			stack = append(stack, frame{object: true})
			end, m := p.key(i)
			if m != "" {
				return 0, m
			}
			i = end
			continue
		case c == '[':
			i = p.ws(i + 1)
			if i < len(s) && s[i] == ']' {
				i++
				break
			}
			stack = append(stack, frame{})
			continue
		case c == 'n' && p.has(i, "null"):
			i += 4
		case c == 't' && p.has(i, "true"):
			i += 4
		case c == 'f' && p.has(i, "false"):
			i += 5
		case c == 'N' && p.has(i, "NaN"):
			i += 3
		case c == 'I' && p.has(i, "Infinity"):
			i += 8
		case c == '-' && p.has(i, "-Infinity"):
			i += 9
		default:
			end, ok := p.number(i)
			if !ok {
				return 0, p.msg("Expecting value", i)
			}
			i = end
		}
		// Close containers whose last value this was.
		for {
			if len(stack) == 0 {
				return i, ""
			}
			top := stack[len(stack)-1]
			i = p.ws(i)
			closer := ']'
			if top.object {
				closer = '}'
			}
			if i < len(s) && s[i] == closer {
				stack = stack[:len(stack)-1]
				i++
				continue
			}
			if i >= len(s) || s[i] != ',' {
				return 0, p.msg("Expecting ',' delimiter", i)
			}
			i = p.ws(i + 1)
			if top.object {
				end, m := p.key(i)
				if m != "" {
					return 0, m
				}
				i = end
			}
			break
		}
	}
}

// key scans `"name" :` and the whitespace after the colon.
func (p *pyScanner) key(i int) (int, string) {
	s := p.s
	if i >= len(s) || s[i] != '"' {
		return 0, p.msg("Expecting property name enclosed in double quotes", i)
	}
	end, m := p.str(i + 1)
	if m != "" {
		return 0, m
	}
	i = p.ws(end)
	if i >= len(s) || s[i] != ':' {
		return 0, p.msg("Expecting ':' delimiter", i)
	}
	return p.ws(i + 1), ""
}

// str scans a string body starting after the opening quote.
func (p *pyScanner) str(i int) (int, string) {
	s := p.s
	begin := i - 1
	for {
		if i >= len(s) {
			return 0, p.msg("Unterminated string starting at", begin)
		}
		c := s[i]
		switch {
		case c == '"':
			return i + 1, ""
		case c < 0x20:
			return 0, p.msg("Invalid control character at", i)
		case c != '\\':
			i++
			continue
		}
		i++
		if i >= len(s) {
			return 0, p.msg("Unterminated string starting at", begin)
		}
		if s[i] != 'u' {
			if !strings.ContainsRune(`"\/bfnrt`, s[i]) {
				return 0, p.msg(`Invalid \escape`, i-1)
			}
			i++
			continue
		}
		u := i
		i++
		end := i + 4
		if end >= len(s) {
			return 0, p.msg(`Invalid \uXXXX escape`, u)
		}
		cp, ok := hex4(s[i:end])
		if !ok {
			return 0, p.msg(`Invalid \uXXXX escape`, u)
		}
		i = end
		if cp >= 0xd800 && cp <= 0xdbff && end+6 < len(s) && s[end] == '\\' && s[end+1] == 'u' {
			if _, ok := hex4(s[end+2 : end+6]); !ok {
				return 0, p.msg(`Invalid \uXXXX escape`, end+1)
			}
			// A low surrogate is consumed with the high one; anything
			// else is scanned again as its own escape.
			if lo, _ := hex4(s[end+2 : end+6]); lo >= 0xdc00 && lo <= 0xdfff {
				i = end + 6
			}
		}
	}
}

func hex4(r []rune) (int, bool) {
	v := 0
	for _, c := range r {
		var d int
		switch {
		case c >= '0' && c <= '9':
			d = int(c - '0')
		case c >= 'a' && c <= 'f':
			d = int(c-'a') + 10
		case c >= 'A' && c <= 'F':
			d = int(c-'A') + 10
		default:
			return 0, false
		}
		v = v<<4 | d
	}
	return v, true
}

// number matches -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)? at i.
func (p *pyScanner) number(i int) (int, bool) {
	s := p.s
	digit := func(k int) bool { return k < len(s) && s[k] >= '0' && s[k] <= '9' }
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case digit(i):
		for digit(i) {
			i++
		}
	default:
		return 0, false
	}
	if i < len(s) && s[i] == '.' && digit(i+1) {
		i++
		for digit(i) {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		k := i + 1
		if k < len(s) && (s[k] == '-' || s[k] == '+') {
			k++
		}
		if digit(k) {
			for digit(k) {
				k++
			}
			i = k
		}
	}
	return i, true
}
