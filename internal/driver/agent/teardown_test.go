package agent

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/agentclient"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/driver/fake"
	"github.com/openkeel/ironic/internal/driver/network"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/neutron"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store"
	"github.com/openkeel/ironic/internal/store/storetest"
	fakeneutron "github.com/openkeel/ironic/testing/neutron"
)

// journal is the order in which the interfaces of a task were called.
type journal struct {
	mu    sync.Mutex
	calls []string
}

func (j *journal) add(call string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.calls = append(j.calls, call)
}

func (j *journal) String() string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return strings.Join(j.calls, ",")
}

// journalNetwork records its calls; fail, keyed by method, makes one
// fail with that error.
type journalNetwork struct {
	j    *journal
	fail map[string]error
}

func (n *journalNetwork) call(name string) error {
	n.j.add(name)
	return n.fail[name]
}

func (n *journalNetwork) Properties() map[string]string                { return map[string]string{} }
func (n *journalNetwork) Steps() []driver.StepSpec                     { return nil }
func (n *journalNetwork) Validate(context.Context, *driver.Task) error { return nil }
func (n *journalNetwork) PortChanged(context.Context, *driver.Task, *model.Port) error {
	return nil
}
func (n *journalNetwork) PortgroupChanged(context.Context, *driver.Task, *model.Portgroup) error {
	return nil
}
func (n *journalNetwork) VifAttach(context.Context, *driver.Task, map[string]any) error { return nil }
func (n *journalNetwork) VifDetach(context.Context, *driver.Task, string) error         { return nil }
func (n *journalNetwork) VifList(context.Context, *driver.Task) ([]map[string]any, error) {
	return nil, nil
}
func (n *journalNetwork) GetCurrentVif(context.Context, *driver.Task, map[string]any) (string, error) {
	return "", nil
}
func (n *journalNetwork) AddProvisioningNetwork(context.Context, *driver.Task) error {
	return n.call("add_provisioning_network")
}
func (n *journalNetwork) RemoveProvisioningNetwork(context.Context, *driver.Task) error {
	return n.call("remove_provisioning_network")
}
func (n *journalNetwork) ConfigureTenantNetworks(context.Context, *driver.Task) error {
	return n.call("configure_tenant_networks")
}
func (n *journalNetwork) UnconfigureTenantNetworks(context.Context, *driver.Task) error {
	return n.call("unconfigure_tenant_networks")
}
func (n *journalNetwork) AddCleaningNetwork(context.Context, *driver.Task) error {
	return n.call("add_cleaning_network")
}
func (n *journalNetwork) RemoveCleaningNetwork(context.Context, *driver.Task) error {
	return n.call("remove_cleaning_network")
}

// journalPower is a power interface that is always able to do anything.
type journalPower struct {
	j     *journal
	state string
}

func (p *journalPower) Properties() map[string]string                { return map[string]string{} }
func (p *journalPower) Steps() []driver.StepSpec                     { return nil }
func (p *journalPower) Validate(context.Context, *driver.Task) error { return nil }
func (p *journalPower) GetPowerState(context.Context, *driver.Task) (string, error) {
	return p.state, nil
}
func (p *journalPower) SetPowerState(_ context.Context, _ *driver.Task, state string, _ time.Duration) error {
	p.j.add(state)
	p.state = state
	return nil
}
func (p *journalPower) Reboot(context.Context, *driver.Task, time.Duration) error {
	p.j.add("reboot")
	p.state = "power on"
	return nil
}
func (p *journalPower) GetSupportedPowerStates(context.Context, *driver.Task) ([]string, error) {
	return []string{"power on", "power off", "rebooting"}, nil
}

// journalBoot records the instance boot's preparation.
type journalBoot struct {
	fake.Boot
	j *journal
}

func (b *journalBoot) PrepareInstance(context.Context, *driver.Task) error {
	b.j.add("prepare_instance")
	return nil
}

