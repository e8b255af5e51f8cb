package agent

import (
	"context"
	"maps"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/agentclient"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/driver/drivertest"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/testing/ipa"
)

// checkDeclared checks the implementation r registers as kind/name
// against its class in drivers.json: interface type, number of
// properties and the steps it declares (the spec lists them without the
// runtime overrides, which read the agent's steps).
func checkDeclared(t *testing.T, r *driver.Registry, kind driver.Kind, name string) {
	t.Helper()
	impl, ok := r.Implementation(kind, name)
	if !ok {
		t.Fatalf("%s/%s not registered", kind, name)
	}
	_, c, ok := drivertest.LoadSpec(t).ClassOf(t, kind, name)
	if !ok || c.InterfaceType != string(kind) {
		t.Fatalf("spec class of %s/%s: %+v", kind, name, c)
	}
	if got := impl.Properties(); len(got) != len(c.Properties) {
		t.Errorf("properties %v, spec %v", got, c.Properties)
	}
	for _, sk := range driver.StepKinds {
		var got []driver.Step
		for _, s := range impl.Steps() {
			if s.Kind == sk {
				got = append(got, driver.NewStep(kind, s))
			}
		}
		drivertest.CompareSteps(t, string(sk), got, c.Steps[string(sk)])
	}
}

func TestRAIDClassMatchesDriversJSON(t *testing.T) {
	r := driver.NewRegistry()
	if err := RegisterRAID(r, RAIDOptions{}); err != nil {
		t.Fatal(err)
	}
	checkDeclared(t, r, driver.KindRAID, "agent")
}

func raidDisk(level string, size any, root bool) map[string]any {
	d := map[string]any{"raid_level": level, "size_gb": size}
	if root {
		d["is_root_volume"] = true
	}
	return d
}

func TestRAIDValidateConfig(t *testing.T) {
	r := NewRAID(RAIDOptions{})
	cases := []struct {
		name string
		cfg  map[string]any
		want string
	}{
		{"valid", map[string]any{"logical_disks": []any{raidDisk("1", 100.0, true), raidDisk("5", "MAX", false)}}, ""},
		{"missing", map[string]any{}, "RAID config validation error: 'logical_disks' is a required property"},
		{"extra", map[string]any{"logical_disks": []any{raidDisk("1", 10.0, false)}, "foo": 1.0}, "RAID config validation error: Additional properties are not allowed ('foo' was unexpected)"},
		{"empty", map[string]any{"logical_disks": []any{}}, "RAID config validation error: [] should be non-empty"},
		{"no level", map[string]any{"logical_disks": []any{map[string]any{"size_gb": 10.0}}}, "RAID config validation error: 'raid_level' is a required property"},
		{"bad level", map[string]any{"logical_disks": []any{raidDisk("7", 10.0, false)}},
			"RAID config validation error: '7' is not one of ['JBOD', '0', '1', '2', '5', '6', '1+0', '5+0', '6+0']"},
		{"bad size", map[string]any{"logical_disks": []any{raidDisk("1", "big", false)}}, "RAID config validation error: 'big' is not one of ['MAX']"},
		{"negative size", map[string]any{"logical_disks": []any{raidDisk("1", -1.0, false)}}, "RAID config validation error: -1 is less than the minimum of 0"},
		{"zero disks", map[string]any{"logical_disks": []any{map[string]any{"raid_level": "1", "size_gb": 1.0, "number_of_physical_disks": 0.0}}},
			"RAID config validation error: 0 is less than or equal to the minimum of 0"},
		{"dependency", map[string]any{"logical_disks": []any{map[string]any{"raid_level": "1", "size_gb": 1.0, "physical_disks": []any{"a"}}}},
			"RAID config validation error: 'controller' is a dependency of 'physical_disks'"},
		{"two roots", map[string]any{"logical_disks": []any{raidDisk("1", 10.0, true), raidDisk("0", 10.0, true)}},
			"Raid config cannot have more than one root volume. 2 root volumes were specified"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := r.ValidateRAIDConfig(context.Background(), &driver.Task{Node: &model.Node{}}, tc.cfg)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("valid config refused: %v", err)
			case tc.want != "" && (err == nil || err.Error() != tc.want || !driver.IsClass(err, errs.ClassInvalidParameterValue)):
				t.Fatalf("got %v, want InvalidParameterValue %q", err, tc.want)
			}
		})
	}
	if err := r.Validate(context.Background(), &driver.Task{Node: &model.Node{}}); err != nil {
		t.Errorf("no target_raid_config: %v", err)
	}
	bad := &model.Node{TargetRAIDConfig: map[string]any{"logical_disks": []any{raidDisk("7", 1.0, false)}}}
	if err := r.Validate(context.Background(), &driver.Task{Node: bad}); !driver.IsClass(err, errs.ClassInvalidParameterValue) {
		t.Errorf("invalid target_raid_config: %v", err)
	}
}

