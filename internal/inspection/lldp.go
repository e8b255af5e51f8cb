package inspection

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net"
	"sort"
	"unicode/utf8"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/pyfmt"
)

// LLDP TLV types (802.1AB) and the organisationally specific sets
// upstream decodes.
const (
	tlvEnd          = 0
	tlvChassisID    = 1
	tlvPortID       = 2
	tlvTTL          = 3
	tlvPortDesc     = 4
	tlvSysName      = 5
	tlvSysDesc      = 6
	tlvSysCaps      = 7
	tlvMgmtAddress  = 8
	tlvOrgSpecific  = 127
	tlvValueMaxLen  = 511
	oui8021         = "0080c2"
	oui8023         = "00120f"
	maxLLDPIfaces   = 64
	chassisSubtypes = "chassis"
	portSubtypes    = "port"
)

// idSubtype is how a chassis or port ID subtype's value is encoded.
type idSubtype struct {
	name string
	kind string // "string", "mac" or "iana"
}

var idSubtypeTables = map[string]map[byte]idSubtype{
	chassisSubtypes: {
		1: {"entPhysAlias_c", "string"}, 2: {"ifAlias", "string"}, 3: {"entPhysAlias_p", "string"},
		4: {"mac_address", "mac"}, 5: {"IANA_address", "iana"}, 6: {"ifName", "string"}, 7: {"local", "string"},
	},
	portSubtypes: {
		1: {"ifAlias", "string"}, 2: {"entPhysicalAlias", "string"}, 3: {"mac_address", "mac"},
		4: {"IANA_address", "iana"}, 5: {"ifName", "string"}, 7: {"local", "string"},
	},
}

// operMAUTypes are RFC 4836's ifMauTypeList names, by index.
var operMAUTypes = []string{
	"Unknown", "AUI", "10BASE-5", "FOIRL", "10BASE-2", "10BASE-T duplex mode unknown", "10BASE-FP",
	"10BASE-FB", "10BASE-FL duplex mode unknown", "10BROAD36", "10BASE-T half duplex",
	"10BASE-T full duplex", "10BASE-FL half duplex", "10BASE-FL full duplex", "100 BASE-T4",
	"100BASE-TX half duplex", "100BASE-TX full duplex", "100BASE-FX half duplex",
	"100BASE-FX full duplex", "100BASE-T2 half duplex", "100BASE-T2 full duplex",
	"1000BASE-X half duplex", "1000BASE-X full duplex", "1000BASE-LX half duplex",
	"1000BASE-LX full duplex", "1000BASE-SX half duplex", "1000BASE-SX full duplex",
	"1000BASE-CX half duplex", "1000BASE-CX full duplex", "1000BASE-T half duplex",
	"1000BASE-T full duplex", "10GBASE-X", "10GBASE-LX4", "10GBASE-R", "10GBASE-ER", "10GBASE-LR",
	"10GBASE-SR", "10GBASE-W", "10GBASE-EW", "10GBASE-LW", "10GBASE-SW", "10GBASE-CX4", "2BASE-TL",
	"10PASS-TS", "100BASE-BX10D", "100BASE-BX10U", "100BASE-LX10", "1000BASE-BX10D",
	"1000BASE-BX10U", "1000BASE-LX10", "1000BASE-PX10D", "1000BASE-PX10U", "1000BASE-PX20D",
	"1000BASE-PX20U",
}

// streamError is construct's StreamError for a value cut short; fields
// are read byte by byte, so one byte is always what was missing.
func streamError(path string) error {
	return pyErr("StreamError", "Error in path (parsing) -> %s\nstream read less than specified amount, expected 1, found 0", path)
}

