package agent

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/agentclient"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/testing/fakeclock"
	"github.com/openkeel/ironic/testing/ipa"
)

// machinePower is the BMC of the agent fixture's machine: off once the
// agent has powered it off, or once powered off out of band (recorded).
type machinePower struct {
	recordingPower
	agent *ipa.Agent
}

func (p *machinePower) GetPowerState(ctx context.Context, task *driver.Task) (string, error) {
	if p.agent.PoweredOff() {
		return "power off", nil
	}
	return p.recordingPower.GetPowerState(ctx, task)
}

// cancellingPower ends the caller's context at the first power state
// read, as a conductor stopping while the node is being waited for.
type cancellingPower struct {
	recordingPower
	cancel context.CancelFunc
}

func (p *cancellingPower) GetPowerState(ctx context.Context, task *driver.Task) (string, error) {
	p.cancel()
	return p.recordingPower.GetPowerState(ctx, task)
}

// syncBuffer collects the log lines of the driver.
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

// TestTearDownAgentWaitsForThePowerOff: after standby.power_off the node
// is given [agent]/post_deploy_get_power_state_retries ×
// post_deploy_get_power_state_retry_interval to go off by itself while the
// ramdisk flushes its disks, as upstream's soft_power_off; only a node
// still on then is powered off out of band, with upstream's warning. A
// refused command is no reason to skip the wait: the request may have
// gone through.
func TestTearDownAgentWaitsForThePowerOff(t *testing.T) {
	const uuid = "6d3f0f2c-7c8e-4a8e-9d0b-2a1c3e4f5a70"
	forced := func(secs int) string {
		return fmt.Sprintf("Failed to soft power off node %s in at least %d seconds. Forcing hard power off and proceeding.", uuid, secs)
	}
	cases := []struct {
		name     string
		retries  int
		interval time.Duration
		// agent sets up the machine's shutdown.
		agent func(a *ipa.Agent)
		// wantSlept and wantSleeps are the virtual wait; wantActions the
		// out-of-band power actions; wantLogs lines that must be logged.
		wantSlept   time.Duration
		wantSleeps  int
		wantActions string
		wantLogs    []string
	}{
		{
			name: "machine off at once", retries: 6, interval: 5 * time.Second,
			agent: func(a *ipa.Agent) { a.WithPowerOffDelay(0) },
		},
		{
			name: "disks flushed in 12 s of the 30 s allowed: no hard power off", retries: 6, interval: 5 * time.Second,
			agent:     func(a *ipa.Agent) { a.WithPowerOffDelay(12 * time.Second) },
			wantSlept: 15 * time.Second, wantSleeps: 3,
		},
		{
			name: "fixture's default delay within upstream's defaults", retries: 6, interval: 5 * time.Second,
			agent:     func(*ipa.Agent) {},
			wantSlept: 5 * time.Second, wantSleeps: 1,
		},
		{
			name: "shutdown hangs: the full 6 × 5 s, then forced", retries: 6, interval: 5 * time.Second,
			agent:     func(a *ipa.Agent) { a.NeverPowerOff() },
			wantSlept: 30 * time.Second, wantSleeps: 6, wantActions: "power off", wantLogs: []string{forced(30)},
		},
		{
			name: "flush slower than the configured 2 × 1 s: forced", retries: 2, interval: time.Second,
			agent:     func(a *ipa.Agent) { a.WithPowerOffDelay(10 * time.Second) },
			wantSlept: 2 * time.Second, wantSleeps: 2, wantActions: "power off", wantLogs: []string{forced(2)},
		},
		{
			name: "no retries: one read, then forced", retries: 0, interval: 5 * time.Second,
			agent:       func(a *ipa.Agent) { a.WithPowerOffDelay(time.Second) },
			wantActions: "power off", wantLogs: []string{forced(0)},
		},
		{
			name: "command refused: still waited for, then forced", retries: 6, interval: 5 * time.Second,
			agent: func(a *ipa.Agent) {
				a.Handle("standby.power_off", func(map[string]any) ipa.Outcome {
					return ipa.Outcome{Fault: &ipa.Fault{Status: 500, Faultstring: "Internal error"}}
				})
			},
			wantSlept: 30 * time.Second, wantSleeps: 6, wantActions: "power off",
			wantLogs: []string{"Failed to soft power off node " + uuid + ". AgentAPIError: ", forced(30)},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			clk := fakeclock.New(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
			a := ipa.New(t).WithToken("tok").WithClock(clk)
			c.agent(a)
			power := &machinePower{recordingPower: recordingPower{supported: []string{"power on", "power off", "rebooting"}, state: "power on"}, agent: a}
			co := agentclient.DefaultOptions()
			co.CommandWaitInterval = time.Millisecond
			co.MaxCommandAttempts = 1
			client := agentclient.New(co)
			t.Cleanup(client.Close)
			d := NewCustomAgent(Options{Client: client, Clock: clk,
				PostDeployGetPowerStateRetries: c.retries, PostDeployGetPowerStateRetryInterval: c.interval})
			logs := &syncBuffer{}
			n := &model.Node{UUID: uuid, PowerState: "power on", DriverInfo: map[string]any{},
				DriverInternalInfo: map[string]any{"agent_url": a.URL(), "agent_secret_token": "tok"}}
			task := &driver.Task{Node: n, Driver: &driver.Interfaces{Power: power}, Log: slog.New(slog.NewTextHandler(logs, nil))}
			if _, err := d.tearDownAgent(context.Background(), task, nil); err != nil {
				t.Fatalf("tear_down_agent: %v", err)
			}
			if got := a.Count("standby.power_off"); got != 1 {
				t.Errorf("standby.power_off sent %d times", got)
			}
			if slept, sleeps := clk.Slept(), len(clk.Sleeps()); slept != c.wantSlept || sleeps != c.wantSleeps {
				t.Errorf("waited %s in %d sleeps, want %s in %d", slept, sleeps, c.wantSlept, c.wantSleeps)
			}
			if got := power.done(); got != c.wantActions {
				t.Errorf("out-of-band power actions %q, want %q", got, c.wantActions)
			}
			out := logs.String()
			for _, want := range c.wantLogs {
				if !strings.Contains(out, want) {
					t.Errorf("log lacks %q:\n%s", want, out)
				}
			}
			if c.wantActions == "" && strings.Contains(out, "Forcing hard power off") {
				t.Errorf("forced power off logged:\n%s", out)
			}
			if n.PowerState != "power off" || n.InternalInfo().Get(model.DIIAgentURL) != nil || n.InternalInfo().Get(model.DIIAgentSecretToken) != nil {
				t.Errorf("node after tear down: power %q dii %v", n.PowerState, n.DriverInternalInfo)
			}
		})
	}
}