func TestRAIDListsAgentStepsWithPriorities(t *testing.T) {
	five := 5
	r := NewRAID(RAIDOptions{CreatePriority: &five})
	n := &model.Node{DriverInternalInfo: map[string]any{
		"agent_cached_clean_steps": map[string]any{
			"raid":   []any{map[string]any{"step": "create_configuration", "priority": 0.0, "interface": "raid"}, map[string]any{"step": "delete_configuration", "priority": 0.0, "interface": "raid"}},
			"deploy": []any{map[string]any{"step": "erase_devices", "priority": 10.0, "interface": "deploy"}},
		},
		"agent_cached_deploy_steps": map[string]any{
			"raid": []any{map[string]any{"step": "apply_configuration", "priority": 0.0, "interface": "raid",
				"argsinfo": map[string]any{"raid_config": map[string]any{"description": "cfg", "required": true}}}},
		},
	}}
	task := &driver.Task{Node: n}
	clean, err := driver.StepsOf(context.Background(), task, driver.KindRAID, r, driver.StepClean)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, s := range clean {
		got[s.Name] = s.Priority
	}
	if want := map[string]int{"create_configuration": 5, "delete_configuration": 0}; !maps.Equal(got, want) {
		t.Errorf("clean steps %v, want %v", got, want)
	}
	deploy, err := driver.StepsOf(context.Background(), task, driver.KindRAID, r, driver.StepDeploy)
	if err != nil {
		t.Fatal(err)
	}
	if len(deploy) != 1 || deploy[0].Name != "apply_configuration" || deploy[0].ArgsInfo["raid_config"].Description != "cfg" {
		t.Errorf("deploy steps %+v", deploy)
	}
	service, err := driver.StepsOf(context.Background(), task, driver.KindRAID, r, driver.StepService)
	if err != nil {
		t.Fatal(err)
	}
	if len(service) != 1 || service[0].Name != "apply_configuration" || !service[0].RequiresRamdisk {
		t.Errorf("service steps %+v", service)
	}
	// Nothing cached yet: no clean steps, as upstream's get_steps.
	none, _ := driver.StepsOf(context.Background(), &driver.Task{Node: &model.Node{}}, driver.KindRAID, r, driver.StepClean)
	if len(none) != 0 {
		t.Errorf("steps without an agent: %v", none)
	}
}

func TestFilterTargetRAIDConfig(t *testing.T) {
	n := &model.Node{UUID: "n1", TargetRAIDConfig: map[string]any{"logical_disks": []any{raidDisk("1", 10.0, true), raidDisk("0", 20.0, false)}}}
	got, err := filterTargetRAIDConfig(n, false, true)
	if err != nil {
		t.Fatal(err)
	}
	if d := got["logical_disks"].([]any); len(d) != 1 || d[0].(map[string]any)["raid_level"] != "0" {
		t.Errorf("without root: %v", got)
	}
	if len(n.TargetRAIDConfig["logical_disks"].([]any)) != 2 {
		t.Error("filter changed the node's target_raid_config")
	}
	_, err = filterTargetRAIDConfig(n, false, false)
	if err == nil || err.Error() != "Node n1 has empty target RAID configuration after skipping root volume and skipping non-root volumes." || !driver.IsClass(err, errs.ClassMissingParameterValue) {
		t.Errorf("nothing left: %v", err)
	}
	_, err = filterTargetRAIDConfig(&model.Node{UUID: "n2"}, true, true)
	if err == nil || err.Error() != "Node n2 has no target RAID configuration." {
		t.Errorf("no target: %v", err)
	}
}

