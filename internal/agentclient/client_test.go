package agentclient

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/testing/fakeclock"
	"github.com/openkeel/ironic/testing/ipa"
)

const token = "s3cr3t-Agent-Token_value"

type env struct {
	agent *ipa.Agent
	tgt   Target
	cl    *Client
	clock *fakeclock.Clock
	logs  *bytes.Buffer
}

func newEnv(t *testing.T, agent *ipa.Agent, tune func(*Options)) *env {
	t.Helper()
	e := &env{agent: agent, clock: fakeclock.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)), logs: &bytes.Buffer{}}
	opts := DefaultOptions()
	opts.Clock = e.clock
	opts.CommandTimeout = 5 * time.Second
	opts.Log = slog.New(slog.NewTextHandler(lockedWriter{w: e.logs}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if tune != nil {
		tune(&opts)
	}
	e.cl = New(opts)
	t.Cleanup(e.cl.Close)
	e.tgt = Target{NodeUUID: "1be26c0b-03f2-4d2e-ae87-c02d7f33c123", URL: agent.URL(), Token: token}
	t.Cleanup(func() {
		if strings.Contains(e.logs.String(), token) {
			t.Errorf("agent token found in the client's log:\n%s", e.logs.String())
		}
	})
	return e
}

var logMu sync.Mutex

type lockedWriter struct{ w *bytes.Buffer }

func (l lockedWriter) Write(p []byte) (int, error) {
	logMu.Lock()
	defer logMu.Unlock()
	return l.w.Write(p)
}

func wantClass(t *testing.T, err error, class errs.Class, message string) {
	t.Helper()
	var e *errs.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T), want %s", err, err, class)
	}
	if e.Class != class {
		t.Fatalf("class %s (%q), want %s", e.Class, e.Message, class)
	}
	if message != "" && e.Message != message {
		t.Fatalf("message\n got %q\nwant %q", e.Message, message)
	}
	if strings.Contains(e.Message, token) {
		t.Fatalf("token in error message %q", e.Message)
	}
}

var view = NodeView{Node: map[string]any{"uuid": "1be26c0b-03f2-4d2e-ae87-c02d7f33c123"}, Ports: []map[string]any{{"address": "52:54:00:12:34:56"}},
	HardwareManagerVersion: ipa.HardwareManagerVersion()}

