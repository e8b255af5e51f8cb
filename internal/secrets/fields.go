package secrets

import (
	"errors"
	"fmt"
	"strings"
)

// sanitizeKeys are oslo.utils' _SANITIZE_KEYS: a dict key containing one
// of them (case-insensitively) holds a secret. The API masks with the same
// list (internal/api/apiutil), so what it hides is what is sealed.
var sanitizeKeys = [...]string{
	"adminpass", "admin_pass", "password", "admin_password", "auth_token", "new_pass",
	"auth_password", "secret_uuid", "secret", "sys_pswd", "token", "configdrive",
	"chappassword", "encrypted_key", "private_key", "fernetkey", "sslkey", "passphrase",
	"cephclusterfsid", "octaviaheartbeatkey", "rabbitcookie", "cephmanilaclientkey",
	"pacemakerremoteauthkey", "designaterndckey", "cephadminkey", "heatauthencryptionkey",
	"cephclientkey", "keystonecredential", "barbicansimplecryptokek", "cephrgwkey",
	"swifthashsuffix", "migrationsshkey", "cephmdskey", "cephmonkey",
}

// SanitizeKeys returns oslo.utils' _SANITIZE_KEYS (a copy).
func SanitizeKeys() []string { return append([]string(nil), sanitizeKeys[:]...) }

// IsSecretKey reports whether a dict key names a secret (mask_dict_password's
// test), without allocating.
func IsSecretKey(k string) bool {
	for i := 0; i < len(k); i++ {
		for _, s := range sanitizeKeys {
			if hasFoldPrefix(k[i:], s) {
				return true
			}
		}
	}
	return false
}

// hasFoldPrefix reports whether s starts with lower-case ASCII k, ignoring
// the case of s.
func hasFoldPrefix(s, k string) bool {
	if len(s) < len(k) {
		return false
	}
	for j := 0; j < len(k); j++ {
		c := s[j]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != k[j] {
			return false
		}
	}
	return true
}

// Column names of the node columns holding secrets: the three dicts
// upstream's node_sanitize masks.
const (
	DriverInfo         = "driver_info"
	InstanceInfo       = "instance_info"
	DriverInternalInfo = "driver_internal_info"
)

// Places of the other resources' secrets, as their additional data names
// them (resource, field path; the resource's UUID is the "node"):
// upstream masks volume targets' properties and the step arguments of
// deploy templates and runbooks with mask_dict_password.
const (
	VolumeTargetProperties = "volume_target.properties"
	DeployTemplateStepArgs = "deploy_template.steps.args"
	RunbookStepArgs        = "runbook.steps.args"
)

// Columns are the node columns that hold secrets.
func Columns() []string { return []string{DriverInfo, InstanceInfo, DriverInternalInfo} }

// isSecret reports whether the value under key, at depth (0: the column's
// own keys) of column, is a secret: a secret key at any depth, as
// mask_dict_password recurses, or one of the keys node_sanitize's
// _mask_fields hides besides (SNMP keys; the config drive and the image
// URL, which may be a signed temporary URL).
func isSecret(column string, depth int, key string) bool {
	if IsSecretKey(key) {
		return true
	}
	if depth > 0 {
		return false
	}
	switch column {
	case DriverInfo:
		return key == "snmp_auth_key" || key == "snmp_priv_key"
	case InstanceInfo:
		return key == "configdrive" || key == "image_url"
	}
	return false
}

// worthSealing: nil and "" hold nothing secret.
func worthSealing(v any) bool {
	s, isString := v.(string)
	return v != nil && (!isString || s != "")
}

// aad is the additional data of a value: its node and its place, so that a
// sealed value copied to another node or key does not open.
func aad(node, column string, path []string) []byte {
	b := make([]byte, 0, len(node)+len(column)+32)
	b = append(b, node...)
	b = append(b, 0)
	b = append(b, column...)
	for _, p := range path {
		b = append(b, '/')
		b = append(b, p...)
	}
	return b
}

// visit is called on each value under a secret key; it returns the
// replacement and whether there is one.
type visit func(path []string, v any) (any, bool, error)

// walk applies fn to the secret values of m (column's dict), recursing into
// nested dicts as mask_dict_password does. m is never changed: when fn
// replaces something, the dicts on its way are copied and changed is true;
// otherwise m itself is returned.
func walk(column string, m map[string]any, path []string, fn visit) (out map[string]any, changed bool, err error) {
	for k, v := range m {
		var nv any
		replaced := false
		if sub, ok := v.(map[string]any); ok {
			if nv, replaced, err = walk(column, sub, append(path, k), fn); err != nil {
				return nil, false, err
			}
		} else if isSecret(column, len(path), k) {
			if nv, replaced, err = fn(append(path, k), v); err != nil {
				return nil, false, err
			}
		}
		if !replaced {
			continue
		}
		if out == nil {
			out = make(map[string]any, len(m))
			for k2, v2 := range m {
				out[k2] = v2
			}
		}
		out[k] = nv
	}
	if out == nil {
		return m, false, nil
	}
	return out, true, nil
}