// decodeUTF8 is Python's strict bytes.decode("utf-8"), with its messages.
func decodeUTF8(b []byte) (string, error) {
	if utf8.Valid(b) {
		return string(b), nil
	}
	for i := 0; i < len(b); {
		c := b[i]
		if c < 0x80 {
			i++
			continue
		}
		lo, hi, n := byte(0x80), byte(0xBF), 0
		switch {
		case c >= 0xC2 && c <= 0xDF:
			n = 1
		case c == 0xE0:
			lo, n = 0xA0, 2
		case c == 0xED:
			hi, n = 0x9F, 2
		case c >= 0xE1 && c <= 0xEF:
			n = 2
		case c == 0xF0:
			lo, n = 0x90, 3
		case c >= 0xF1 && c <= 0xF3:
			n = 3
		case c == 0xF4:
			hi, n = 0x8F, 3
		default:
			return "", utf8Error(b, i, i, "invalid start byte")
		}
		for k := 1; k <= n; k++ {
			if i+k >= len(b) {
				return "", utf8Error(b, i, len(b)-1, "unexpected end of data")
			}
			if d := b[i+k]; d < lo || d > hi {
				return "", utf8Error(b, i, i+k-1, "invalid continuation byte")
			}
			lo, hi = 0x80, 0xBF
		}
		i += n + 1
	}
	return string(b), nil
}

func utf8Error(b []byte, start, end int, reason string) error {
	if start == end {
		return pyErr("UnicodeDecodeError", "'utf-8' codec can't decode byte 0x%02x in position %d: %s", b[start], start, reason)
	}
	return pyErr("UnicodeDecodeError", "'utf-8' codec can't decode bytes in position %d-%d: %s", start, end, reason)
}

func macString(b []byte) string { return net.HardwareAddr(b).String() }

// netaddrIP prints an address as netaddr does from its integer: one
// below 2^32 is taken for IPv4, a mapped IPv4 keeps its ::ffff: prefix.
func netaddrIP(b []byte) string {
	if len(b) == 16 {
		zero := true
		for _, x := range b[:12] {
			zero = zero && x == 0
		}
		if zero {
			return net.IP(b[12:]).String()
		}
		if ip := net.IP(b); ip.To4() != nil {
			return "::ffff:" + ip.To4().String()
		}
	}
	return net.IP(b).String()
}

// ianaAddress decodes an IANA address family and address; an unknown
// family has no address (nil).
func ianaAddress(data []byte, path string) (any, error) {
	if len(data) < 1 {
		return nil, streamError(path + "family")
	}
	size := map[byte]int{1: 4, 2: 16, 6: 6}[data[0]]
	if size == 0 {
		return nil, nil
	}
	if len(data) < 1+size {
		return nil, streamError(path + "value")
	}
	a := data[1 : 1+size]
	if size == 6 {
		return macString(a), nil
	}
	return netaddrIP(a), nil
}

// idValue is a decoded chassis or port ID: known is false for a subtype
// the tables lack (which upstream decodes to no value at all).
type idValue struct {
	subtype idSubtype
	known   bool
	value   any
}

func decodeID(table string, data []byte) (idValue, error) {
	if len(data) < 1 {
		return idValue{}, streamError("subtype")
	}
	st, ok := idSubtypeTables[table][data[0]]
	if !ok {
		return idValue{}, nil
	}
	out := idValue{subtype: st, known: true}
	rest := data[1:]
	switch st.kind {
	case "string":
		s, err := decodeUTF8(rest)
		if err != nil {
			return idValue{}, err
		}
		out.value = s
	case "mac":
		if len(rest) < 6 {
			return idValue{}, streamError("value -> value")
		}
		out.value = macString(rest[:6])
	case "iana":
		v, err := ianaAddress(rest, "value -> ")
		if err != nil {
			return idValue{}, err
		}
		out.value = v
	}
	return out, nil
}

// tlvPairs unpacks the [type, value] pairs; a pair of another length is
// Python's unpacking error.
func tlvPairs(v any) ([][2]any, error) {
	l, err := pyList(v)
	if err != nil {
		return nil, err
	}
	out := make([][2]any, 0, len(l))
	for _, it := range l {
		p, ok := it.([]any)
		if !ok {
			return nil, pyErr("TypeError", "cannot unpack non-iterable %s object", pyType(it))
		}
		switch {
		case len(p) < 2:
			return nil, pyErr("ValueError", "not enough values to unpack (expected 2, got %d)", len(p))
		case len(p) > 2:
			return nil, pyErr("ValueError", "too many values to unpack (expected 2)")
		}
		out = append(out, [2]any{p[0], p[1]})
	}
	return out, nil
}

