// Package networking is master's ironic-networking service
// (ironic/networking/): it configures the switch ports bare metal nodes
// are cabled to through switch drivers, for the ironic-networking network
// interface. Master runs it as its own service reached over RPC; openkeel
// runs it in the conductor's process, which master's API shape allows
// (the interface only calls update_port and reset_port).
package networking

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/openkeel/ironic/internal/errs"
)

// Port modes, as master's switchport_config.VALID_MODES.
const (
	ModeAccess = "access"
	ModeTrunk  = "trunk"
	ModeHybrid = "hybrid"
)

// validModes is spelled as Python prints the tuple, for the messages.
const validModes = "('access', 'trunk', 'hybrid')"

// PortConfig is master's SwitchPortConfig: a port's mode and VLANs.
type PortConfig struct {
	Mode string
	// NativeVLAN is 0 when unset (0 is no valid VLAN ID).
	NativeVLAN int
	// AllowedVLANs is nil when unset; set and empty is a non-nil empty
	// slice, which master tells apart (None vs []).
	AllowedVLANs []int
}

// Valid is master's is_valid: access needs a native VLAN, trunk and
// hybrid a list of allowed VLANs.
func (c *PortConfig) Valid() bool {
	if c == nil || c.Mode == "" {
		return false
	}
	if c.Mode == ModeAccess {
		return c.NativeVLAN != 0
	}
	return c.AllowedVLANs != nil
}

func (c *PortConfig) String() string {
	if c == nil {
		return "None"
	}
	return fmt.Sprintf("%s/native_vlan=%d/allowed_vlans=%v", c.Mode, c.NativeVLAN, c.AllowedVLANs)
}

// ParsePortConfig parses a network option's value
// ({access|trunk|hybrid}/native_vlan=N[/allowed_vlans=V1,Vn-Vm]) as
// master's SwitchPortConfig.from_string; networkType names the option in
// the error.
func ParsePortConfig(value, networkType string) (*PortConfig, error) {
	c, reason, err := parsePortConfig(value)
	if err != nil {
		return nil, err
	}
	if reason != "" {
		return nil, errs.NewMessage(errs.ClassInvalidParameterValue, fmt.Sprintf(
			"Invalid %s network value '%s'. Expected: {access|trunk|hybrid}/native_vlan=VLAN_ID[/allowed_vlans=V1,V2,Vn-Vm,...]. Error: %s",
			networkType, value, reason))
	}
	return c, nil
}

// parsePortConfig returns the format error as a reason (master's
// ValueError, reworded by the caller) and VLAN range errors as they are
// (master lets them through unchanged).
func parsePortConfig(value string) (*PortConfig, string, error) {
	parts := strings.Split(value, "/")
	mode := strings.TrimSpace(parts[0])
	switch {
	case mode == "":
		return nil, "mode is empty", nil
	case mode != ModeAccess && mode != ModeTrunk && mode != ModeHybrid:
		return nil, fmt.Sprintf("mode must be one of %s, got '%s'", validModes, mode), nil
	case len(parts) < 2:
		return nil, "expected at least mode/native_vlan=N", nil
	}
	c := &PortConfig{Mode: mode}
	for _, part := range parts[1:] {
		key, val, ok := strings.Cut(part, "=")
		if !ok {
			return nil, fmt.Sprintf("expected key=value, got '%s'", part), nil
		}
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		switch key {
		case "native_vlan":
			n, err := strconv.Atoi(val)
			if err != nil {
				return nil, fmt.Sprintf("invalid literal for int() with base 10: '%s'", val), nil
			}
			c.NativeVLAN = n
		case "allowed_vlans":
			set, err := ParseVLANRanges(val)
			if err != nil {
				return nil, "", err
			}
			c.AllowedVLANs = sortedVLANs(set)
		}
	}
	return c, "", nil
}

