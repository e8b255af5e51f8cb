package conductor_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/conductor"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/driver/pxe"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store/sqldb"
	"github.com/openkeel/ironic/testing/await"
)

// bmcLog is a power and a management interface recording, per node and in
// order, the power changes and boot devices asked of the machine.
type bmcLog struct {
	mu    sync.Mutex
	calls map[string][]string
	power map[string]string
}

func newBMCLog() *bmcLog { return &bmcLog{calls: map[string][]string{}, power: map[string]string{}} }

func (b *bmcLog) add(n *model.Node, call string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls[n.UUID] = append(b.calls[n.UUID], call)
}

func (b *bmcLog) of(n *model.Node) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.calls[n.UUID])
}

type bmcPower struct{ log *bmcLog }

func (p bmcPower) Properties() map[string]string                             { return map[string]string{} }
func (p bmcPower) Steps() []driver.StepSpec                                  { return nil }
func (p bmcPower) Validate(context.Context, *driver.Task) error              { return nil }
func (p bmcPower) Reboot(context.Context, *driver.Task, time.Duration) error { return nil }
func (p bmcPower) GetSupportedPowerStates(context.Context, *driver.Task) ([]string, error) {
	return []string{states.PowerOn, states.PowerOff}, nil
}

func (p bmcPower) GetPowerState(_ context.Context, t *driver.Task) (string, error) {
	p.log.mu.Lock()
	defer p.log.mu.Unlock()
	if s, ok := p.log.power[t.Node.UUID]; ok {
		return s, nil
	}
	return states.PowerOn, nil
}

func (p bmcPower) SetPowerState(_ context.Context, t *driver.Task, state string, _ time.Duration) error {
	p.log.add(t.Node, state)
	p.log.mu.Lock()
	p.log.power[t.Node.UUID] = state
	p.log.mu.Unlock()
	return nil
}

type bmcManagement struct{ log *bmcLog }

func (m bmcManagement) Properties() map[string]string                { return map[string]string{} }
func (m bmcManagement) Steps() []driver.StepSpec                     { return nil }
func (m bmcManagement) Validate(context.Context, *driver.Task) error { return nil }
func (m bmcManagement) GetSupportedBootDevices(context.Context, *driver.Task) ([]string, error) {
	return []string{"pxe", "disk"}, nil
}

func (m bmcManagement) SetBootDevice(_ context.Context, t *driver.Task, device string, persistent bool) error {
	call := "boot " + device
	if persistent {
		call += " persistent"
	}
	m.log.add(t.Node, call)
	return nil
}

func (m bmcManagement) GetBootDevice(context.Context, *driver.Task) (driver.BootDevice, error) {
	return driver.BootDevice{BootDevice: "pxe"}, nil
}

func (m bmcManagement) GetSensorsData(context.Context, *driver.Task) (map[string]any, error) {
	return map[string]any{}, nil
}

// newPXERetryEnv builds a conductor whose fake-hardware nodes can use the
// pxe family of boot interfaces, configured from pxe, with the recording
// BMC as "bmc" power and management. The conductor's own periodic loops
// are off unless conf turns one on; observe hears every pass.
func newPXERetryEnv(t *testing.T, db *sqldb.DB, pxeConf, conductorConf map[string]string, observe func(conductor.PeriodicRun)) (*env, *bmcLog) {
	t.Helper()
	e := newStoreEnv(t, db, testConfig(t, map[string]map[string]string{
		"conductor": conductorConf, "pxe": {"tftp_root": t.TempDir()},
	}, map[string]map[string]string{"pxe": pxeConf}))
	r := stockRegistry(t)
	po := pxe.OptionsFromConfig(e.cfg)
	po.HTTPRoot = t.TempDir()
	if err := pxe.Register(r, po); err != nil {
		t.Fatal(err)
	}
	log := newBMCLog()
	mustRegister(t, r, driver.KindPower, "bmc", bmcPower{log})
	mustRegister(t, r, driver.KindManagement, "bmc", bmcManagement{log})
	e.drivers = buildFakeHardware(t, r, map[driver.Kind][]string{
		driver.KindBoot: {"fake", "pxe", "ipxe", "http", "http-ipxe"}, driver.KindInspect: {"fake"},
		driver.KindManagement: {"fake", "bmc"}, driver.KindPower: {"fake", "bmc"}, driver.KindRescue: {"fake", "no-rescue"},
	})
	e.run(conductor.Options{ObservePeriodic: observe})
	return e, log
}

