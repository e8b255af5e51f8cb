package apiutil

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/openkeel/ironic/internal/api/collection"
	"github.com/openkeel/ironic/internal/errs"
)

var (
	// macRe is oslo's netutils.is_valid_mac pattern (matched on the
	// lower-cased value, anchored at the start, Python's "$").
	macRe = regexp.MustCompile(`^[0-9a-f]{2}(:[0-9a-f]{2}){5}$`)
	// datapathRe is utils.is_valid_datapath_id.
	datapathRe = regexp.MustCompile(`^[0-9a-f]{16}$`)
)

// NormalizeMAC is utils.validate_and_normalize_mac: the lower-cased MAC
// and whether it is one.
func NormalizeMAC(address string) (string, bool) {
	low := strings.ToLower(address)
	if !macRe.MatchString(pyDollar(low)) {
		return "", false
	}
	return strings.ReplaceAll(low, "-", ":"), true
}

// MACAddress is args.mac_address: a string holding a MAC address,
// normalized, else 400 "Expected valid MAC address for <name>: <value>".
func MACAddress(name string, value any) (string, error) {
	s, ok := value.(string)
	if ok {
		if mac, ok := NormalizeMAC(s); ok {
			return mac, nil
		}
	}
	return "", errs.InvalidParameterValue(fmt.Sprintf("Expected valid MAC address for %s: %s", name, PyStr(value)))
}

// BodyBoolean is args.boolean on a body value: booleans pass, strings are
// parsed as oslo's bool_from_string (strict), nil stays nil.
func BodyBoolean(name string, value any) (any, error) {
	s, ok := value.(string)
	if !ok {
		return value, nil
	}
	b, err := collection.Boolean(name, &s)
	if err != nil {
		return nil, err
	}
	return *b, nil
}

// BodyUUID is args.uuid on a body value.
func BodyUUID(name string, value any) error {
	s, ok := value.(string)
	if !ok {
		return nil
	}
	_, err := collection.UUID(name, &s)
	return err
}

// PyStr is Python's str() of a JSON value, as %s formats it.
func PyStr(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return PyRepr(v)
}

// LocalLinkConnection is LOCAL_LINK_VALIDATOR: the schema of
// local_link_connection, then switch_id normalized as a MAC address or an
// OpenFlow datapath ID (400 InvalidSwitchID otherwise). value is a plain
// JSON value; the map is modified in place.
func LocalLinkConnection(name string, value any) error {
	if value == nil {
		return nil
	}
	if err := MustSchema("local_link_connection").Validate(name, value); err != nil {
		return err
	}
	m, _ := value.(map[string]any)
	sw, ok := m["switch_id"]
	if !ok {
		return nil
	}
	s, _ := sw.(string)
	if mac, ok := NormalizeMAC(s); ok {
		m["switch_id"] = mac
		return nil
	}
	if low := strings.ToLower(s); datapathRe.MatchString(pyDollar(low)) {
		m["switch_id"] = low
		return nil
	}
	return errs.New(errs.ClassInvalidSwitchID, map[string]any{"switch_id": sw})
}

// ISOTime is Python's datetime.isoformat() of an aware UTC time, as the
// API renders created_at and updated_at.
func ISOTime(t time.Time) string { return string(AppendISOTime(nil, t)) }

// AppendISOTime appends ISOTime(t).
func AppendISOTime(b []byte, t time.Time) []byte {
	t = t.UTC()
	b = t.AppendFormat(b, "2006-01-02T15:04:05")
	if us := t.Nanosecond() / 1000; us != 0 {
		b = append(b, '.')
		for d := 100000; d > 0; d /= 10 {
			b = append(b, byte('0'+us/d%10))
		}
	}
	return append(b, "+00:00"...)
}

// OptISOTime is ISOTime of t, or nil.
func OptISOTime(t *time.Time) any {
	if t == nil {
		return nil
	}
	return ISOTime(*t)
}

// IsPathUpdated is api_utils.is_path_updated, which looks at the first
// operation only (upstream returns from inside its loop).
func IsPathUpdated(ops []PatchOp, path string) bool {
	path = strings.TrimRight(path, "/")
	if len(ops) == 0 {
		return false
	}
	p := ops[0].Path
	return p == path || strings.HasPrefix(p, path+"/")
}
