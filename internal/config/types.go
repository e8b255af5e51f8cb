package config

import (
	"fmt"
	"math"
	"net"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// parseValue converts a configuration string (already interpolated) to the
// Go value of option o, following the oslo.config type of the option.
func parseValue(o *Option, s string) (any, error) {
	switch o.Type {
	case TypeString:
		return s, checkChoices(o.Choices, s)
	case TypeInt, TypePort:
		return parseInt(o, s, 10)
	case TypeOctal:
		return parseInt(o, s, 8)
	case TypeFloat:
		t := strings.TrimSpace(s)
		if t == "" {
			return nil, nil
		}
		f, err := strconv.ParseFloat(t, 64)
		if err != nil || math.IsNaN(f) {
			return nil, fmt.Errorf("%q is not a float", s)
		}
		return f, checkBounds(o, f)
	case TypeBool:
		return parseBool(s)
	case TypeIP:
		return s, checkIP(s)
	case TypeHostAddress, TypeHostDomain:
		return s, checkHost(s, o.Type == TypeHostDomain)
	case TypeURI:
		return s, checkURI(s, o.Schemes)
	case TypeList:
		return parseList(o, s)
	case TypeMultiString:
		return []string{s}, nil
	case TypeDict, TypeMultiDict:
		return parseDict(s)
	}
	return nil, fmt.Errorf("option type %v cannot be parsed", o.Type)
}

// parseInt follows oslo's Integer: surrounding blanks are ignored and an
// empty value means "no value".
func parseInt(o *Option, s string, base int) (any, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return nil, nil
	}
	if base == 8 {
		t = strings.TrimPrefix(strings.TrimPrefix(t, "0o"), "0O")
	}
	n, err := strconv.ParseInt(t, base, 64)
	if err != nil {
		if base == 8 {
			return nil, fmt.Errorf("%q is not an octal integer", s)
		}
		return nil, fmt.Errorf("%q is not an integer", s)
	}
	v := int(n)
	if o.Type == TypePort && (v < 0 || v > 65535) {
		return nil, fmt.Errorf("%d is not a port number (0..65535)", v)
	}
	if err := checkBounds(o, float64(v)); err != nil {
		return nil, err
	}
	if len(o.Choices) > 0 {
		return v, checkChoices(o.Choices, strconv.Itoa(v))
	}
	return v, nil
}

func checkBounds(o *Option, v float64) error {
	if o.Min != nil && v < *o.Min {
		return fmt.Errorf("%s is less than the minimum %s", fmtNum(v), fmtNum(*o.Min))
	}
	if o.Max != nil && v > *o.Max {
		return fmt.Errorf("%s is greater than the maximum %s", fmtNum(v), fmtNum(*o.Max))
	}
	return nil
}

func fmtNum(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

func checkChoices(choices []string, s string) error {
	if len(choices) == 0 || slices.Contains(choices, s) {
		return nil
	}
	return fmt.Errorf("%q is not one of %s", s, strings.Join(choices, ", "))
}

// parseBool accepts oslo.config's spellings, case-insensitively.
func parseBool(s string) (any, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "1", "on", "yes":
		return true, nil
	case "false", "0", "off", "no":
		return false, nil
	}
	return nil, fmt.Errorf("%q is not a boolean (true/false, yes/no, on/off, 1/0)", s)
}

func checkIP(s string) error {
	if s == "" {
		return fmt.Errorf("an IP address cannot be empty")
	}
	if net.ParseIP(s) == nil {
		return fmt.Errorf("%q is not an IPv4 or IPv6 address", s)
	}
	return nil
}

var (
	hostLabel   = regexp.MustCompile(`(?i)^[a-z0-9-]{1,63}$`)
	domainLabel = regexp.MustCompile(`(?i)^[a-z0-9_-]{1,63}$`)
	hasAlpha    = regexp.MustCompile(`[a-zA-Z-]`)
)

