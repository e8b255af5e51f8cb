// Package secrets encrypts the secret values of nodes at rest: the values
// upstream Ironic masks in its answers (BMC passwords and keys, instance
// secrets, the agent token) are stored as AES-256-GCM envelopes under a key
// of a key ring, and opened again on read. Upstream stores them in plain
// text; a sealed value carries a prefix and its key's id, so plain and
// sealed values can share a database and the ring can hold older keys for
// reading while the current one writes.
package secrets

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Prefix starts every sealed value: `okenc:v1:<key id>:<base64url(nonce|ciphertext)>`.
const Prefix = "okenc:v1:"

// KeySize is the length of a key: AES-256.
const KeySize = 32

// keyIDRe is what a key id may be: a file name safe in the value format
// (no colon) and in a Kubernetes Secret's keys.
var keyIDRe = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// KeyRing holds the keys by id and the one new values are sealed with. It
// is not changed after it is made, so processes share it without locks.
type KeyRing struct {
	current string
	aeads   map[string]cipher.AEAD
}

// NewKeyRing makes a ring of keys (id → 32 bytes) sealing with current;
// current may be "" when there is exactly one key.
func NewKeyRing(keys map[string][]byte, current string) (*KeyRing, error) {
	if len(keys) == 0 {
		return nil, errors.New("the key ring has no key")
	}
	r := &KeyRing{aeads: make(map[string]cipher.AEAD, len(keys))}
	for id, k := range keys {
		if !keyIDRe.MatchString(id) {
			return nil, fmt.Errorf("key id %q: only letters, digits, '.', '_' and '-' (at most 64)", id)
		}
		if len(k) != KeySize {
			return nil, fmt.Errorf("key %q: %d bytes, AES-256 needs %d", id, len(k), KeySize)
		}
		block, err := aes.NewCipher(k)
		if err != nil {
			return nil, fmt.Errorf("key %q: %w", id, err)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("key %q: %w", id, err)
		}
		r.aeads[id] = aead
	}
	if current == "" {
		if len(keys) > 1 {
			return nil, fmt.Errorf("%d keys (%s) and no current key id: say which one seals new values", len(keys), strings.Join(r.IDs(), ", "))
		}
		for id := range keys {
			current = id
		}
	}
	if _, ok := r.aeads[current]; !ok {
		return nil, fmt.Errorf("current key id %q is not in the key ring (%s)", current, strings.Join(r.IDs(), ", "))
	}
	r.current = current
	return r, nil
}

// LoadKeyRing reads the keys from the files the patterns match (globs, as
// filepath.Glob; a directory stands for every file in it). A key's id is
// its file's name. Names starting with a dot and directories are skipped,
// which is what a Kubernetes Secret mounted as a volume adds (..data and
// the timestamped folder), so such a mount works unchanged. A file holds
// the key's 32 bytes, raw or in base64 (as `openssl rand -base64 32`
// writes).
func LoadKeyRing(patterns []string, current string) (*KeyRing, error) {
	keys := map[string][]byte{}
	for _, p := range patterns {
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			p = filepath.Join(p, "*")
		}
		paths, err := filepath.Glob(p)
		if err != nil {
			return nil, fmt.Errorf("key files %q: %w", p, err)
		}
		for _, path := range paths {
			name := filepath.Base(path)
			if strings.HasPrefix(name, ".") {
				continue
			}
			if st, err := os.Stat(path); err != nil || st.IsDir() {
				continue
			}
			k, err := readKey(path)
			if err != nil {
				return nil, err
			}
			keys[name] = k
		}
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("no key file matches %s", strings.Join(patterns, ", "))
	}
	return NewKeyRing(keys, current)
}

// readKey reads one key file: 32 raw bytes, or their base64.
func readKey(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read key: %w", err)
	}
	if len(b) == KeySize {
		return b, nil
	}
	text := string(bytes.TrimSpace(b))
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		if k, err := enc.DecodeString(text); err == nil && len(k) == KeySize {
			return k, nil
		}
	}
	return nil, fmt.Errorf("key file %s: neither %d bytes nor their base64", path, KeySize)
}

