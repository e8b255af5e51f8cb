package wire

import (
	"net/http"
	"strings"
)

// Upstream 21.4's maximum microversion, as recorded, and master's, which
// this service follows.
const (
	recordedMaxVersion = "1.82"
	masterMaxVersion   = "1.115"
)

// Expected is the answer a step must get: its hand-written expectation,
// or else its recording as master gives it. ok is false when the step has
// neither.
func Expected(st *Step, rec *Recording) (want Response, subset, ok bool) {
	r, recorded := rec.Step(st.ID)
	if st.Expect == nil {
		return asMaster(r), false, recorded
	}
	subset = st.Expect.Match == "subset"
	if !st.Expect.Amend {
		return st.Expect.Response, subset, true
	}
	if !recorded {
		return Response{}, false, false
	}
	r = amend(asMaster(r), st.Expect.Response)
	set := st.Expect.Set
	if st.Expect.Faultstring != "" {
		set = map[string]any{"error_message.faultstring": st.Expect.Faultstring}
		for k, v := range st.Expect.Set {
			set[k] = v
		}
	}
	if len(set) > 0 {
		r.Body = setPaths(r.Body, set)
	}
	return r, subset, true
}

// setPaths sets values in a normalised JSON object body by dotted path,
// making the objects on the way; a nil value removes the key.
func setPaths(body string, set map[string]any) string {
	doc, err := decodeJSON([]byte(body))
	if err != nil {
		return body
	}
	root, ok := doc.(map[string]any)
	if !ok {
		return body
	}
	for _, path := range sortedKeys(set) {
		parts := strings.Split(path, ".")
		m := root
		for _, p := range parts[:len(parts)-1] {
			next, ok := m[p].(map[string]any)
			if !ok {
				next = map[string]any{}
				m[p] = next
			}
			m = next
		}
		last := parts[len(parts)-1]
		if set[path] == nil {
			delete(m, last)
			continue
		}
		m[last] = set[path]
	}
	return canonical(root)
}

// amend applies a hand-written change to a recorded answer.
func amend(r, change Response) Response {
	if change.Status != 0 {
		r.Status = change.Status
	}
	h := make(map[string]string, len(r.Headers)+len(change.Headers))
	for k, v := range r.Headers {
		h[k] = v
	}
	for k, v := range change.Headers {
		k = http.CanonicalHeaderKey(k)
		if v == "" {
			delete(h, k)
			continue
		}
		h[k] = v
	}
	r.Headers = h
	if change.Body != "" {
		r.Body = change.Body
	}
	return r
}

// asMaster rewrites a recorded answer where master changed every answer
// on purpose after 21.4, so that each step needs no expectation of its own
// for it:
//   - the maximum version is 1.115 (the version headers, the version
//     documents of / and /v1, the range a 406 names);
//   - X-OpenStack-Request-Id and Openstack-Request-Id are on every
//     answer, errors included (master's app.py: IronicRequestId, with
//     the old name as compat header; microversion 1.107).
func asMaster(r Response) Response {
	h := make(map[string]string, len(r.Headers)+1)
	for k, v := range r.Headers {
		h[k] = v
	}
	if h["X-Openstack-Ironic-Api-Maximum-Version"] == recordedMaxVersion {
		h["X-Openstack-Ironic-Api-Maximum-Version"] = masterMaxVersion
	}
	for _, k := range requestIDHeaders {
		h[k] = "<present>"
	}
	r.Headers = h
	r.Body = versionDocuments(r.Body)
	if r.Status == http.StatusNotAcceptable {
		r.Body = strings.ReplaceAll(r.Body, "[1.1, "+recordedMaxVersion+"]", "[1.1, "+masterMaxVersion+"]")
	}
	return r
}

// versionDocuments raises the maximum version in the root and /v1
// documents ({"version": {"version": "1.82", ...}} and the list of
// "versions").
func versionDocuments(body string) string {
	doc, err := decodeJSON([]byte(body))
	if err != nil {
		return body
	}
	m, ok := doc.(map[string]any)
	if !ok {
		return body
	}
	changed := false
	raise := func(v any) {
		if d, ok := v.(map[string]any); ok && d["version"] == recordedMaxVersion && d["min_version"] != nil {
			d["version"] = masterMaxVersion
			changed = true
		}
	}
	raise(m["version"])
	raise(m["default_version"])
	if vs, ok := m["versions"].([]any); ok {
		for _, v := range vs {
			raise(v)
		}
	}
	if !changed {
		return body
	}
	return canonical(m)
}
