package redfish

import (
	"fmt"
	"maps"
	"net"
	"os"
	"strings"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/pyfmt"
)

// commonProperties is upstream COMMON_PROPERTIES: the driver_info keys of
// every redfish interface, with the descriptions API clients show.
var commonProperties = map[string]string{
	"redfish_address": "The URL address to the Redfish controller. It must include the authority portion of the URL. " +
		"If the scheme is missing, https is assumed. For example: https://mgmt.vendor.com. " +
		"If a path is added, it will be used as the API endpoint root_prefix. Required",
	"redfish_system_id": "The canonical path to the ComputerSystem resource that the driver will interact with. " +
		"It should include the root service, version and the unique resource path to a ComputerSystem within " +
		"the same authority as the redfish_address property. For example: /redfish/v1/Systems/1. This property " +
		"is only required if target BMC manages more than one ComputerSystem. Otherwise ironic will pick the " +
		"only available ComputerSystem automatically.",
	"redfish_username": "User account with admin/server-profile access privilege. Although this property is not " +
		"mandatory it's highly recommended to set a username. Optional",
	"redfish_password": "User account password. Although this property is not mandatory, it's highly recommended " +
		"to set a password. Optional",
	"redfish_verify_ca": "Either a Boolean value, a path to a CA_BUNDLE file or directory with certificates of " +
		"trusted CAs. If set to True the driver will verify the host certificates; if False the driver will " +
		"ignore verifying the SSL certificate. If it's a path the driver will use the specified certificate or " +
		"one of the certificates in the directory. Defaults to True. Optional",
	"redfish_auth_type": `Redfish HTTP client authentication method. Can be "basic", "session" or "auto". ` +
		"If not set, the default value is taken from Ironic configuration as ``[redfish]auth_type`` option.",
	"firmware_update_unresponsive_bmc_wait": "Number of seconds to wait to avoid the BMC becoming unresponsive " +
		"during firmware updates. If not set, the default value is taken from the Ironic configuration " +
		"``firmware_update_wait_unresponsive_bmc`` in the ``[redfish]`` section.",
	"redfish_tls_minimum_version": `Minimum TLS protocol version for connections to the Redfish BMC. Can be "1.1", ` +
		`"1.2", or "1.3". If not set, the default value is taken from Ironic configuration as ` +
		"``[redfish]tls_minimum_version`` option.",
	"redfish_tls_ciphers": "OpenSSL cipher list to use for connections to the Redfish BMC. If not set, the default " +
		"value is taken from Ironic configuration as ``[redfish]tls_ciphers`` option.",
}

// Properties returns a copy of the redfish driver_info properties.
func Properties() map[string]string { return maps.Clone(commonProperties) }

// defaultRootPrefix is sushy's root prefix when the address has no path.
const defaultRootPrefix = "/redfish/v1/"

// DriverInfo is parse_driver_info's result: how to reach one BMC.
type DriverInfo struct {
	// Address is scheme://authority.
	Address    string
	RootPrefix string
	// SystemID is the quoted system path, "" to pick the only system.
	SystemID string
	Username string
	Password string
	// VerifyCA is "true", "false" or a path to a CA file or directory.
	VerifyCA   string
	AuthType   string
	TLSMinimum string
	TLSCiphers string
	NodeUUID   string
}

// SafeAddress is Address without its userinfo, if any: an operator may
// put credentials in the URL, and addresses go into logs and messages.
func (d DriverInfo) SafeAddress() string {
	scheme, rest, ok := strings.Cut(d.Address, "://")
	if !ok {
		return d.Address
	}
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		return scheme + "://***@" + rest[at+1:]
	}
	return d.Address
}

// String leaves the password out, so a DriverInfo printed by mistake
// reveals no secret.
func (d DriverInfo) String() string {
	return fmt.Sprintf("redfish %s%s system %q user %q auth %s", d.SafeAddress(), d.RootPrefix, d.SystemID, d.Username, d.AuthType)
}

