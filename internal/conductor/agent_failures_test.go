package conductor_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/rpc"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store/sqldb"
	"github.com/openkeel/ironic/testing/await"
	"github.com/openkeel/ironic/testing/ipa"
)

const staleTokenError = "Invalid or missing agent token received."

// staleHeartbeat is a heartbeat from a ramdisk the conductor is done with:
// it must be refused and leave no agent_url behind.
func staleHeartbeat(t *testing.T, e *env, n *model.Node, a *ipa.Agent, token string) {
	t.Helper()
	err := e.api.Heartbeat(context.Background(), "", rpc.HeartbeatArgs{NodeID: n.UUID, CallbackURL: a.URL(), AgentToken: token, AgentVersion: ipa.Version})
	if class(err) != "InvalidParameterValue" || err.Error() != staleTokenError {
		t.Fatalf("heartbeat of a stale ramdisk: %v, want %q", err, staleTokenError)
	}
	if got := e.waitUnlocked(n); got.DriverInternalInfo["agent_url"] != nil {
		t.Fatalf("stale heartbeat recorded agent_url %v", got.DriverInternalInfo["agent_url"])
	}
}

// TestAgentNeverCallsBack: ramdisks that look the node up but never
// heartbeat fail the deployment and the cleaning once the (shortened)
// callback timeouts pass, with upstream's messages.
func TestAgentNeverCallsBack(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e, _ := newAgentEnv(t, db, false,
			withConf("conductor", "deploy_callback_timeout", "30"),
			withConf("conductor", "clean_callback_timeout", "30"))
		ctx := context.Background()
		dep := e.node(states.Available, func(n *model.Node) {
			n.DeployInterface = "direct"
			n.InstanceInfo = map[string]any{"image_source": "http://127.0.0.1:1/disk.img", "image_checksum": "5d41402abc4b2a76b9719d911017c592"}
		})
		if err := e.api.DoNodeDeploy(ctx, "", dep.UUID, false, nil, nil); err != nil {
			t.Fatal(err)
		}
		e.waitState(dep, states.DeployWait)
		cln := e.node(states.Manageable, func(n *model.Node) { n.DeployInterface = "direct" })
		if err := e.api.DoProvisioningAction(ctx, "", cln.UUID, "provide"); err != nil {
			t.Fatal(err)
		}
		e.waitState(cln, states.CleanWait)
		lookup(t, e, dep)
		clnToken := lookup(t, e, cln)

		check := func() {
			e.c.CheckDeployTimeouts(ctx)
			e.c.CheckCleanWaitTimeouts(ctx)
		}
		e.clock.Advance(20 * time.Second)
		check()
		for _, n := range []*model.Node{dep, cln} {
			if got := e.waitUnlocked(n); states.FailureStates.Contains(got.ProvisionState) {
				t.Fatalf("%s failed before its callback timeout: %s, %q", n.UUID, got.ProvisionState, deref(got.LastError))
			}
		}
		e.clock.Advance(11 * time.Second)
		check()

		got := e.waitState(dep, states.DeployFail)
		e.expect(got, states.DeployFail, states.Active, "Timeout reached while waiting for callback for node "+dep.UUID)
		got = e.waitState(cln, states.CleanFail)
		e.expect(got, states.CleanFail, states.Available, "Timeout reached while cleaning the node. Please check if the ramdisk responsible for the cleaning is running on the node. Failed on step {}.")
		// No step had started, so upstream leaves maintenance off.
		if got.Maintenance || got.PowerState != states.PowerOff {
			t.Errorf("after the clean timeout: maintenance %v power %q", got.Maintenance, got.PowerState)
		}
		// The late ramdisk of the failed cleaning is not let back in.
		staleHeartbeat(t, e, cln, ipa.New(t).WithToken(clnToken), clnToken)
	})
}

