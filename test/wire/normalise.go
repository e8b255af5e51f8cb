package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strings"
)

// clientHeaders are the answer headers clients act on; the rest (Date,
// Server, Content-Length, Connection) say nothing a client reads.
var clientHeaders = []string{
	"Allow",
	"Content-Type",
	"Location",
	"Retry-After",
	"X-Openstack-Ironic-Api-Maximum-Version",
	"X-Openstack-Ironic-Api-Minimum-Version",
	"X-Openstack-Ironic-Api-Version",
}

// requestIDHeaders carry a fresh request id, so only their presence is
// compared. Master sets both on every answer (oslo.middleware's
// request_id, with Ironic's historical name as its compat header).
var requestIDHeaders = []string{"Openstack-Request-Id", "X-Openstack-Request-Id"}

var (
	uuidRE = regexp.MustCompile(`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`)
	// timeRE is the date and time of an ISO 8601 timestamp; the zone that
	// follows stays, since its spelling is part of the format clients parse.
	timeRE = regexp.MustCompile(`\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?`)
	// addressRE is the memory address in a Python object's repr, which
	// some upstream messages print ("<...FakeRescue object at 0x7f...>").
	addressRE = regexp.MustCompile(` at 0x[0-9a-f]+>`)
)

const timestamp = "<timestamp>"

// setValuedRE names the lists upstream builds from a Python set, whose
// order changes with each process's hash seed: a driver's
// enabled_*_interfaces (master ironic/api/controllers/v1/driver.py,
// list(enabled)). They are compared sorted.
var setValuedRE = regexp.MustCompile(`^enabled_[a-z]+_interfaces$`)

// sortedStrings sorts a list of strings; any other value is returned as
// it is.
func sortedStrings(v any) any {
	list, ok := v.([]any)
	if !ok {
		return v
	}
	out := make([]string, 0, len(list))
	for _, e := range list {
		s, ok := e.(string)
		if !ok {
			return v
		}
		out = append(out, s)
	}
	sort.Strings(out)
	sorted := make([]any, len(out))
	for i, s := range out {
		sorted[i] = s
	}
	return sorted
}

// normaliser turns answers into their client-visible content: generated
// UUIDs become placeholders by first appearance (or the name a step bound
// them to), timestamps become <timestamp> (null stays null), the server's
// address becomes {{host}}, error_message's JSON-in-a-string is decoded
// and its debuginfo dropped.
type normaliser struct {
	host  string
	uuids map[string]string
	next  int
}

func newNormaliser(host string) *normaliser {
	return &normaliser{host: host, uuids: map[string]string{}}
}

// name makes value show as {{name}} from now on.
func (n *normaliser) name(value, name string) {
	if uuidRE.MatchString(value) {
		n.uuids[strings.ToLower(value)] = "{{" + name + "}}"
	}
}

func (n *normaliser) text(s string) string {
	s = strings.ReplaceAll(s, n.host, "{{host}}")
	s = uuidRE.ReplaceAllStringFunc(s, func(u string) string {
		key := strings.ToLower(u)
		p, ok := n.uuids[key]
		if !ok {
			n.next++
			p = fmt.Sprintf("{{uuid%d}}", n.next)
			n.uuids[key] = p
		}
		return p
	})
	s = addressRE.ReplaceAllString(s, " at 0x…>")
	return timeRE.ReplaceAllString(s, timestamp)
}

// keep makes the UUIDs a scenario writes in its requests show as
// themselves: they are the same on every run.
func (n *normaliser) keep(text string) {
	for _, u := range uuidRE.FindAllString(text, -1) {
		n.uuids[strings.ToLower(u)] = strings.ToLower(u)
	}
}

func (n *normaliser) response(raw *rawResponse, opaque []string) Response {
	resp := Response{Status: raw.status, Headers: map[string]string{}}
	for _, h := range clientHeaders {
		if vs, ok := raw.header[h]; ok {
			resp.Headers[h] = n.text(strings.Join(vs, ", "))
		}
	}
	for _, h := range requestIDHeaders {
		if _, ok := raw.header[h]; ok {
			resp.Headers[h] = "<present>"
		}
	}
	if len(resp.Headers) == 0 {
		resp.Headers = nil
	}
	if len(raw.body) == 0 {
		return resp
	}
	doc, err := decodeJSON(raw.body)
	if err != nil {
		resp.Body = n.text(string(raw.body))
		return resp
	}
	doc = unwrapFault(doc)
	for _, p := range opaque {
		markOpaque(doc, strings.Split(p, "."))
	}
	resp.Body = canonical(n.value(doc))
	return resp
}

// value normalises a decoded JSON value, visiting object keys in sorted
// order so that placeholders number the same on every run.
func (n *normaliser) value(v any) any {
	switch v := v.(type) {
	case string:
		return n.text(v)
	case map[string]any:
		out := make(map[string]any, len(v))
		for _, k := range sortedKeys(v) {
			out[n.text(k)] = n.value(v[k])
			if setValuedRE.MatchString(k) {
				out[k] = sortedStrings(out[k])
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = n.value(e)
		}
		return out
	default:
		return v
	}
}

// unwrapFault decodes the fault envelope's error_message, which holds a
// JSON document in a string, and drops its debuginfo (a traceback that
// clients only print).
func unwrapFault(doc any) any {
	m, ok := doc.(map[string]any)
	if !ok {
		return doc
	}
	s, ok := m["error_message"].(string)
	if !ok {
		return doc
	}
	inner, err := decodeJSON([]byte(s))
	if err != nil {
		return doc
	}
	if f, ok := inner.(map[string]any); ok {
		delete(f, "debuginfo")
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	out["error_message"] = inner
	return out
}

// markOpaque replaces the value at path by its JSON type.
func markOpaque(doc any, path []string) {
	m, ok := doc.(map[string]any)
	if !ok || len(path) == 0 {
		return
	}
	v, ok := m[path[0]]
	if !ok {
		return
	}
	if len(path) > 1 {
		markOpaque(v, path[1:])
		return
	}
	if v != nil {
		m[path[0]] = fmt.Sprintf("<opaque %T>", v)
	}
}

func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("trailing data after JSON")
	}
	return v, nil
}

// canonical is v as indented JSON with sorted keys.
func canonical(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Sprintf("<unencodable: %v>", err)
	}
	return b.String()
}

// headerNames lists the header names of both answers, sorted.
func headerNames(a, b map[string]string) []string {
	set := map[string]bool{}
	for k := range a {
		set[k] = true
	}
	for k := range b {
		set[k] = true
	}
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, http.CanonicalHeaderKey(k))
	}
	sort.Strings(out)
	return out
}
