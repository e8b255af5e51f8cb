package config

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"
)

// parsedFile is one configuration file as oslo.config's INI parser reads it:
// every assignment of a key in a section, in file order.
type parsedFile struct {
	path     string
	sections map[string]map[string][]string
	order    []Name // first appearance of each section/key, for reports
}

// normalizeSection folds section names to lower case, except DEFAULT which
// must be written as is (oslo.config does the same).
func normalizeSection(s string) string {
	if s == "DEFAULT" {
		return s
	}
	return strings.ToLower(s)
}

// parseINI follows oslo.config's iniparser: '#' and ';' start a comment only
// at the beginning of a line, the first '=' or ':' splits key from value,
// values are trimmed and lose one pair of matching quotes, indented lines
// continue the previous value (joined with newlines), and a blank line ends it.
func parseINI(path string, data []byte) (*parsedFile, error) {
	f := &parsedFile{path: path, sections: map[string]map[string][]string{}}
	section := ""
	var key string
	var value []string
	flush := func() {
		if key == "" {
			return
		}
		sec := f.sections[section]
		if _, seen := sec[key]; !seen {
			f.order = append(f.order, Name{section, key})
		}
		sec[key] = append(sec[key], strings.Join(value, "\n"))
		key, value = "", nil
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	lineno := 0
	for sc.Scan() {
		lineno++
		raw := strings.TrimRight(sc.Text(), " \t\r\n\f\v")
		fail := func(msg string) error {
			return fmt.Errorf("%s: line %d: %s: %q", path, lineno, msg, raw)
		}
		switch {
		case raw == "":
			flush()
			continue
		case raw[0] == ' ' || raw[0] == '\t':
			if key == "" {
				return nil, fail("unexpected continuation line")
			}
			value = append(value, strings.TrimLeft(raw, " \t"))
			continue
		}
		flush()
		switch {
		case raw[0] == '[':
			if !strings.HasSuffix(raw, "]") {
				return nil, fail("invalid section (must end with ])")
			}
			if len(raw) <= 2 {
				return nil, fail("empty section name")
			}
			section = normalizeSection(raw[1 : len(raw)-1])
			if f.sections[section] == nil {
				f.sections[section] = map[string][]string{}
			}
		case raw[0] == '#' || raw[0] == ';':
		default:
			colon, equal := strings.IndexByte(raw, ':'), strings.IndexByte(raw, '=')
			if colon < 0 && equal < 0 {
				return nil, fail("no ':' or '=' found in assignment")
			}
			cut := colon
			if colon < 0 || (equal >= 0 && equal < colon) {
				cut = equal
			}
			k := strings.TrimSpace(raw[:cut])
			v := strings.TrimSpace(raw[cut+1:])
			if len(v) >= 2 && v[0] == v[len(v)-1] && (v[0] == '"' || v[0] == '\'') {
				v = v[1 : len(v)-1]
			}
			if k == "" {
				return nil, fail("key cannot be empty")
			}
			if section == "" {
				return nil, fail("assignment before any section")
			}
			key, value = k, []string{v}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	flush()
	return f, nil
}
