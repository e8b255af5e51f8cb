package ipmi

import (
	"maps"
	"math"
	"net/netip"
	"regexp"
	"strings"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/pyfmt"
)

// validPrivLevels is upstream VALID_PRIV_LEVELS, in its order (messages
// list them).
var validPrivLevels = []string{"ADMINISTRATOR", "CALLBACK", "OPERATOR", "USER"}

// commonProperties is upstream COMMON_PROPERTIES: the driver_info keys of
// the power, management and vendor interfaces.
var commonProperties = map[string]string{
	"ipmi_address":    "IP address or hostname of the node. Required.",
	"ipmi_password":   "password. Optional.",
	"ipmi_hex_kg_key": "Kg key for IPMIv2 authentication. The key is expected in hexadecimal format. Optional.",
	"ipmi_port":       "remote IPMI RMCP port. Optional.",
	"ipmi_priv_level": "privilege level; default is ADMINISTRATOR. One of " +
		strings.Join(validPrivLevels, ", ") + ". Optional.",
	"ipmi_username":         "username; default is NULL user. Optional.",
	"ipmi_bridging":         `bridging_type; default is "no". One of "single", "dual", "no". Optional.`,
	"ipmi_transit_channel":  `transit channel for bridged request. Required only if ipmi_bridging is set to "dual".`,
	"ipmi_transit_address":  `transit address for bridged request. Required only if ipmi_bridging is set to "dual".`,
	"ipmi_target_channel":   `destination channel for bridged request. Required only if ipmi_bridging is set to "single" or "dual".`,
	"ipmi_target_address":   `destination address for bridged request. Required only if ipmi_bridging is set to "single" or "dual".`,
	"ipmi_local_address":    `local IPMB address for bridged requests. Used only if ipmi_bridging is set to "single" or "dual". Optional.`,
	"ipmi_protocol_version": `the version of the IPMI protocol; default is "2.0". One of "1.5", "2.0". Optional.`,
	"ipmi_force_boot_device": "Whether Ironic should specify the boot device to the BMC each time the server is turned on, " +
		"eg. because the BMC is not capable of remembering the selected boot device across power cycles; " +
		"default value is False. Optional.",
	"ipmi_disable_boot_timeout": "By default ironic will send a raw IPMI command to disable the 60 second timeout for booting. " +
		"Setting this option to False will NOT send that command on this node. The [ipmi]disable_boot_timeout will be used " +
		"if this option is not set. Optional.",
	"ipmi_cipher_suite": "The number of a cipher suite to use. Only 3 (AES-128 with SHA1) or 17 (AES-128 with SHA256) " +
		"should ever be used; 17 is preferred. The default value depends on the ipmitool version, some recent versions " +
		"have switched from 3 to 17.",
}

// consoleProperties is upstream CONSOLE_PROPERTIES.
var consoleProperties = map[string]string{
	"ipmi_terminal_port": "node's UDP port to connect to. Only required for console access.",
}

// Properties returns the driver_info keys of the power, management and
// vendor interfaces.
func Properties() map[string]string { return maps.Clone(commonProperties) }

// ConsoleProperties returns Properties plus ipmi_terminal_port.
func ConsoleProperties() map[string]string {
	p := Properties()
	maps.Copy(p, consoleProperties)
	return p
}

// DriverInfo is what upstream _parse_driver_info returns: the parameters
// ipmitool needs to reach the node's BMC. Optional values keep upstream's
// distinction between unset (nil) and set.
type DriverInfo struct {
	UUID     string
	Address  string
	Username string
	Password string
	HexKgKey string
	// DestPort is ipmi_port, the BMC's RMCP port.
	DestPort *int
	// Port is the console terminal port (ipmi_terminal_port, or the one
	// allocated at console start).
	Port      *int
	PrivLevel string
	// Bridging parameters; set only when ipmi_bridging asks for them.
	LocalAddress, TransitChannel, TransitAddress, TargetChannel, TargetAddress *string
	ProtocolVersion                                                            string
	ForceBootDevice                                                            bool
	// CipherSuite is ipmi_cipher_suite as given; "" when unset.
	CipherSuite    string
	hasCipherSuite bool
}