// TestAbortAgentCleanWait: an abort while the agent runs an abortable
// clean step fails the cleaning naming the step, powers the node off and
// shuts the ramdisk out.
func TestAbortAgentCleanWait(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e, _ := newAgentEnv(t, db, false)
		ctx := context.Background()
		n := e.node(states.Manageable, func(n *model.Node) { n.DeployInterface = "direct" })
		token := provideToAgent(t, e, n)
		// The step stays RUNNING far longer than the test.
		a := ipa.New(t).WithToken(token).Handle("clean.execute_clean_step", ipa.ExecuteStep("clean", 1<<20, nil))
		// Each check heartbeats an idle node, as the agent would, until the
		// step starts.
		await.UntilReason(t, 20*time.Second, "the first clean step to start", func() (bool, string) {
			if a.Count("clean.execute_clean_step") != 0 && e.get(n).Reservation == nil {
				return true, ""
			}
			if cur := e.get(n); cur.Reservation == nil && a.Count("clean.execute_clean_step") == 0 {
				err := e.api.Heartbeat(ctx, "", rpc.HeartbeatArgs{NodeID: n.UUID, CallbackURL: a.URL(), AgentToken: token, AgentVersion: ipa.Version})
				if err != nil && class(err) != "NodeLocked" {
					t.Fatal(err)
				}
			}
			return false, fmt.Sprintf("the first clean step never started: %v", commandNames(a))
		})
		running := e.waitUnlocked(n)
		if running.ProvisionState != states.CleanWait || running.CleanStep["step"] != "erase_devices_metadata" {
			t.Fatalf("before abort: %s, clean_step %v", running.ProvisionState, running.CleanStep)
		}
		if err := e.api.DoProvisioningAction(ctx, "", n.UUID, "abort"); err != nil {
			t.Fatal(err)
		}
		got := e.waitState(n, states.CleanFail)
		e.expect(got, states.CleanFail, states.Available, `By request, the clean operation was aborted during or after the completion of step "deploy.erase_devices_metadata"`)
		if len(got.CleanStep) != 0 || got.PowerState != states.PowerOff {
			t.Errorf("after abort: clean_step %v, power %q", got.CleanStep, got.PowerState)
		}
		if got.DriverInternalInfo["agent_secret_token"] != nil || got.DriverInternalInfo["clean_steps"] != nil {
			t.Errorf("cleaning state kept after abort: %v", got.DriverInternalInfo)
		}
		if a.Count("clean.execute_clean_step") != 1 {
			t.Errorf("agent commands after abort: %v", commandNames(a))
		}
		staleHeartbeat(t, e, n, a, token)
	})
}

// TestStaleRamdiskAfterPowerOff: powering a node off ends its ramdisk
// session; the agent that was running cannot heartbeat with its token.
func TestStaleRamdiskAfterPowerOff(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e, _ := newAgentEnv(t, db, false)
		ctx := context.Background()
		n := e.node(states.Manageable, func(n *model.Node) { n.DeployInterface = "direct" })
		token := provideToAgent(t, e, n)
		a := ipa.New(t).WithToken(token)
		if err := e.api.Heartbeat(ctx, "", rpc.HeartbeatArgs{NodeID: n.UUID, CallbackURL: a.URL(), AgentToken: token, AgentVersion: ipa.Version}); err != nil {
			t.Fatal(err)
		}
		if err := e.api.ChangeNodePowerState(ctx, "", n.UUID, states.PowerOff, 0); err != nil {
			t.Fatal(err)
		}
		var got *model.Node
		await.UntilReason(t, 10*time.Second, "the power off to finish", func() (bool, string) {
			got = e.waitUnlocked(n)
			return got.PowerState == states.PowerOff && got.TargetPowerState == states.NoState,
				fmt.Sprintf("power off never finished: %q → %q (%q)", got.PowerState, got.TargetPowerState, deref(got.LastError))
		})
		for _, k := range []string{"agent_secret_token", "agent_url"} {
			if v, ok := got.DriverInternalInfo[k]; ok {
				t.Errorf("after power off driver_internal_info[%s] = %v", k, v)
			}
		}
		staleHeartbeat(t, e, n, a, token)
	})
}

