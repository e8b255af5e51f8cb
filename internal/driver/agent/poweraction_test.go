package agent

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/agentclient"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/testing/ipa"
)

// brokenGetPower cannot read the power state; any action is recorded.
type brokenGetPower struct {
	*journalPower
}

func (p brokenGetPower) GetPowerState(context.Context, *driver.Task) (string, error) {
	return "", errors.New("BMC unreachable")
}

func countCalls(j *journal, call string) int {
	n := 0
	for _, c := range strings.Split(j.String(), ",") {
		if c == call {
			n++
		}
	}
	return n
}

// powerOffSites are the agent interfaces' power offs, each upstream's
// node_power_action(POWER_OFF) at the same place.
func powerOffSites(t *testing.T) map[string]func(context.Context, *driver.Task) error {
	client := agentclient.New(agentclient.DefaultOptions())
	t.Cleanup(client.Close)
	o := Options{Client: client}
	custom, ramdisk := NewCustomAgent(o), NewRamdisk(o)
	rescue := &Rescue{o: RescueOptions{Client: client}}
	inspect := NewInspect(InspectOptions{PowerOff: true})
	return map[string]func(context.Context, *driver.Task) error{
		"tear_down": func(ctx context.Context, task *driver.Task) error {
			_, err := custom.TearDown(ctx, task)
			return err
		},
		"tear_down_cleaning": custom.TearDownCleaning,
		"ramdisk deploy": func(ctx context.Context, task *driver.Task) error {
			_, err := ramdisk.Deploy(ctx, task)
			return err
		},
		"ramdisk prepare": ramdisk.Prepare,
		"rescue": func(ctx context.Context, task *driver.Task) error {
			_, err := rescue.Rescue(ctx, task)
			return err
		},
		"unrescue": func(ctx context.Context, task *driver.Task) error {
			_, err := rescue.Unrescue(ctx, task)
			return err
		},
		"inspect": func(ctx context.Context, task *driver.Task) error {
			_, err := inspect.InspectHardware(ctx, task)
			return err
		},
		"inspect abort": inspect.Abort,
	}
}

// A node already off is not sent a power off, as upstream's
// _can_skip_state_change; the agent that ran on it is forgotten all the
// same. A node that is on is powered off.
func TestPowerOffSkipsNodeAlreadyOff(t *testing.T) {
	ctx := context.Background()
	for name, call := range powerOffSites(t) {
		for _, initial := range []string{"power on", "power off"} {
			j := &journal{}
			task := newTask(j, &journalNetwork{j: j}, false)
			task.Driver.Power.(*journalPower).state = initial
			task.Node.DriverInternalInfo["agent_secret_token"] = "tok"
			task.Node.DriverInternalInfo["agent_cached_deploy_steps"] = map[string]any{}
			if err := call(ctx, task); err != nil {
				t.Fatalf("%s from %s: %v", name, initial, err)
			}
			want := 1
			if initial == "power off" {
				want = 0
			}
			if got := countCalls(j, "power off"); got != want {
				t.Errorf("%s from %s: %d power offs sent (calls %s), want %d", name, initial, got, j, want)
			}
			for _, k := range []string{"agent_url", "agent_secret_token", "agent_cached_deploy_steps"} {
				if v, ok := task.Node.DriverInternalInfo[k]; ok {
					t.Errorf("%s from %s: %s kept: %v", name, initial, k, v)
				}
			}
		}
	}
}

// Reading the power state fails: nothing is sent, the error is the power
// interface's, and the agent is not forgotten, as upstream raises before
// its wipe.
func TestPowerOffFailsWhenPowerStateUnknown(t *testing.T) {
	ctx := context.Background()
	for name, call := range powerOffSites(t) {
		if strings.HasPrefix(name, "inspect") {
			// Inspection words its failures itself.
			continue
		}
		j := &journal{}
		task := newTask(j, &journalNetwork{j: j}, false)
		task.Driver.Power = brokenGetPower{&journalPower{j: j, state: "power on"}}
		err := call(ctx, task)
		if err == nil || !strings.Contains(err.Error(), "BMC unreachable") {
			t.Errorf("%s: error %v", name, err)
		}
		if got := countCalls(j, "power off"); got != 0 {
			t.Errorf("%s: power off sent without a power state: %s", name, j)
		}
		if task.Node.DriverInternalInfo["agent_url"] == nil {
			t.Errorf("%s: agent_url wiped on a failed power action", name)
		}
	}
}

