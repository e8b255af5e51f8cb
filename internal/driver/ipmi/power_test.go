package ipmi

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/testing/fakeclock"
)

// chassis is a fake ipmitool that keeps the chassis power, so the power
// sequences can be checked command by command.
type chassis struct {
	mu   sync.Mutex
	on   bool
	cmds []string
	// stuck ignores power off and soft power off.
	stuck bool
}

func (c *chassis) exec(_ context.Context, cmd Command) (Result, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	command := call{Args: cmd.Args}.command()
	c.cmds = append(c.cmds, command)
	switch command {
	case "power status":
		if c.on {
			return Result{Stdout: "Chassis Power is on\n"}, nil
		}
		return Result{Stdout: "Chassis Power is off\n"}, nil
	case "power on", "power reset":
		c.on = true
	case "power off", "power soft":
		c.on = c.on && c.stuck
	}
	return Result{}, nil
}

func powerSetup(t *testing.T, on bool) (*Power, *driver.Task, *chassis, *fakeclock.Clock) {
	t.Helper()
	ch := &chassis{on: on}
	c, _, clock, logs := testCore(t, func(o *Options) { o.Exec = ch.exec })
	p := &Power{core: c}
	task := testTask(baseInfo(), logs)
	task.Driver = &driver.Interfaces{HardwareType: "ipmi", Power: p, Management: &Management{core: c}}
	task.Node.Properties["capabilities"] = "boot_mode:bios"
	return p, task, ch, clock
}

func TestPowerSequences(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name            string
		on              bool
		disablePowerOff bool
		run             func(*Power, *driver.Task) error
		want            []string
		end             bool
	}{
		{"reboot a running node", true, false,
			func(p *Power, task *driver.Task) error { return p.Reboot(ctx, task, 0) },
			[]string{"power status", "power off", "power status", "power on", "power status"}, true},
		{"reboot skips power off when off", false, false,
			func(p *Power, task *driver.Task) error { return p.Reboot(ctx, task, 0) },
			[]string{"power status", "power on", "power status"}, true},
		{"reboot a node that must stay powered resets it", true, true,
			func(p *Power, task *driver.Task) error { return p.Reboot(ctx, task, 0) },
			[]string{"power reset", "power status"}, true},
		{"soft reboot", true, false,
			func(p *Power, task *driver.Task) error { return p.SetPowerState(ctx, task, states.SoftReboot, 0) },
			[]string{"power soft", "power status", "power on", "power status"}, true},
		{"soft power off", true, false,
			func(p *Power, task *driver.Task) error { return p.SetPowerState(ctx, task, states.SoftPowerOff, 0) },
			[]string{"power soft", "power status"}, false},
		{"power off", true, false,
			func(p *Power, task *driver.Task) error { return p.SetPowerState(ctx, task, states.PowerOff, 0) },
			[]string{"power off", "power status"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, task, ch, clock := powerSetup(t, tc.on)
			task.Node.DisablePowerOff = tc.disablePowerOff
			must(t, tc.run(p, task))
			if !slices.Equal(ch.cmds, tc.want) {
				t.Fatalf("commands %q, want %q", ch.cmds, tc.want)
			}
			if ch.on != tc.end {
				t.Fatalf("chassis on=%v, want %v", ch.on, tc.end)
			}
			// "power reset" is followed by the settle delay before polling.
			if got := slices.Contains(clock.Sleeps(), rebootSettleDelay); got != tc.disablePowerOff {
				t.Fatalf("settle delay slept=%v, sleeps %v", got, clock.Sleeps())
			}
		})
	}
}

func TestPowerRefusals(t *testing.T) {
	ctx := context.Background()
	p, task, ch, _ := powerSetup(t, true)
	task.Node.DisablePowerOff = true
	err := p.SetPowerState(ctx, task, states.SoftReboot, 0)
	if !errs.Is(err, errs.ClassUnsupportedHardwareFeature) || err.Error() != "Node "+task.Node.UUID+
		" hardware does not support feature soft power off, which is required based upon the requested configuration." {
		t.Fatalf("soft reboot of a node that must stay powered: %v", err)
	}
	task.Node.DisablePowerOff = false
	if err := p.SetPowerState(ctx, task, "rebooting", 0); err == nil ||
		err.Error() != "set_power_state called with invalid power state rebooting." {
		t.Fatalf("invalid state: %v", err)
	}
	task.Shared = true
	for name, err := range map[string]error{
		"set power": p.SetPowerState(ctx, task, states.PowerOff, 0),
		"reboot":    p.Reboot(ctx, task, 0),
	} {
		if !errs.Is(err, errs.ClassExclusiveLockRequired) {
			t.Fatalf("%s under a shared lock: %v", name, err)
		}
	}
	if len(ch.cmds) != 0 {
		t.Fatalf("refused requests reached the BMC: %q", ch.cmds)
	}
}

// TestPowerStateTimeouts polls until the timeout given, or the configured
// one when none is given ([conductor]soft_power_off_timeout for soft power
// off), then fails with PowerStateFailure.
func TestPowerStateTimeouts(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name    string
		state   string
		timeout time.Duration
		want    time.Duration
	}{
		{"power off, default", states.PowerOff, 0, 60 * time.Second},
		{"power off, given", states.PowerOff, 10 * time.Second, 10 * time.Second},
		{"soft power off, default", states.SoftPowerOff, 0, 600 * time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, task, ch, clock := powerSetup(t, true)
			ch.stuck = true
			start := clock.Now()
			err := p.SetPowerState(ctx, task, tc.state, tc.timeout)
			if !errs.Is(err, errs.ClassPowerStateFailure) || err.Error() != "Failed to set node power state to power off." {
				t.Fatalf("error %v", err)
			}
			// Polls back off and the last wait is cut at the deadline; the
			// throttle's own pauses come on top.
			if waited := clock.Now().Sub(start); waited < tc.want || waited > tc.want+time.Duration(len(ch.cmds))*5*time.Second {
				t.Fatalf("gave up after %v, want %v", waited, tc.want)
			}
		})
	}
}

// TestForcedBootDeviceBeforePowerOn re-sends the remembered persistent
// boot device before each power on, unless a one-time device is pending.
func TestForcedBootDeviceBeforePowerOn(t *testing.T) {
	ctx := context.Background()
	p, task, ch, _ := powerSetup(t, false)
	task.Node.DriverInfo["ipmi_force_boot_device"] = true
	task.Node.DriverInfo["ipmi_disable_boot_timeout"] = false
	task.Node.DriverInternalInfo["persistent_boot_device"] = "pxe"
	must(t, p.SetPowerState(ctx, task, states.PowerOn, 0))
	if want := []string{"chassis bootdev pxe", "power on", "power status"}; !slices.Equal(ch.cmds, want) {
		t.Fatalf("commands %q, want %q", ch.cmds, want)
	}

	ch.cmds, ch.on = nil, false
	task.Node.DriverInternalInfo["is_next_boot_persistent"] = false
	must(t, p.SetPowerState(ctx, task, states.PowerOn, 0))
	if want := []string{"power on", "power status"}; !slices.Equal(ch.cmds, want) {
		t.Fatalf("with a one-time device pending: commands %q, want %q", ch.cmds, want)
	}
	if _, ok := task.Node.DriverInternalInfo["is_next_boot_persistent"]; ok {
		t.Fatal("the one-time marker must be consumed by the power on")
	}
}
