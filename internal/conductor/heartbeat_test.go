package conductor_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/agentclient"
	"github.com/openkeel/ironic/internal/conductor"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/driver/agent"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/rpc"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store/sqldb"
	"github.com/openkeel/ironic/testing/await"
	"github.com/openkeel/ironic/testing/ipa"
)

// syncBuffer collects the log lines of the conductor and the agent client.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// newAgentEnv is newEnv with the direct deploy interface enabled and
// every log line captured at debug level; opts may override options
// (withConf).
func newAgentEnv(t *testing.T, db *sqldb.DB, requireTLS bool, opts ...envOption) (*env, *syncBuffer) {
	t.Helper()
	logs := &syncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	o := envOpts{overrides: map[string]map[string]string{"agent": {"require_tls": strconv.FormatBool(requireTLS)}}}
	for _, opt := range opts {
		opt(&o)
	}
	e := newStoreEnv(t, db, testConfig(t, o.overrides))
	r := stockRegistry(t)
	co := agentclient.DefaultOptions()
	co.DeployLogs = agentclient.OptionsFromConfig(e.cfg).DeployLogs
	if o.overrides["agent"]["deploy_logs_local_path"] == "" {
		co.DeployLogs.LocalPath = t.TempDir()
	}
	co.Now = e.clock.Now
	co.CommandWaitInterval = 10 * time.Millisecond
	co.CommandTimeout = 5 * time.Second
	co.Log = log
	if err := agent.Register(r, agent.Options{Client: agentclient.New(co), DefaultBootMode: "uefi"}); err != nil {
		t.Fatal(err)
	}
	e.drivers = buildFakeHardware(t, r, map[driver.Kind][]string{driver.KindDeploy: {"direct", "fake"}})
	e.run(conductor.Options{Logger: log})
	return e, logs
}

// lookup plays the agent's lookup and returns the token it learnt.
func lookup(t *testing.T, e *env, n *model.Node) string {
	t.Helper()
	got, err := e.api.GetNodeWithToken(context.Background(), "", n.UUID)
	if err != nil {
		t.Fatalf("lookup: %v", err)
	}
	tok, _ := got.DriverInternalInfo["agent_secret_token"].(string)
	if tok == "" || tok == "******" {
		t.Fatalf("lookup got token %q", tok)
	}
	return tok
}

// provideToAgent provides n and waits until its cleaning waits for the
// ramdisk; it returns the token the agent's lookup learns.
func provideToAgent(t *testing.T, e *env, n *model.Node) string {
	t.Helper()
	if err := e.api.DoProvisioningAction(context.Background(), "", n.UUID, "provide"); err != nil {
		t.Fatal(err)
	}
	e.waitState(n, states.CleanWait)
	return lookup(t, e, n)
}

// heartbeatUntil heartbeats like IPA until the node is unlocked in want.
func heartbeatUntil(t *testing.T, e *env, n *model.Node, a *ipa.Agent, token, want string) *model.Node {
	t.Helper()
	var cur *model.Node
	await.UntilReason(t, 20*time.Second, "node "+n.UUID+" unlocked in "+want, func() (bool, string) {
		cur = e.get(n)
		if cur.ProvisionState == want && cur.Reservation == nil {
			return true, ""
		}
		if cur.Reservation == nil {
			err := e.api.Heartbeat(context.Background(), "", rpc.HeartbeatArgs{
				NodeID: n.UUID, CallbackURL: a.URL(), AgentToken: token, AgentVersion: ipa.Version,
			})
			if err != nil && class(err) != "NodeLocked" {
				t.Fatalf("heartbeat: %v", err)
			}
		}
		return false, fmt.Sprintf("%s (last_error %q)", cur.ProvisionState, deref(cur.LastError))
	})
	return cur
}

func commandNames(a *ipa.Agent) []string {
	var out []string
	for _, c := range a.Commands() {
		name := c.Method
		if st, ok := c.Params["step"].(map[string]any); ok {
			name += ":" + st["step"].(string)
		}
		out = append(out, name)
	}
	return out
}

