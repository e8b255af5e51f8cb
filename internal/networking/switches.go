package networking

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/openkeel/ironic/internal/errs"
)

// SwitchConfig is one [switch:NAME] section of the switch configuration
// file ([ironic_networking]/switch_config_file), in master's generic
// format: driver_type picks the switch driver, device_type the switch OS,
// and address/port/username/password (or key_file)/enable_secret reach
// it. mac_address is the switch_id ports name it by in their
// local_link_connection; the section name works too, as in
// networking-generic-switch.
type SwitchConfig struct {
	Name string
	// Options are the section's key/value pairs as written.
	Options map[string]string
}

// Get is the option key, "" when unset.
func (s *SwitchConfig) Get(key string) string { return s.Options[key] }

// requiredSwitchFields are the keys master's driver adapter requires of
// every switch section.
var requiredSwitchFields = []string{"driver_type", "device_type", "address", "username", "mac_address"}

// LoadSwitchConfig reads the switch configuration file as master's
// NetworkingDriverAdapter: every [switch:NAME] section, validated, other
// sections ignored. A missing file or an invalid section is a
// NetworkError worded as master's "Configuration preprocessing failed".
func LoadSwitchConfig(path string) ([]*SwitchConfig, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, errs.NewMessage(errs.ClassNetworkError, fmt.Sprintf(
			"Configuration preprocessing failed: Switch configuration file %s does not exist", path))
	}
	switches, err := parseSwitchSections(data)
	if err != nil {
		return nil, errs.NewMessage(errs.ClassNetworkError, fmt.Sprintf("Configuration preprocessing failed: %s: %v", path, err))
	}
	for _, s := range switches {
		if err := validateSwitch(s); err != nil {
			return nil, errs.NewMessage(errs.ClassNetworkError, "Configuration preprocessing failed: "+err.Error())
		}
	}
	return switches, nil
}

func validateSwitch(s *SwitchConfig) error {
	var parts []string
	var missing []string
	for _, f := range requiredSwitchFields {
		if _, ok := s.Options[f]; !ok {
			missing = append(missing, f)
		}
	}
	if len(missing) > 0 {
		parts = append(parts, "missing required fields: "+strings.Join(missing, ", "))
	}
	_, hasPassword := s.Options["password"]
	_, hasKey := s.Options["key_file"]
	if !hasPassword && !hasKey {
		parts = append(parts, "must specify either 'password' or 'key_file'")
	}
	if len(parts) > 0 {
		return fmt.Errorf("Invalid configuration for switch '%s': %s", s.Name, strings.Join(parts, "; "))
	}
	if v := s.Options["allowed_vlans"]; v != "" {
		if _, err := ParseVLANRanges(v); err != nil {
			return fmt.Errorf("switch '%s' allowed_vlans: %w", s.Name, err)
		}
	}
	return nil
}

// parseSwitchSections reads the INI text's [switch:NAME] sections in file
// order; a repeated section adds to the first, as oslo.config's parser.
func parseSwitchSections(data []byte) ([]*SwitchConfig, error) {
	var out []*SwitchConfig
	var cur *SwitchConfig
	sc := bufio.NewScanner(bytes.NewReader(data))
	for lineNo := 1; sc.Scan(); lineNo++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if strings.HasPrefix(line, "[") {
			if !strings.HasSuffix(line, "]") {
				return nil, fmt.Errorf("line %d: unterminated section header", lineNo)
			}
			name, isSwitch := strings.CutPrefix(strings.TrimSpace(line[1:len(line)-1]), "switch:")
			cur = nil
			if !isSwitch {
				continue
			}
			i := slices.IndexFunc(out, func(s *SwitchConfig) bool { return s.Name == name })
			if i >= 0 {
				cur = out[i]
				continue
			}
			cur = &SwitchConfig{Name: name, Options: map[string]string{}}
			out = append(out, cur)
			continue
		}
		key, val, ok := strings.Cut(line, "=")
		if !ok {
			if key, val, ok = strings.Cut(line, ":"); !ok {
				return nil, fmt.Errorf("line %d: expected key = value", lineNo)
			}
		}
		if cur != nil {
			cur.Options[strings.TrimSpace(key)] = strings.TrimSpace(val)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read: %w", err)
	}
	return out, nil
}

// matches tells whether switchID (a port's local_link_connection
// switch_id) names s: its mac_address, case-insensitively as MACs are, or
// its section name.
func (s *SwitchConfig) matches(switchID string) bool {
	return strings.EqualFold(s.Options["mac_address"], switchID) || s.Name == switchID
}
