package audit

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
)

// Map is keystonemiddleware's audit map file: how request paths name
// CADF target types and actions, and which catalog service is the target.
type Map struct {
	// PathKeywords maps a path segment naming a collection to the name of
	// the segment that follows it ([path_keywords]).
	PathKeywords map[string]string
	// CustomActions maps "<last segment>/<method>" or "<last segment>" to
	// an action ([custom_actions]).
	CustomActions map[string]string
	// ServiceEndpoints maps a catalog service type to the CADF target
	// type ([service_endpoints]).
	ServiceEndpoints map[string]string
	// DefaultTargetEndpointType is [DEFAULT]/target_endpoint_type, the
	// catalog type to use when no endpoint matches the request's host;
	// HasDefaultTarget says whether the file sets it.
	DefaultTargetEndpointType string
	HasDefaultTarget          bool
}

// LoadMap reads the audit map file at path. Its sections are read as
// Python's configparser reads them: the [DEFAULT] options are part of
// every section too (so a map of Ironic's sample has a
// target_endpoint_type path keyword), names are lower case and values are
// strings ("None" is the word, not Python's None).
func LoadMap(path string) (*Map, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ini, err := parseINI(f)
	if err != nil {
		return nil, fmt.Errorf("error parsing audit map file: %w", err)
	}
	m := &Map{
		PathKeywords:     ini.items("path_keywords"),
		CustomActions:    ini.items("custom_actions"),
		ServiceEndpoints: ini.items("service_endpoints"),
	}
	m.DefaultTargetEndpointType, m.HasDefaultTarget = ini.sections["DEFAULT"]["target_endpoint_type"]
	return m, nil
}

type iniFile struct {
	sections map[string]map[string]string
}

// items is configparser's items(section): the section's options over the
// defaults, or nothing when the section is absent.
func (f *iniFile) items(section string) map[string]string {
	sec, ok := f.sections[section]
	out := map[string]string{}
	if !ok {
		return out
	}
	for k, v := range f.sections["DEFAULT"] {
		out[k] = v
	}
	for k, v := range sec {
		out[k] = v
	}
	return out
}

// parseINI reads configparser's syntax with its defaults: "[section]"
// headers, "key = value" or "key: value" (a key alone is an error),
// comments on lines starting with # or ;, indented continuation lines,
// and strict duplicate checks.
func parseINI(r io.Reader) (*iniFile, error) {
	f := &iniFile{sections: map[string]map[string]string{"DEFAULT": {}}}
	var cur map[string]string
	var lastKey string
	seen := map[string]bool{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || trimmed[0] == '#' || trimmed[0] == ';' {
			lastKey = ""
			continue
		}
		if cur != nil && lastKey != "" && (line[0] == ' ' || line[0] == '\t') {
			cur[lastKey] += "\n" + trimmed
			continue
		}
		if strings.HasPrefix(trimmed, "[") && strings.HasSuffix(trimmed, "]") {
			name := trimmed[1 : len(trimmed)-1]
			if seen[name] {
				return nil, fmt.Errorf("line %d: section %q already exists", n, name)
			}
			seen[name] = true
			if f.sections[name] == nil {
				f.sections[name] = map[string]string{}
			}
			cur, lastKey = f.sections[name], ""
			continue
		}
		if cur == nil {
			return nil, fmt.Errorf("line %d: file contains no section headers: %q", n, line)
		}
		i := strings.IndexAny(trimmed, "=:")
		if i <= 0 {
			return nil, fmt.Errorf("line %d: %q", n, line)
		}
		key := strings.ToLower(strings.TrimSpace(trimmed[:i]))
		if _, dup := cur[key]; dup {
			return nil, fmt.Errorf("line %d: option %q already exists", n, key)
		}
		cur[key] = strings.TrimSpace(trimmed[i+1:])
		lastKey = key
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return f, nil
}