// Upstream's ramdisk deploy powers off without looking at
// disable_power_off, and node_power_action refuses it.
func TestRamdiskDeployRefusesDisablePowerOff(t *testing.T) {
	client := agentclient.New(agentclient.DefaultOptions())
	t.Cleanup(client.Close)
	j := &journal{}
	task := newTask(j, &journalNetwork{j: j}, true)
	_, err := NewRamdisk(Options{Client: client}).Deploy(context.Background(), task)
	if !errs.Is(err, errs.ClassPowerStateFailure) {
		t.Fatalf("error %v, want PowerStateFailure", err)
	}
	if j.String() != "" {
		t.Errorf("calls %s after a refused power off", j)
	}
}

// Power on is skipped for a node already on (boot_instance after a soft
// power off that did not take); reboot never is.
func TestBootInstancePowerOnSkipsNodeAlreadyOn(t *testing.T) {
	ctx := context.Background()
	client := agentclient.New(agentclient.DefaultOptions())
	t.Cleanup(client.Close)
	d := NewCustomAgent(Options{Client: client})
	for _, c := range []struct {
		initial string
		disable bool
		want    string
	}{
		{"power off", false, "power on"},
		{"power on", false, ""},
		{"power on", true, "reboot"},
	} {
		j := &journal{}
		task := newTask(j, &journalNetwork{j: j}, c.disable)
		task.Driver.Power.(*journalPower).state = c.initial
		if _, err := d.bootInstance(ctx, task, nil); err != nil {
			t.Fatalf("from %s (disable_power_off %v): %v", c.initial, c.disable, err)
		}
		if got := j.String(); got != c.want {
			t.Errorf("from %s (disable_power_off %v): calls %q, want %q", c.initial, c.disable, got, c.want)
		}
		if task.Node.PowerState != "power on" {
			t.Errorf("from %s: power state %q", c.initial, task.Node.PowerState)
		}
	}
}

// Rescue and unrescue are upstream's power_off_and_on: a node that must
// stay on is not powered off, and is reset at the end instead of powered
// on.
func TestRescuePowerOffAndOn(t *testing.T) {
	ctx := context.Background()
	client := agentclient.New(agentclient.DefaultOptions())
	t.Cleanup(client.Close)
	r := &Rescue{o: RescueOptions{Client: client}}
	for _, disable := range []bool{false, true} {
		for name, call := range map[string]func(context.Context, *driver.Task) (string, error){"rescue": r.Rescue, "unrescue": r.Unrescue} {
			j := &journal{}
			task := newTask(j, &journalNetwork{j: j}, disable)
			task.Node.ProvisionState = states.Rescuing
			if _, err := call(ctx, task); err != nil {
				t.Fatalf("%s (disable_power_off %v): %v", name, disable, err)
			}
			want := []string{"power off", "power on"}
			if disable {
				want = []string{"reboot"}
			}
			var got []string
			for _, c := range strings.Split(j.String(), ",") {
				if c == "power off" || c == "power on" || c == "reboot" {
					got = append(got, c)
				}
			}
			if strings.Join(got, ",") != strings.Join(want, ",") {
				t.Errorf("%s (disable_power_off %v): power actions %v, want %v", name, disable, got, want)
			}
		}
	}
}

// Cleaning is torn down as upstream's tear_down_inband_cleaning: a node
// that must stay on is not powered off but reset out of the ramdisk once
// the cleaning network is gone, and a node whose cleaning failed is left
// as it is.
func TestTearDownCleaningPowerActions(t *testing.T) {
	ctx := context.Background()
	client := agentclient.New(agentclient.DefaultOptions())
	t.Cleanup(client.Close)
	d := NewDirect(Options{Client: client})
	for _, c := range []struct {
		name    string
		disable bool
		fault   string
		want    string
	}{
		{"normal", false, "", "power off,remove_cleaning_network"},
		{"disable_power_off", true, "", "remove_cleaning_network,reboot"},
		{"clean failure", false, "clean failure", "remove_cleaning_network"},
		{"clean failure, disable_power_off", true, "clean failure", "remove_cleaning_network"},
		{"other fault", false, "power failure", "power off,remove_cleaning_network"},
	} {
		j := &journal{}
		task := newTask(j, &journalNetwork{j: j}, c.disable)
		task.Node.ProvisionState = states.Cleaning
		if c.fault != "" {
			task.Node.Fault = &c.fault
		}
		if err := d.TearDownCleaning(ctx, task); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := j.String(); got != c.want {
			t.Errorf("%s: calls %q, want %q", c.name, got, c.want)
		}
	}
}