// CurrentID is the id of the key new values are sealed with.
func (r *KeyRing) CurrentID() string { return r.current }

// IDs are the ring's key ids, sorted.
func (r *KeyRing) IDs() []string {
	ids := make([]string, 0, len(r.aeads))
	for id := range r.aeads {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// Has reports whether the ring holds key id.
func (r *KeyRing) Has(id string) bool {
	_, ok := r.aeads[id]
	return ok
}

// The first byte of a plaintext says how to read the rest: a string as
// it is, or another JSON value (a number or boolean under a secret key).
const (
	plainString = 's'
	plainJSON   = 'j'
)

// seal encrypts v (a JSON value) under the current key with aad.
func (r *KeyRing) seal(aad []byte, v any) (string, error) {
	var plain []byte
	if s, ok := v.(string); ok {
		plain = append([]byte{plainString}, s...)
	} else {
		j, err := json.Marshal(v)
		if err != nil {
			return "", fmt.Errorf("seal: %w", err)
		}
		plain = append([]byte{plainJSON}, j...)
	}
	aead := r.aeads[r.current]
	buf := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plain)+aead.Overhead())
	if _, err := rand.Read(buf); err != nil {
		return "", fmt.Errorf("seal: nonce: %w", err)
	}
	buf = aead.Seal(buf, buf, plain, aad)
	return Prefix + r.current + ":" + base64.RawURLEncoding.EncodeToString(buf), nil
}

// KeyID is the id of the key that sealed s; ok is false when s is not a
// sealed value.
func KeyID(s string) (id string, ok bool) {
	rest, ok := strings.CutPrefix(s, Prefix)
	if !ok {
		return "", false
	}
	id, _, ok = strings.Cut(rest, ":")
	return id, ok
}

// IsSealed reports whether s has a sealed value's form.
func IsSealed(s string) bool {
	_, ok := KeyID(s)
	return ok
}

// open decrypts sealed value s with aad.
func (r *KeyRing) open(aad []byte, s string) (any, error) {
	rest, _ := strings.CutPrefix(s, Prefix)
	id, body, ok := strings.Cut(rest, ":")
	if !ok {
		return nil, errMalformed
	}
	if r == nil {
		return nil, &missingKeyError{id: id, noRing: true}
	}
	aead, ok := r.aeads[id]
	if !ok {
		return nil, &missingKeyError{id: id}
	}
	buf, err := base64.RawURLEncoding.DecodeString(body)
	if err != nil || len(buf) < aead.NonceSize()+aead.Overhead() {
		return nil, errMalformed
	}
	plain, err := aead.Open(nil, buf[:aead.NonceSize()], buf[aead.NonceSize():], aad)
	if err != nil {
		return nil, fmt.Errorf("key %q does not open it (a different key under that id, or the value was altered or moved)", id)
	}
	switch {
	case len(plain) > 0 && plain[0] == plainString:
		return string(plain[1:]), nil
	case len(plain) > 0 && plain[0] == plainJSON:
		var v any
		if err := json.Unmarshal(plain[1:], &v); err != nil {
			return nil, errMalformed
		}
		return v, nil
	}
	return nil, errMalformed
}

var errMalformed = errors.New("not a well-formed sealed value")

// missingKeyError is a sealed value whose key the ring lacks.
type missingKeyError struct {
	id     string
	noRing bool
}

func (e *missingKeyError) Error() string {
	if e.noRing {
		return fmt.Sprintf("sealed with key %q but no key ring is configured ([openkeel_secrets]/key_files)", e.id)
	}
	return fmt.Sprintf("sealed with key %q, which the key ring ([openkeel_secrets]/key_files) does not hold", e.id)
}
