package conductor_test

import (
	"context"
	"testing"

	"github.com/openkeel/ironic/internal/rpc"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store/sqldb"
)

func TestAgentTokenAndHeartbeat(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		n := e.node(states.CleanWait)
		first, err := e.api.GetNodeWithToken(ctx, "", n.UUID)
		if err != nil {
			t.Fatal(err)
		}
		token, _ := first.DriverInternalInfo["agent_secret_token"].(string)
		if len(token) < 40 {
			t.Fatalf("token %q", token)
		}
		second, err := e.api.GetNodeWithToken(ctx, "", n.UUID)
		if err != nil {
			t.Fatal(err)
		}
		if second.DriverInternalInfo["agent_secret_token"] != "******" {
			t.Fatalf("second lookup saw %v", second.DriverInternalInfo["agent_secret_token"])
		}
		if stored := e.get(n).DriverInternalInfo["agent_secret_token"]; stored != token {
			t.Fatal("masking changed the stored token")
		}
		for _, c := range []struct {
			name string
			args rpc.HeartbeatArgs
			want string
		}{
			{"no version", rpc.HeartbeatArgs{NodeID: n.UUID, AgentToken: token}, "Agent did not transmit a version, and a version is required. Please update the agent being used."},
			{"wrong token", rpc.HeartbeatArgs{NodeID: n.UUID, AgentVersion: "10.0", AgentToken: token + "x"}, "Invalid or missing agent token received."},
			{"no token", rpc.HeartbeatArgs{NodeID: n.UUID, AgentVersion: "10.0"}, "Invalid or missing agent token received."},
		} {
			err := e.api.Heartbeat(ctx, "", c.args)
			if class(err) != "InvalidParameterValue" || err.Error() != c.want {
				t.Errorf("%s: %v", c.name, err)
			}
		}
		if err := e.api.Heartbeat(ctx, "", rpc.HeartbeatArgs{NodeID: n.UUID, AgentVersion: "10.0", AgentToken: token, CallbackURL: "http://10.0.0.5:9999"}); err != nil {
			t.Fatal(err)
		}
	})
}

func TestVendorPassthru(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		n := e.node(states.Manageable)
		res, err := e.api.VendorPassthru(ctx, "", rpc.VendorPassthruArgs{NodeID: n.UUID, DriverMethod: "third_method_sync", HTTPMethod: "post", Info: map[string]any{"bar": "meow"}})
		if err != nil || res.Return != true || res.Async {
			t.Fatalf("sync method: %+v %v", res, err)
		}
		res, err = e.api.VendorPassthru(ctx, "", rpc.VendorPassthruArgs{NodeID: n.UUID, DriverMethod: "second_method", HTTPMethod: "POST", Info: map[string]any{"bar": "kazoo"}})
		if err != nil || !res.Async || res.Return != nil {
			t.Fatalf("async method: %+v %v", res, err)
		}
		e.waitUnlocked(n)
		_, err = e.api.VendorPassthru(ctx, "", rpc.VendorPassthruArgs{NodeID: n.UUID, DriverMethod: "nope", HTTPMethod: "POST"})
		if class(err) != "InvalidParameterValue" || err.Error() != "No handler for method nope" {
			t.Fatalf("unknown method: %v", err)
		}
		_, err = e.api.VendorPassthru(ctx, "", rpc.VendorPassthruArgs{NodeID: n.UUID, DriverMethod: "third_method_sync", HTTPMethod: "GET"})
		if class(err) != "InvalidParameterValue" || err.Error() != "The method third_method_sync does not support HTTP GET" {
			t.Fatalf("wrong HTTP method: %v", err)
		}
		_, err = e.api.VendorPassthru(ctx, "", rpc.VendorPassthruArgs{NodeID: n.UUID, DriverMethod: "third_method_sync", HTTPMethod: "POST"})
		if class(err) != "MissingParameterValue" {
			t.Fatalf("validation: %v", err)
		}
		methods, err := e.api.GetNodeVendorPassthruMethods(ctx, "", n.UUID)
		if err != nil || len(methods) != 4 || methods["second_method"]["async"] != true {
			t.Fatalf("methods %v %v", methods, err)
		}
		props, err := e.api.GetDriverProperties(ctx, "", "fake-hardware")
		if err != nil || props["B1"] != "B1 description. Required." {
			t.Fatalf("driver properties %v %v", props, err)
		}
		if _, err := e.api.GetDriverProperties(ctx, "", "ipmi"); class(err) != "DriverNotFound" {
			t.Fatalf("disabled driver: %v", err)
		}
	})
}
