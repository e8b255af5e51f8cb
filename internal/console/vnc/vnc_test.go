package vnc

import (
	"strings"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/model"
)

func TestTokenLifecycle(t *testing.T) {
	now := time.Date(2026, 12, 2, 10, 0, 0, 123456000, time.UTC)
	n := &model.Node{UUID: "1be26c0b-03f2-4d2e-ae87-c02d7f33c123"}
	token := Authorize(n, now)
	if len(token) != 43 || strings.ContainsAny(token, "+/=") {
		t.Errorf("token %q is not token_urlsafe(32)", token)
	}
	if got := n.InternalInfo().String(model.DIINoVNCSecretTokenCreated); got != "2026-12-02T10:00:00.123456" {
		t.Errorf("created %q, want Python's isoformat", got)
	}
	timeout := 600 * time.Second
	if err := Validate(n, token, now.Add(599*time.Second), timeout); err != nil {
		t.Errorf("valid token refused: %v", err)
	}
	for name, tc := range map[string]struct {
		token string
		at    time.Time
	}{
		"expired": {token, now.Add(601 * time.Second)},
		"wrong":   {token[:42] + "x", now},
		"empty":   {"", now},
	} {
		if err := Validate(n, tc.token, tc.at, timeout); err == nil || err.Error() != "Not authorized." {
			t.Errorf("%s: %v, want NotAuthorized", name, err)
		}
	}
	if Expired(n, now.Add(599*time.Second), timeout) || !Expired(n, now.Add(601*time.Second), timeout) {
		t.Error("expiry at token_timeout")
	}
	// isoformat() leaves out a zero fraction; upstream's own reader
	// would fail on it, ours reads it.
	n.InternalInfo().Set(model.DIINoVNCSecretTokenCreated, "2026-12-02T10:00:00")
	if err := Validate(n, token, now, timeout); err != nil {
		t.Errorf("created without fraction: %v", err)
	}
	Unauthorize(n)
	if HasToken(n) || Validate(n, token, now, timeout) == nil {
		t.Error("token survived Unauthorize")
	}
}

func TestConsoleInfoURL(t *testing.T) {
	n := &model.Node{UUID: "1be26c0b-03f2-4d2e-ae87-c02d7f33c123", DriverInternalInfo: map[string]any{model.DIINoVNCSecretToken: "Ab_c-9"}}
	got := ConsoleInfo(n, "http://proxy.example.org:6090/vnc_auto.html")
	// urllib.parse.quote("websockify?node=...&token=...") keeps "/" only.
	want := "http://proxy.example.org:6090/vnc_auto.html?path=websockify%3Fnode%3D1be26c0b-03f2-4d2e-ae87-c02d7f33c123%26token%3DAb_c-9"
	if got["type"] != "vnc" || got["url"] != want {
		t.Errorf("console info %v\nwant url %s", got, want)
	}
	if got := ConsoleInfo(n, "")["url"].(string); !strings.HasPrefix(got, "None?path=") {
		t.Errorf("unset public_url: %s (upstream formats None)", got)
	}
}