// checkHost accepts an IP address or a host name as oslo's HostAddress
// (HostDomain also allows '_' in labels).
func checkHost(s string, domain bool) error {
	if net.ParseIP(s) != nil {
		return nil
	}
	h := strings.TrimSuffix(s, ".")
	labels := strings.Split(h, ".")
	ok := s != "" && len(s) <= 253 && hasAlpha.MatchString(labels[len(labels)-1])
	re := hostLabel
	if domain {
		re = domainLabel
	}
	for _, l := range labels {
		if !ok {
			break
		}
		ok = re.MatchString(l) && !strings.HasPrefix(l, "-") && !strings.HasSuffix(l, "-")
	}
	if !ok {
		return fmt.Errorf("%q is not a valid host address", s)
	}
	return nil
}

// checkURI requires a scheme and a host, as oslo's URI type does.
func checkURI(s string, schemes []string) error {
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return fmt.Errorf("%q is not a URI with a scheme and a host", s)
	}
	if len(schemes) > 0 && !slices.Contains(schemes, strings.ToLower(u.Scheme)) {
		return fmt.Errorf("%q has scheme %q, allowed: %s", s, u.Scheme, strings.Join(schemes, ", "))
	}
	return nil
}

// parseList splits on commas and trims items; a trailing comma is dropped.
// As in oslo's List, commas inside an item are kept when splitting there
// would make an item invalid.
func parseList(o *Option, s string) (any, error) {
	t := strings.TrimRight(strings.TrimSpace(s), ",")
	out := []string{}
	if t == "" {
		return out, nil
	}
	parts := strings.Split(t, ",")
	for len(parts) > 0 {
		item := parts[0]
		parts = parts[1:]
		var firstErr error
		for {
			err := checkItem(o, strings.TrimSpace(item))
			if err == nil {
				break
			}
			if firstErr == nil {
				firstErr = err
			}
			if len(parts) == 0 {
				return nil, firstErr
			}
			item += "," + parts[0]
			parts = parts[1:]
		}
		out = append(out, strings.TrimSpace(item))
	}
	return out, nil
}

func checkItem(o *Option, s string) error {
	if err := checkChoices(o.ItemChoices, s); err != nil {
		return err
	}
	switch o.Item {
	case TypePortRange:
		return checkPortRange(s)
	case TypeAbsPath:
		return checkAbsPath(s)
	}
	return nil
}

func checkPortRange(s string) error {
	p := strings.Split(s, ":")
	if len(p) != 2 {
		return fmt.Errorf("%q is not a port range <start>:<end>", s)
	}
	start, err1 := strconv.Atoi(strings.TrimSpace(p[0]))
	end, err2 := strconv.Atoi(strings.TrimSpace(p[1]))
	if err1 != nil || err2 != nil {
		return fmt.Errorf("%q: port numbers should be integers", s)
	}
	if start > end {
		return fmt.Errorf("%q: start is greater than end", s)
	}
	if start < 0 || end > 65535 {
		return fmt.Errorf("%q: ports should be in [0, 65535]", s)
	}
	return nil
}

// checkAbsPath rejects relative paths and paths that path.Clean would
// change (.., //, ./), which is what protects against traversal.
func checkAbsPath(s string) error {
	trimmed := s
	if len(trimmed) > 1 {
		trimmed = strings.TrimSuffix(trimmed, "/")
	}
	if !strings.HasPrefix(s, "/") || path.Clean(trimmed) != trimmed {
		return fmt.Errorf("%q is not an explicit absolute path", s)
	}
	return nil
}

// parseDict reads "k:v,k2:v2" with keys and values trimmed. As in oslo's
// Dict, a piece without ':' is joined with the next one ("a,b:1" is the key
// "a,b"), and a final piece without ':' is an error.
func parseDict(s string) (any, error) {
	out := map[string]string{}
	t := strings.TrimSpace(s)
	if t == "" {
		return out, nil
	}
	pairs := strings.Split(t, ",")
	for len(pairs) > 0 {
		pair := pairs[0]
		pairs = pairs[1:]
		for !strings.Contains(pair, ":") {
			if len(pairs) == 0 {
				return nil, fmt.Errorf("%q is not a list of key:value pairs separated by ','", s)
			}
			pair += "," + pairs[0]
			pairs = pairs[1:]
		}
		k, v, _ := strings.Cut(pair, ":")
		out[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return out, nil
}