func TestTypedCommands(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, ipa.New(t).WithToken(token), nil)

	r, err := e.cl.GetCleanSteps(ctx, e.tgt, view)
	if err != nil {
		t.Fatal(err)
	}
	steps := r.ResultMap()["clean_steps"].(map[string]any)["GenericHardwareManager"].([]any)
	prio := map[string]float64{}
	for _, s := range steps {
		m := s.(map[string]any)
		prio[m["step"].(string)] = m["priority"].(float64)
	}
	if prio["erase_devices"] != 10 || prio["erase_devices_metadata"] != 99 {
		t.Fatalf("clean step priorities %v", prio)
	}
	if got := e.agent.LastParams("clean.get_clean_steps"); got["node"].(map[string]any)["uuid"] != e.tgt.NodeUUID || len(got["ports"].([]any)) != 1 {
		t.Fatalf("get_clean_steps params %v", got)
	}

	step := map[string]any{"step": "erase_devices_metadata", "interface": "deploy", "priority": 99}
	r, err = e.cl.ExecuteCleanStep(ctx, e.tgt, step, view)
	if err != nil || r.Status != StatusRunning || r.Name != "execute_clean_step" {
		t.Fatalf("execute_clean_step: %+v, %v", r, err)
	}
	p := e.agent.LastParams("clean.execute_clean_step")
	if p["clean_version"].(map[string]any)["generic_hardware_manager"] != "1.2" || p["step"].(map[string]any)["step"] != "erase_devices_metadata" {
		t.Fatalf("execute_clean_step params %v", p)
	}
	// A second command while the step runs is refused as busy.
	_, err = e.cl.PowerOff(ctx, e.tgt)
	wantClass(t, err, "AgentInProgress", `Node `+e.tgt.NodeUUID+` command "standby.power_off" failed. Agent is presently executing a command. Error Agent is busy: executing command execute_clean_step`)
	// The step runs for one status read, then reports its result.
	for i, want := range []string{StatusRunning, StatusSucceeded} {
		last, err := e.cl.GetLastCommandStatus(ctx, e.tgt, "clean.execute_clean_step")
		if err != nil || last.Status != want {
			t.Fatalf("read %d: %+v, %v; want %s", i, last, err, want)
		}
		if want == StatusSucceeded && last.ResultMap()["clean_step"].(map[string]any)["step"] != "erase_devices_metadata" {
			t.Fatalf("result %v", last.Result)
		}
	}

	for _, tc := range []struct {
		name string
		call func() (*CommandResult, error)
		cmd  string
		key  string
	}{
		{"get_deploy_steps", func() (*CommandResult, error) { return e.cl.GetDeploySteps(ctx, e.tgt, view) }, "deploy.get_deploy_steps", "deploy_steps"},
		{"get_service_steps", func() (*CommandResult, error) { return e.cl.GetServiceSteps(ctx, e.tgt, view) }, "service.get_service_steps", "service_steps"},
		{"get_partition_uuids", func() (*CommandResult, error) { return e.cl.GetPartitionUUIDs(ctx, e.tgt) }, "standby.get_partition_uuids", "root uuid"},
		{"collect_system_logs", func() (*CommandResult, error) { return e.cl.CollectSystemLogs(ctx, e.tgt) }, "log.collect_system_logs", "system_logs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := tc.call()
			if err != nil || r.Status != StatusSucceeded {
				t.Fatalf("%+v, %v", r, err)
			}
			if _, ok := r.ResultMap()[tc.key]; !ok {
				t.Fatalf("result %v has no %s", r.Result, tc.key)
			}
			if e.agent.Count(tc.cmd) != 1 {
				t.Fatalf("agent saw %d %s", e.agent.Count(tc.cmd), tc.cmd)
			}
		})
	}

	deployStep := map[string]any{"interface": "deploy", "step": "write_image", "priority": 80,
		"args": map[string]any{"image_info": map[string]any{"id": "img", "urls": []any{"http://127.0.0.1/img"}}}}
	r, err = e.cl.ExecuteDeployStep(ctx, e.tgt, deployStep, view)
	if err != nil || r.Status != StatusRunning {
		t.Fatalf("execute_deploy_step: %+v, %v", r, err)
	}
	if e.agent.LastParams("deploy.execute_deploy_step")["deploy_version"] == nil {
		t.Fatal("deploy_version not sent")
	}
	// write_image stays RUNNING for two polls.
	for i, want := range []string{StatusRunning, StatusRunning, StatusSucceeded} {
		last, err := e.cl.GetLastCommandStatus(ctx, e.tgt, "execute_deploy_step")
		if err != nil || last.Status != want {
			t.Fatalf("poll %d: %+v, %v; want %s", i, last, err, want)
		}
	}

	r, err = e.cl.ExecuteServiceStep(ctx, e.tgt, map[string]any{"step": "burnin_cpu", "interface": "deploy"}, view)
	if err != nil || r.Status != StatusRunning || e.agent.LastParams("service.execute_service_step")["service_version"] == nil {
		t.Fatalf("execute_service_step: %+v, %v", r, err)
	}
	for range 2 {
		if _, err := e.cl.GetCommandsStatus(ctx, e.tgt, StatusOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	r, err = e.cl.Sync(ctx, e.tgt)
	if err != nil || r.Status != StatusSucceeded || r.Name != "sync" {
		t.Fatalf("sync: %+v, %v", r, err)
	}
	r, err = e.cl.Reboot(ctx, e.tgt)
	if err != nil || r.Name != "run_image" {
		t.Fatalf("reboot: %+v, %v", r, err)
	}
	if last, err := e.cl.GetLastCommandStatus(ctx, e.tgt, "standby.run_image"); err != nil || last.Status != StatusSucceeded {
		t.Fatalf("run_image status %+v, %v", last, err)
	}
	r, err = e.cl.PowerOff(ctx, e.tgt)
	if err != nil || r.Name != "power_off" {
		t.Fatalf("power_off: %+v, %v", r, err)
	}
}

func TestInstallBootloaderPolls(t *testing.T) {
	ctx := context.Background()
	agent := ipa.New(t).WithToken(token)
	agent.Handle("image.install_bootloader", ipa.Async(3, nil))
	e := newEnv(t, agent, nil)
	r, err := e.cl.InstallBootloader(ctx, e.tgt, BootloaderParams{RootUUID: "root-1", TargetBootMode: "uefi", EFISystemPartUUID: "efi-1"})
	if err != nil || r.Status != StatusSucceeded {
		t.Fatalf("%+v, %v", r, err)
	}
	// The first status read happens at once, then one per interval.
	if len(e.clock.Sleeps()) != 3 || e.clock.Sleeps()[0] != 6*time.Second {
		t.Fatalf("slept %v", e.clock.Sleeps())
	}
	p := agent.LastParams("image.install_bootloader")
	if p["root_uuid"] != "root-1" || p["target_boot_mode"] != "uefi" || p["prep_boot_part_uuid"] != nil {
		t.Fatalf("params %v", p)
	}
}

func TestInstallBootloaderFallback(t *testing.T) {
	ctx := context.Background()
	oldAgent := func(params map[string]any) ipa.Outcome {
		if _, ok := params["target_boot_mode"]; ok {
			return ipa.Outcome{Fault: &ipa.Fault{Status: 400, Faultstring: "Invalid command parameters: unexpected target_boot_mode"}}
		}
		return ipa.Outcome{Async: true}
	}
	t.Run("bios retries without boot mode", func(t *testing.T) {
		agent := ipa.New(t).WithToken(token).Handle("image.install_bootloader", oldAgent)
		e := newEnv(t, agent, nil)
		r, err := e.cl.InstallBootloader(ctx, e.tgt, BootloaderParams{RootUUID: "r", TargetBootMode: "bios"})
		if err != nil || r.Status != StatusSucceeded {
			t.Fatalf("%+v, %v", r, err)
		}
		if agent.Count("image.install_bootloader") != 2 {
			t.Fatalf("sent %d times", agent.Count("image.install_bootloader"))
		}
	})
	t.Run("uefi on software RAID fails", func(t *testing.T) {
		agent := ipa.New(t).WithToken(token).Handle("image.install_bootloader", oldAgent)
		e := newEnv(t, agent, nil)
		_, err := e.cl.InstallBootloader(ctx, e.tgt, BootloaderParams{RootUUID: "r", TargetBootMode: "uefi", SoftwareRAID: true})
		wantClass(t, err, "AgentAPIError", "Agent API for node "+e.tgt.NodeUUID+" returned HTTP status code 400 with error: Invalid command parameters: unexpected target_boot_mode")
		if agent.Count("image.install_bootloader") != 1 {
			t.Fatalf("sent %d times", agent.Count("image.install_bootloader"))
		}
	})
}

func TestPollTimeout(t *testing.T) {
	agent := ipa.New(t).WithToken(token).Handle("image.install_bootloader", ipa.Async(1000, nil))
	e := newEnv(t, agent, func(o *Options) { o.CommandWaitAttempts = 4 })
	_, err := e.cl.InstallBootloader(context.Background(), e.tgt, BootloaderParams{RootUUID: "r", TargetBootMode: "bios"})
	wantClass(t, err, "AgentCommandTimeout", "Timeout executing command image.install_bootloader on node "+e.tgt.NodeUUID)
	if agent.Count("status") != 4 || len(e.clock.Sleeps()) != 3 {
		t.Fatalf("status reads %d, sleeps %d", agent.Count("status"), len(e.clock.Sleeps()))
	}
}

func TestFailedCommandAndTypeError(t *testing.T) {
	ctx := context.Background()
	agent := ipa.New(t).WithToken(token)
	agent.Handle("clean.execute_clean_step", ipa.AsyncFail(0, ipa.CommandError("CleaningError", "Clean step failed", "disk on fire", 500)))
	agent.Handle("standby.sync", func(map[string]any) ipa.Outcome {
		return ipa.Outcome{Error: ipa.CommandError("TypeError", "Command execution failed", "sync() got an unexpected keyword argument 'x'", 500)}
	})
	e := newEnv(t, agent, nil)
	if _, err := e.cl.ExecuteCleanStep(ctx, e.tgt, map[string]any{"step": "erase_devices"}, view); err != nil {
		t.Fatal(err)
	}
	last, err := e.cl.GetLastCommandStatus(ctx, e.tgt, "clean.execute_clean_step")
	if err != nil || last.Status != StatusFailed || CommandError(last) != "disk on fire" {
		t.Fatalf("%+v, %v", last, err)
	}
	_, err = e.cl.Sync(ctx, e.tgt)
	wantClass(t, err, "AgentAPIError", "Agent API for node "+e.tgt.NodeUUID+" returned HTTP status code 500 with error: sync() got an unexpected keyword argument 'x'")
}

func TestCommandErrorText(t *testing.T) {
	for _, tc := range []struct {
		err  any
		want string
	}{
		{nil, "Invalid agent response"},
		{"plain", "plain"},
		{map[string]any{"message": "m", "details": "d"}, "d"},
		{map[string]any{"message": "m", "details": ""}, "m"},
		{map[string]any{"code": 500.0}, "{'code': 500.0}"},
	} {
		if got := CommandError(&CommandResult{Error: tc.err}); got != tc.want {
			t.Errorf("CommandError(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

func TestTokenRequired(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct{ name, nodeToken string }{{"missing", ""}, {"wrong", "not-the-token"}} {
		t.Run(tc.name, func(t *testing.T) {
			agent := ipa.New(t).WithToken(token)
			e := newEnv(t, agent, nil)
			if tc.nodeToken == "" {
				e.tgt.Token = ""
			} else {
				e.tgt.Token = tc.nodeToken
			}
			_, err := e.cl.Sync(ctx, e.tgt)
			wantClass(t, err, "AgentAPIError", "Agent API for node "+e.tgt.NodeUUID+" returned HTTP status code 401 with error: 401 Unauthorized: Token invalid.")
			_, err = e.cl.GetCommandsStatus(ctx, e.tgt, StatusOptions{})
			wantClass(t, err, "AgentAPIError", "Agent API for node "+e.tgt.NodeUUID+" returned HTTP status code 401 with error: 401 Unauthorized: Token invalid.")
			if agent.Count("unauthorized") != 2 || len(agent.Commands()) != 0 {
				t.Fatalf("unauthorized %d, commands %d", agent.Count("unauthorized"), len(agent.Commands()))
			}
		})
	}
}

func TestBusyIsAgentInProgress(t *testing.T) {
	agent := ipa.New(t).WithToken(token)
	agent.BusyNext(1)
	e := newEnv(t, agent, nil)
	_, err := e.cl.Sync(context.Background(), e.tgt)
	wantClass(t, err, "AgentInProgress", `Node `+e.tgt.NodeUUID+` command "standby.sync" failed. Agent is presently executing a command. Error Agent is busy: executing command sync`)
	// Not retried by the client: the conductor tries again at the next
	// heartbeat, as upstream.
	if agent.Count("standby.sync") != 1 {
		t.Fatalf("sent %d times", agent.Count("standby.sync"))
	}
	if _, err := e.cl.Sync(context.Background(), e.tgt); err != nil {
		t.Fatal(err)
	}
}

func TestConnectionRetries(t *testing.T) {
	ctx := context.Background()
	t.Run("recovers", func(t *testing.T) {
		agent := ipa.New(t).WithToken(token)
		agent.DropNext(2)
		e := newEnv(t, agent, nil)
		r, err := e.cl.Sync(ctx, e.tgt)
		if err != nil || r.Status != StatusSucceeded {
			t.Fatalf("%+v, %v", r, err)
		}
		// Each failed POST is followed by a look at the last command.
		if agent.Count("standby.sync") != 3 || agent.Count("status") != 2 {
			t.Fatalf("posts %d, status reads %d", agent.Count("standby.sync"), agent.Count("status"))
		}
	})
	t.Run("gives up after max_command_attempts", func(t *testing.T) {
		agent := ipa.New(t).WithToken(token)
		agent.Down()
		e := newEnv(t, agent, func(o *Options) { o.MaxCommandAttempts = 2 })
		_, err := e.cl.Sync(ctx, e.tgt)
		wantClass(t, err, "AgentConnectionFailed", "")
		msg := err.Error()
		if !strings.HasPrefix(msg, "Connection to agent failed: Failed to connect to the agent running on node "+e.tgt.NodeUUID+" for invoking command standby.sync. Error: ") {
			t.Fatalf("message %q", msg)
		}
		// 2 POST attempts, each followed by a status check retried twice.
		if agent.Count("dropped") != 2+2*2 {
			t.Fatalf("dropped %d", agent.Count("dropped"))
		}
	})
	t.Run("lost answer of a running command", func(t *testing.T) {
		agent := ipa.New(t).WithToken(token)
		agent.LoseAnswerNext(1)
		e := newEnv(t, agent, nil)
		r, err := e.cl.ExecuteCleanStep(ctx, e.tgt, map[string]any{"step": "erase_devices"}, view)
		if err != nil || r.Status != StatusRunning || r.Name != "execute_clean_step" {
			t.Fatalf("%+v, %v", r, err)
		}
		if agent.Count("clean.execute_clean_step") != 1 || len(agent.Commands()) != 1 {
			t.Fatalf("command sent %d times", agent.Count("clean.execute_clean_step"))
		}
	})
	t.Run("lost answer of a finished command is resent", func(t *testing.T) {
		agent := ipa.New(t).WithToken(token)
		agent.LoseAnswerNext(1)
		e := newEnv(t, agent, nil)
		if _, err := e.cl.Sync(ctx, e.tgt); err != nil {
			t.Fatal(err)
		}
		if agent.Count("standby.sync") != 2 {
			t.Fatalf("sent %d times", agent.Count("standby.sync"))
		}
	})
	t.Run("timeout", func(t *testing.T) {
		agent := ipa.New(t).WithToken(token)
		agent.SlowNext(1, 500*time.Millisecond)
		e := newEnv(t, agent, func(o *Options) { o.CommandTimeout = 100 * time.Millisecond })
		r, err := e.cl.Sync(ctx, e.tgt)
		if err != nil || r.Status != StatusSucceeded {
			t.Fatalf("%+v, %v", r, err)
		}
		// The timed-out POST was followed by a look at the last command
		// (none yet: the slow request is still held) and a second POST.
		if agent.Count("status") != 1 {
			t.Fatalf("status reads %d", agent.Count("status"))
		}
	})
	t.Run("status retries", func(t *testing.T) {
		agent := ipa.New(t).WithToken(token)
		agent.DropStatusNext(2)
		e := newEnv(t, agent, nil)
		if _, err := e.cl.GetCommandsStatus(ctx, e.tgt, StatusOptions{}); err != nil {
			t.Fatal(err)
		}
		if agent.Count("status") != 3 {
			t.Fatalf("status reads %d", agent.Count("status"))
		}
		agent.Down()
		_, err := e.cl.GetCommandsStatus(ctx, e.tgt, StatusOptions{NoRetry: true})
		wantClass(t, err, "AgentConnectionFailed", "")
		before := agent.Count("dropped")
		_, err = e.cl.GetCommandsStatus(ctx, e.tgt, StatusOptions{})
		wantClass(t, err, "AgentConnectionFailed", "")
		if agent.Count("dropped")-before != 3 {
			t.Fatalf("retried %d times, want [agent]/max_command_attempts", agent.Count("dropped")-before)
		}
	})
	t.Run("no agent_url", func(t *testing.T) {
		e := newEnv(t, ipa.New(t).WithToken(token), nil)
		e.tgt.URL = ""
		_, err := e.cl.Sync(ctx, e.tgt)
		wantClass(t, err, "AgentConnectionFailed", "Agent driver requires agent_url in driver_internal_info")
	})
}

func TestAgentErrors(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, ipa.New(t).WithToken(token), nil)
	_, err := e.cl.Command(ctx, e.tgt, "nosuch.command", nil, Async)
	wantClass(t, err, "AgentAPIError", "Agent API for node "+e.tgt.NodeUUID+" returned HTTP status code 404 with error: Not found: Extension with id nosuch not found.")
	_, err = e.cl.Command(ctx, e.tgt, "standby.nosuch", nil, Async)
	wantClass(t, err, "AgentAPIError", "Agent API for node "+e.tgt.NodeUUID+" returned HTTP status code 400 with error: Invalid command: Unknown command: nosuch")
}

func TestFinalizeRescue(t *testing.T) {
	ctx := context.Background()
	t.Run("hashed", func(t *testing.T) {
		agent := ipa.New(t).WithToken(token)
		e := newEnv(t, agent, nil)
		if _, err := e.cl.FinalizeRescue(ctx, e.tgt, RescuePassword{Hashed: "$6$salt$hash"}); err != nil {
			t.Fatal(err)
		}
		p := agent.LastParams("rescue.finalize_rescue")
		if p["rescue_password"] != "$6$salt$hash" || p["hashed"] != true {
			t.Fatalf("params %v", p)
		}
	})
	t.Run("missing password", func(t *testing.T) {
		e := newEnv(t, ipa.New(t).WithToken(token), nil)
		_, err := e.cl.FinalizeRescue(ctx, e.tgt, RescuePassword{})
		wantClass(t, err, "IronicException", "Agent rescue requires rescue_password in instance_info")
	})
	oldAgent := func(p map[string]any) ipa.Outcome {
		if _, ok := p["hashed"]; ok {
			return ipa.Outcome{Fault: &ipa.Fault{Status: 400, Faultstring: "Invalid command parameters: hashed"}}
		}
		return ipa.Outcome{}
	}
	t.Run("old agent refused", func(t *testing.T) {
		e := newEnv(t, ipa.New(t).WithToken(token).Handle("rescue.finalize_rescue", oldAgent), nil)
		_, err := e.cl.FinalizeRescue(ctx, e.tgt, RescuePassword{Hashed: "h"})
		wantClass(t, err, "InstanceRescueFailure", "Unable to rescue node due to an out of date agent ramdisk. Please contact the administrator to update the rescue ramdisk to contain an ironic-python-agent version of at least 6.0.0.")
	})
	t.Run("old agent plain password allowed", func(t *testing.T) {
		agent := ipa.New(t).WithToken(token).Handle("rescue.finalize_rescue", oldAgent)
		e := newEnv(t, agent, func(o *Options) { o.RequireRescuePasswordHashed = false })
		if _, err := e.cl.FinalizeRescue(ctx, e.tgt, RescuePassword{Hashed: "h", Plain: "plain"}); err != nil {
			t.Fatal(err)
		}
		if p := agent.LastParams("rescue.finalize_rescue"); p["rescue_password"] != "plain" {
			t.Fatalf("params %v", p)
		}
	})
}

func TestServiceStepsOldAgent(t *testing.T) {
	agent := ipa.New(t).WithToken(token).Handle("service.get_service_steps", func(map[string]any) ipa.Outcome {
		return ipa.Outcome{Fault: &ipa.Fault{Status: 404, Faultstring: "Not found: Extension with id service not found."}}
	})
	e := newEnv(t, agent, nil)
	r, err := e.cl.GetServiceSteps(context.Background(), e.tgt, view)
	if err != nil || r.Result != nil {
		t.Fatalf("%+v, %v", r, err)
	}
}

func TestLockdown(t *testing.T) {
	ctx := context.Background()
	t.Run("agent goes away", func(t *testing.T) {
		agent := ipa.New(t).WithToken(token)
		e := newEnv(t, agent, nil)
		if err := e.cl.Lockdown(ctx, e.tgt, true); err != nil {
			t.Fatal(err)
		}
		if agent.Count("standby.sync") != 1 || agent.Count("system.lockdown") != 1 || len(e.clock.Sleeps()) != 0 {
			t.Fatalf("sync %d lockdown %d sleeps %d", agent.Count("standby.sync"), agent.Count("system.lockdown"), len(e.clock.Sleeps()))
		}
	})
	t.Run("agent stays", func(t *testing.T) {
		agent := ipa.New(t).WithToken(token).Handle("system.lockdown", ipa.Async(0, nil))
		e := newEnv(t, agent, func(o *Options) { o.PostDeployGetPowerStateRetries = 2 })
		err := e.cl.Lockdown(ctx, e.tgt, true)
		wantClass(t, err, "AgentCommandTimeout", "Timeout executing command system.lockdown on node "+e.tgt.NodeUUID)
		if agent.Count("status") != 3 || len(e.clock.Sleeps()) != 2 || e.clock.Sleeps()[0] != 5*time.Second {
			t.Fatalf("status %d sleeps %v", agent.Count("status"), e.clock.Sleeps())
		}
	})
	t.Run("already down", func(t *testing.T) {
		agent := ipa.New(t).WithToken(token)
		agent.Down()
		e := newEnv(t, agent, nil)
		if err := e.cl.Lockdown(ctx, e.tgt, false); err != nil {
			t.Fatal(err)
		}
		err := e.cl.Lockdown(ctx, e.tgt, true)
		wantClass(t, err, "AgentConnectionFailed", "")
	})
}

func TestTLS(t *testing.T) {
	ctx := context.Background()
	agent := ipa.New(t).WithToken(token).WithTLS()
	ca := filepath.Join(t.TempDir(), "node.crt")
	if err := os.WriteFile(ca, []byte(agent.CAPEM()), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Run("agent CA of the node", func(t *testing.T) {
		e := newEnv(t, agent, nil)
		e.tgt.VerifyCA = ca
		if _, err := e.cl.Sync(ctx, e.tgt); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("system roots refuse the agent", func(t *testing.T) {
		e := newEnv(t, agent, func(o *Options) { o.MaxCommandAttempts = 1 })
		_, err := e.cl.Sync(ctx, e.tgt)
		wantClass(t, err, "AgentConnectionFailed", "")
		if !strings.Contains(err.Error(), "certificate") {
			t.Fatalf("message %q", err)
		}
	})
	t.Run("verify off for the node", func(t *testing.T) {
		e := newEnv(t, agent, nil)
		e.tgt.VerifyCA = "false"
		if _, err := e.cl.Sync(ctx, e.tgt); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("conf path", func(t *testing.T) {
		e := newEnv(t, agent, func(o *Options) { o.VerifyCA = ca })
		if _, err := e.cl.Sync(ctx, e.tgt); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("neither path nor boolean", func(t *testing.T) {
		e := newEnv(t, agent, nil)
		e.tgt.VerifyCA = "/no/such/ca.pem"
		_, err := e.cl.Sync(ctx, e.tgt)
		wantClass(t, err, "InvalidParameterValue", "Agent CA /no/such/ca.pem is neither a path nor a boolean")
	})
}

func TestCheckCallbackURL(t *testing.T) {
	for _, tc := range []struct {
		require bool
		url     string
		bad     bool
	}{
		{true, "http://10.0.0.5:9999", true},
		{true, "https://10.0.0.5:9999", false},
		{true, "", false},
		{false, "http://10.0.0.5:9999", false},
	} {
		err := CheckCallbackURL(tc.require, tc.url)
		if tc.bad {
			wantClass(t, err, "InvalidParameterValue", "TLS is required by configuration")
		} else if err != nil {
			t.Errorf("CheckCallbackURL(%v, %q) = %v", tc.require, tc.url, err)
		}
	}
}

func TestOptionsFromConfig(t *testing.T) {
	c, err := config.Load(config.LoadOptions{Overrides: map[string]map[string]string{
		"agent":     {"command_timeout": "30", "max_command_attempts": "5", "command_wait_interval": "2", "verify_ca": "/etc/ca.pem"},
		"conductor": {"require_rescue_password_hashed": "false"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	o := OptionsFromConfig(c)
	if o.CommandTimeout != 30*time.Second || o.MaxCommandAttempts != 5 || o.CommandWaitInterval != 2*time.Second ||
		o.CommandWaitAttempts != 100 || o.VerifyCA != "/etc/ca.pem" || o.RequireRescuePasswordHashed || o.APIVersion != "v1" ||
		o.TLSMinimumVersion != "1.3" || o.PostDeployGetPowerStateRetries != 6 {
		t.Fatalf("options %+v", o)
	}
	def, err := config.Load(config.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, want := OptionsFromConfig(def), DefaultOptions()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("defaults from ironic.conf %+v, DefaultOptions %+v", got, want)
	}
}

// An agent answering with something that is not JSON fails the command
// without quoting the request: its parameters can hold a configdrive.
func TestNonJSONAnswerKeepsRequestOut(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, ipa.New(t).WithToken(token), nil)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
		io.WriteString(w, "<html>bad gateway</html>")
	}))
	t.Cleanup(proxy.Close)
	e.tgt.URL = proxy.URL
	_, err := e.cl.Command(ctx, e.tgt, "deploy.execute_deploy_step", map[string]any{"configdrive": "SECRET-CONFIGDRIVE"}, Async)
	wantClass(t, err, "IronicException", "")
	msg := err.Error()
	if !strings.Contains(msg, "Unable to decode response as JSON.") || !strings.Contains(msg, "bad gateway") {
		t.Fatalf("message %q", msg)
	}
	if strings.Contains(msg, "SECRET-CONFIGDRIVE") || strings.Contains(e.logs.String(), "SECRET-CONFIGDRIVE") {
		t.Fatalf("request parameters leaked: %q", msg)
	}
}
