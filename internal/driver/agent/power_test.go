package agent

import (
	"context"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/agentclient"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/testing/ipa"
)

func TestPowerClassMatchesDriversJSON(t *testing.T) {
	r := driver.NewRegistry()
	if err := RegisterPower(r, PowerOptions{}); err != nil {
		t.Fatal(err)
	}
	checkDeclared(t, r, driver.KindPower, "agent")
}

var heartbeatClock = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func liveNode(url string) *model.Node {
	return &model.Node{UUID: "6f7d3c36-8a53-4b7c-9a3e-3f6f3d1b7a00", DriverInternalInfo: map[string]any{
		"agent_url": url, "agent_secret_token": "tok",
		"agent_last_heartbeat": heartbeatClock.Add(-10 * time.Second).Format(driver.AgentHeartbeatLayout),
	}}
}

func TestPowerValidateNeedsFastTrackAndLiveAgent(t *testing.T) {
	ft := driver.FastTrack{Enabled: true, Timeout: 300 * time.Second, Now: func() time.Time { return heartbeatClock }}
	p := NewPower(PowerOptions{FastTrack: ft})
	ctx := context.Background()
	if err := p.Validate(ctx, &driver.Task{Node: liveNode("http://127.0.0.1:9")}); err != nil {
		t.Errorf("live agent refused: %v", err)
	}
	off := liveNode("http://127.0.0.1:9")
	off.DriverInfo = map[string]any{"fast_track": "false"}
	if err := p.Validate(ctx, &driver.Task{Node: off}); err == nil || err.Error() != "Fast track mode must be enabled to use the agent power interface" {
		t.Errorf("fast track off: %v", err)
	}
	silent := liveNode("http://127.0.0.1:9")
	silent.InternalInfo().Set(model.DIIAgentLastHeartbeat, heartbeatClock.Add(-301*time.Second).Format(driver.AgentHeartbeatLayout))
	err := p.Validate(ctx, &driver.Task{Node: silent})
	if err == nil || err.Error() != "Agent seems offline for node "+silent.UUID+", the agent power interface cannot be used" || !driver.IsClass(err, errs.ClassInvalidParameterValue) {
		t.Errorf("silent agent: %v", err)
	}
	if st, _ := p.GetPowerState(ctx, &driver.Task{Node: silent}); st != states.NoState {
		t.Errorf("power state of a silent agent %q", st)
	}
	if st, _ := p.GetPowerState(ctx, &driver.Task{Node: liveNode("http://127.0.0.1:9")}); st != states.PowerOn {
		t.Errorf("power state of a live agent %q", st)
	}
	if p.SupportsPowerSync(ctx, nil) {
		t.Error("agent power claims power sync")
	}
}

func TestPowerRebootsThroughAgent(t *testing.T) {
	a := ipa.New(t).WithToken("tok")
	co := agentclient.DefaultOptions()
	co.CommandWaitInterval = 10 * time.Millisecond
	client := agentclient.New(co)
	t.Cleanup(client.Close)
	p := NewPower(PowerOptions{Client: client, Wait: time.Millisecond})
	ctx := context.Background()

	n := liveNode(a.URL())
	if err := p.SetPowerState(ctx, &driver.Task{Node: n}, states.SoftReboot, 0); err != nil {
		t.Fatal(err)
	}
	if a.Count("standby.run_image") != 1 {
		t.Fatalf("agent commands %v", a.Commands())
	}
	if n.DriverInternalInfo["agent_url"] != nil || n.DriverInternalInfo["agent_secret_token"] != nil {
		t.Errorf("agent kept after reboot: %v", n.DriverInternalInfo)
	}

	// The rebooted ramdisk is a new agent.
	a2 := ipa.New(t).WithToken("tok")
	pre := liveNode(a2.URL())
	pre.DriverInternalInfo["agent_secret_token_pregenerated"] = true
	if err := p.Reboot(ctx, &driver.Task{Node: pre}, 0); err != nil {
		t.Fatal(err)
	}
	if pre.DriverInternalInfo["agent_secret_token"] != "tok" || pre.DriverInternalInfo["agent_url"] != nil {
		t.Errorf("pregenerated token: %v", pre.DriverInternalInfo)
	}

	err := p.SetPowerState(ctx, &driver.Task{Node: liveNode(a.URL())}, states.PowerOff, 0)
	if err == nil || err.Error() != "Failed to set node power state to power off." || !driver.IsClass(err, errs.ClassPowerStateFailure) {
		t.Errorf("power off: %v", err)
	}
	if a.Count("standby.power_off") != 0 || a.Count("standby.run_image") != 1 || a2.Count("standby.run_image") != 1 {
		t.Errorf("power off reached the agent: %v", a.Commands())
	}
}