func TestAgentCleanAndDirectDeploy(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e, logs := newAgentEnv(t, db, false)
		ctx := context.Background()
		n := e.node(states.Manageable, func(n *model.Node) { n.DeployInterface = "direct" })

		token := provideToAgent(t, e, n)
		if again, _ := e.api.GetNodeWithToken(ctx, "", n.UUID); again.DriverInternalInfo["agent_secret_token"] != "******" {
			t.Fatalf("second lookup saw %v", again.DriverInternalInfo["agent_secret_token"])
		}
		cleanAgent := ipa.New(t).WithToken(token)

		// A wrong token changes nothing.
		err := e.api.Heartbeat(ctx, "", rpc.HeartbeatArgs{NodeID: n.UUID, CallbackURL: cleanAgent.URL(), AgentToken: "x" + token, AgentVersion: ipa.Version})
		if class(err) != "InvalidParameterValue" {
			t.Fatalf("wrong token: %v", err)
		}
		if got := e.get(n); got.DriverInternalInfo["agent_url"] != nil {
			t.Fatalf("refused heartbeat recorded agent_url %v", got.DriverInternalInfo["agent_url"])
		}

		done := heartbeatUntil(t, e, n, cleanAgent, token, states.Available)
		want := []string{"clean.get_clean_steps", "clean.execute_clean_step:erase_devices_metadata", "clean.execute_clean_step:erase_devices"}
		if got := commandNames(cleanAgent); strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("agent commands %v, want %v", got, want)
		}
		if done.DriverInternalInfo["clean_steps"] != nil {
			t.Errorf("clean steps kept: %v", done.DriverInternalInfo["clean_steps"])
		}
		for _, k := range []string{"agent_secret_token", "agent_url"} {
			if v, ok := done.DriverInternalInfo[k]; ok {
				t.Errorf("after cleaning driver_internal_info[%s] = %v", k, v)
			}
		}
		if done.PowerState != states.PowerOff {
			t.Errorf("power after cleaning %q", done.PowerState)
		}

		// Deploy: the ramdisk boots afresh and needs a new token.
		done.InstanceInfo = map[string]any{"image_source": "http://127.0.0.1:1/disk.img", "image_checksum": "5d41402abc4b2a76b9719d911017c592"}
		_, err = e.st.UpdateNode(ctx, done, "instance_info")
		if err != nil {
			t.Fatal(err)
		}
		if err := e.api.DoNodeDeploy(ctx, "", n.UUID, false, nil, nil); err != nil {
			t.Fatal(err)
		}
		e.waitState(n, states.DeployWait)
		token2 := lookup(t, e, n)
		if token2 == token {
			t.Fatal("the deploy ramdisk got the cleaning ramdisk's token")
		}
		deployAgent := ipa.New(t).WithToken(token2)
		active := heartbeatUntil(t, e, n, deployAgent, token2, states.Active)
		want = []string{"deploy.get_deploy_steps", "deploy.execute_deploy_step:write_image", "standby.get_partition_uuids", "image.install_bootloader", "standby.power_off"}
		if got := commandNames(deployAgent); strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("agent commands %v, want %v", got, want)
		}
		args, _ := deployAgent.LastParams("deploy.execute_deploy_step")["step"].(map[string]any)["args"].(map[string]any)
		info, _ := args["image_info"].(map[string]any)
		if info["checksum"] != "5d41402abc4b2a76b9719d911017c592" || info["image_type"] != "whole-disk" {
			t.Errorf("image_info %v", info)
		}
		bl := deployAgent.LastParams("image.install_bootloader")
		if bl["target_boot_mode"] != "uefi" || bl["efi_system_part_uuid"] != ipa.DefaultPartitionUUIDs()["efi system partition uuid"] {
			t.Errorf("install_bootloader params %v", bl)
		}
		if active.PowerState != states.PowerOn || deref(active.LastError) != "" {
			t.Errorf("active node: power %q, last_error %q", active.PowerState, deref(active.LastError))
		}
		if active.DriverInternalInfo["deploy_steps"] != nil {
			t.Errorf("deploy steps kept: %v", active.DriverInternalInfo["deploy_steps"])
		}
		for _, k := range []string{"agent_secret_token", "agent_url"} {
			if v, ok := active.DriverInternalInfo[k]; ok {
				t.Errorf("after deploy driver_internal_info[%s] = %v", k, v)
			}
		}
		if out := logs.String(); strings.Contains(out, token) || strings.Contains(out, token2) {
			t.Fatal("an agent token was logged")
		}
	})
}