// TestAgentServiceStep: a service step only the agent has is validated at
// the first heartbeat of the service ramdisk, then runs on the agent; the
// node goes back to active. A step the agent does not have either fails
// servicing naming it.
func TestAgentServiceStep(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e, _ := newAgentEnv(t, db, false)
		ctx := context.Background()
		n := e.node(states.Active, func(n *model.Node) { n.DeployInterface = "direct"; n.PowerState = states.PowerOn })
		steps := []map[string]any{{"interface": "deploy", "step": "burnin_cpu", "args": map[string]any{}}}
		if err := e.api.DoNodeService(ctx, "", n.UUID, steps, false); err != nil {
			t.Fatal(err)
		}
		e.waitState(n, states.ServiceWait)
		token := lookup(t, e, n)
		a := ipa.New(t).WithToken(token)
		done := heartbeatUntil(t, e, n, a, token, states.Active)
		want := "service.get_service_steps,service.execute_service_step:burnin_cpu"
		if got := strings.Join(commandNames(a), ","); got != want {
			t.Fatalf("agent commands %s, want %s", got, want)
		}
		ran := a.LastParams("service.execute_service_step")["step"].(map[string]any)
		if ran["priority"] != float64(0) || ran["abortable"] != true {
			t.Errorf("step sent without the agent's priority and abortable: %v", ran)
		}
		if deref(done.LastError) != "" || done.DriverInternalInfo["service_steps"] != nil || done.DriverInternalInfo["agent_url"] != nil {
			t.Errorf("after servicing: last_error %q, driver_internal_info %v", deref(done.LastError), done.DriverInternalInfo)
		}

		// Now the agent's service steps are known: the steps are validated
		// before the ramdisk boots, and again at its first heartbeat.
		if err := e.api.DoNodeService(ctx, "", n.UUID, steps, false); err != nil {
			t.Fatal(err)
		}
		e.waitState(n, states.ServiceWait)
		token = lookup(t, e, n)
		again := ipa.New(t).WithToken(token)
		heartbeatUntil(t, e, n, again, token, states.Active)
		if got := strings.Join(commandNames(again), ","); got != want {
			t.Fatalf("agent commands of the second servicing %s, want %s", got, want)
		}

		if err := e.api.DoNodeService(ctx, "", n.UUID, []map[string]any{{"interface": "deploy", "step": "no_such_step"}}, false); err != nil {
			t.Fatal(err)
		}
		e.waitState(n, states.ServiceWait)
		token = lookup(t, e, n)
		b := ipa.New(t).WithToken(token)
		failed := heartbeatUntil(t, e, n, b, token, states.ServiceFail)
		if le := deref(failed.LastError); !strings.HasPrefix(le, "Node failed to start the first service step: ") || !strings.Contains(le, "no_such_step") {
			t.Fatalf("last_error %q", le)
		}
		if b.Count("service.execute_service_step") != 0 {
			t.Errorf("an unknown step was sent to the agent: %v", commandNames(b))
		}
	})
}

// storedLogs lists the ramdisk log archives in dir.
func storedLogs(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// TestRamdiskLogsCollected: with [agent]/deploy_logs_collect on_failure
// a failed clean step keeps the agent's logs, asked for before the
// ramdisk is torn down, and a successful cleaning keeps none; with
// always, successful cleaning and deployment keep them too.
func TestRamdiskLogsCollected(t *testing.T) {
	archive := []byte("\x1f\x8b the ramdisk's journal")
	withLogs := func(a *ipa.Agent) *ipa.Agent {
		return a.Handle("log.collect_system_logs", ipa.Sync(map[string]any{"system_logs": base64.StdEncoding.EncodeToString(archive)}))
	}
	clean := func(t *testing.T, e *env, a func(token string) *ipa.Agent, want string) (*model.Node, *ipa.Agent) {
		t.Helper()
		n := e.node(states.Manageable, func(n *model.Node) { n.DeployInterface = "direct" })
		token := provideToAgent(t, e, n)
		agent := a(token)
		return heartbeatUntil(t, e, n, agent, token, want), agent
	}
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		t.Run("on_failure", func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "deploy-logs")
			e, _ := newAgentEnv(t, db, false, withConf("agent", "deploy_logs_local_path", dir))
			ok, okAgent := clean(t, e, func(token string) *ipa.Agent { return withLogs(ipa.New(t).WithToken(token)) }, states.Available)
			if got := storedLogs(t, dir); len(got) != 0 || okAgent.Count("log.collect_system_logs") != 0 {
				t.Fatalf("logs of a successful cleaning of %s kept: %v", ok.UUID, got)
			}
			failed, a := clean(t, e, func(token string) *ipa.Agent {
				return withLogs(ipa.New(t).WithToken(token)).Handle("clean.execute_clean_step",
					ipa.AsyncFail(1, ipa.CommandError("CleaningError", "Clean step failed", "disk on fire", 500)))
			}, states.CleanFail)
			got := storedLogs(t, dir)
			if len(got) != 1 || !strings.HasPrefix(got[0], failed.UUID+"_cleaning_") || !strings.HasSuffix(got[0], ".tar.gz") {
				t.Fatalf("stored logs %v, want one %s_cleaning_<time>.tar.gz", got, failed.UUID)
			}
			data, err := os.ReadFile(filepath.Join(dir, got[0]))
			if err != nil || !bytes.Equal(data, archive) {
				t.Fatalf("stored archive %q (%v)", data, err)
			}
			names := commandNames(a)
			if names[len(names)-1] != "log.collect_system_logs" {
				t.Errorf("agent commands %v: the logs were not asked for last, before the teardown", names)
			}
		})
		t.Run("always", func(t *testing.T) {
			dir := t.TempDir()
			e, _ := newAgentEnv(t, db, false, withConf("agent", "deploy_logs_local_path", dir), withConf("agent", "deploy_logs_collect", "always"))
			n, _ := clean(t, e, func(token string) *ipa.Agent { return withLogs(ipa.New(t).WithToken(token)) }, states.Available)
			if got := storedLogs(t, dir); len(got) != 1 || !strings.HasPrefix(got[0], n.UUID+"_cleaning_") {
				t.Fatalf("stored logs after cleaning %v", got)
			}
			n.InstanceInfo = map[string]any{"image_source": "http://127.0.0.1:1/disk.img", "image_checksum": "5d41402abc4b2a76b9719d911017c592"}
			if _, err := e.st.UpdateNode(context.Background(), n, "instance_info"); err != nil {
				t.Fatal(err)
			}
			// The deployment's logs are a second later, in another file.
			e.clock.Advance(time.Second)
			if err := e.api.DoNodeDeploy(context.Background(), "", n.UUID, false, nil, nil); err != nil {
				t.Fatal(err)
			}
			e.waitState(n, states.DeployWait)
			token := lookup(t, e, n)
			heartbeatUntil(t, e, n, withLogs(ipa.New(t).WithToken(token)), token, states.Active)
			got := storedLogs(t, dir)
			if len(got) != 2 || !strings.HasPrefix(got[0], n.UUID+"_2") && !strings.HasPrefix(got[1], n.UUID+"_2") {
				t.Fatalf("stored logs after deployment %v, want the tear_down_agent one without a label", got)
			}
		})
	})
}

