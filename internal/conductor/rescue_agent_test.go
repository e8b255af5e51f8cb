package conductor_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/agentclient"
	"github.com/openkeel/ironic/internal/conductor"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/driver/agent"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store/sqldb"
	"github.com/openkeel/ironic/testing/ipa"
)

// newRescueEnv has direct deploy and agent rescue enabled.
func newRescueEnv(t *testing.T, db *sqldb.DB) *env {
	t.Helper()
	e := newStoreEnv(t, db, testConfig(t, map[string]map[string]string{
		"conductor": {"rescue_callback_timeout": "0"},
		"agent":     {"require_tls": "false"},
	}))
	r := stockRegistry(t)
	co := agentclient.DefaultOptions()
	co.CommandWaitInterval = 10 * time.Millisecond
	co.CommandTimeout = 5 * time.Second
	client := agentclient.New(co)
	if err := agent.Register(r, agent.Options{Client: client, DefaultBootMode: "uefi"}); err != nil {
		t.Fatal(err)
	}
	if err := agent.RegisterRescue(r, agent.RescueOptions{Client: client, HashAlgorithm: "sha512"}); err != nil {
		t.Fatal(err)
	}
	e.drivers = buildFakeHardware(t, r, map[driver.Kind][]string{
		driver.KindDeploy: {"direct", "fake"}, driver.KindRescue: {"agent", "no-rescue"},
	})
	e.run(conductor.Options{})
	return e
}

func rescueNode(e *env) *model.Node {
	return e.node(states.Active, func(n *model.Node) {
		n.DeployInterface, n.RescueInterface, n.PowerState = "direct", "agent", states.PowerOn
		n.InstanceInfo = map[string]any{"image_source": "http://127.0.0.1:1/disk.img"}
	})
}

func TestAgentRescue(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newRescueEnv(t, db)
		ctx := context.Background()
		n := rescueNode(e)
		if err := e.api.DoNodeRescue(ctx, "", n.UUID, "s3cret"); err != nil {
			t.Fatal(err)
		}
		waiting := e.waitState(n, states.RescueWait)
		hashed, _ := waiting.InstanceInfo["hashed_rescue_password"].(string)
		if !strings.HasPrefix(hashed, "$6$") || waiting.InstanceInfo["rescue_password"] != "s3cret" || waiting.PowerState != states.PowerOn {
			t.Fatalf("rescue wait node: instance_info %v power %q", waiting.InstanceInfo, waiting.PowerState)
		}
		token := lookup(t, e, n)
		a := ipa.New(t).WithToken(token)
		rescued := heartbeatUntil(t, e, n, a, token, states.Rescue)
		p := a.LastParams("rescue.finalize_rescue")
		if p["rescue_password"] != hashed || p["hashed"] != true {
			t.Errorf("finalize_rescue params %v", p)
		}
		if _, ok := rescued.InstanceInfo["rescue_password"]; ok {
			t.Errorf("rescue password kept: %v", rescued.InstanceInfo)
		}
		if _, ok := rescued.InstanceInfo["hashed_rescue_password"]; ok {
			t.Errorf("hashed rescue password kept: %v", rescued.InstanceInfo)
		}
		if rescued.PowerState != states.PowerOn || deref(rescued.LastError) != "" || rescued.TargetProvisionState != "" {
			t.Errorf("rescued node: power %q last_error %q target %q", rescued.PowerState, deref(rescued.LastError), rescued.TargetProvisionState)
		}

		if err := e.api.DoNodeUnrescue(ctx, "", n.UUID); err != nil {
			t.Fatal(err)
		}
		back := e.waitState(n, states.Active)
		if back.PowerState != states.PowerOn || back.DriverInternalInfo["agent_url"] != nil {
			t.Errorf("unrescued node: power %q dii %v", back.PowerState, back.DriverInternalInfo)
		}
	})
}

// TestAgentRescueFinalizeFails: a rescue the agent cannot finish fails
// with the agent's reason in last_error and the node's history, worded as
// upstream's _heartbeat_rescue_wait and _finalize_rescue, not only that it
// failed.
func TestAgentRescueFinalizeFails(t *testing.T) {
	cases := []struct {
		name    string
		outcome ipa.Outcome
		// reason follows "Failed to rescue instance None for node <uuid>: ".
		reason string
	}{
		{"finalize_rescue failed in the agent",
			ipa.Outcome{Error: ipa.CommandError("RescueError", "Rescue failed", "no shadow file", 500)},
			"Agent returned bad result for command finalize_rescue: no shadow file"},
		{"agent refuses the hashed password",
			ipa.Outcome{Fault: &ipa.Fault{Status: 400, Faultstring: "Invalid command: unexpected keyword argument 'hashed'"}},
			"Unable to rescue node due to an out of date agent ramdisk. Please contact the administrator to update the rescue ramdisk to contain an ironic-python-agent version of at least 6.0.0."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			forEachDB(t, func(t *testing.T, db *sqldb.DB) {
				e := newRescueEnv(t, db)
				n := rescueNode(e)
				if err := e.api.DoNodeRescue(context.Background(), "", n.UUID, "s3cret"); err != nil {
					t.Fatal(err)
				}
				e.waitState(n, states.RescueWait)
				token := lookup(t, e, n)
				a := ipa.New(t).WithToken(token).Handle("rescue.finalize_rescue", func(map[string]any) ipa.Outcome { return c.outcome })
				failed := heartbeatUntil(t, e, n, a, token, states.RescueFail)
				want := "Node failed to perform rescue operation: Failed to rescue instance None for node " + n.UUID + ": " + c.reason
				e.expect(failed, states.RescueFail, states.Rescue, want)
				if failed.PowerState != states.PowerOff || failed.InternalInfo().Get(model.DIIAgentURL) != nil {
					t.Errorf("failed node: power %q dii %v", failed.PowerState, failed.DriverInternalInfo)
				}
				if _, ok := failed.InstanceInfo["rescue_password"]; ok {
					t.Errorf("rescue password kept after failure")
				}
				h := e.history(n)
				if !slices.ContainsFunc(h, func(line string) bool { return strings.HasPrefix(line, "ERROR|rescue|"+want+"|") }) {
					t.Errorf("history %q lacks the failure", h)
				}
			})
		})
	}
}

func TestAgentRescueNeedsPassword(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newRescueEnv(t, db)
		n := rescueNode(e)
		err := e.api.DoNodeRescue(context.Background(), "", n.UUID, "")
		want := "Failed to rescue instance None for node " + n.UUID + ": Validation failed: Node " + n.UUID + " is missing 'rescue_password' in instance_info"
		if class(err) != "InstanceRescueFailure" || err.Error() != want {
			t.Fatalf("err = %v", err)
		}
		if got := e.get(n); got.ProvisionState != states.Active {
			t.Fatalf("node moved to %q", got.ProvisionState)
		}
	})
}