// agentTask is a task on a node whose agent a serves, with the direct
// deploy interface (which polls in-band steps) and the agent RAID.
func agentTask(t *testing.T, a *ipa.Agent, token string, raid *RAID) (*driver.Task, *Direct) {
	t.Helper()
	co := agentclient.DefaultOptions()
	co.CommandWaitInterval = 10 * time.Millisecond
	co.CommandTimeout = 5 * time.Second
	client := agentclient.New(co)
	t.Cleanup(client.Close)
	raid.b.opts.Client = client
	raid.opts.Client = client
	d := NewDirect(Options{Client: client})
	n := &model.Node{
		UUID: "1be26c0b-03f2-4d2e-ae87-c02d7f33c123", ProvisionState: states.Cleaning,
		DriverInternalInfo: map[string]any{
			"agent_url": a.URL(), "agent_secret_token": token,
			"hardware_manager_version": ipa.HardwareManagerVersion(),
		},
		Properties: map[string]any{"capabilities": "boot_mode:uefi", "root_device": map[string]any{"name": "/dev/sdz"}},
	}
	return &driver.Task{Node: n, Driver: &driver.Interfaces{Deploy: d, RAID: raid}}, d
}

func TestRAIDCreateConfigurationInBand(t *testing.T) {
	a := ipa.New(t).WithToken("tok").Handle("clean.execute_clean_step", ipa.RAIDSteps("clean", 1))
	now := time.Date(2026, 11, 29, 12, 0, 0, 123456000, time.UTC)
	raid := NewRAID(RAIDOptions{Now: func() time.Time { return now }})
	task, d := agentTask(t, a, "tok", raid)
	ctx := context.Background()
	n := task.Node
	n.TargetRAIDConfig = map[string]any{"logical_disks": []any{
		map[string]any{"raid_level": "1", "size_gb": 100.0, "is_root_volume": true, "root_device_hint": map[string]any{"name": "/dev/md0"}},
		raidDisk("0", "MAX", false),
	}}
	n.CleanStep = map[string]any{"interface": "raid", "step": "create_configuration", "priority": 0.0, "args": map[string]any{"create_nonroot_volumes": false}}

	res, err := driver.ExecuteStep(ctx, task, raid, driver.Step{Kind: driver.StepClean, Interface: driver.KindRAID, Name: "create_configuration", Args: map[string]any{"create_nonroot_volumes": false}})
	if err != nil || res != states.CleanWait {
		t.Fatalf("create_configuration: %q, %v", res, err)
	}
	sent := a.LastParams("clean.execute_clean_step")
	if st := sent["step"].(map[string]any); st["interface"] != "raid" || st["step"] != "create_configuration" {
		t.Fatalf("step sent %v", st)
	}
	filtered := n.DriverInternalInfo["target_raid_config"].(map[string]any)["logical_disks"].([]any)
	if len(filtered) != 1 || filtered[0].(map[string]any)["raid_level"] != "1" {
		t.Errorf("driver_internal_info target_raid_config %v", filtered)
	}
	if dii := sent["node"].(map[string]any)["driver_internal_info"].(map[string]any); dii["target_raid_config"] == nil {
		t.Errorf("agent was not told the filtered configuration: %v", dii)
	}

	state, err := d.PollStep(ctx, task, driver.StepClean)
	for err == nil && state == driver.AgentStepRunning {
		state, err = d.PollStep(ctx, task, driver.StepClean)
	}
	if err != nil || state != driver.AgentStepDone {
		t.Fatalf("poll: %v, %v", state, err)
	}
	if n.RAIDConfig["last_updated"] != "2026-11-29 12:00:00.123456" || len(n.RAIDConfig["logical_disks"].([]any)) != 2 {
		t.Errorf("raid_config %v", n.RAIDConfig)
	}
	if n.Properties["local_gb"] != 100 || !reflect.DeepEqual(n.Properties["root_device"], map[string]any{"name": "/dev/md0"}) ||
		n.Properties["capabilities"] != "boot_mode:uefi,raid_level:1" {
		t.Errorf("properties %v", n.Properties)
	}

	// delete_configuration drops raid_config and the root device hint.
	n.CleanStep = map[string]any{"interface": "raid", "step": "delete_configuration", "priority": 0.0}
	if res, err := driver.ExecuteStep(ctx, task, raid, driver.Step{Kind: driver.StepClean, Interface: driver.KindRAID, Name: "delete_configuration"}); err != nil || res != states.CleanWait {
		t.Fatalf("delete_configuration: %q, %v", res, err)
	}
	state, err = d.PollStep(ctx, task, driver.StepClean)
	for err == nil && state == driver.AgentStepRunning {
		state, err = d.PollStep(ctx, task, driver.StepClean)
	}
	if err != nil || state != driver.AgentStepDone {
		t.Fatalf("poll delete: %v, %v", state, err)
	}
	if len(n.RAIDConfig) != 0 || n.RAIDConfig == nil || n.Properties["root_device"] != nil {
		t.Errorf("after delete: raid_config %v, properties %v", n.RAIDConfig, n.Properties)
	}
}