func newTask(j *journal, nw driver.NetworkInterface, disablePowerOff bool) *driver.Task {
	n := &model.Node{UUID: "1f0b5a8e-2d3c-4b5a-8c7d-6e5f4a3b2c1d", DisablePowerOff: disablePowerOff, ProvisionState: states.Deploying,
		DriverInfo: map[string]any{}, InstanceInfo: map[string]any{},
		DriverInternalInfo: map[string]any{"agent_url": "https://127.0.0.1:9999", "boot_from_volume": "vol"}}
	return &driver.Task{Node: n, Driver: &driver.Interfaces{
		Power: &journalPower{j: j, state: "power on"}, Network: nw, Storage: &fake.Storage{}, Boot: &fake.Boot{},
	}}
}

// Tear down is upstream AgentBaseMixin.tear_down for every agent deploy:
// power off first, then the node leaves its tenant networks and the
// provisioning network; a node that cannot be powered off stays on and
// is rebooted by clean up instead, so it no longer runs the instance.
func TestTearDownLeavesTenantNetworksAfterPowerOff(t *testing.T) {
	client := agentclient.New(agentclient.DefaultOptions())
	t.Cleanup(client.Close)
	o := Options{Client: client}
	deploys := map[string]driver.DeployInterface{"custom-agent": NewCustomAgent(o), "direct": NewDirect(o), "ramdisk": NewRamdisk(o)}
	for name, d := range deploys {
		for _, disable := range []bool{false, true} {
			j := &journal{}
			task := newTask(j, &journalNetwork{j: j}, disable)
			ctx := context.Background()
			if err := d.CleanUp(ctx, task); err != nil {
				t.Fatalf("%s: clean up: %v", name, err)
			}
			state, err := d.TearDown(ctx, task)
			if err != nil || state != "deleted" {
				t.Fatalf("%s: tear down: %q %v", name, state, err)
			}
			want := "power off,unconfigure_tenant_networks,remove_provisioning_network"
			if disable {
				want = "reboot,unconfigure_tenant_networks,remove_provisioning_network"
			}
			if got := j.String(); got != want {
				t.Errorf("%s (disable_power_off %v): calls %s, want %s", name, disable, got, want)
			}
			if _, ok := task.Node.DriverInternalInfo["boot_from_volume"]; ok {
				t.Errorf("%s: boot_from_volume kept: %v", name, task.Node.DriverInternalInfo)
			}
		}
	}
}

// Prepare is upstream CustomAgentDeploy.prepare: a deployment (a rebuild
// among them) powers the node off and moves it from its tenant networks
// to the provisioning network; a node that cannot be powered off is left
// on, and one already off gets no power action. An active node taken
// over by this conductor only gets its instance boot back, on no network
// of the deployment.
func TestPrepareFlipsNetworksOnlyForDeployments(t *testing.T) {
	ctx := context.Background()
	client := agentclient.New(agentclient.DefaultOptions())
	t.Cleanup(client.Close)
	d := NewCustomAgent(Options{Client: client})
	for _, c := range []struct {
		state   string
		disable bool
		power   string
		want    string
	}{
		{states.Deploying, false, "power on", "power off,unconfigure_tenant_networks,add_provisioning_network"},
		// Already off: no power action, as upstream's node_power_action.
		{states.Deploying, false, "power off", "unconfigure_tenant_networks,add_provisioning_network"},
		{states.Deploying, true, "power on", "unconfigure_tenant_networks,add_provisioning_network"},
		{states.Active, false, "power on", "prepare_instance"},
	} {
		j := &journal{}
		task := newTask(j, &journalNetwork{j: j}, c.disable)
		task.Node.ProvisionState = c.state
		task.Driver.Power.(*journalPower).state = c.power
		task.Driver.Boot = &journalBoot{j: j}
		if err := d.Prepare(ctx, task); err != nil {
			t.Fatalf("%s: %v", c.state, err)
		}
		if got := j.String(); got != c.want {
			t.Errorf("%s (disable_power_off %v): calls %q, want %q", c.state, c.disable, got, c.want)
		}
		if _, still := task.Node.DriverInternalInfo["agent_url"]; still == (c.state == states.Deploying && !c.disable) {
			t.Errorf("%s (disable_power_off %v): agent_url %v after prepare", c.state, c.disable, task.Node.DriverInternalInfo["agent_url"])
		}
	}
}

