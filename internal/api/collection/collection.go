// Package collection is the list machinery every resource shares, as
// upstream's api_utils, args and collection modules behave: query
// parameter parsing (limit, marker, sort_key, sort_dir, fields, detail)
// with upstream's messages, the next link, self/bookmark links, and output
// filtering by requested fields and microversion.
//
// Upstream checks these parameters in a per-handler order (args.validate
// first, then the handler's own checks); handlers call the pieces here in
// that order, so the error a client gets for several bad parameters is
// upstream's.
package collection

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/openkeel/ironic/internal/api/microversion"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/pyfmt"
)

// Integer is args.integer: nil when absent; otherwise Python's int() of
// the value, else 400 "Expected an integer for <name>: <value>".
func Integer(name string, value *string) (*int, error) {
	if value == nil {
		return nil, nil
	}
	n, ok := pyfmt.Int(*value)
	if !ok {
		return nil, errs.InvalidParameterValue(fmt.Sprintf("Expected an integer for %s: %s", name, *value))
	}
	return &n, nil
}

// Boolean is args.boolean (oslo strutils.bool_from_string, strict).
func Boolean(name string, value *string) (*bool, error) {
	if value == nil {
		return nil, nil
	}
	switch strings.ToLower(strings.TrimSpace(*value)) {
	case "1", "t", "true", "on", "y", "yes":
		b := true
		return &b, nil
	case "0", "f", "false", "off", "n", "no":
		b := false
		return &b, nil
	}
	return nil, errs.InvalidParameterValue(fmt.Sprintf(
		"Invalid %s: Unrecognized value '%s', acceptable values are: '0', '1', 'f', 'false', 'n', 'no', 'off', 'on', 't', 'true', 'y', 'yes'",
		name, *value))
}

// UUID is args.uuid (oslo uuidutils.is_uuid_like: any form uuid.UUID
// parses that reads back the same once dashes are dropped and case
// folded).
func UUID(name string, value *string) (*string, error) {
	if value == nil {
		return nil, nil
	}
	if !IsUUIDLike(*value) {
		return nil, errs.InvalidParameterValue(fmt.Sprintf("Expected UUID for %s: %s", name, *value))
	}
	return value, nil
}

// IsUUIDLike is oslo's uuidutils.is_uuid_like: str(UUID(v)) equals v
// lower-cased with "-" removed on both sides, which accepts the 32-digit
// form and the "{...}"/"urn:uuid:" forms only when they reduce to it.
func IsUUIDLike(v string) bool {
	if len(v) == 36 {
		// Every identifier of a path or query is checked: the usual
		// form is decided without Parse's copies (issue 29). For 36
		// characters Parse asks for exactly this, and the two sides of
		// the comparison below then differ only in case.
		return isHyphenatedUUID(v)
	}
	u, err := uuid.Parse(v)
	if err != nil {
		return false
	}
	norm := func(s string) string { return strings.ReplaceAll(strings.ToLower(s), "-", "") }
	return norm(u.String()) == norm(v)
}

// isHyphenatedUUID reports whether v (36 characters) is hex digits with
// hyphens at 8, 13, 18 and 23.
func isHyphenatedUUID(v string) bool {
	for i := range len(v) {
		c := v[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
	}
	return true
}

// StringList is args.string_list: comma-separated, trimmed, lower-cased,
// empty items and repeats dropped, order kept. nil when absent.
func StringList(value *string) []string {
	if value == nil {
		return nil
	}
	items := []string{}
	for _, v := range strings.Split(*value, ",") {
		v = strings.ToLower(strings.TrimSpace(v))
		if v != "" && !slices.Contains(items, v) {
			items = append(items, v)
		}
	}
	return items
}

// ValidateLimit is api_utils.validate_limit: absent means maxLimit, zero
// or negative is 400 "Limit must be positive", larger is capped.
func ValidateLimit(limit *int, maxLimit int) (int, error) {
	if limit == nil {
		return maxLimit, nil
	}
	if *limit <= 0 {
		return 0, errs.ClientSideError("Limit must be positive", http.StatusBadRequest, "")
	}
	return min(*limit, maxLimit), nil
}

// ValidateSortDir is api_utils.validate_sort_dir ("asc" when absent, as
// the handlers' default).
func ValidateSortDir(dir *string) (string, error) {
	if dir == nil {
		return "asc", nil
	}
	if *dir != "asc" && *dir != "desc" {
		return "", errs.ClientSideError(fmt.Sprintf("Invalid sort direction: %s. Acceptable values are 'asc' or 'desc'", *dir), http.StatusBadRequest, "")
	}
	return *dir, nil
}

// ValidateSortKey refuses the keys a resource cannot sort by (its
// invalid_sort_key_list: JSON columns and the like).
func ValidateSortKey(key string, invalid []string) error {
	if slices.Contains(invalid, key) {
		return errs.InvalidParameterValue(fmt.Sprintf("The sort_key value %s is an invalid field for sorting", key))
	}
	return nil
}

// CheckAllowSpecifyFields is check_allow_specify_fields: ?fields needs
// 1.8 (406 before).
func CheckAllowSpecifyFields(fields []string, v microversion.Version) error {
	if fields != nil && v.Minor < microversion.Minor8FetchingSubsetOfFields {
		return errs.NotAcceptable()
	}
	return nil
}

// CheckAllowedFields is check_allowed_fields: a versioned node field
// (microversion.VersionedFields) newer than v is 406. Handlers call it for
// fields and for [sort_key].
func CheckAllowedFields(fields []string, v microversion.Version) error {
	for _, f := range fields {
		if !microversion.FieldAllowed(f, v) {
			return errs.NotAcceptable()
		}
	}
	return nil
}

// CheckInvalidFields is check_for_invalid_fields: requested fields the
// resource does not have are 400 `Field(s) "a, b" are not valid`
// (upstream joins a set, so its order varies; ours is the request's).
func CheckInvalidFields(fields, objectFields []string) error {
	var bad []string
	for _, f := range fields {
		if !slices.Contains(objectFields, f) && !slices.Contains(bad, f) {
			bad = append(bad, f)
		}
	}
	if len(bad) > 0 {
		return errs.InvalidParameterValue(fmt.Sprintf(`Field(s) "%s" are not valid`, strings.Join(bad, ", ")))
	}
	return nil
}

// ReturnFields is get_request_return_fields: ?detail needs its version
// (detailAllowed, usually v >= 1.43), ?fields may need one (fieldsAllowed
// nil means always), the two exclude each other, and without either the
// resource's default fields are returned (nil default = all fields).
// rawFields is the query text for the error message.
func ReturnFields(fields []string, rawFields *string, detail *bool, rawDetail *string, defaults []string,
	detailAllowed bool, fieldsAllowed func() bool) ([]string, error) {
	if detail != nil && !detailAllowed {
		return nil, errs.InvalidParameterValue(fmt.Sprintf("Invalid query parameter ?detail=%s received.", pyfmt.Repr(*detail)))
	}
	if fields != nil && fieldsAllowed != nil && !fieldsAllowed() {
		return nil, errs.InvalidParameterValue(fmt.Sprintf("Invalid query parameter ?fields=%s received.", pyfmt.Repr(fields)))
	}
	if fields != nil && detail != nil && *detail {
		return nil, errs.InvalidParameterValue("Can not specify ?detail=True and fields in the same request.")
	}
	if fields == nil && (detail == nil || !*detail) {
		return defaults, nil
	}
	return fields, nil
}

// DetailAllowed is allow_detail_query (1.43).
func DetailAllowed(v microversion.Version) bool {
	return v.Minor >= microversion.Minor43EnableDetailQuery
}