// ParseDriverInfo validates the node's driver_info as upstream
// parse_driver_info does, with its messages.
func ParseDriverInfo(node *model.Node, opts *Options) (DriverInfo, error) {
	info := node.DriverInfo
	if !pyfmt.Truthy(info["redfish_address"]) {
		return DriverInfo{}, driver.MissingParameterValue(
			"Missing the following Redfish properties in node %s driver_info: ['redfish_address']", node.UUID)
	}
	out := DriverInfo{NodeUUID: node.UUID, RootPrefix: defaultRootPrefix}

	rawAddr, isString := info["redfish_address"].(string)
	if !isString {
		return DriverInfo{}, invalidAddress(pyfmt.StrJSON(info["redfish_address"]), node.UUID)
	}
	addr := rawAddr
	if ip := net.ParseIP(addr); ip != nil && ip.To4() == nil {
		addr = "[" + addr + "]"
	}
	scheme, authority, path := splitURI(addr)
	if scheme == "" || authority == "" {
		addr = "https://" + addr
		scheme, authority, path = splitURI(addr)
	}
	if !validScheme(scheme) || !validAuthority(authority) || !validPath(path) {
		return DriverInfo{}, invalidAddress(addr, node.UUID)
	}
	out.Address = scheme + "://" + authority
	if path != "" {
		out.RootPrefix = path
	}

	if v, ok := info["redfish_system_id"]; ok && v != nil {
		s, isStr := v.(string)
		if !isStr {
			return DriverInfo{}, driver.InvalidParameterValue(
				`Invalid value "%s" set in driver_info/redfish_system_id on node %s. The value should be a path `+
					"(string) to the resource that the driver will interact with. For example: /redfish/v1/Systems/1",
				pyfmt.StrJSON(v), node.UUID)
		}
		out.SystemID = urlQuote(s)
	}

	verify, err := parseVerifyCA(node, info, opts)
	if err != nil {
		return DriverInfo{}, err
	}
	out.VerifyCA = verify

	out.AuthType = opts.AuthType
	if v, ok := info["redfish_auth_type"]; ok {
		s, _ := v.(string)
		if s != "basic" && s != "session" && s != "auto" {
			return DriverInfo{}, driver.InvalidParameterValue(
				`Invalid value "%s" set in driver_info/redfish_auth_type on node %s. The value should be one of `+
					`"basic", "session" or "auto".`, pyfmt.StrJSON(v), node.UUID)
		}
		out.AuthType = s
	}

	out.TLSMinimum = opts.TLSMinimumVersion
	if v, ok := info["redfish_tls_minimum_version"]; ok {
		s, isStr := v.(string)
		if pyfmt.Truthy(v) && (!isStr || (s != "1.1" && s != "1.2" && s != "1.3")) {
			return DriverInfo{}, driver.InvalidParameterValue(
				`Invalid value "%s" set in driver_info/redfish_tls_minimum_version on node %s. The value should `+
					`be one of "1.1", "1.2", or "1.3".`, pyfmt.StrJSON(v), node.UUID)
		}
		out.TLSMinimum = s
	}
	out.TLSCiphers = opts.TLSCiphers
	if v, ok := info["redfish_tls_ciphers"].(string); ok {
		out.TLSCiphers = v
	}

	out.Username, _ = info["redfish_username"].(string)
	out.Password, _ = info["redfish_password"].(string)
	return out, nil
}

func invalidAddress(addr, node string) error {
	return driver.InvalidParameterValue("Invalid Redfish address %s set in driver_info/redfish_address on node %s", addr, node)
}

// parseVerifyCA is upstream's verify_ca handling: the driver_info value, or
// [redfish]verify_ca when the value is absent or True; a string is a path
// when one exists, else a strict boolean.
func parseVerifyCA(node *model.Node, info map[string]any, opts *Options) (string, error) {
	v, present := info["redfish_verify_ca"]
	if !present || v == nil || v == true {
		v = true
		if opts.VerifyCA != "" {
			v = opts.VerifyCA
		}
	}
	bad := func() error {
		return driver.InvalidParameterValue(
			"Invalid value type set in driver_info/redfish_verify_ca on node %s. The value should be a Boolean "+
				`or the path to a file/directory, not "%s"`, node.UUID, pyfmt.StrJSON(v))
	}
	switch x := v.(type) {
	case bool:
		if x {
			return "true", nil
		}
		return "false", nil
	case string:
		if _, err := os.Stat(x); err == nil {
			return x, nil
		}
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "1", "t", "true", "on", "y", "yes":
			return "true", nil
		case "0", "f", "false", "off", "n", "no":
			return "false", nil
		}
		return "", bad()
	}
	return "", bad()
}

// splitURI splits an RFC 3986 reference into scheme, authority and path
// (query and fragment are not part of a BMC address and are dropped as
// upstream does).
func splitURI(s string) (scheme, authority, path string) {
	rest := s
	if i := strings.IndexAny(rest, ":/?#"); i > 0 && rest[i] == ':' {
		scheme, rest = rest[:i], rest[i+1:]
	}
	if strings.HasPrefix(rest, "//") {
		rest = rest[2:]
		end := strings.IndexAny(rest, "/?#")
		if end < 0 {
			end = len(rest)
		}
		authority, rest = rest[:end], rest[end:]
	}
	if end := strings.IndexAny(rest, "?#"); end >= 0 {
		rest = rest[:end]
	}
	return scheme, authority, rest
}

func validScheme(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		alpha := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !alpha && (i == 0 || !(c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	return true
}

// validAuthority requires a host: the userinfo is optional, the port
// numeric.
func validAuthority(a string) bool {
	if at := strings.LastIndex(a, "@"); at >= 0 {
		a = a[at+1:]
	}
	host := a
	if strings.HasPrefix(a, "[") {
		end := strings.Index(a, "]")
		if end < 0 || net.ParseIP(a[1:end]) == nil {
			return false
		}
		host, a = a[1:end], a[end+1:]
		if a != "" && !strings.HasPrefix(a, ":") {
			return false
		}
		return validPort(strings.TrimPrefix(a, ":"))
	}
	if i := strings.LastIndex(a, ":"); i >= 0 {
		host = a[:i]
		if !validPort(a[i+1:]) {
			return false
		}
	}
	if host == "" {
		return false
	}
	for _, c := range host {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-._~%!$&'()*+,;=", c)) {
			return false
		}
	}
	return true
}

// validPath refuses characters RFC 3986 never allows in a path.
func validPath(p string) bool {
	return !strings.ContainsAny(p, " \"<>\\^`{|}")
}

func validPort(p string) bool {
	for _, c := range p {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// urlQuote is Python's urllib.parse.quote with its default safe "/".
func urlQuote(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("_.-~/", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}
