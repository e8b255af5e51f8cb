package auth

import (
	"bytes"
	"container/list"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/crypto/bcrypt"

	"github.com/openkeel/ironic/internal/errs"
)

// bcryptPrefixes are the only digests upstream accepts in the user file.
var bcryptPrefixes = []string{"$2y$", "$2a$", "$2b$"}

// checkCacheSize bounds the memory of password checks, as upstream's
// lru_cache(maxsize=256) around bcrypt.checkpw.
const checkCacheSize = 256

// BasicFile is an Apache htpasswd user file whose entries are bcrypt
// digests, the format upstream's http_basic strategy reads. Upstream reads
// the file on every request, so edits apply without a restart; BasicFile
// keeps the parsed entries and reads the file again when its size or
// modification time changes.
type BasicFile struct {
	path string

	mu      sync.Mutex
	modTime time.Time
	size    int64
	entries map[string]string

	checks *checkCache
	// dummy is compared against for unknown users, so that an unknown
	// name costs what a wrong password does.
	dummyOnce sync.Once
	dummy     []byte
}

// LoadBasicFile reads and validates path as upstream does at start-up: an
// unreadable file, or an entry whose digest is not bcrypt, is a
// ConfigInvalid error naming the file or the user.
func LoadBasicFile(path string) (*BasicFile, error) {
	f := &BasicFile{path: path, checks: newCheckCache(checkCacheSize)}
	st, err := os.Stat(path)
	if err != nil {
		return nil, startupError(path, err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, startupError(path, err)
	}
	entries := parseUserFile(data)
	for _, line := range userFileLines(data) {
		if !strings.Contains(line, ":") {
			continue
		}
		user, digest, _ := strings.Cut(line, ":")
		if !isBcrypt(digest) {
			return nil, fmt.Errorf("user file %s: %w", path, errs.New(errs.ClassConfigInvalid, map[string]any{
				"error_msg": "Only bcrypt digested passwords are supported for " + user}))
		}
	}
	f.modTime, f.size, f.entries = st.ModTime(), st.Size(), entries
	return f, nil
}

func startupError(path string, err error) error {
	return fmt.Errorf("%w (%w)", errs.New(errs.ClassConfigInvalid, map[string]any{
		"error_msg": "Problem reading auth user file: " + path}), err)
}

// Path is the file's name.
func (f *BasicFile) Path() string { return f.path }

func userFileLines(data []byte) []string {
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			out = append(out, line)
		}
	}
	return out
}

// parseUserFile maps each user to the digest of the first line that names
// it, as upstream's scan stops at the first "user:" line.
func parseUserFile(data []byte) map[string]string {
	m := map[string]string{}
	for _, line := range userFileLines(data) {
		user, digest, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		if _, seen := m[user]; !seen {
			m[user] = digest
		}
	}
	return m
}

func isBcrypt(digest string) bool {
	for _, p := range bcryptPrefixes {
		if strings.HasPrefix(digest, p) {
			return true
		}
	}
	return false
}

// current returns the entries, reading the file again if it changed.
func (f *BasicFile) current() (map[string]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st, err := os.Stat(f.path)
	if err != nil {
		return nil, err
	}
	if st.ModTime().Equal(f.modTime) && st.Size() == f.size {
		return f.entries, nil
	}
	data, err := os.ReadFile(f.path)
	if err != nil {
		return nil, err
	}
	f.modTime, f.size, f.entries = st.ModTime(), st.Size(), parseUserFile(data)
	return f.entries, nil
}

// Verify checks a user's password. Failures are the errors upstream's
// middleware answers with: 401 "Incorrect username or password" for an
// unknown user or a wrong password, 500 ConfigInvalid when the file
// cannot be read or the user's entry is not bcrypt.
func (f *BasicFile) Verify(username string, password []byte) error {
	entries, err := f.current()
	if err != nil {
		slog.Error("problem reading auth user file", "file", f.path, "error", err)
		return basicConfigInvalid("Problem reading auth user file", err)
	}
	digest, known := entries[username]
	if !known {
		f.check(f.dummyDigest(), password)
		slog.Info("http basic auth: user not found", "user", username)
		return basicUnauthorized("Incorrect username or password")
	}
	if !isBcrypt(digest) {
		return basicConfigInvalid("Only bcrypt digested passwords are supported for "+username, nil)
	}
	ok, err := f.check([]byte(digest), password)
	if err != nil {
		slog.Error("http basic auth: malformed bcrypt digest", "file", f.path, "user", username)
		return basicConfigInvalid("Problem reading auth user file", err)
	}
	if !ok {
		slog.Info("http basic auth: password does not match", "user", username)
		return basicUnauthorized("Incorrect username or password")
	}
	return nil
}

func (f *BasicFile) dummyDigest() []byte {
	f.dummyOnce.Do(func() {
		d, err := bcrypt.GenerateFromPassword([]byte("openkeel-unknown-user"), bcrypt.DefaultCost)
		if err != nil {
			// Only a password over 72 bytes fails; this one is not.
			panic(err)
		}
		f.dummy = d
	})
	return f.dummy
}

