package agent

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/agentclient"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/driver/fake"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/testing/ipa"
)

// recordingPower is a power interface that records its actions and
// supports the states it is given.
type recordingPower struct {
	mu        sync.Mutex
	supported []string
	state     string
	actions   []string
}

func (p *recordingPower) Properties() map[string]string                { return map[string]string{} }
func (p *recordingPower) Steps() []driver.StepSpec                     { return nil }
func (p *recordingPower) Validate(context.Context, *driver.Task) error { return nil }
func (p *recordingPower) GetPowerState(context.Context, *driver.Task) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.state, nil
}
func (p *recordingPower) SetPowerState(_ context.Context, _ *driver.Task, state string, _ time.Duration) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.actions, p.state = append(p.actions, state), state
	return nil
}
func (p *recordingPower) Reboot(context.Context, *driver.Task, time.Duration) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.actions, p.state = append(p.actions, "rebooting"), "power on"
	return nil
}
func (p *recordingPower) GetSupportedPowerStates(context.Context, *driver.Task) ([]string, error) {
	return p.supported, nil
}

func (p *recordingPower) done() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.actions, ",")
}

// TestTearDownAgentAndBootInstance: how the agent is stopped and the
// instance started depends on what the node's power can do, as upstream's
// tear_down_agent and boot_instance.
func TestTearDownAgentAndBootInstance(t *testing.T) {
	all := []string{"power on", "power off", "rebooting"}
	cases := []struct {
		name            string
		supported       []string
		disablePowerOff bool
		// agentPowersOff: the ramdisk turns the machine off when told to.
		agentPowersOff bool
		wantCommands   string
		// wantActions are the out-of-band power actions of both steps.
		wantActions string
	}{
		{"soft power off through the agent, power on", all, false, true, "standby.power_off", "power on"},
		{"no power off: lock the agent down, reset into the instance", all, true, false, "standby.sync,system.lockdown", "rebooting"},
		{"no power on: reboot into the instance, leave it running", []string{"power off", "rebooting"}, false, false, "standby.sync", "rebooting"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := ipa.New(t).WithToken("tok")
			power := &recordingPower{supported: c.supported, state: "power on"}
			if c.agentPowersOff {
				a.Handle("standby.power_off", func(map[string]any) ipa.Outcome {
					power.mu.Lock()
					power.state = "power off"
					power.mu.Unlock()
					return ipa.Outcome{Async: true}
				})
			}
			co := agentclient.DefaultOptions()
			co.CommandWaitInterval = time.Millisecond
			co.PostDeployGetPowerStateRetryInterval = time.Millisecond
			client := agentclient.New(co)
			t.Cleanup(client.Close)
			d := NewCustomAgent(Options{Client: client})
			n := &model.Node{UUID: "6d3f0f2c-7c8e-4a8e-9d0b-2a1c3e4f5a60", DisablePowerOff: c.disablePowerOff,
				DriverInfo: map[string]any{}, DriverInternalInfo: map[string]any{"agent_url": a.URL(), "agent_secret_token": "tok"}}
			task := &driver.Task{Node: n, Driver: &driver.Interfaces{Power: power}}
			ctx := context.Background()
			if _, err := d.tearDownAgent(ctx, task, nil); err != nil {
				t.Fatalf("tear_down_agent: %v", err)
			}
			var sent []string
			for _, cmd := range a.Commands() {
				sent = append(sent, cmd.Method)
			}
			if got := strings.Join(sent, ","); got != c.wantCommands {
				t.Fatalf("agent commands %s, want %s", got, c.wantCommands)
			}
			if _, err := d.bootInstance(ctx, task, nil); err != nil {
				t.Fatalf("boot_instance: %v", err)
			}
			if got := power.done(); got != c.wantActions {
				t.Fatalf("power actions %q, want %q", got, c.wantActions)
			}
			if n.PowerState != "power on" {
				t.Errorf("power state %q", n.PowerState)
			}
		})
	}
}

// TestTearDownServiceLocksDown: leaving servicing on a node that cannot be
// powered off locks its agent down (an agent already gone is fine), then
// reboots into the instance.
func TestTearDownServiceLocksDown(t *testing.T) {
	co := agentclient.DefaultOptions()
	co.PostDeployGetPowerStateRetryInterval = time.Millisecond
	client := agentclient.New(co)
	t.Cleanup(client.Close)
	d := NewDirect(Options{Client: client})
	for _, gone := range []bool{false, true} {
		a := ipa.New(t).WithToken("tok")
		if gone {
			a.Down()
		}
		power := &recordingPower{state: "power on"}
		n := &model.Node{UUID: "6d3f0f2c-7c8e-4a8e-9d0b-2a1c3e4f5a61", DisablePowerOff: true,
			DriverInfo: map[string]any{}, DriverInternalInfo: map[string]any{"agent_url": a.URL(), "agent_secret_token": "tok"}}
		task := &driver.Task{Node: n, Driver: &driver.Interfaces{Power: power, Boot: &fake.Boot{}, Network: &journalNetwork{j: &journal{}}}}
		if err := d.TearDownService(context.Background(), task); err != nil {
			t.Fatalf("agent gone %v: %v", gone, err)
		}
		want := 1
		if gone {
			want = 0
		}
		if a.Count("system.lockdown") != want || power.done() != "rebooting" {
			t.Errorf("agent gone %v: lockdowns %d, power %q", gone, a.Count("system.lockdown"), power.done())
		}
		if n.DriverInternalInfo["agent_url"] != nil {
			t.Errorf("agent_url kept: %v", n.DriverInternalInfo)
		}
	}
}
