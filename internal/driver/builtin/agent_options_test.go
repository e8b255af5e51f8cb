package builtin

import (
	"context"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/driver/fake"
	"github.com/openkeel/ironic/internal/driver/noop"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
)

// paramsBoot keeps the parameters the ramdisk was prepared with.
type paramsBoot struct {
	fake.Boot
	params map[string]any
}

func (b *paramsBoot) PrepareRamdisk(_ context.Context, _ *driver.Task, params map[string]any) error {
	b.params = params
	return nil
}

// [deploy]/fast_track reaches the agent inspect interface: the ramdisk is
// told the API URL of [service_catalog]/endpoint_override and the node
// is left on once inspection is aborted; without it the node is powered
// off ([inspector]/power_off) and the ramdisk gets no API URL.
func TestAgentInspectGetsFastTrack(t *testing.T) {
	ctx := context.Background()
	for _, fastTrack := range []string{"true", "false"} {
		r := registryFrom(t, map[string]map[string]string{
			"deploy":          {"fast_track": fastTrack},
			"service_catalog": {"endpoint_override": "http://127.0.0.1:6385/"},
		})
		impl, ok := r.Implementation(driver.KindInspect, "agent")
		if !ok {
			t.Fatal("agent inspect interface not registered")
		}
		inspect := impl.(interface {
			InspectHardware(context.Context, *driver.Task) (string, error)
			Abort(context.Context, *driver.Task) error
		})
		boot := &paramsBoot{}
		task := &driver.Task{
			Node: &model.Node{UUID: "6d1f3c2a-9b8e-4f7d-a6c5-b4e3d2c1f0a9", ProvisionState: states.Inspecting, PowerState: states.PowerOff,
				DriverInfo: map[string]any{}, DriverInternalInfo: map[string]any{}},
			Driver: &driver.Interfaces{Power: &fake.Power{}, Boot: boot},
		}
		if _, err := inspect.InspectHardware(ctx, task); err != nil {
			t.Fatalf("fast_track %s: inspect_hardware: %v", fastTrack, err)
		}
		api, set := boot.params["ipa-api-url"]
		if want := fastTrack == "true"; set != want || (set && api != "http://127.0.0.1:6385") {
			t.Errorf("fast_track %s: ipa-api-url = %v (set %v), want set %v", fastTrack, api, set, want)
		}
		if task.Node.PowerState != states.PowerOn {
			t.Fatalf("fast_track %s: node %s after starting inspection, want power on", fastTrack, task.Node.PowerState)
		}
		task.Node.ProvisionState = states.InspectWait
		if err := inspect.Abort(ctx, task); err != nil {
			t.Fatalf("fast_track %s: abort: %v", fastTrack, err)
		}
		want := states.PowerOff
		if fastTrack == "true" {
			want = states.PowerOn
		}
		if task.Node.PowerState != want {
			t.Errorf("fast_track %s: node %s after abort, want %s", fastTrack, task.Node.PowerState, want)
		}
	}
}

// ramdiskBoot counts the agent ramdisk clean-ups.
type ramdiskBoot struct {
	fake.Boot
	cleanUps int
}

func (b *ramdiskBoot) CleanUpRamdisk(context.Context, *driver.Task) error {
	b.cleanUps++
	return nil
}

// [agent]/manage_agent_boot reaches the direct deploy interface: with it
// false, tearing down cleaning leaves the agent ramdisk's boot alone.
func TestManageAgentBootReachesDirect(t *testing.T) {
	ctx := context.Background()
	for _, manage := range []string{"true", "false"} {
		r := registryFrom(t, map[string]map[string]string{"agent": {"manage_agent_boot": manage}})
		impl, ok := r.Implementation(driver.KindDeploy, "direct")
		if !ok {
			t.Fatal("direct deploy interface not registered")
		}
		boot := &ramdiskBoot{}
		task := &driver.Task{
			Node: &model.Node{UUID: "0a9b8c7d-6e5f-4a3b-9c1d-2e3f4a5b6c7d", ProvisionState: states.Cleaning, PowerState: states.PowerOn,
				DriverInfo: map[string]any{}, DriverInternalInfo: map[string]any{}},
			Driver: &driver.Interfaces{Power: &fake.Power{}, Boot: boot, Network: noop.Network{}, Storage: &fake.Storage{}},
		}
		if err := impl.(interface {
			TearDownCleaning(context.Context, *driver.Task) error
		}).TearDownCleaning(ctx, task); err != nil {
			t.Fatalf("manage_agent_boot %s: %v", manage, err)
		}
		want := 1
		if manage == "false" {
			want = 0
		}
		if boot.cleanUps != want {
			t.Errorf("manage_agent_boot %s: ramdisk cleaned up %d times, want %d", manage, boot.cleanUps, want)
		}
	}
}

// [agent]/post_deploy_get_power_state_retries and ..._retry_interval
// reach the agent deploys, which wait that long for the node to go off
// after standby.power_off; upstream's defaults are 6 and 5 s.
func TestPostDeployPowerStateWaitFromConfig(t *testing.T) {
	cases := []struct {
		name      string
		overrides map[string]map[string]string
		retries   int
		interval  time.Duration
	}{
		{"defaults", nil, 6, 5 * time.Second},
		{"set", map[string]map[string]string{"agent": {"post_deploy_get_power_state_retries": "2", "post_deploy_get_power_state_retry_interval": "11"}}, 2, 11 * time.Second},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := config.Load(config.LoadOptions{Overrides: c.overrides})
			if err != nil {
				t.Fatal(err)
			}
			o, err := OptionsFromConfig(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if o.Agent.PostDeployGetPowerStateRetries != c.retries || o.Agent.PostDeployGetPowerStateRetryInterval != c.interval {
				t.Errorf("agent options wait %d × %s, want %d × %s", o.Agent.PostDeployGetPowerStateRetries,
					o.Agent.PostDeployGetPowerStateRetryInterval, c.retries, c.interval)
			}
		})
	}
}

// registryFrom is the registry built from the configuration with
// overrides.
func registryFrom(t *testing.T, overrides map[string]map[string]string) *driver.Registry {
	t.Helper()
	c, err := config.Load(config.LoadOptions{Overrides: overrides})
	if err != nil {
		t.Fatal(err)
	}
	o, err := OptionsFromConfig(c)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Registry(o)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
