package apiutil

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/openkeel/ironic/internal/api/microversion"
	"github.com/openkeel/ironic/internal/errs"
)

// PatchOp is one operation of a JSON Patch request (args.patch allows
// add, replace and remove only).
type PatchOp struct {
	Op   string
	Path string
	// Value is the plain (map-based) value; HasValue tells a missing
	// value from null.
	Value    any
	HasValue bool
	// raw is the operation as sent, for messages.
	raw *Dict
}

// String is the operation as upstream prints it (Python repr of the dict
// as sent).
func (p PatchOp) String() string { return PyRepr(p.raw) }

// SentValue is the operation's value as the client sent it (objects in
// their key order), for messages that print it as Python would.
func (p PatchOp) SentValue() any {
	v, _ := p.raw.Get("value")
	return v
}

// patchPathPattern is args.patch's path pattern as upstream prints it.
const patchPathPattern = `^(/[\w-]+)+$`

// DecodePatch is args.patch: body (from DecodeBody) must be a list of
// {op, path[, value]} with op add/replace/remove and a path of one or more
// "/word" segments, else 400 "Schema error for patch: ..."; a null body
// is "None is not of type 'array'" (upstream fails on it with a 500).
func DecodePatch(body any) ([]PatchOp, error) {
	if err := MustSchema("patch").ValidateBody("patch", body); err != nil {
		// Upstream's pattern uses Python's \w; ours spells it out.
		if e, ok := errs.As(err); ok {
			e.Message = strings.ReplaceAll(e.Message, PyRepr(`^(/[\p{L}\p{N}_-]+)+\n?$`), PyRepr(patchPathPattern))
			return nil, e
		}
		return nil, err
	}
	list := body.([]any)
	ops := make([]PatchOp, len(list))
	for i, item := range list {
		d := item.(*Dict)
		op, _ := d.Get("op")
		path, _ := d.Get("path")
		v, has := d.Get("value")
		ops[i] = PatchOp{Op: op.(string), Path: path.(string), Value: Plain(v), HasValue: has, raw: d}
	}
	return ops, nil
}

// decodePointer is decode_json_pointer (RFC 6901 ~1 and ~0).
func decodePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
}

// Parts is the operation's path as keys (JSON pointer escapes decoded).
func (p PatchOp) Parts() []string {
	parts := strings.Split(p.Path, "/")[1:]
	for i := range parts {
		parts[i] = decodePointer(parts[i])
	}
	return parts
}

// Field is the top-level field an operation touches (from 1.98 with JSON
// pointer escapes decoded).
func (p PatchOp) Field(v microversion.Version) string {
	f := strings.SplitN(p.Path, "/", 3)[1]
	if microversion.AllowSpecialCharactersInPatchFields.Allows(v) {
		f = decodePointer(f)
	}
	return f
}

// ValidateAllowedFields is patch_validate_allowed_fields: every operation
// must touch one of allowed, else 400 "Cannot patch <path>. Only the
// following can be updated: <allowed>". It returns the fields touched.
func ValidateAllowedFields(ops []PatchOp, allowed []string, v microversion.Version) ([]string, error) {
	var fields []string
	for _, p := range ops {
		f := p.Field(v)
		if !slices.Contains(allowed, f) {
			return nil, errs.NewMessage(errs.ClassInvalid, fmt.Sprintf(
				"Cannot patch %s. Only the following can be updated: %s", p.Path, strings.Join(allowed, ", ")))
		}
		if !slices.Contains(fields, f) {
			fields = append(fields, f)
		}
	}
	return fields, nil
}

// PatchValues is get_patch_values: the values of the non-remove
// operations on exactly path, in order.
func PatchValues(ops []PatchOp, path string) []any {
	var out []any
	for _, p := range ops {
		if p.Path == path && p.Op != "remove" {
			out = append(out, p.Value)
		}
	}
	return out
}

// IsPathRemoved is is_path_removed: a remove of path or below it.
func IsPathRemoved(ops []PatchOp, path string) bool {
	path = strings.TrimRight(path, "/")
	for _, p := range ops {
		if p.Op == "remove" && (p.Path == path || strings.HasPrefix(p.Path, path+"/")) {
			return true
		}
	}
	return false
}

// ApplyPatch is apply_jsonpatch on a plain JSON document (maps and
// slices, modified in place and returned): an add of a new root attribute
// is 400 "Adding a new attribute (<path>) to the root of the resource is
// not allowed"; the operations apply one at a time and the first failure
// is 400 PatchError naming the operation and python-jsonpatch's reason.
func ApplyPatch(doc map[string]any, ops []PatchOp) (map[string]any, error) {
	for _, p := range ops {
		if p.Op == "add" && strings.Count(p.Path, "/") == 1 {
			if _, ok := doc[strings.TrimLeft(p.Path, "/")]; !ok {
				return nil, errs.ClientSideError(fmt.Sprintf(
					"Adding a new attribute (%s) to the root of the resource is not allowed", p.Path), 400, "")
			}
		}
	}
	var root any = doc
	for _, p := range ops {
		next, reason := applyOne(root, p)
		if reason != "" {
			return nil, errs.New(errs.ClassPatchError, map[string]any{"patch": p, "reason": reason})
		}
		root = next
	}
	m, ok := root.(map[string]any)
	if !ok {
		return nil, errs.New(errs.ClassPatchError, map[string]any{"patch": ops[len(ops)-1], "reason": "invalid document type"})
	}
	return m, nil
}