// waitingNode is a powered-on node that entered state now, booting from
// boot and controlled through the recording BMC.
func (e *env) waitingNode(state, boot string, mut ...func(*model.Node)) *model.Node {
	now := e.clock.Now()
	return e.node(state, append([]func(*model.Node){func(n *model.Node) {
		n.BootInterface, n.PowerInterface, n.ManagementInterface = boot, "bmc", "bmc"
		n.PowerState = states.PowerOn
		n.ProvisionUpdatedAt = &now
	}}, mut...)...)
}

var pxeRetry = []string{states.PowerOff, "boot pxe", states.PowerOn}

func TestPXEBootRetryPowerCyclesSilentNodes(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e, bmc := newPXERetryEnv(t, db, map[string]string{"boot_retry_timeout": "60"}, nil, nil)
		ctx := context.Background()
		silent := e.waitingNode(states.DeployWait, "pxe")
		cleaning := e.waitingNode(states.CleanWait, "ipxe")
		rescuing := e.waitingNode(states.RescueWait, "pxe")
		httpBoot := e.waitingNode(states.DeployWait, "http")
		heartbeating := e.waitingNode(states.DeployWait, "pxe")
		tokened := e.waitingNode(states.DeployWait, "pxe", func(n *model.Node) {
			n.DriverInternalInfo = map[string]any{"agent_secret_token": "s3cr3t"}
		})
		maintenance := e.waitingNode(states.DeployWait, "pxe", func(n *model.Node) { n.Maintenance = true })
		otherBoot := e.waitingNode(states.DeployWait, "fake")
		inspecting := e.waitingNode(states.InspectWait, "pxe")
		deploying := e.waitingNode(states.Deploying, "pxe")
		all := []*model.Node{silent, cleaning, rescuing, httpBoot, heartbeating, tokened, maintenance, otherBoot, inspecting, deploying}

		// Within the timeout of entering the state nothing is retried.
		e.c.CheckBootTimeouts(ctx)
		for _, n := range all {
			if calls := bmc.of(n); len(calls) != 0 {
				t.Fatalf("node in %s with %s boot: calls %v before the timeout", n.ProvisionState, n.BootInterface, calls)
			}
		}

		e.clock.Advance(61 * time.Second)
		hb := e.get(heartbeating)
		hb.DriverInternalInfo = map[string]any{"agent_last_heartbeat": e.clock.Now().Add(-5 * time.Second).Format("2006-01-02T15:04:05.000000")}
		if _, err := e.st.UpdateNode(ctx, hb, "driver_internal_info"); err != nil {
			t.Fatal(err)
		}
		e.c.CheckBootTimeouts(ctx)
		for _, n := range []*model.Node{silent, cleaning, rescuing, httpBoot} {
			want := pxeRetry
			if n.BootInterface == "http" {
				want = []string{states.PowerOff, "boot uefihttp", states.PowerOn}
			}
			if calls := bmc.of(n); !slices.Equal(calls, want) {
				t.Errorf("silent node in %s with %s boot: calls %v, want %v", n.ProvisionState, n.BootInterface, calls, want)
			}
			cur := e.waitUnlocked(n)
			if cur.ProvisionState != n.ProvisionState || cur.PowerState != states.PowerOn || cur.TargetPowerState != "" {
				t.Errorf("node after retry: %s, power %q target %q", cur.ProvisionState, cur.PowerState, cur.TargetPowerState)
			}
			if _, ok := cur.DriverInternalInfo["last_power_state_change"].(string); !ok {
				t.Errorf("node after retry: no last_power_state_change in %v", cur.DriverInternalInfo)
			}
		}
		for _, n := range []*model.Node{heartbeating, tokened, maintenance, otherBoot, inspecting, deploying} {
			if calls := bmc.of(n); len(calls) != 0 {
				t.Errorf("node in %s with %s boot (maintenance %v): calls %v, want none",
					n.ProvisionState, n.BootInterface, n.Maintenance, calls)
			}
		}

		// The power change just made holds the next retry off for another
		// timeout.
		e.c.CheckBootTimeouts(ctx)
		if calls := bmc.of(silent); len(calls) != len(pxeRetry) {
			t.Errorf("second pass right after the retry: calls %v", calls)
		}
		e.clock.Advance(61 * time.Second)
		e.c.CheckBootTimeouts(ctx)
		if calls := bmc.of(silent); !slices.Equal(calls, append(slices.Clone(pxeRetry), pxeRetry...)) {
			t.Errorf("pass a timeout after the retry: calls %v, want two retries", calls)
		}
	})
}