// bridgingOptions is upstream BRIDGING_OPTIONS: the order ipmitool gets
// the bridging flags in.
func (d *DriverInfo) bridgingOptions() []struct {
	flag  string
	value *string
} {
	return []struct {
		flag  string
		value *string
	}{
		{"-m", d.LocalAddress}, {"-B", d.TransitChannel}, {"-T", d.TransitAddress},
		{"-b", d.TargetChannel}, {"-t", d.TargetAddress},
	}
}

// ParseDriverInfo validates the node's driver_info as upstream
// _parse_driver_info does, in its order and with its messages. support
// says whether the local ipmitool can bridge.
func ParseDriverInfo(node *model.Node, support Support, log logger) (DriverInfo, error) {
	info := node.DriverInfo
	if !pyfmt.Truthy(info["ipmi_address"]) {
		return DriverInfo{}, driver.MissingParameterValue(
			"Missing the following IPMI credentials in node's driver_info: ['ipmi_address'].")
	}
	d := DriverInfo{UUID: node.UUID, Address: pyfmt.StrJSON(info["ipmi_address"])}
	if v := info["ipmi_username"]; pyfmt.Truthy(v) {
		d.Username = pyfmt.StrJSON(v)
	}
	// Upstream applies str() to whatever is there, so an explicit null
	// becomes the password "None"; kept for the same BMC behaviour.
	if v, ok := info["ipmi_password"]; ok {
		d.Password = pyStr(v)
	}
	if v := info["ipmi_hex_kg_key"]; pyfmt.Truthy(v) {
		d.HexKgKey = pyfmt.StrJSON(v)
	}
	d.PrivLevel = "ADMINISTRATOR"
	if v, ok := info["ipmi_priv_level"]; ok {
		d.PrivLevel = pyStr(v)
	}
	bridging := "no"
	if v, ok := info["ipmi_bridging"]; ok {
		bridging = pyStr(v)
	}
	d.ProtocolVersion = "2.0"
	if v, ok := info["ipmi_protocol_version"]; ok {
		d.ProtocolVersion = pyStr(v)
	}
	d.ForceBootDevice = boolFromString(info["ipmi_force_boot_device"])
	cipherRaw, cipherSet := info["ipmi_cipher_suite"]
	cipherSet = cipherSet && cipherRaw != nil

	if d.Username == "" {
		log.Warn("ipmi_username is not defined or empty: NULL user will be utilized", "node", node.UUID)
	}
	if d.Password == "" {
		log.Warn("ipmi_password is not defined or empty: NULL password will be utilized", "node", node.UUID)
	}

	if d.ProtocolVersion != "2.0" && d.ProtocolVersion != "1.5" {
		return DriverInfo{}, driver.InvalidParameterValue(
			"Invalid IPMI protocol version value %s, the valid value can be one of 2.0, 1.5", d.ProtocolVersion)
	}

	termPort := info["ipmi_terminal_port"]
	if !pyfmt.Truthy(termPort) {
		termPort = node.InternalInfo().Get(model.DIIAllocatedIPMITerminalPort)
	}
	if termPort != nil {
		p, err := validateNetworkPort(termPort, "ipmi_terminal_port")
		if err != nil {
			return DriverInfo{}, err
		}
		d.Port = &p
	}
	if v := info["ipmi_port"]; v != nil {
		p, err := validateNetworkPort(v, "ipmi_port")
		if err != nil {
			return DriverInfo{}, err
		}
		d.DestPort = &p
	}

	switch bridging {
	case "no":
	case "single", "dual":
		supported := support.SingleBridge
		if bridging == "dual" {
			supported = support.DualBridge
		}
		if !supported {
			return DriverInfo{}, driver.InvalidParameterValue(
				"Value for ipmi_bridging is provided as %s, but IPMI bridging is not supported by the IPMI utility "+
					"installed on host. Ensure ipmitool version is > 1.8.11", bridging)
		}
		d.LocalAddress = optional(info, "ipmi_local_address")
		d.TargetChannel = optional(info, "ipmi_target_channel")
		d.TargetAddress = optional(info, "ipmi_target_address")
		var undefined []string
		if d.TargetChannel == nil {
			undefined = append(undefined, "ipmi_target_channel")
		}
		if d.TargetAddress == nil {
			undefined = append(undefined, "ipmi_target_address")
		}
		if bridging == "dual" {
			d.TransitChannel = optional(info, "ipmi_transit_channel")
			d.TransitAddress = optional(info, "ipmi_transit_address")
			if d.TransitChannel == nil {
				undefined = append(undefined, "ipmi_transit_channel")
			}
			if d.TransitAddress == nil {
				undefined = append(undefined, "ipmi_transit_address")
			}
		}
		if len(undefined) > 0 {
			return DriverInfo{}, driver.MissingParameterValue("%s not provided", pyfmt.Repr(undefined))
		}
	default:
		return DriverInfo{}, driver.InvalidParameterValue(
			"Invalid value for ipmi_bridging: %s, the valid value can be one of: ['single', 'dual', 'no']", bridging)
	}

	if !validPriv(d.PrivLevel) {
		return DriverInfo{}, driver.InvalidParameterValue(
			"Invalid privilege level value:%s, the valid value can be one of %s",
			d.PrivLevel, strings.Join(validPrivLevels, ", "))
	}

	if len(d.HexKgKey)%2 != 0 {
		return DriverInfo{}, driver.InvalidParameterValue("Number of ipmi_hex_kg_key characters is not even")
	}

	if cipherSet {
		if _, ok := pyInt(cipherRaw); !ok {
			return DriverInfo{}, driver.InvalidParameterValue(
				"Invalid cipher suite %s, expected a number", pyfmt.StrJSON(cipherRaw))
		}
		if d.ProtocolVersion == "1.5" {
			return DriverInfo{}, driver.InvalidParameterValue("Cipher suites cannot be used with IPMI 1.5")
		}
		d.hasCipherSuite = true
		if pyfmt.Truthy(cipherRaw) {
			d.CipherSuite = pyfmt.StrJSON(cipherRaw)
		}
	}
	return d, nil
}