// UndecryptableError is a node's secret that could not be opened. It names
// the node, the field and the reason, never the value: the caller gets
// this error, never the sealed text in place of the secret.
type UndecryptableError struct {
	Node  string
	Field string
	Err   error
}

func (e *UndecryptableError) Error() string {
	return fmt.Sprintf("secret %s of %s %s cannot be decrypted: %v", e.Field, owner(e.Field), e.Node, e.Err)
}

// owner is the kind of resource a field belongs to: the other resources'
// places start with their name ("volume_target.properties/…"); a node's
// are its bare column names.
func owner(field string) string {
	if i := strings.IndexByte(field, '.'); i > 0 {
		return strings.ReplaceAll(field[:i], "_", " ")
	}
	return "node"
}

func (e *UndecryptableError) Unwrap() error { return e.Err }

// IsMissingKey reports whether err is a value sealed with a key the ring
// does not hold (or with no ring at all).
func IsMissingKey(err error) bool {
	var m *missingKeyError
	return errors.As(err, &m)
}

// Seal returns column's dict m of node with every secret value sealed
// under the current key; m is not changed. Values are taken as plain
// text, even when they look sealed: what the API, the conductor and the
// drivers hold is always plain, so a value written is always sealed anew.
func (r *KeyRing) Seal(node, column string, m map[string]any) (map[string]any, error) {
	out, _, err := walk(column, m, nil, func(path []string, v any) (any, bool, error) {
		if !worthSealing(v) {
			return nil, false, nil
		}
		s, err := r.seal(aad(node, column, path), v)
		return s, err == nil, err
	})
	return out, err
}

// Open returns column's dict m of node with its sealed secret values
// opened; m is not changed. r may be nil (no key ring): a sealed value is
// then an UndecryptableError. Dicts holding no sealed text are returned
// as they are after one pass over their values, which is the whole cost
// of reading plain rows.
func Open(r *KeyRing, node, column string, m map[string]any) (map[string]any, error) {
	if !holdsSealed(m) {
		return m, nil
	}
	out, _, err := walk(column, m, nil, func(path []string, v any) (any, bool, error) {
		s, ok := v.(string)
		if !ok || !IsSealed(s) {
			return nil, false, nil
		}
		p, err := r.open(aad(node, column, path), s)
		if err != nil {
			return nil, false, &UndecryptableError{Node: node, Field: column + "/" + strings.Join(path, "/"), Err: err}
		}
		return p, true, nil
	})
	return out, err
}

// holdsSealed reports whether any string of m (nested dicts included)
// starts with Prefix.
func holdsSealed(m map[string]any) bool {
	for _, v := range m {
		switch x := v.(type) {
		case string:
			if strings.HasPrefix(x, Prefix) {
				return true
			}
		case map[string]any:
			if holdsSealed(x) {
				return true
			}
		}
	}
	return false
}

// Op is what a conversion of stored values does.
type Op int

const (
	// Encrypt seals plain secret values under the current key.
	Encrypt Op = iota
	// Rotate seals anew under the current key the values sealed with
	// another key.
	Rotate
	// Decrypt opens every sealed value back to plain text.
	Decrypt
)

func (o Op) String() string {
	return [...]string{"encrypt", "rotate", "decrypt"}[o]
}

// Convert applies op to the stored dict m of node's column and returns the
// new dict and how many values it changed (m itself and 0 when none). A
// sealed value that cannot be opened is an UndecryptableError.
func (r *KeyRing) Convert(op Op, node, column string, m map[string]any) (map[string]any, int, error) {
	n := 0
	out, _, err := walk(column, m, nil, func(path []string, v any) (any, bool, error) {
		s, isString := v.(string)
		sealed := isString && IsSealed(s)
		var id string
		if sealed {
			id, _ = KeyID(s)
		}
		a := aad(node, column, path)
		switch {
		case op == Encrypt && !sealed && worthSealing(v):
			nv, err := r.seal(a, v)
			n++
			return nv, true, err
		case op == Rotate && sealed && id != r.current, op == Decrypt && sealed:
			p, err := r.open(a, s)
			if err != nil {
				return nil, false, &UndecryptableError{Node: node, Field: column + "/" + strings.Join(path, "/"), Err: err}
			}
			n++
			if op == Decrypt {
				return p, true, nil
			}
			nv, err := r.seal(a, p)
			return nv, true, err
		}
		return nil, false, nil
	})
	return out, n, err
}

// Counts are the secret values of stored dicts by form.
type Counts struct {
	// Plain counts the secret values stored in plain text.
	Plain int
	// Sealed counts the sealed values by key id.
	Sealed map[string]int
}

// Count adds the secret values of column's stored dict m to c.
func (c *Counts) Count(column string, m map[string]any) {
	_, _, _ = walk(column, m, nil, func(_ []string, v any) (any, bool, error) {
		s, _ := v.(string)
		switch id, sealed := KeyID(s); {
		case sealed:
			if c.Sealed == nil {
				c.Sealed = map[string]int{}
			}
			c.Sealed[id]++
		case worthSealing(v):
			c.Plain++
		}
		return nil, false, nil
	})
}
