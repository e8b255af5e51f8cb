package collection

import (
	"fmt"
	"strings"

	"github.com/openkeel/ironic/internal/api/microversion"
	"github.com/openkeel/ironic/internal/pyfmt"
)

// Link is one entry of a resource's "links" list.
type Link struct {
	Href string `json:"href"`
	Rel  string `json:"rel"`
	Type string `json:"type,omitempty"`
}

// BuildURL is link.build_url: base/v1/resource/args, or base/resource/args
// for a bookmark; args starting with "?" follow the resource directly.
func BuildURL(base, resource, args string, bookmark bool) string {
	u := base + "/v1/" + resource
	if bookmark {
		u = base + "/" + resource
	}
	if strings.HasPrefix(args, "?") {
		return u + args
	}
	return u + "/" + args
}

// MakeLink is link.make_link.
func MakeLink(rel, base, resource, args string, bookmark bool) Link {
	return Link{Href: BuildURL(base, resource, args, bookmark), Rel: rel}
}

// SelfAndBookmark is the links list every resource carries.
func SelfAndBookmark(base, resource, args string) []Link {
	return []Link{MakeLink("self", base, resource, args, false), MakeLink("bookmark", base, resource, args, true)}
}

// Param is one query parameter of a next link. Handlers list them in the
// order upstream's handler builds its parameters dict.
type Param struct {
	Key   string
	Value any
}

// PyStr formats a parameter value as Python's str() does for the types
// handlers pass (bools as True/False, nil as None).
func PyStr(v any) string {
	switch x := v.(type) {
	case *bool:
		if x == nil {
			return "None"
		}
		return pyfmt.Str(*x)
	case *string:
		if x == nil {
			return "None"
		}
		return *x
	}
	return pyfmt.Str(v)
}

// Next is collection.get_next: when a page is full (count == limit, and
// not empty) the URL of the following page,
// "<base>/v1/<resource>?<k>=<v>&...&fields=<a,b>&limit=<n>&marker=<key>",
// params in the order given, fields (when any) after them, values not
// URL-encoded, exactly as upstream writes them. "" when there is no next
// page.
func Next(base, resource string, count, limit int, lastKey string, fields []string, params ...Param) string {
	if count == 0 || count != limit {
		return ""
	}
	var b strings.Builder
	b.WriteString("?")
	for _, p := range params {
		b.WriteString(p.Key + "=" + PyStr(p.Value) + "&")
	}
	if len(fields) > 0 {
		b.WriteString("fields=" + strings.Join(fields, ",") + "&")
	}
	fmt.Fprintf(&b, "limit=%d&marker=%s", limit, lastKey)
	return BuildURL(base, resource, b.String(), false)
}

// Sanitize is api_utils.sanitize_dict: with a field list, keep only those
// fields and "links".
func Sanitize(obj map[string]any, fields []string) {
	if fields == nil {
		return
	}
	keep := make(map[string]bool, len(fields)+1)
	for _, f := range fields {
		keep[f] = true
	}
	keep["links"] = true
	for k := range obj {
		if !keep[k] {
			delete(obj, k)
		}
	}
}

// HideVersionedFields removes the node fields that do not exist at v
// (upstream pops disallowed_fields() from every node it returns).
func HideVersionedFields(obj map[string]any, v microversion.Version) {
	for f := range microversion.VersionedFields {
		if !microversion.FieldAllowed(f, v) {
			delete(obj, f)
		}
	}
}