func TestAgentCleanStepFailure(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e, _ := newAgentEnv(t, db, false)
		n := e.node(states.Manageable, func(n *model.Node) { n.DeployInterface = "direct" })
		token := provideToAgent(t, e, n)
		a := ipa.New(t).WithToken(token).Handle("clean.execute_clean_step",
			ipa.AsyncFail(1, ipa.CommandError("CleaningError", "Clean step failed", "disk on fire", 500)))
		failed := heartbeatUntil(t, e, n, a, token, states.CleanFail)
		le := deref(failed.LastError)
		// The agent's failure is last_error as it is, without a prefix.
		if !strings.HasPrefix(le, "Clean step deploy.erase_devices_metadata failed on node "+n.UUID+". ") || !strings.Contains(le, "disk on fire") {
			t.Fatalf("last_error %q", le)
		}
		if !failed.Maintenance || deref(failed.Fault) != "clean failure" {
			t.Errorf("maintenance %v fault %q", failed.Maintenance, deref(failed.Fault))
		}
		if failed.DriverInternalInfo["agent_secret_token"] != nil || failed.DriverInternalInfo["agent_url"] != nil {
			t.Error("token or agent_url kept after clean failure")
		}
	})
}

func TestHeartbeatRequireTLS(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e, _ := newAgentEnv(t, db, true)
		ctx := context.Background()
		n := e.node(states.CleanWait, func(n *model.Node) { n.DeployInterface = "direct" })
		token := lookup(t, e, n)
		err := e.api.Heartbeat(ctx, "", rpc.HeartbeatArgs{NodeID: n.UUID, CallbackURL: "http://127.0.0.1:9999", AgentToken: token, AgentVersion: ipa.Version})
		if class(err) != "InvalidParameterValue" || err.Error() != "TLS is required by configuration" {
			t.Fatalf("plain HTTP callback under require_tls: %v", err)
		}
		if e.get(n).DriverInternalInfo["agent_url"] != nil {
			t.Fatal("refused callback URL recorded")
		}
		// An agent serving HTTPS is taken.
		a := ipa.New(t).WithTLS().WithToken(token)
		if err := e.api.Heartbeat(ctx, "", rpc.HeartbeatArgs{NodeID: n.UUID, CallbackURL: a.URL(), AgentToken: token, AgentVersion: ipa.Version, AgentVerifyCA: a.CAPEM()}); err != nil {
			t.Fatalf("HTTPS callback under require_tls: %v", err)
		}
		await.UntilReason(t, 10*time.Second, "the HTTPS callback URL recorded", func() (bool, string) {
			dii := e.get(n).DriverInternalInfo
			return dii["agent_url"] == a.URL(), fmt.Sprintf("driver_internal_info %v", dii)
		})
	})
}