// unhexlify is Python's binascii.unhexlify of a str: a non-string is a
// TypeError, bad text a binascii.Error (class "Error").
func unhexlify(v any) ([]byte, error) {
	s, ok := v.(string)
	if !ok {
		return nil, pyErr("TypeError", "argument should be bytes, buffer or ASCII string, not '%s'", pyType(v))
	}
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return nil, pyErr("ValueError", "string argument should contain only ASCII characters")
		}
	}
	if len(s)%2 != 0 {
		return nil, pyErr("Error", "Odd-length string")
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		return nil, pyErr("Error", "Non-hexadecimal digit found")
	}
	return b, nil
}

// tlvType is the TLV type as Python compares it: an integral number.
func tlvType(v any) (int, bool) {
	if b, ok := v.(bool); ok {
		if b {
			return 1, true
		}
		return 0, true
	}
	i, ok := jsonInt(v)
	return int(i), ok
}

func pyErrClass(err error, class string) bool {
	p, ok := err.(*pyExc)
	return ok && p.class == class
}

// lldpInterfaceTLVs is upstream's "lldp_raw.get(name) or iface.get('lldp')".
func lldpInterfaceTLVs(r *hookRun, name any, iface map[string]any) any {
	raw, _ := r.pluginData["lldp_raw"].(map[string]any)
	if v := raw[pyStr(name)]; pyfmt.Truthy(v) {
		return v
	}
	return iface["lldp"]
}

// parseLLDPHook is upstream's parse-lldp hook: the LLDP TLVs of each
// interface (at most 64) decoded into plugin data parsed_lldp.
func parseLLDPHook(_ context.Context, r *hookRun) error {
	ifaces, err := inventoryInterfaces(r.inventory)
	if err != nil {
		return err
	}
	if len(ifaces) > maxLLDPIfaces {
		r.log.Warn("Interface count exceeds maximum supported amount; truncating interfaces", "count", len(ifaces), "max", maxLLDPIfaces)
		ifaces = ifaces[:maxLLDPIfaces]
	}
	for _, iface := range ifaces {
		name, err := ifaceField(iface, "name")
		if err != nil {
			return err
		}
		tlvs := lldpInterfaceTLVs(r, name, iface)
		if tlvs == nil {
			r.log.Warn("No LLDP Data found for interface", "interface", pyStr(name))
			continue
		}
		nv, err := parseLLDPTLVs(r, tlvs)
		if err != nil {
			return err
		}
		if len(nv) == 0 {
			continue
		}
		parsed, _ := r.pluginData["parsed_lldp"].(map[string]any)
		if len(parsed) == 0 {
			parsed = map[string]any{}
			r.pluginData["parsed_lldp"] = parsed
		}
		parsed[pyStr(name)] = nv
	}
	return nil
}

// parseLLDPTLVs is upstream's LLDPBasicMgmtParser over one interface's
// TLVs: the first value of a name wins, repeatable TLVs collect in lists,
// undecodable TLVs are logged and skipped.
func parseLLDPTLVs(r *hookRun, tlvs any) (map[string]any, error) {
	pairs, err := tlvPairs(tlvs)
	if err != nil {
		return nil, err
	}
	nv := map[string]any{}
	for _, p := range pairs {
		data, err := unhexlify(p[1])
		if pyErrClass(err, "TypeError") {
			r.log.Warn("TLV value is not in correct format, value must be in hexadecimal", "type", pyStr(p[0]), "error", err)
			continue
		}
		if err != nil {
			return nil, err
		}
		t, ok := tlvType(p[0])
		if !ok {
			continue
		}
		if err := parseBasicTLV(r, nv, t, data); err != nil {
			if pyErrClass(err, "UnicodeDecodeError") {
				r.log.Warn("LLDP TLV can't be decoded", "type", t, "error", err)
				continue
			}
			return nil, err
		}
	}
	return nv, nil
}

func setDefault(nv map[string]any, name string, v any) {
	if _, ok := nv[name]; !ok {
		nv[name] = v
	}
}

func appendValue(nv map[string]any, name string, v any) {
	l, _ := nv[name].([]any)
	nv[name] = append(l, v)
}

