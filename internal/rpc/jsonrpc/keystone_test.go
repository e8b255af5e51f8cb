package jsonrpc

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/auth"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/testing/keystone"
)

// keystoneConfig is the configuration of an API and a conductor that
// authenticate JSON-RPC with Keystone as upstream's do: the conductor
// validates tokens with [keystone_authtoken]'s service user and admits
// [json_rpc]/allowed_roles; the API's client logs in with [json_rpc]'s
// own keystoneauth options.
func keystoneConfig(t *testing.T, ks *keystone.Fixture, user string) *config.Config {
	t.Helper()
	cfg, err := config.Load(config.LoadOptions{Overrides: map[string]map[string]string{
		"json_rpc": {
			"auth_strategy": "keystone", "auth_type": "password", "auth_url": ks.URL() + "/v3",
			"username": user, "password": "pw", "user_domain_name": "Default",
			"project_name": "service", "project_domain_name": "Default",
		},
		"keystone_authtoken": {
			"auth_type": "password", "auth_url": ks.URL() + "/v3", "www_authenticate_uri": ks.URL(),
			"username": "ironic", "password": "svc-secret", "user_domain_name": "Default",
			"project_name": "service", "project_domain_name": "Default",
		},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// With auth_strategy = keystone, the API's client sends a token of its
// [json_rpc] user and the conductor runs the call when the token holds an
// allowed role (admin by default); a valid token without one is refused
// 403, and no token 401, before the conductor sees anything.
func TestKeystoneAuthentication(t *testing.T) {
	ks := keystone.New(t).Project("service").
		User("ironic", "svc-secret").Grant("ironic", "service", "service", "admin").
		User("conductor-caller", "pw").Grant("conductor-caller", "service", "admin").
		User("reader", "pw").Grant("reader", "service", "reader")
	srvCfg := keystoneConfig(t, ks, "conductor-caller")
	authn, err := auth.NewJSONRPC(srvCfg, "json_rpc")
	if err != nil {
		t.Fatal(err)
	}
	fake := newFake()
	ts := startServer(t, auth.Handler(authn, NewServer(fake, ServerOptionsFromConfig(srvCfg))))
	topic := topicFor(ts)

	newClient := func(user string) *Client {
		opts := ClientOptionsFromConfig(keystoneConfig(t, ks, user))
		opts.Timeout = 10 * time.Second
		c, err := NewClient(opts)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	if err := newClient("conductor-caller").DoNodeTearDown(context.Background(), topic, "n1"); err != nil {
		t.Fatalf("admin's call: %v", err)
	}
	if calls := fake.takeCalls(); len(calls) != 1 || calls[0].method != "DoNodeTearDown" {
		t.Errorf("conductor saw %+v", calls)
	}

	err = newClient("reader").DoNodeTearDown(context.Background(), topic, "n1")
	if err == nil || !strings.Contains(err.Error(), "HTTP 403") || !strings.Contains(err.Error(), "Forbidden") {
		t.Errorf("reader's call: %v", err)
	}
	noauth, err := NewClient(ClientOptions{AuthStrategy: "noauth", Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := noauth.DoNodeTearDown(context.Background(), topic, "n1"); err == nil || !strings.Contains(err.Error(), "HTTP 401") {
		t.Errorf("call without a token: %v", err)
	}
	if n := len(fake.takeCalls()); n != 0 {
		t.Errorf("conductor saw %d refused calls", n)
	}

	// Keystone down: the client cannot get a token, a fault the API
	// answers 503.
	ks.Down()
	err = newClient("conductor-caller").DoNodeTearDown(context.Background(), topic, "n1")
	if e, ok := errs.As(err); !ok || e.Code != 503 {
		t.Errorf("call with Keystone down: %v", err)
	}
}