func TestRAIDCreateConfigurationWithoutResultFailsStep(t *testing.T) {
	a := ipa.New(t).WithToken("tok") // the default handler answers no clean_result
	raid := NewRAID(RAIDOptions{})
	task, d := agentTask(t, a, "tok", raid)
	ctx := context.Background()
	n := task.Node
	n.TargetRAIDConfig = map[string]any{"logical_disks": []any{raidDisk("1", 10.0, false)}}
	n.CleanStep = map[string]any{"interface": "raid", "step": "create_configuration"}
	if _, err := raid.CreateConfiguration(ctx, task, true, true, false); err != nil {
		t.Fatal(err)
	}
	state, err := d.PollStep(ctx, task, driver.StepClean)
	for err == nil && state == driver.AgentStepRunning {
		state, err = d.PollStep(ctx, task, driver.StepClean)
	}
	want := "For node " + n.UUID + ", post clean step hook _create_configuration_final failed for clean step {'interface': 'raid', 'step': 'create_configuration'}.IronicException: Agent ramdisk didn't return a proper command result"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("got %v, want prefix %q", err, want)
	}
	if n.RAIDConfig != nil {
		t.Errorf("raid_config set: %v", n.RAIDConfig)
	}
}

func TestRAIDApplyConfigurationValidates(t *testing.T) {
	a := ipa.New(t).WithToken("tok").Handle("deploy.execute_deploy_step", ipa.RAIDSteps("deploy", 0))
	raid := NewRAID(RAIDOptions{})
	task, _ := agentTask(t, a, "tok", raid)
	ctx := context.Background()
	task.Node.ProvisionState = states.Deploying
	bad := map[string]any{"logical_disks": []any{raidDisk("9", 1.0, false)}}
	_, err := driver.ExecuteStep(ctx, task, raid, driver.Step{Kind: driver.StepDeploy, Interface: driver.KindRAID, Name: "apply_configuration", Args: map[string]any{"raid_config": bad}})
	if !driver.IsClass(err, errs.ClassInvalidParameterValue) || a.Count("deploy.execute_deploy_step") != 0 {
		t.Fatalf("invalid config: %v (sent %d)", err, a.Count("deploy.execute_deploy_step"))
	}
	good := map[string]any{"logical_disks": []any{raidDisk("1", 1.0, true)}}
	task.Node.DeployStep = map[string]any{"interface": "raid", "step": "apply_configuration", "args": map[string]any{"raid_config": good}}
	res, err := driver.ExecuteStep(ctx, task, raid, driver.Step{Kind: driver.StepDeploy, Interface: driver.KindRAID, Name: "apply_configuration", Args: map[string]any{"raid_config": good}})
	if err != nil || res != states.DeployWait {
		t.Fatalf("apply_configuration: %q, %v", res, err)
	}
	if st := a.LastParams("deploy.execute_deploy_step")["step"].(map[string]any); st["step"] != "apply_configuration" {
		t.Errorf("deploy step sent %v", st)
	}
}