// parseBasicTLV decodes one TLV of the basic management set. Decoding
// problems are logged and the TLV skipped; what escapes is what escapes
// upstream's parser: undecodable text and, as upstream, a chassis or port
// ID of a subtype it does not know.
func parseBasicTLV(r *hookRun, nv map[string]any, t int, data []byte) error {
	names := map[int]string{
		tlvChassisID: "switch_chassis_id", tlvPortID: "switch_port_id", tlvPortDesc: "switch_port_description",
		tlvSysName: "switch_system_name", tlvSysDesc: "switch_system_description", tlvSysCaps: "switch_capabilities",
		tlvMgmtAddress: "switch_mgmt_addresses",
	}
	switch t {
	case tlvEnd, tlvTTL:
		return nil
	case tlvChassisID, tlvPortID, tlvPortDesc, tlvSysName, tlvSysDesc, tlvSysCaps, tlvMgmtAddress, tlvOrgSpecific:
	default:
		return nil
	}
	if len(data) > tlvValueMaxLen {
		r.log.Warn("Invalid LLDP data, data length exceeds maximum allowed length", "name", names[t], "length", len(data))
		return nil
	}
	skip := func(err error) error {
		r.log.Warn("TLV parse error", "error", err)
		return nil
	}
	switch t {
	case tlvChassisID, tlvPortID:
		table := chassisSubtypes
		if t == tlvPortID {
			table = portSubtypes
		}
		id, err := decodeID(table, data)
		if pyErrClass(err, "StreamError") {
			return skip(err)
		}
		if err != nil {
			return err
		}
		if !id.known {
			return pyErr("AttributeError", "'NoneType' object has no attribute 'value'")
		}
		setDefault(nv, names[t], id.value)
	case tlvPortDesc, tlvSysName, tlvSysDesc:
		s, err := decodeUTF8(data)
		if err != nil {
			return err
		}
		setDefault(nv, names[t], s)
	case tlvSysCaps:
		if len(data) != 4 {
			r.log.Warn("Invalid data for switch_capabilities", "expected", 4, "actual", len(data))
			return nil
		}
		setDefault(nv, "switch_capabilities_support", capabilityNames(binary.BigEndian.Uint16(data[0:2])))
		setDefault(nv, "switch_capabilities_enabled", capabilityNames(binary.BigEndian.Uint16(data[2:4])))
	case tlvMgmtAddress:
		if len(data) < 1 {
			return skip(streamError("len"))
		}
		addr, err := ianaAddress(data[1:], "")
		if err != nil {
			return skip(err)
		}
		if addr != nil {
			appendValue(nv, names[t], addr)
		}
	case tlvOrgSpecific:
		if len(data) < 4 {
			return skip(streamError("subtype"))
		}
		// Upstream hands the organisational parsers its dictionary only
		// when that is non-empty (an empty one is replaced by a fresh
		// dictionary), so these TLVs count only after another TLV has
		// given a value.
		target := nv
		if len(nv) == 0 {
			target = map[string]any{}
		}
		oui, subtype, sub := hex.EncodeToString(data[:3]), data[3], data[4:]
		switch oui {
		case oui8021:
			parseDot1TLV(r, target, subtype, sub)
		case oui8023:
			parseDot3TLV(r, target, subtype, sub)
		default:
			r.log.Warn("Organizationally Unique ID not recognized", "oui", oui)
		}
	}
	return nil
}

// capabilityNames lists the capability bits set, upstream's bit layout
// (repeater at bit 1, bridge at 2, ... TPMR at 10) and order.
func capabilityNames(v uint16) []any {
	names := []string{"Repeater", "Bridge", "WLAN", "Router", "Telephone", "DOCSIS cable device", "Station only", "C-Vlan", "S-Vlan", "TPMR"}
	out := []any{}
	for i, n := range names {
		if v>>(i+1)&1 == 1 {
			out = append(out, n)
		}
	}
	return out
}

// orgTLVCheck applies the organisational parsers' length rules: the
// maximum, and an exact size for bit-field structures (0 = none).
func orgTLVCheck(r *hookRun, name string, data []byte, exact int) bool {
	if len(data) > tlvValueMaxLen {
		r.log.Warn("Invalid LLDP data, data length exceeds maximum allowed length", "name", name, "length", len(data))
		return false
	}
	if exact > 0 && len(data) != exact {
		r.log.Warn("Invalid LLDP data length", "name", name, "expected", exact, "actual", len(data))
		return false
	}
	return true
}