// logger is the part of *slog.Logger parsing needs.
type logger interface {
	Warn(msg string, args ...any)
}

func validPriv(p string) bool {
	for _, v := range validPrivLevels {
		if p == v {
			return true
		}
	}
	return false
}

// pyStr is Python's str() of a JSON value, keeping floats as Python prints
// them ("2.0" stays "2.0", which matters for ipmi_protocol_version).
func pyStr(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return pyfmt.Str(v)
}

// optional is info.get(key) rendered as ipmitool gets it, nil when the key
// is absent or null.
func optional(info map[string]any, key string) *string {
	v, ok := info[key]
	if !ok || v == nil {
		return nil
	}
	s := pyfmt.StrJSON(v)
	return &s
}

// pyInt is Python's int() of a JSON value: strings are parsed strictly,
// floats truncate, booleans count as 0 and 1.
func pyInt(v any) (int, bool) {
	switch x := v.(type) {
	case string:
		return pyfmt.Int(x)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return 0, false
		}
		return int(x), true
	case int:
		return x, true
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

// validateNetworkPort is upstream utils.validate_network_port.
func validateNetworkPort(v any, name string) (int, error) {
	if n, ok := pyInt(v); ok && n >= 0 && n <= 65535 {
		return n, nil
	}
	return 0, driver.InvalidParameterValue(`%s "%s" is not a valid port.`, name, pyfmt.StrJSON(v))
}

// boolFromString is oslo strutils.bool_from_string (not strict): only the
// listed true spellings are true.
func boolFromString(v any) bool {
	if b, ok := v.(bool); ok {
		return b
	}
	if v == nil {
		return false
	}
	switch strings.ToLower(strings.TrimSpace(pyfmt.StrJSON(v))) {
	case "1", "t", "true", "on", "y", "yes":
		return true
	}
	return false
}

// hostnameSafe is upstream's old is_hostname_safe regular expression.
var hostnameSafe = regexp.MustCompile(`^[a-z0-9]([a-z0-9\-]{0,61}[a-z0-9])?(\.[a-z0-9\-_]{0,62}[a-z0-9])*\.?$`)

// validateAddress is upstream _validate_ipmi_address: an IP address or a
// safe hostname, checked by the power interface's validate only.
func validateAddress(address, nodeUUID string) error {
	if address == "" {
		return nil
	}
	if _, err := netip.ParseAddr(address); err == nil {
		return nil
	}
	if len(address) <= 255 && hostnameSafe.MatchString(address) {
		return nil
	}
	return driver.InvalidParameterValue(
		`Invalid IPMI address "%s" for node %s. Must be a valid IP address or hostname.`, address, nodeUUID)
}