// TestHeartbeatOutsideAgentStates: a heartbeat in a state no flow waits
// in is dropped without locking the node, unless fast track keeps the
// agent around between operations.
func TestHeartbeatOutsideAgentStates(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e, logs := newAgentEnv(t, db, false)
		ctx := context.Background()
		send := func(n *model.Node, token string) {
			t.Helper()
			if err := e.api.Heartbeat(ctx, "", rpc.HeartbeatArgs{NodeID: n.UUID, CallbackURL: "http://127.0.0.1:9999", AgentToken: token, AgentVersion: ipa.Version}); err != nil {
				t.Fatal(err)
			}
		}
		active := e.node(states.Active, func(n *model.Node) { n.DeployInterface = "direct" })
		send(active, lookup(t, e, active))
		await.Until(t, 5*time.Second, "the heartbeat in active dropped", func() bool {
			return strings.Contains(logs.String(), "heartbeat from node in unsupported provision state")
		})
		if got := e.waitUnlocked(active); got.DriverInternalInfo["agent_url"] != nil || got.DriverInternalInfo["agent_last_heartbeat"] != nil {
			t.Errorf("dropped heartbeat recorded: %v", got.DriverInternalInfo)
		}

		idle := e.node(states.Manageable, func(n *model.Node) {
			n.DeployInterface = "direct"
			n.DriverInfo = map[string]any{"fast_track": true}
		})
		send(idle, lookup(t, e, idle))
		await.Until(t, 5*time.Second, "the fast-track heartbeat in manageable recorded", func() bool {
			return e.get(idle).DriverInternalInfo["agent_last_heartbeat"] != nil
		})
		if got := e.waitUnlocked(idle); got.DriverInternalInfo["agent_url"] != "http://127.0.0.1:9999" || got.ProvisionState != states.Manageable {
			t.Errorf("fast-track heartbeat: state %s, driver_internal_info %v", got.ProvisionState, got.DriverInternalInfo)
		}
	})
}

// TestHeartbeatInMaintenanceFailsFlow: unless provisioning in
// maintenance is allowed, a heartbeat fails the flow of a node that was
// put into maintenance meanwhile.
func TestHeartbeatInMaintenanceFailsFlow(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e, _ := newFastTrackEnvWith(t, db, map[string]map[string]string{"conductor": {"allow_provisioning_in_maintenance": "false"}})
		ctx := context.Background()
		for _, c := range []struct {
			state, failed, lastError string
		}{
			{states.CleanWait, states.CleanFail, "Cleaning aborted as node is in maintenance mode"},
			{states.DeployWait, states.DeployFail, "Deploy aborted as node is in maintenance mode"},
		} {
			n := e.node(c.state, func(n *model.Node) {
				n.DeployInterface = "direct"
				n.Maintenance = true
				n.PowerState = states.PowerOn
			})
			token := lookup(t, e, n)
			if err := e.api.Heartbeat(ctx, "", rpc.HeartbeatArgs{NodeID: n.UUID, CallbackURL: "http://127.0.0.1:9", AgentToken: token, AgentVersion: ipa.Version}); err != nil {
				t.Fatal(err)
			}
			got := e.waitState(n, c.failed)
			if deref(got.LastError) != c.lastError {
				t.Errorf("%s: last_error %q", c.state, deref(got.LastError))
			}
			if c.state == states.DeployWait && got.PowerState != states.PowerOff {
				t.Errorf("deploy failed in maintenance left power %q", got.PowerState)
			}
		}
	})
}

// TestHeartbeatAgentUnreachableFailsCleaning: an error while asking the
// agent how the step goes fails cleaning with upstream's wording.
func TestHeartbeatAgentUnreachableFailsCleaning(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e, _ := newAgentEnv(t, db, false)
		ctx := context.Background()
		n := e.node(states.Manageable, func(n *model.Node) { n.DeployInterface = "direct" })
		token := provideToAgent(t, e, n)
		a := ipa.New(t).WithToken(token).Handle("clean.execute_clean_step", ipa.ExecuteStep("clean", 1000, nil))
		send := func() {
			t.Helper()
			if err := e.api.Heartbeat(ctx, "", rpc.HeartbeatArgs{NodeID: n.UUID, CallbackURL: a.URL(), AgentToken: token, AgentVersion: ipa.Version}); err != nil {
				t.Fatal(err)
			}
		}
		send()
		await.Until(t, 10*time.Second, "the first step started and the node unlocked", func() bool {
			return a.Count("clean.execute_clean_step") > 0 && e.get(n).Reservation == nil
		})
		a.Down()
		send()
		failed := e.waitState(n, states.CleanFail)
		if le := deref(failed.LastError); !strings.HasPrefix(le, "Node failed to check cleaning progress: ") {
			t.Errorf("last_error %q", le)
		}
	})
}
