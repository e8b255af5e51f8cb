package events

import (
	"regexp"
	"slices"
	"strings"

	"github.com/openkeel/ironic/internal/api/apiutil"
	"github.com/openkeel/ironic/internal/api/collection"
)

// eventTypes are the "event" values the schema allows, in its order.
var eventTypes = []any{"network.bind_port", "network.unbind_port", "network.delete_port"}

// property is one key of an event: its JSON types and format, in the
// order the schema declares them.
type property struct {
	name   string
	types  []string
	enum   []any
	format string
}

// eventProperties are the items' properties of upstream's
// create_request_body, in schema order (the order jsonschema checks them).
var eventProperties = []property{
	{name: "event", types: []string{"string"}, enum: eventTypes},
	{name: "port_id", types: []string{"string"}, format: "uuid"},
	{name: "mac_address", types: []string{"string"}, format: "mac-address"},
	{name: "status", types: []string{"string"}},
	{name: "device_id", types: []string{"string", "null"}, format: "uuid"},
	{name: "binding:host_id", types: []string{"string", "null"}, format: "uuid"},
	{name: "binding:vnic_type", types: []string{"string", "null"}},
}

var eventRequired = []string{"event", "port_id", "mac_address", "status"}

// macRe is oslo's netutils.is_valid_mac on the lower-cased value; Python's
// "$" also matches before a final newline.
var macRe = regexp.MustCompile(`^[0-9a-f]{2}(:[0-9a-f]{2}){5}\n?$`)

// check validates body against upstream's events schema and returns the
// message of the error Python's jsonschema raises first (keywords in the
// schema's order: type, properties, required, additionalProperties), ""
// when the body is valid. Upstream's schema has no anyOf/oneOf, so no
// error carries a "Possible root cause".
func check(body any) string {
	root, ok := body.(*apiutil.Dict)
	if !ok {
		return typeError(body, "object")
	}
	if evs, ok := root.Get("events"); ok {
		if msg := checkEvents(evs); msg != "" {
			return msg
		}
	}
	if !root.Has("events") {
		return "'events' is a required property"
	}
	return extras(root, []string{"events"})
}

func checkEvents(v any) string {
	list, ok := v.([]any)
	if !ok {
		return typeError(v, "array")
	}
	if len(list) < 1 {
		// jsonschema words minItems 1 this way.
		return apiutil.PyRepr(list) + " should be non-empty"
	}
	for _, item := range list {
		if msg := checkEvent(item); msg != "" {
			return msg
		}
	}
	return ""
}

func checkEvent(v any) string {
	ev, ok := v.(*apiutil.Dict)
	if !ok {
		return typeError(v, "object")
	}
	names := make([]string, 0, len(eventProperties))
	for _, p := range eventProperties {
		names = append(names, p.name)
		val, ok := ev.Get(p.name)
		if !ok {
			continue
		}
		if !hasType(val, p.types) {
			return typeError(val, p.types...)
		}
		if p.enum != nil && !slices.Contains(p.enum, val) {
			return apiutil.PyRepr(val) + " is not one of " + apiutil.PyRepr(p.enum)
		}
		if s, isStr := val.(string); isStr && !formatOK(p.format, s) {
			return apiutil.PyRepr(val) + " is not a " + apiutil.PyRepr(p.format)
		}
	}
	for _, k := range eventRequired {
		if !ev.Has(k) {
			return apiutil.PyRepr(k) + " is a required property"
		}
	}
	return extras(ev, names)
}

func hasType(v any, types []string) bool {
	for _, t := range types {
		switch t {
		case "string":
			if _, ok := v.(string); ok {
				return true
			}
		case "null":
			if v == nil {
				return true
			}
		}
	}
	return false
}

func formatOK(format, s string) bool {
	switch format {
	case "uuid":
		return collection.IsUUIDLike(s)
	case "mac-address":
		return macRe.MatchString(strings.ToLower(s))
	}
	return true
}

func typeError(v any, types ...string) string {
	quoted := make([]string, len(types))
	for i, t := range types {
		quoted[i] = apiutil.PyRepr(t)
	}
	return apiutil.PyRepr(v) + " is not of type " + strings.Join(quoted, ", ")
}

// extras is additionalProperties: false, naming the unexpected keys in
// the body's order.
func extras(d *apiutil.Dict, allowed []string) string {
	var bad []string
	for _, k := range d.Keys() {
		if !slices.Contains(allowed, k) {
			bad = append(bad, apiutil.PyRepr(k))
		}
	}
	switch len(bad) {
	case 0:
		return ""
	case 1:
		return "Additional properties are not allowed (" + bad[0] + " was unexpected)"
	}
	return "Additional properties are not allowed (" + strings.Join(bad, ", ") + " were unexpected)"
}