// applyOne applies one operation as python-jsonpatch does, returning the
// new root or the reason it failed.
func applyOne(root any, p PatchOp) (any, string) {
	parts := p.Parts()
	if p.Op != "remove" && !p.HasValue {
		return nil, "The operation does not contain a 'value' member"
	}
	parent := root
	var setParent func(any)
	setParent = func(v any) { root = v }
	for _, part := range parts[:len(parts)-1] {
		child, set, reason := walk(parent, part)
		if reason != "" {
			return nil, reason
		}
		parent, setParent = child, set
	}
	last := parts[len(parts)-1]
	switch c := parent.(type) {
	case map[string]any:
		switch p.Op {
		case "remove":
			if _, ok := c[last]; !ok {
				return nil, fmt.Sprintf("can't remove a non-existent object '%s'", last)
			}
			delete(c, last)
		case "replace":
			if _, ok := c[last]; !ok {
				return nil, fmt.Sprintf("can't replace a non-existent object '%s'", last)
			}
			c[last] = copyValue(p.Value)
		default:
			c[last] = copyValue(p.Value)
		}
		return root, ""
	case []any:
		if last == "-" {
			switch p.Op {
			case "add":
				setParent(append(c, copyValue(p.Value)))
				return root, ""
			case "replace":
				return nil, "'path' with '-' can't be applied to 'replace' operation"
			}
			return nil, "invalid array index '-'"
		}
		idx, ok := arrayIndex(last)
		if !ok {
			return nil, fmt.Sprintf("'%s' is not a valid sequence index", last)
		}
		switch p.Op {
		case "remove":
			if idx >= len(c) {
				return nil, fmt.Sprintf("can't remove a non-existent object '%d'", idx)
			}
			setParent(slices.Delete(slices.Clone(c), idx, idx+1))
		case "replace":
			if idx >= len(c) {
				return nil, "can't replace outside of list"
			}
			c[idx] = copyValue(p.Value)
		default:
			if idx > len(c) {
				return nil, "can't insert outside of list"
			}
			setParent(slices.Insert(slices.Clone(c), idx, copyValue(p.Value)))
		}
		return root, ""
	case string:
		if _, ok := arrayIndex(last); !ok {
			return nil, fmt.Sprintf("'%s' is not a valid sequence index", last)
		}
		return nil, fmt.Sprintf("unable to fully resolve json pointer %s, part %s", p.Path, last)
	}
	return nil, fmt.Sprintf("Document '%s' does not support indexing, must be mapping/sequence or support __getitem__", pyTypeName(parent))
}

// walk steps into part of doc (jsonpointer's walk), returning a setter
// that replaces the child in doc.
func walk(doc any, part string) (any, func(any), string) {
	switch c := doc.(type) {
	case map[string]any:
		v, ok := c[part]
		if !ok {
			return nil, nil, fmt.Sprintf("member '%s' not found in %s", part, PyRepr(c))
		}
		return v, func(nv any) { c[part] = nv }, ""
	case []any:
		if part == "-" {
			return nil, nil, fmt.Sprintf("Document '%s' does not support indexing, must be mapping/sequence or support __getitem__", "<class 'jsonpointer.EndOfList'>")
		}
		idx, ok := arrayIndex(part)
		if !ok {
			return nil, nil, fmt.Sprintf("'%s' is not a valid sequence index", part)
		}
		if idx >= len(c) {
			return nil, nil, fmt.Sprintf("index '%d' is out of bounds", idx)
		}
		return c[idx], func(nv any) { c[idx] = nv }, ""
	case string:
		idx, ok := arrayIndex(part)
		if !ok {
			return nil, nil, fmt.Sprintf("'%s' is not a valid sequence index", part)
		}
		if idx >= len([]rune(c)) {
			return nil, nil, fmt.Sprintf("index '%d' is out of bounds", idx)
		}
		return string([]rune(c)[idx]), func(any) {}, ""
	}
	return nil, nil, fmt.Sprintf("Document '%s' does not support indexing, must be mapping/sequence or support __getitem__", pyTypeName(doc))
}

// arrayIndex is jsonpointer's index rule ("0" or no leading zero).
func arrayIndex(s string) (int, bool) {
	if s == "" || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, false
	}
	return n, true
}

func pyTypeName(v any) string {
	switch v.(type) {
	case nil:
		return "<class 'NoneType'>"
	case bool:
		return "<class 'bool'>"
	case string:
		return "<class 'str'>"
	}
	if s := PyRepr(v); strings.ContainsAny(s, ".eE") && !strings.HasPrefix(s, "'") {
		return "<class 'float'>"
	}
	return "<class 'int'>"
}

// copyValue deep-copies a plain JSON value so a patched document shares
// nothing with the request.
func copyValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, c := range x {
			m[k] = copyValue(c)
		}
		return m
	case []any:
		out := make([]any, len(x))
		for i, c := range x {
			out[i] = copyValue(c)
		}
		return out
	}
	return v
}

// CopyJSON deep-copies a plain JSON document.
func CopyJSON(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	return copyValue(m).(map[string]any)
}

// DecodePatchBody is DecodePatch of r's body.
func DecodePatchBody(r *http.Request) ([]PatchOp, error) {
	body, err := DecodeBody(r)
	if err != nil {
		return nil, err
	}
	return DecodePatch(body)
}
