// Package vnc is upstream's ironic/common/vnc.py: the token a graphical
// console hands to the noVNC proxy, kept in the node's
// driver_internal_info, and the URL GET /v1/nodes/{id}/states/console
// answers for it.
package vnc

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"strings"
	"time"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
)

// createdLayout is Python's datetime.isoformat() of a naive UTC time with
// microseconds, which upstream's token_valid_until parses with
// '%Y-%m-%dT%H:%M:%S.%f'.
const createdLayout = "2006-01-02T15:04:05.000000"

// NewToken is secrets.token_urlsafe(): 32 random bytes, URL-safe base64
// without padding.
func NewToken() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		// crypto/rand does not fail on Linux; a token without randomness
		// must never be handed out.
		panic("vnc: no randomness for a console token: " + err.Error())
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// Authorize stores a new token and its creation time (novnc_authorize).
func Authorize(n *model.Node, now time.Time) string {
	token := NewToken()
	ii := n.InternalInfo()
	ii.Set(model.DIINoVNCSecretToken, token)
	ii.Set(model.DIINoVNCSecretTokenCreated, now.UTC().Format(createdLayout))
	return token
}

// Unauthorize forgets the token (novnc_unauthorize).
func Unauthorize(n *model.Node) {
	n.InternalInfo().Delete(model.DIINoVNCSecretToken, model.DIINoVNCSecretTokenCreated)
}

// HasToken reports whether a console session is authorized on n.
func HasToken(n *model.Node) bool { return n.InternalInfo().String(model.DIINoVNCSecretToken) != "" }

// ValidUntil is token_valid_until: the token's creation time plus
// timeout; NotAuthorized without a creation time.
func ValidUntil(n *model.Node, timeout time.Duration) (time.Time, error) {
	raw := n.InternalInfo().String(model.DIINoVNCSecretTokenCreated)
	if raw == "" {
		return time.Time{}, notAuthorized()
	}
	// isoformat() leaves the fraction out when it is zero.
	layout := createdLayout
	if !strings.Contains(raw, ".") {
		layout = "2006-01-02T15:04:05"
	}
	created, err := time.Parse(layout, raw)
	if err != nil {
		return time.Time{}, notAuthorized()
	}
	return created.Add(timeout), nil
}

// Validate is novnc_validate: token must be the node's, compared in
// constant time, and not expired.
func Validate(n *model.Node, token string, now time.Time, timeout time.Duration) error {
	want := n.InternalInfo().String(model.DIINoVNCSecretToken)
	if token == "" || want == "" || subtle.ConstantTimeCompare([]byte(token), []byte(want)) != 1 {
		return notAuthorized()
	}
	until, err := ValidUntil(n, timeout)
	if err != nil {
		return err
	}
	if until.Before(now.UTC()) {
		return notAuthorized()
	}
	return nil
}

// Expired reports whether the node's session token has outlived timeout;
// a session with no creation time counts as expired, as upstream's
// periodic stops it (token_valid_until raises).
func Expired(n *model.Node, now time.Time, timeout time.Duration) bool {
	until, err := ValidUntil(n, timeout)
	return err != nil || until.Before(now.UTC())
}

// ConsoleInfo is get_console: {"type": "vnc", "url": ...} where the URL
// is [vnc]public_url with the proxy's websocket path as its query.
// Python formats an unset public_url as "None", and so does this.
func ConsoleInfo(n *model.Node, publicURL string) map[string]any {
	base := publicURL
	if base == "" {
		base = "None"
	}
	token := n.InternalInfo().String(model.DIINoVNCSecretToken)
	if token == "" {
		token = "None"
	}
	path := quote("websockify?node=" + n.UUID + "&token=" + token)
	return map[string]any{"type": "vnc", "url": base + "?path=" + path}
}

// quote is urllib.parse.quote with its default safe "/": every byte but
// letters, digits, "_.-~" and "/" is percent-encoded.
func quote(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', strings.IndexByte("_.-~/", c) >= 0:
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

func notAuthorized() error { return errs.New(errs.ClassNotAuthorized, nil) }
