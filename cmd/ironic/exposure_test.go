package main

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/config"
)

// TestJSONRPCExposure: a conductor refuses to serve JSON-RPC without
// authentication beyond loopback unless the operator opts in.
func TestJSONRPCExposure(t *testing.T) {
	for _, tc := range []struct {
		name    string
		conf    map[string]map[string]string
		refused bool
		warned  bool
	}{
		{"keystone by default", nil, false, false},
		{"noauth on every address (upstream's default host_ip)", map[string]map[string]string{"DEFAULT": {"auth_strategy": "noauth"}}, true, false},
		{"noauth in [json_rpc] on 0.0.0.0", map[string]map[string]string{"json_rpc": {"auth_strategy": "noauth", "host_ip": "0.0.0.0"}}, true, false},
		{"noauth on a routable address", map[string]map[string]string{"json_rpc": {"auth_strategy": "noauth", "host_ip": "192.0.2.10"}}, true, false},
		{"noauth on 127.0.0.1", map[string]map[string]string{"DEFAULT": {"auth_strategy": "noauth"}, "json_rpc": {"host_ip": "127.0.0.1"}}, false, false},
		{"noauth on ::1", map[string]map[string]string{"json_rpc": {"auth_strategy": "noauth", "host_ip": "::1"}}, false, false},
		{"noauth on localhost", map[string]map[string]string{"json_rpc": {"auth_strategy": "noauth", "host_ip": "localhost"}}, false, false},
		{"noauth on a Unix socket", map[string]map[string]string{"json_rpc": {"auth_strategy": "noauth", "unix_socket": "/run/ironic/rpc.sock"}}, false, false},
		{"http_basic in [json_rpc] over noauth in [DEFAULT]", map[string]map[string]string{"DEFAULT": {"auth_strategy": "noauth"}, "json_rpc": {"auth_strategy": "http_basic"}}, false, false},
		{"noauth allowed explicitly", map[string]map[string]string{"DEFAULT": {"auth_strategy": "noauth"}, "openkeel_http": {"allow_unauthenticated_json_rpc": "true"}}, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := config.Load(config.LoadOptions{Overrides: tc.conf})
			if err != nil {
				t.Fatal(err)
			}
			var logs bytes.Buffer
			err = checkJSONRPCExposure(context.Background(), cfg, slog.New(slog.NewTextHandler(&logs, nil)))
			if tc.refused != (err != nil) {
				t.Fatalf("error %v, refused want %v", err, tc.refused)
			}
			if err != nil {
				// The message tells the operator what to set.
				for _, want := range []string{"[json_rpc]/auth_strategy", "[json_rpc]/host_ip", "[openkeel_http]/allow_unauthenticated_json_rpc"} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("message does not name %s: %v", want, err)
					}
				}
			}
			if warned := strings.Contains(logs.String(), "without authentication"); warned != tc.warned {
				t.Errorf("warning logged %v, want %v:\n%s", warned, tc.warned, logs.String())
			}
		})
	}
}

// TestConductorRefusesUnauthenticatedJSONRPC: the process exits with the
// message before it touches the database.
func TestConductorRefusesUnauthenticatedJSONRPC(t *testing.T) {
	dir := t.TempDir()
	conf := writeConf(t, dir, "[DEFAULT]\nauth_strategy = noauth\n[database]\nconnection = mysql+pymysql://nobody@127.0.0.1:1/none\n")
	out, code := runIronic(t, dir, "ironic", "--config-file", conf, "conductor")
	if code != 1 {
		t.Fatalf("exit %d, want 1:\n%s", code, out)
	}
	if !strings.Contains(out, "refusing to start: JSON-RPC would listen on [::]:8089 without authentication ([DEFAULT]/auth_strategy = noauth)") {
		t.Fatalf("no refusal naming the address and option:\n%s", out)
	}
}
