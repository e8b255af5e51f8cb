package keystone

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

func do(t *testing.T, method, url, body string, h map[string]string) (*http.Response, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range h {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&doc)
	return resp, doc
}

const passwordBody = `{"auth": {"identity": {"methods": ["password"], "password": {"user": {"name": "%U", "password": "%P", "domain": {"name": "Default"}}}}, %S}}`

func auth(user, pass, scope string) string {
	return strings.NewReplacer("%U", user, "%P", pass, "%S", scope).Replace(passwordBody)
}

func TestTokenAPI(t *testing.T) {
	ks := New(t).Project("demo").User("alice", "pw").Grant("alice", "demo", "member").
		User("sam", "pw").GrantSystem("sam", "admin")
	url := ks.URL() + "/v3/auth/tokens"

	resp, doc := do(t, http.MethodPost, url, auth("alice", "pw", `"scope": {"project": {"name": "demo", "domain": {"id": "default"}}}`), nil)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("password auth: %d %v", resp.StatusCode, doc)
	}
	tok := resp.Header.Get("X-Subject-Token")
	token := doc["token"].(map[string]any)
	if token["project"].(map[string]any)["id"] != ks.ProjectID("demo") || token["catalog"] == nil ||
		token["roles"].([]any)[0].(map[string]any)["name"] != "member" {
		t.Errorf("token body = %v", token)
	}
	exp, err := time.Parse(time.RFC3339Nano, token["expires_at"].(string))
	if err != nil || !exp.Equal(ks.Now().Add(time.Hour)) {
		t.Errorf("expires_at %v (%v)", token["expires_at"], err)
	}

	for name, body := range map[string]string{
		"wrong password":  auth("alice", "nope", `"scope": {"project": {"name": "demo", "domain": {"name": "Default"}}}`),
		"no role there":   auth("sam", "pw", `"scope": {"project": {"name": "demo", "domain": {"name": "Default"}}}`),
		"no system roles": auth("alice", "pw", `"scope": {"system": {"all": true}}`),
	} {
		if resp, _ := do(t, http.MethodPost, url, body, nil); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s: %d", name, resp.StatusCode)
		}
	}
	resp, doc = do(t, http.MethodPost, url, auth("sam", "pw", `"scope": {"system": {"all": true}}`), nil)
	if resp.StatusCode != http.StatusCreated || doc["token"].(map[string]any)["system"] == nil {
		t.Errorf("system auth: %d %v", resp.StatusCode, doc)
	}

	sub := ks.Token("alice", "demo")
	if resp, _ := do(t, http.MethodGet, url, "", map[string]string{"X-Subject-Token": sub}); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("validation without X-Auth-Token: %d", resp.StatusCode)
	}
	resp, doc = do(t, http.MethodGet, url+"?nocatalog", "", map[string]string{"X-Auth-Token": tok, "X-Subject-Token": sub})
	if resp.StatusCode != http.StatusOK || doc["token"].(map[string]any)["catalog"] != nil {
		t.Errorf("validation: %d %v", resp.StatusCode, doc)
	}
	if resp, _ := do(t, http.MethodGet, url, "", map[string]string{"X-Auth-Token": tok, "X-Subject-Token": "nope"}); resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown subject: %d", resp.StatusCode)
	}
	if ks.Validations() != 3 || ks.Authentications() != 5 {
		t.Errorf("counters: validations %d authentications %d", ks.Validations(), ks.Authentications())
	}

	ks.Advance(time.Hour)
	if resp, _ := do(t, http.MethodGet, url, "", map[string]string{"X-Auth-Token": ks.SystemToken("sam"), "X-Subject-Token": sub}); resp.StatusCode != http.StatusNotFound {
		t.Errorf("expired subject: %d", resp.StatusCode)
	}
	if resp, _ := do(t, http.MethodGet, url+"?allow_expired=1", "", map[string]string{"X-Auth-Token": ks.SystemToken("sam"), "X-Subject-Token": sub}); resp.StatusCode != http.StatusOK {
		t.Errorf("expired subject with allow_expired: %d", resp.StatusCode)
	}

	ks.Fail(http.StatusInternalServerError)
	if resp, _ := do(t, http.MethodPost, url, auth("alice", "pw", `"scope": {"project": {"name": "demo", "domain": {"name": "Default"}}}`), nil); resp.StatusCode != 500 {
		t.Errorf("Fail(500): %d", resp.StatusCode)
	}
	ks.Heal()
	ks.Down()
	if _, err := http.Get(url); err == nil {
		t.Error("Down: connection accepted")
	}
}

func TestTokenValid(t *testing.T) {
	ks := New(t).Project("demo").User("alice", "pw").Grant("alice", "demo", "member").TokenTTL(10 * time.Minute)
	tok := ks.Token("alice", "demo")
	if !ks.TokenValid(tok) || ks.TokenValid("") || ks.TokenValid("gAAAAAforged") {
		t.Fatal("TokenValid accepts only issued tokens")
	}
	ks.Advance(10 * time.Minute)
	if ks.TokenValid(tok) {
		t.Error("expired token valid")
	}
	tok = ks.Token("alice", "demo")
	ks.RevokeUserTokens("alice")
	if ks.TokenValid(tok) {
		t.Error("revoked token valid")
	}
}