// Inspection is torn down as upstream's tear_down_managed_boot: the node
// is powered off only with [inspector]/power_off, and reset instead when
// it must stay on.
func TestInspectTearDownPowerActions(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		powerOff, disable bool
		want              string
	}{
		{true, false, "power off"},
		{false, false, ""},
		{true, true, "reboot"},
		{false, true, ""},
	} {
		j := &journal{}
		task := newTask(j, &journalNetwork{j: j}, c.disable)
		task.Node.ProvisionState = states.InspectWait
		if err := NewInspect(InspectOptions{PowerOff: c.powerOff}).Abort(ctx, task); err != nil {
			t.Fatalf("power_off %v, disable_power_off %v: %v", c.powerOff, c.disable, err)
		}
		if got := j.String(); got != c.want {
			t.Errorf("power_off %v, disable_power_off %v: calls %q, want %q", c.powerOff, c.disable, got, c.want)
		}
	}
}

// tear_down_agent's out-of-band power off after the agent was told to
// sync is skipped when the node is already off.
func TestTearDownAgentOOBPowerOffSkipsNodeAlreadyOff(t *testing.T) {
	co := agentclient.DefaultOptions()
	co.CommandWaitInterval = time.Millisecond
	client := agentclient.New(co)
	t.Cleanup(client.Close)
	d := NewCustomAgent(Options{Client: client})
	for _, initial := range []string{"power on", "power off"} {
		a := ipa.New(t).WithToken("tok")
		j := &journal{}
		task := newTask(j, &journalNetwork{j: j}, false)
		task.Driver.Power.(*journalPower).state = initial
		task.Node.DriverInfo["deploy_forces_oob_reboot"] = true
		task.Node.DriverInternalInfo["agent_url"] = a.URL()
		task.Node.DriverInternalInfo["agent_secret_token"] = "tok"
		if _, err := d.tearDownAgent(context.Background(), task, nil); err != nil {
			t.Fatalf("from %s: %v", initial, err)
		}
		want := "power off"
		if initial == "power off" {
			want = ""
		}
		if got := j.String(); got != want {
			t.Errorf("from %s: calls %q, want %q", initial, got, want)
		}
		if task.Node.PowerState != "power off" || task.Node.DriverInternalInfo["agent_url"] != nil {
			t.Errorf("from %s: power state %q, internal info %v", initial, task.Node.PowerState, task.Node.DriverInternalInfo)
		}
	}
}

func (n *journalNetwork) AddServicingNetwork(context.Context, *driver.Task) error {
	return n.call("add_servicing_network")
}
func (n *journalNetwork) RemoveServicingNetwork(context.Context, *driver.Task) error {
	return n.call("remove_servicing_network")
}

// Servicing is prepared and torn down as upstream's
// prepare_inband_service and tear_down_inband_service: power off (skipped
// when already off) around the network and boot changes, then power on,
// or one reset for a node that must stay on; a failed step leaves the
// node off its tenant networks for the operator.
func TestServicePowerActions(t *testing.T) {
	ctx := context.Background()
	a := ipa.New(t).WithToken("tok")
	client := agentclient.New(agentclient.DefaultOptions())
	t.Cleanup(client.Close)
	d := NewDirect(Options{Client: client})
	failure := "service failure"
	prepare := func(ctx context.Context, task *driver.Task) error {
		_, err := d.PrepareService(ctx, task)
		return err
	}
	for _, c := range []struct {
		name    string
		call    func(context.Context, *driver.Task) error
		initial string
		disable bool
		failed  bool
		want    string
	}{
		{"prepare", prepare, "power on", false, false, "power off,unconfigure_tenant_networks,add_servicing_network,power on"},
		{"prepare, already off", prepare, "power off", false, false, "unconfigure_tenant_networks,add_servicing_network,power on"},
		{"prepare, disable_power_off", prepare, "power on", true, false, "unconfigure_tenant_networks,add_servicing_network,reboot"},
		{"tear down", d.TearDownService, "power on", false, false, "power off,remove_servicing_network,configure_tenant_networks,power on"},
		{"tear down, already off", d.TearDownService, "power off", false, false, "remove_servicing_network,configure_tenant_networks,power on"},
		{"tear down, disable_power_off", d.TearDownService, "power on", true, false, "remove_servicing_network,configure_tenant_networks,reboot"},
		{"tear down, service failure", d.TearDownService, "power on", false, true, ""},
	} {
		j := &journal{}
		task := newTask(j, &journalNetwork{j: j}, c.disable)
		task.Node.ProvisionState = states.Servicing
		task.Node.DriverInternalInfo["agent_url"] = a.URL()
		task.Node.DriverInternalInfo["agent_secret_token"] = "tok"
		task.Driver.Power.(*journalPower).state = c.initial
		if c.failed {
			task.Node.Fault = &failure
		}
		if err := c.call(ctx, task); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := j.String(); got != c.want {
			t.Errorf("%s: calls %q, want %q", c.name, got, c.want)
		}
	}
}