// TestAgentStepRebootRequested: a clean step the agent declares with
// reboot_requested reboots the node into a new ramdisk once it succeeds;
// the old agent's token is dropped, and the new agent's first heartbeat
// moves cleaning on to the next step.
func TestAgentStepRebootRequested(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e, _ := newAgentEnv(t, db, false)
		ctx := context.Background()
		steps := ipa.CleanSteps()
		for _, s := range steps {
			if m := s.(map[string]any); m["step"] == "erase_devices_metadata" {
				m["reboot_requested"] = true
			}
		}
		getSteps := ipa.Sync(map[string]any{
			"clean_steps":              map[string]any{"GenericHardwareManager": steps},
			"hardware_manager_version": ipa.HardwareManagerVersion(),
		})
		n := e.node(states.Manageable, func(n *model.Node) { n.DeployInterface = "direct" })
		token := provideToAgent(t, e, n)
		first := ipa.New(t).WithToken(token).Handle("clean.get_clean_steps", getSteps)
		var cur *model.Node
		// Each check heartbeats an idle node, as the agent would, until the
		// step asks for its reboot; a failed cleaning ends the wait at once.
		await.UntilReason(t, 20*time.Second, "the reboot after the step", func() (bool, string) {
			cur = e.get(n)
			if cur.Reservation == nil && cur.DriverInternalInfo["cleaning_reboot"] == true {
				return true, ""
			}
			noReboot := fmt.Sprintf("no reboot after the step: %s %q, commands %v", cur.ProvisionState, deref(cur.LastError), commandNames(first))
			if cur.ProvisionState == states.CleanFail {
				t.Fatal(noReboot)
			}
			if cur.Reservation == nil {
				err := e.api.Heartbeat(ctx, "", rpc.HeartbeatArgs{NodeID: n.UUID, CallbackURL: first.URL(), AgentToken: token, AgentVersion: ipa.Version})
				if err != nil && class(err) != "NodeLocked" {
					t.Fatal(err)
				}
			}
			return false, noReboot
		})
		if cur.ProvisionState != states.CleanWait || cur.CleanStep["step"] != "erase_devices_metadata" || cur.PowerState != states.PowerOn {
			t.Fatalf("after the reboot: %s, clean_step %v, power %q", cur.ProvisionState, cur.CleanStep, cur.PowerState)
		}
		if got := strings.Join(commandNames(first), ","); got != "clean.get_clean_steps,clean.execute_clean_step:erase_devices_metadata" {
			t.Fatalf("first agent ran %s", got)
		}
		staleHeartbeat(t, e, n, first, token)

		token2 := lookup(t, e, n)
		second := ipa.New(t).WithToken(token2).Handle("clean.get_clean_steps", getSteps)
		done := heartbeatUntil(t, e, n, second, token2, states.Available)
		if got := strings.Join(commandNames(second), ","); got != "clean.execute_clean_step:erase_devices" {
			t.Fatalf("rebooted agent ran %s, want only the next step", got)
		}
		if done.DriverInternalInfo["cleaning_reboot"] != nil || deref(done.LastError) != "" {
			t.Errorf("after cleaning: %v, last_error %q", done.DriverInternalInfo, deref(done.LastError))
		}
	})
}