func parseDot1TLV(r *hookRun, nv map[string]any, subtype byte, data []byte) {
	short := func(path string) { r.log.Warn("TLV parse error", "error", streamError(path)) }
	switch subtype {
	case 1, 6:
		name := map[byte]string{1: "switch_port_untagged_vlan_id", 6: "switch_port_management_vlan_id"}[subtype]
		if !orgTLVCheck(r, name, data, 0) {
			return
		}
		if len(data) < 2 {
			short("value")
			return
		}
		setDefault(nv, name, int64(binary.BigEndian.Uint16(data)))
	case 2:
		if !orgTLVCheck(r, "switch_port_protocol", data, 3) {
			return
		}
		setDefault(nv, "switch_port_protocol_vlan_enabled", data[0]>>2&1 == 1)
		setDefault(nv, "switch_port_protocol_vlan_support", data[0]>>1&1 == 1)
		appendValue(nv, "switch_port_protocol_vlan_ids", int64(binary.BigEndian.Uint16(data[1:3])))
	case 3:
		if !orgTLVCheck(r, "", data, 0) {
			return
		}
		if len(data) < 3 {
			short("vlanid")
			return
		}
		n := int(data[2])
		if len(data) < 3+n {
			short("vlan_name")
			return
		}
		raw := data[3 : 3+n]
		for len(raw) > 0 && raw[len(raw)-1] == 0 {
			raw = raw[:len(raw)-1]
		}
		name, err := decodeUTF8(raw)
		if err != nil {
			r.log.Warn("TLV value error", "error", err)
			return
		}
		appendValue(nv, "switch_port_vlans", map[string]any{"name": name, "id": int64(binary.BigEndian.Uint16(data))})
	case 4:
		if !orgTLVCheck(r, "switch_protocol_identities", data, 0) {
			return
		}
		if len(data) < 1 || len(data) < 1+int(data[0]) {
			short("protocol")
			return
		}
		appendValue(nv, "switch_protocol_identities", hex.EncodeToString(data[1:1+int(data[0])]))
	case 7:
		if orgTLVCheck(r, "switch_port_link_aggregation", data, 5) {
			linkAggregation(nv, data)
		}
	}
}

func linkAggregation(nv map[string]any, data []byte) {
	setDefault(nv, "switch_port_link_aggregation_enabled", data[0]>>1&1 == 1)
	setDefault(nv, "switch_port_link_aggregation_support", data[0]&1 == 1)
	setDefault(nv, "switch_port_link_aggregation_id", int64(binary.BigEndian.Uint32(data[1:5])))
}

func parseDot3TLV(r *hookRun, nv map[string]any, subtype byte, data []byte) {
	switch subtype {
	case 1:
		if !orgTLVCheck(r, "switch_port_mac_phy_config", data, 5) {
			return
		}
		mau := int(binary.BigEndian.Uint16(data[3:5]))
		if mau >= len(operMAUTypes) {
			r.log.Warn("TLV value error: Invalid index for mau type")
			return
		}
		setDefault(nv, "switch_port_autonegotiation_enabled", data[0]>>1&1 == 1)
		setDefault(nv, "switch_port_autonegotiation_support", data[0]&1 == 1)
		setDefault(nv, "switch_port_physical_capabilities", autonegCapabilities(binary.BigEndian.Uint16(data[1:3])))
		setDefault(nv, "switch_port_mau_type", operMAUTypes[mau])
	case 3:
		if orgTLVCheck(r, "switch_port_link_aggregation", data, 5) {
			linkAggregation(nv, data)
		}
	case 4:
		if !orgTLVCheck(r, "switch_port_mtu", data, 0) {
			return
		}
		if len(data) < 2 {
			r.log.Warn("TLV parse error", "error", streamError("value"))
			return
		}
		setDefault(nv, "switch_port_mtu", int64(binary.BigEndian.Uint16(data)))
	}
}