// With the flat interface and Neutron, the instance's VIF is unbound from
// the node when it is torn down, so it is not bound while the node
// cleans.
func TestTearDownUnbindsFlatVIF(t *testing.T) {
	ctx := context.Background()
	st := store.New(storetest.Backends(t)[0].DB)
	n, err := st.CreateNode(ctx, &model.Node{Driver: "fake-hardware", NetworkInterface: "flat"})
	if err != nil {
		t.Fatal(err)
	}
	mac, pxe := "52:54:00:12:34:56", true
	if _, err := st.CreatePort(ctx, &model.Port{Address: &mac, NodeID: &n.ID, PXEEnabled: &pxe}); err != nil {
		t.Fatal(err)
	}
	const vif = "5c4b3a29-1807-4f6e-9d5c-4b3a29180706"
	fn := fakeneutron.New(t).Network("6d5c4b3a-2918-4706-8f5e-4d3c2b1a0918", "tenant").
		Port(map[string]any{"id": vif, "network_id": "6d5c4b3a-2918-4706-8f5e-4d3c2b1a0918", "mac_address": "fa:16:3e:00:00:01"})
	flat := &network.Flat{Ports: st, Neutron: &network.NeutronOptions{
		Client: &neutron.Client{Auth: func(context.Context) (string, string, error) { return "svc", fn.URL(), nil }},
	}}
	j := &journal{}
	task := newTask(j, flat, false)
	task.Node = n
	if err := flat.VifAttach(ctx, task, map[string]any{"id": vif}); err != nil {
		t.Fatal(err)
	}
	if err := flat.ConfigureTenantNetworks(ctx, task); err != nil {
		t.Fatal(err)
	}
	if p := fn.GetPort(vif); p["binding:host_id"] != n.UUID {
		t.Fatalf("VIF of the active node: %v", p)
	}
	client := agentclient.New(agentclient.DefaultOptions())
	t.Cleanup(client.Close)
	if _, err := NewDirect(Options{Client: client}).TearDown(ctx, task); err != nil {
		t.Fatal(err)
	}
	if p := fn.GetPort(vif); p["binding:host_id"] != "" {
		t.Errorf("VIF after tear down: %v", p)
	}
	if j.String() != "power off" {
		t.Errorf("power actions %s", j)
	}
}

// An Ironic error of the network interface reaches the conductor as it
// is, so that last_error reads as upstream's; another error is wrapped
// with what failed.
func TestNetworkErrorsUnchanged(t *testing.T) {
	ctx := context.Background()
	client := agentclient.New(agentclient.DefaultOptions())
	t.Cleanup(client.Close)
	d := NewDirect(Options{Client: client})
	netErr := errs.NewMessage(errs.ClassNetworkError, "Failed to create neutron ports for node's 1f0b5a8e ports 2a3b.")
	calls := map[string]func(*driver.Task) error{
		"add_cleaning_network": func(task *driver.Task) error {
			_, err := d.PrepareCleaning(ctx, task)
			return err
		},
		"add_provisioning_network": func(task *driver.Task) error { return d.Prepare(ctx, task) },
		"remove_cleaning_network":  func(task *driver.Task) error { return d.TearDownCleaning(ctx, task) },
		"unconfigure_tenant_networks": func(task *driver.Task) error {
			_, err := d.TearDown(ctx, task)
			return err
		},
		"remove_provisioning_network": func(task *driver.Task) error {
			_, err := d.switchToTenantNetwork(ctx, task, nil)
			return err
		},
		"configure_tenant_networks": func(task *driver.Task) error {
			_, err := d.switchToTenantNetwork(ctx, task, nil)
			return err
		},
	}
	for method, call := range calls {
		j := &journal{}
		err := call(newTask(j, &journalNetwork{j: j, fail: map[string]error{method: netErr}}, false))
		if err == nil || err.Error() != netErr.Error() || !errs.Is(err, errs.ClassNetworkError) {
			t.Errorf("%s failing with a NetworkError: %v", method, err)
		}
		j = &journal{}
		err = call(newTask(j, &journalNetwork{j: j, fail: map[string]error{method: errors.New("connection refused")}}, false))
		want := strings.ReplaceAll(method, "_", " ") + ": connection refused"
		if err == nil || !strings.HasSuffix(err.Error(), want) {
			t.Errorf("%s failing with a plain error: %v, want …%q", method, err, want)
		}
	}
}
