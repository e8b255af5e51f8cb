package agent

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/agentclient"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/driver/fake"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/testing/fakeclock"
)

// smartNICNetwork is a network interface whose ports are Smart NIC ones:
// it needs the node powered on to configure them.
type smartNICNetwork struct{ journalNetwork }

func (*smartNICNetwork) NeedPowerOn(context.Context, *driver.Task) bool { return true }

// journalManagement records the boot device set.
type journalManagement struct {
	fake.Management
	j *journal
}

func (m *journalManagement) SetBootDevice(_ context.Context, _ *driver.Task, device string, persistent bool) error {
	if persistent {
		device += " (persistent)"
	}
	m.j.add("boot device " + device)
	return nil
}

// A network change on a node with Smart NIC ports is made with the node
// powered on to its firmware (upstream's power_state_for_network_
// configuration), then, twice [agent]/neutron_agent_poll_interval later,
// the node is powered off again; a node already on, or a fast-track
// deployment, is left as it is.
func TestSmartNICNetworkChangesPowerTheNodeOn(t *testing.T) {
	ctx := context.Background()
	client := agentclient.New(agentclient.DefaultOptions())
	t.Cleanup(client.Close)
	for _, tc := range []struct {
		name     string
		poll     time.Duration
		run      func(d *CustomAgent, task *driver.Task) error
		power    string
		want     string
		wantWait []time.Duration
	}{
		{"tear down", 3 * time.Second, func(d *CustomAgent, task *driver.Task) error {
			_, err := d.TearDown(ctx, task)
			return err
		}, "power on",
			"power off,boot device bios,power on,unconfigure_tenant_networks,remove_provisioning_network,power off",
			[]time.Duration{6 * time.Second}},
		{"prepare of a deployment", 2 * time.Second, func(d *CustomAgent, task *driver.Task) error {
			return d.Prepare(ctx, task)
		}, "power off",
			"boot device bios,power on,unconfigure_tenant_networks,add_provisioning_network,power off",
			[]time.Duration{4 * time.Second}},
		{"switch to tenant network", time.Second, func(d *CustomAgent, task *driver.Task) error {
			_, err := d.switchToTenantNetwork(ctx, task, nil)
			return err
		}, "power off",
			"boot device bios,power on,remove_provisioning_network,configure_tenant_networks,power off",
			[]time.Duration{2 * time.Second}},
		{"node already on", time.Second, func(d *CustomAgent, task *driver.Task) error {
			_, err := d.switchToTenantNetwork(ctx, task, nil)
			return err
		}, "power on", "remove_provisioning_network,configure_tenant_networks", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := fakeclock.New(time.Unix(1_700_000_000, 0))
			d := NewCustomAgent(Options{Client: client, Clock: clk, NeutronAgentPollInterval: tc.poll})
			j := &journal{}
			task := newTask(j, &smartNICNetwork{journalNetwork{j: j}}, false)
			task.Node.ProvisionState = states.Deploying
			task.Driver.Power.(*journalPower).state = tc.power
			task.Driver.Management = &journalManagement{j: j}
			if err := tc.run(d, task); err != nil {
				t.Fatal(err)
			}
			if got := j.String(); got != tc.want {
				t.Errorf("calls %s, want %s", got, tc.want)
			}
			if got := clk.Sleeps(); !slices.Equal(got, tc.wantWait) {
				t.Errorf("waited %v, want %v", got, tc.wantWait)
			}
		})
	}
}