// check runs bcrypt through the bounded cache; bcrypt itself compares in
// constant time.
func (f *BasicFile) check(digest, password []byte) (bool, error) {
	key := sha256.Sum256(append(append(append([]byte(nil), digest...), 0), password...))
	if ok, hit := f.checks.get(key); hit {
		return ok, nil
	}
	err := bcrypt.CompareHashAndPassword(digest, password)
	switch {
	case err == nil:
		f.checks.put(key, true)
		return true, nil
	case errors.Is(err, bcrypt.ErrMismatchedHashAndPassword):
		f.checks.put(key, false)
		return false, nil
	default:
		return false, err
	}
}

// BasicAuth is auth_strategy = http_basic (also the JSON-RPC server's, with
// its own file).
type BasicAuth struct {
	File *BasicFile
}

// NewBasicAuth loads the user file (see LoadBasicFile).
func NewBasicAuth(path string) (*BasicAuth, error) {
	f, err := LoadBasicFile(path)
	if err != nil {
		return nil, err
	}
	return &BasicAuth{File: f}, nil
}

// Authenticate checks the Authorization header as upstream's
// BasicAuthMiddleware: missing → 401 "Authorization required"; not two
// words, another scheme, bad base64, no colon, a user name that is not
// UTF-8 → 400; unknown user or wrong password → 401. The context is built
// from the request headers with X-User and X-User-Name set to the user, as
// upstream adds them to the environment.
func (b *BasicAuth) Authenticate(r *http.Request) (*Context, error) {
	vals := r.Header.Values("Authorization")
	if len(vals) == 0 {
		slog.Info("http basic auth: no authorization header")
		return nil, basicUnauthorized("Authorization required")
	}
	scheme, token, ok := splitAuthorization(strings.Join(vals, ","))
	if !ok {
		return nil, basicBadRequest("Could not parse Authorization header")
	}
	if !strings.EqualFold(scheme, "basic") {
		return nil, basicBadRequest(`Unsupported authorization type "` + scheme + `"`)
	}
	username, password, ok := decodeBasicToken(token)
	if !ok {
		return nil, basicBadRequest("Could not decode authorization token")
	}
	if err := b.File.Verify(username, password); err != nil {
		return nil, err
	}
	h := r.Header.Clone()
	h.Set("X-User", username)
	h.Set("X-User-Name", username)
	c := FromHeaders(h)
	c.Strategy = StrategyHTTPBasic
	c.AuthToken = ""
	c.ServiceToken = ""
	return c, nil
}

// splitAuthorization is Python's value.strip().split(maxsplit=1): two
// parts or nothing.
func splitAuthorization(v string) (scheme, rest string, ok bool) {
	v = strings.TrimSpace(v)
	i := strings.IndexFunc(v, isPySpace)
	if i < 0 {
		return "", "", false
	}
	return v[:i], strings.TrimLeftFunc(v[i:], isPySpace), true
}

func isPySpace(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\r', '\v', '\f', 0x1c, 0x1d, 0x1e, 0x1f, 0x85, 0xa0:
		return true
	}
	return r > 0xff && strings.ContainsRune("\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000", r)
}

// decodeBasicToken is base64.b64decode(token, validate=True) then a split
// at the first colon; the user name must be UTF-8, the password is bytes.
func decodeBasicToken(token string) (string, []byte, bool) {
	for i := 0; i < len(token); i++ {
		c := token[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '=') {
			return "", nil, false
		}
	}
	// Python's non-strict decoder accepts what the alphabet check let
	// through as long as the padding is right, including non-zero trailing
	// bits, which Go's strict mode would refuse; StdEncoding matches it.
	pair, err := base64.StdEncoding.DecodeString(token)
	if err != nil {
		return "", nil, false
	}
	user, pass, ok := bytes.Cut(pair, []byte(":"))
	if !ok || !utf8.Valid(user) {
		return "", nil, false
	}
	return string(user), pass, true
}

// checkCache is a small LRU of password check results keyed by a digest of
// (bcrypt digest, password), so no password is held in memory.
type checkCache struct {
	mu    sync.Mutex
	max   int
	order *list.List
	items map[[32]byte]*list.Element
}

type checkEntry struct {
	key [32]byte
	ok  bool
}

func newCheckCache(max int) *checkCache {
	return &checkCache{max: max, order: list.New(), items: map[[32]byte]*list.Element{}}
}

func (c *checkCache) get(k [32]byte) (bool, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[k]
	if !ok {
		return false, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*checkEntry).ok, true
}

func (c *checkCache) put(k [32]byte, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, found := c.items[k]; found {
		e.Value.(*checkEntry).ok = ok
		c.order.MoveToFront(e)
		return
	}
	c.items[k] = c.order.PushFront(&checkEntry{key: k, ok: ok})
	for c.order.Len() > c.max {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.items, last.Value.(*checkEntry).key)
	}
}