// autonegCapabilities names the PMD auto-negotiation bits set, sorted.
// As upstream, "10BASE-T fdx" follows the 10BASE-T half-duplex bit and
// the full-duplex bit names nothing.
func autonegCapabilities(v uint16) []any {
	bits := []struct {
		shift uint
		name  string
	}{
		{14, "10BASE-T hdx"}, {14, "10BASE-T fdx"}, {12, "10BASE-T4"}, {11, "100BASE-TX hdx"},
		{10, "100BASE-TX fdx"}, {9, "100BASE-T2 hdx"}, {8, "100BASE-T2 fdx"}, {7, "PAUSE fdx"},
		{6, "Asym PAUSE fdx"}, {5, "Sym PAUSE fdx"}, {4, "Asym and Sym PAUSE fdx"},
		{3, "1000BASE-X hdx"}, {2, "1000BASE-X fdx"}, {1, "1000BASE-T hdx"}, {0, "1000BASE-T fdx"},
	}
	var names []string
	for _, b := range bits {
		if v>>b.shift&1 == 1 {
			names = append(names, b.name)
		}
	}
	sort.Strings(names)
	out := make([]any, len(names))
	for i, n := range names {
		out[i] = n
	}
	return out
}

// localLinkConnectionHook is upstream's local-link-connection hook: the
// port ID, the chassis MAC (as switch_id) and the system name (as
// switch_info) from each interface's LLDP TLVs fill what the port's
// local_link_connection lacks.
func localLinkConnectionHook(ctx context.Context, r *hookRun) error {
	return walkPortInterfaces(ctx, r, func(iface map[string]any, name, mac any, ports []*model.Port) error {
		port := portByAddress(ports, pyStr(mac))
		if port == nil {
			r.log.Debug("Skipping LLDP processing: matching port not found", "mac", pyStr(mac))
			return nil
		}
		tlvs := lldpInterfaceTLVs(r, name, iface)
		if tlvs == nil {
			r.log.Warn("No LLDP data found for interface", "mac", pyStr(mac))
			return nil
		}
		return patchLocalLink(ctx, r, port, tlvs)
	})
}

// portByAddress finds the port as the database lookup does, ignoring case.
func portByAddress(ports []*model.Port, mac string) *model.Port {
	for _, p := range ports {
		if p.Address != nil && equalFoldASCII(*p.Address, mac) {
			return p
		}
	}
	return nil
}

func equalFoldASCII(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

func patchLocalLink(ctx context.Context, r *hookRun, port *model.Port, tlvs any) error {
	pairs, err := tlvPairs(tlvs)
	if err != nil {
		return err
	}
	patch := map[string]any{}
	for _, p := range pairs {
		data, err := unhexlify(p[1])
		if pyErrClass(err, "Error") {
			r.log.Warn("TLV value is not in correct format, ensure that the TLV value is in hexadecimal format when sent to ironic", "type", pyStr(p[0]))
			return nil
		}
		if err != nil {
			return err
		}
		t, isInt := tlvType(p[0])
		if !isInt {
			continue
		}
		var item string
		var value any
		switch t {
		case tlvPortID:
			id, err := decodeID(portSubtypes, data)
			if err != nil {
				return err
			}
			item, value = "port_id", id.value
		case tlvChassisID:
			id, err := decodeID(chassisSubtypes, data)
			if err != nil {
				return err
			}
			if !id.known {
				return pyErr("TypeError", "argument of type 'EnumInteger' is not iterable")
			}
			if id.subtype.name == "mac_address" {
				item, value = "switch_id", id.value
			}
		case tlvSysName:
			s, err := decodeUTF8(data)
			if err != nil {
				return err
			}
			item, value = "switch_info", s
		}
		if item == "" || value == nil {
			continue
		}
		if _, ok := port.LocalLinkConnection[item]; ok {
			continue
		}
		patch[item] = value
	}
	if len(patch) == 0 {
		return nil
	}
	if port.LocalLinkConnection == nil {
		port.LocalLinkConnection = map[string]any{}
	}
	for k, v := range patch {
		port.LocalLinkConnection[k] = v
	}
	if err := r.t.UpdatePort(ctx, port); err != nil {
		if _, ok := errs.As(err); ok {
			r.log.Warn("Failed to update port", "port", port.UUID, "error", err)
			return nil
		}
		return fmt.Errorf("update port %s: %w", port.UUID, err)
	}
	return nil
}
