package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// The committed options_gen.go and keys_gen.go are what the generator
// writes from the spec and the hand-kept tables.
func TestGeneratedFilesCurrent(t *testing.T) {
	opts, keys, err := generate("..")
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string][]byte{"options_gen.go": opts, "keys_gen.go": keys} {
		got, err := os.ReadFile(filepath.Join("..", name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is not current: run go generate ./internal/config", name)
		}
	}
}

func TestGoName(t *testing.T) {
	for _, c := range []struct{ section, name, want string }{
		{"conductor", "automated_clean", "ConductorAutomatedClean"},
		{"DEFAULT", "my_ip", "DefaultMyIP"},
		{"redfish", "connection_attempts", "RedfishConnectionAttempts"},
		{"keystone_authtoken", "www_authenticate_uri", "KeystoneAuthtokenWwwAuthenticateURI"},
		{"openkeel_http", "allow_unauthenticated_json_rpc", "OpenkeelHTTPAllowUnauthenticatedJSONRPC"},
	} {
		if got := goName(c.section, c.name); got != c.want {
			t.Errorf("goName(%q, %q) = %q, want %q", c.section, c.name, got, c.want)
		}
	}
}

// Two options whose names would give one identifier stop the generator
// instead of one key shadowing the other.
func TestRenderKeysRefusesClash(t *testing.T) {
	_, err := renderKeys([]keyed{{"a_b", "c", "TypeBool"}, {"a", "b_c", "TypeInt"}})
	if err == nil {
		t.Fatal("clashing names rendered")
	}
}
