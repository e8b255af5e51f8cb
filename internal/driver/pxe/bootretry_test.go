package pxe

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
)

func TestBootRetryPolicyFollowsOptions(t *testing.T) {
	c, err := config.Load(config.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, mk := range []func(Options) *Boot{NewPXE, NewIPXE, NewHTTP, NewHTTPIPXE} {
		if p := mk(OptionsFromConfig(c)).BootRetryPolicy(); p.Interval != 0 || p.Timeout != 0 || p.States != nil {
			t.Errorf("default policy = %+v, want disabled", p)
		}
	}
	c, err = config.Load(config.LoadOptions{Overrides: map[string]map[string]string{"pxe": {"boot_retry_timeout": "300"}}})
	if err != nil {
		t.Fatal(err)
	}
	p := NewIPXE(OptionsFromConfig(c)).BootRetryPolicy()
	want := []string{states.DeployWait, states.CleanWait, states.RescueWait}
	if p.Timeout != 300*time.Second || p.Interval != 90*time.Second || !slices.Equal(p.States, want) {
		t.Errorf("policy = %+v, want 300s timeout every 90s in %v", p, want)
	}
	c, err = config.Load(config.LoadOptions{Overrides: map[string]map[string]string{
		"pxe": {"boot_retry_timeout": "120", "boot_retry_check_interval": "7"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if p := NewPXE(OptionsFromConfig(c)).BootRetryPolicy(); p.Timeout != 120*time.Second || p.Interval != 7*time.Second {
		t.Errorf("policy = %+v, want 120s every 7s", p)
	}
}

func TestShouldRetryBoot(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	stamp := func(ago time.Duration) string { return now.Add(-ago).Format("2006-01-02T15:04:05.000000") }
	o := DefaultOptions()
	o.BootRetryTimeout = 300 * time.Second
	b := NewPXE(o)
	for _, tc := range []struct {
		name string
		dii  map[string]any
		want bool
	}{
		{"nothing heard", nil, true},
		{"agent token", map[string]any{"agent_secret_token": "abc"}, false},
		{"empty agent token", map[string]any{"agent_secret_token": ""}, true},
		{"recent heartbeat", map[string]any{"agent_last_heartbeat": stamp(299 * time.Second)}, false},
		{"heartbeat at the timeout", map[string]any{"agent_last_heartbeat": stamp(300 * time.Second)}, false},
		{"old heartbeat", map[string]any{"agent_last_heartbeat": stamp(301 * time.Second)}, true},
		{"recent power change", map[string]any{"last_power_state_change": stamp(10 * time.Second)}, false},
		{"old power change and heartbeat", map[string]any{
			"last_power_state_change": stamp(time.Hour), "agent_last_heartbeat": stamp(2 * time.Hour),
		}, true},
		{"no fraction", map[string]any{"agent_last_heartbeat": now.Add(-time.Second).Format("2006-01-02T15:04:05")}, false},
		{"unreadable time", map[string]any{"agent_last_heartbeat": "yesterday"}, false},
	} {
		n := &model.Node{UUID: "1be26c0b-03f2-4d2e-ae87-c02d7f33c123", DriverInternalInfo: tc.dii}
		if got := b.ShouldRetryBoot(&driver.Task{Node: n}, now); got != tc.want {
			t.Errorf("%s: ShouldRetryBoot = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// sequence is a management interface and a power action recording, in
// order, what the retry asked for.
type sequence struct {
	driver.ManagementInterface
	calls    []string
	reject   string
	powerErr error
}

func (s *sequence) SetBootDevice(_ context.Context, _ *driver.Task, device string, persistent bool) error {
	if persistent {
		device += " (persistent)"
	}
	s.calls = append(s.calls, "boot "+device)
	if device == s.reject {
		return errs.NewMessage(errs.ClassInvalidParameterValue, "Invalid boot device "+device+" specified.")
	}
	return nil
}

func (s *sequence) power(_ context.Context, state string) error {
	s.calls = append(s.calls, state)
	return s.powerErr
}

func TestRetryBootPowerCyclesIntoNetworkBoot(t *testing.T) {
	ctx := context.Background()
	o := DefaultOptions()
	o.BootRetryTimeout = 300 * time.Second
	for _, tc := range []struct {
		name   string
		mk     func(Options) *Boot
		reject string
		want   []string
	}{
		{"pxe", NewPXE, "", []string{states.PowerOff, "boot pxe", states.PowerOn}},
		{"ipxe", NewIPXE, "", []string{states.PowerOff, "boot pxe", states.PowerOn}},
		{"http", NewHTTP, "", []string{states.PowerOff, "boot uefihttp", states.PowerOn}},
		{"http-ipxe without UEFI HTTP", NewHTTPIPXE, "uefihttp", []string{states.PowerOff, "boot uefihttp", "boot pxe", states.PowerOn}},
	} {
		s := &sequence{reject: tc.reject}
		task := &driver.Task{Node: &model.Node{UUID: "n1"}, Driver: &driver.Interfaces{Management: s}}
		if err := tc.mk(o).RetryBoot(ctx, task, s.power); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
		if !slices.Equal(s.calls, tc.want) {
			t.Errorf("%s: calls %v, want %v", tc.name, s.calls, tc.want)
		}
	}
	// A failed power off stops the retry before the boot device changes.
	s := &sequence{powerErr: errors.New("BMC unreachable")}
	task := &driver.Task{Node: &model.Node{UUID: "n1"}, Driver: &driver.Interfaces{Management: s}}
	if err := NewPXE(o).RetryBoot(ctx, task, s.power); err == nil || !slices.Equal(s.calls, []string{states.PowerOff}) {
		t.Errorf("power failure: %v, calls %v", err, s.calls)
	}
}
