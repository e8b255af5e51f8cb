package jsonrpc

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"strings"

	"golang.org/x/crypto/bcrypt"

	"github.com/openkeel/ironic/internal/errs"
)

// basicAuth is upstream's BasicAuthMiddleware: an Apache htpasswd file
// whose entries must be bcrypt digests. The file is read on every request,
// as upstream, so that users can be rotated without a restart.
type basicAuth struct {
	file string
	log  *slog.Logger
	// dummy is compared against when the user is unknown, so that a
	// missing user costs the same bcrypt work as a wrong password and
	// cannot be told apart by timing.
	dummy []byte
}

func newBasicAuth(file string, log *slog.Logger) (*basicAuth, error) {
	a := &basicAuth{file: file, log: log}
	entries, err := a.read()
	if err != nil {
		return nil, err
	}
	cost := bcrypt.DefaultCost
	for user, hash := range entries {
		if !isBcrypt(hash) {
			return nil, errs.New("ConfigInvalid", map[string]any{"error_msg": fmt.Sprintf(
				"Only bcrypt digested passwords are supported for %s", user)})
		}
		if c, err := bcrypt.Cost(hash); err == nil {
			cost = c
		}
	}
	a.dummy, err = bcrypt.GenerateFromPassword([]byte("no such user"), cost)
	if err != nil {
		return nil, fmt.Errorf("json-rpc basic auth: %w", err)
	}
	return a, nil
}

func isBcrypt(hash []byte) bool {
	for _, p := range []string{"$2y$", "$2a$", "$2b$"} {
		if bytes.HasPrefix(hash, []byte(p)) {
			return true
		}
	}
	return false
}

// read parses the user file: "user:digest" lines; the first entry of a
// user counts, as upstream stops at the first match.
func (a *basicAuth) read() (map[string][]byte, error) {
	f, err := os.Open(a.file)
	if err != nil {
		return nil, errs.New("ConfigInvalid", map[string]any{"error_msg": "Problem reading auth user file"})
	}
	defer f.Close()
	out := map[string][]byte{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		user, hash, ok := strings.Cut(line, ":")
		if line == "" || !ok {
			continue
		}
		if _, seen := out[user]; !seen {
			out[user] = []byte(hash)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, errs.New("ConfigInvalid", map[string]any{"error_msg": "Problem reading auth user file"})
	}
	return out, nil
}

// check authenticates r: Unauthorized (401, with the WWW-Authenticate
// challenge) for a missing header or bad credentials, Invalid (400) for a
// header that is not Basic or cannot be decoded.
func (a *basicAuth) check(r *http.Request) *errs.Error {
	header := r.Header.Get("Authorization")
	if header == "" {
		return errs.NewMessage("Unauthorized", "Authorization required")
	}
	kind, token, ok := strings.Cut(strings.TrimSpace(header), " ")
	if !ok {
		return errs.NewMessage("Invalid", "Could not parse Authorization header")
	}
	if !strings.EqualFold(kind, "basic") {
		return errs.NewMessage("Invalid", fmt.Sprintf("Unsupported authorization type \"%s\"", kind))
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(token))
	if err != nil {
		return errs.NewMessage("Invalid", "Could not decode authorization token")
	}
	user, password, ok := strings.Cut(string(raw), ":")
	if !ok {
		return errs.NewMessage("Invalid", "Could not decode authorization token")
	}
	entries, err := a.read()
	if err != nil {
		a.log.Error("cannot read JSON-RPC user file", "file", a.file, "error", err)
		e, _ := errs.As(err)
		return e
	}
	hash, known := entries[user]
	if !known || !isBcrypt(hash) {
		bcrypt.CompareHashAndPassword(a.dummy, []byte(password))
		a.log.Info("JSON-RPC authentication failed", "user", user)
		return errs.NewMessage("Unauthorized", "Incorrect username or password")
	}
	if bcrypt.CompareHashAndPassword(hash, []byte(password)) != nil {
		a.log.Info("JSON-RPC authentication failed", "user", user)
		return errs.NewMessage("Unauthorized", "Incorrect username or password")
	}
	return nil
}

func fileMode(mode int) fs.FileMode { return fs.FileMode(mode) }