// PortConfigFromSwitchport reads a port's extra["switchport"] as master's
// SwitchPortConfig.from_switchport: nil when it has no mode.
func PortConfigFromSwitchport(sp map[string]any) (*PortConfig, error) {
	mode, _ := sp["mode"].(string)
	if mode == "" {
		return nil, nil
	}
	if mode != ModeAccess && mode != ModeTrunk && mode != ModeHybrid {
		return nil, errs.NewMessage(errs.ClassInvalidParameterValue,
			fmt.Sprintf("Invalid switchport mode '%s'. Must be one of %s.", mode, validModes))
	}
	c := &PortConfig{Mode: mode}
	if v, ok := sp["native_vlan"]; ok && v != nil {
		n, isInt := jsonInt(v)
		if !isInt {
			return nil, errs.NewMessage(errs.ClassInvalidParameterValue,
				fmt.Sprintf("native_vlan must be an integer, got %s.", pyTypeName(v)))
		}
		c.NativeVLAN = n
	}
	if l, ok := sp["allowed_vlans"].([]any); ok {
		c.AllowedVLANs = make([]int, 0, len(l))
		for _, v := range l {
			if n, isInt := jsonInt(v); isInt {
				c.AllowedVLANs = append(c.AllowedVLANs, n)
			}
		}
	}
	return c, nil
}

// ParseVLANRanges is master's parse_vlan_ranges: "100,102-104" (or its
// items) to the set of VLAN IDs, each within 1–4094.
func ParseVLANRanges(items ...string) (map[int]bool, error) {
	set := map[int]bool{}
	for _, spec := range items {
		for item := range strings.SplitSeq(spec, ",") {
			item = strings.TrimSpace(item)
			if item == "" {
				continue
			}
			if lo, hi, isRange := strings.Cut(item, "-"); isRange {
				start, err1 := strconv.Atoi(strings.TrimSpace(lo))
				end, err2 := strconv.Atoi(strings.TrimSpace(hi))
				if err1 != nil || err2 != nil {
					return nil, errs.NewMessage(errs.ClassInvalidParameterValue,
						fmt.Sprintf(`Invalid VLAN range format "%s": invalid literal for int() with base 10`, item))
				}
				if start < 1 || end > 4094 {
					return nil, errs.NewMessage(errs.ClassInvalidParameterValue,
						fmt.Sprintf("VLAN IDs must be between 1 and 4094, got range %d-%d", start, end))
				}
				if start > end {
					return nil, errs.NewMessage(errs.ClassInvalidParameterValue,
						fmt.Sprintf("Invalid VLAN range %d-%d: start must be less than or equal to end", start, end))
				}
				for v := start; v <= end; v++ {
					set[v] = true
				}
				continue
			}
			v, err := strconv.Atoi(item)
			if err != nil {
				return nil, errs.NewMessage(errs.ClassInvalidParameterValue,
					fmt.Sprintf(`Invalid VLAN ID "%s": invalid literal for int() with base 10: '%s'`, item, item))
			}
			if v < 1 || v > 4094 {
				return nil, errs.NewMessage(errs.ClassInvalidParameterValue,
					fmt.Sprintf("VLAN ID must be between 1 and 4094, got %d", v))
			}
			set[v] = true
		}
	}
	return set, nil
}

func sortedVLANs(set map[int]bool) []int {
	out := make([]int, 0, len(set))
	for v := range set {
		out = append(out, v)
	}
	slices.Sort(out)
	return out
}

// jsonInt is v as an integer when JSON decoding made it one (a float64
// with no fraction, as Python's json gives an int).
func jsonInt(v any) (int, bool) {
	switch n := v.(type) {
	case int:
		return n, true
	case int64:
		return int(n), true
	case float64:
		if n == math.Trunc(n) && !math.IsInf(n, 0) {
			return int(n), true
		}
	case json.Number:
		// The API decodes bodies with UseNumber.
		if i, err := n.Int64(); err == nil {
			return int(i), true
		}
	}
	return 0, false
}

// pyTypeName is the Python type name of a JSON value, for messages
// worded as master's.
func pyTypeName(v any) string {
	switch v.(type) {
	case string:
		return "str"
	case float64, json.Number:
		return "float"
	case bool:
		return "bool"
	case []any:
		return "list"
	case map[string]any:
		return "dict"
	case nil:
		return "NoneType"
	}
	return fmt.Sprintf("%T", v)
}