// TestTearDownAgentStopsWaitingWithItsContext: a conductor shutting down
// does not sit out the wait, nor power the node off behind it.
func TestTearDownAgentStopsWaitingWithItsContext(t *testing.T) {
	a := ipa.New(t).WithToken("tok").NeverPowerOff()
	ctx, cancel := context.WithCancel(context.Background())
	power := &cancellingPower{recordingPower: recordingPower{supported: []string{"power on", "power off"}, state: "power on"}, cancel: cancel}
	client := agentclient.New(agentclient.DefaultOptions())
	t.Cleanup(client.Close)
	clk := fakeclock.New(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	d := NewCustomAgent(Options{Client: client, Clock: clk, PostDeployGetPowerStateRetries: 6, PostDeployGetPowerStateRetryInterval: 5 * time.Second})
	n := &model.Node{UUID: "6d3f0f2c-7c8e-4a8e-9d0b-2a1c3e4f5a71", DriverInfo: map[string]any{},
		DriverInternalInfo: map[string]any{"agent_url": a.URL(), "agent_secret_token": "tok"}}
	task := &driver.Task{Node: n, Driver: &driver.Interfaces{Power: power}}
	_, err := d.tearDownAgent(ctx, task, nil)
	if err == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Fatalf("tear_down_agent: %v", err)
	}
	if got := power.done(); got != "" {
		t.Errorf("power actions %q after the context ended", got)
	}
}