func TestPXEBootRetryOffByDefault(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		var mu sync.Mutex
		seen := map[string]int{}
		e, bmc := newPXERetryEnv(t, db, nil, map[string]string{"check_provision_state_interval": "1"}, func(run conductor.PeriodicRun) {
			mu.Lock()
			defer mu.Unlock()
			seen[run.Name]++
		})
		ctx := context.Background()
		n := e.waitingNode(states.DeployWait, "pxe")
		e.clock.Advance(24 * time.Hour)
		e.c.CheckBootTimeouts(ctx)
		await.UntilReason(t, 10*time.Second, "two passes of _check_deploy_timeouts", func() (bool, string) {
			mu.Lock()
			passes := seen["_check_deploy_timeouts"]
			mu.Unlock()
			return passes >= 2, fmt.Sprintf("the conductor's periodic loops did not run (%d passes)", passes)
		})
		if calls := bmc.of(n); len(calls) != 0 {
			t.Errorf("boot retried without [pxe]/boot_retry_timeout: %v", calls)
		}
		mu.Lock()
		defer mu.Unlock()
		for name := range seen {
			if name == "pxe boot: _check_boot_timeouts" {
				t.Errorf("boot retry periodic running while disabled: %v", seen)
			}
		}
	})
}

func TestPXEBootRetryPeriodicLoop(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		var mu sync.Mutex
		seen := map[string]int{}
		e, bmc := newPXERetryEnv(t, db, map[string]string{"boot_retry_timeout": "60", "boot_retry_check_interval": "1"}, nil,
			func(run conductor.PeriodicRun) {
				mu.Lock()
				defer mu.Unlock()
				seen[run.Name]++
			})
		n := e.waitingNode(states.DeployWait, "ipxe")
		e.clock.Advance(2 * time.Minute)
		// Each enabled implementation has its own task, as upstream's
		// periodic is per class.
		allRan := func() bool {
			mu.Lock()
			defer mu.Unlock()
			for _, name := range []string{"pxe", "ipxe", "http", "http-ipxe"} {
				if seen[name+" boot: _check_boot_timeouts"] == 0 {
					return false
				}
			}
			return true
		}
		await.UntilReason(t, 10*time.Second, "the boot retry and every boot interface's pass", func() (bool, string) {
			if len(bmc.of(n)) >= len(pxeRetry) && allRan() {
				return true, ""
			}
			mu.Lock()
			defer mu.Unlock()
			return false, fmt.Sprintf("periodic loops: calls %v, passes %v", bmc.of(n), seen)
		})
		if calls := bmc.of(n); !slices.Equal(calls, pxeRetry) {
			t.Errorf("calls %v, want %v", calls, pxeRetry)
		}
	})
}
