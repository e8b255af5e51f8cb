package redfish

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/testing/redfishbmc"
)

const sysPath = "/redfish/v1/Systems/sys-1"

func TestGetPowerState(t *testing.T) {
	for _, tc := range []struct{ bmcState, want string }{
		{redfishbmc.On, states.PowerOn},
		{redfishbmc.Off, states.PowerOff},
		{redfishbmc.PoweringOn, states.PowerOn},
		{redfishbmc.PoweringOff, states.PowerOff},
		{"Paused", states.NoState},
	} {
		t.Run(tc.bmcState, func(t *testing.T) {
			bmc := redfishbmc.New(t).System("sys-1", redfishbmc.PowerState(tc.bmcState)).WithBasicAuth(testUser, testPassword)
			e := newEnv(t, bmc, nil)
			got, err := e.power.GetPowerState(e.ctx, e.task)
			must(t, err)
			if got != tc.want {
				t.Fatalf("power state %q, want %q", got, tc.want)
			}
		})
	}
}

func TestSetPowerStateSendsUpstreamResetTypeAndWaits(t *testing.T) {
	for _, tc := range []struct {
		name, from, state, reset, final string
	}{
		{"on", redfishbmc.Off, states.PowerOn, "On", redfishbmc.On},
		{"off", redfishbmc.On, states.PowerOff, "ForceOff", redfishbmc.Off},
		{"soft off", redfishbmc.On, states.SoftPowerOff, "GracefulShutdown", redfishbmc.Off},
		{"soft reboot", redfishbmc.On, states.SoftReboot, "GracefulRestart", redfishbmc.On},
		{"hard reboot", redfishbmc.On, states.Reboot, "ForceRestart", redfishbmc.On},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bmc := redfishbmc.New(t).System("sys-1", redfishbmc.PowerState(tc.from), redfishbmc.SettleAfter(3)).
				WithBasicAuth(testUser, testPassword)
			e := newEnv(t, bmc, nil)
			must(t, e.power.SetPowerState(e.ctx, e.task, tc.state, 0))
			snap := bmc.Snapshot("sys-1")
			if !slices.Equal(snap.Resets, []string{tc.reset}) {
				t.Fatalf("resets %v, want [%s]", snap.Resets, tc.reset)
			}
			if snap.PowerState != tc.final {
				t.Fatalf("BMC power %s, want %s", snap.PowerState, tc.final)
			}
			// One GET before the reset, then polls until the third shows
			// the new state.
			if n := bmc.Count(http.MethodGet, sysPath); n != 4 {
				t.Fatalf("%d GETs of the system, want 4", n)
			}
			if tc.state == states.Reboot && e.clock.Sleeps()[0] != 15*time.Second {
				t.Fatalf("hard reboot did not wait 15 s first: %v", e.clock.Sleeps())
			}
		})
	}
}

func TestSetPowerStateTimeout(t *testing.T) {
	bmc := redfishbmc.New(t).System("sys-1", redfishbmc.PowerState(redfishbmc.On), redfishbmc.SettleAfter(1000)).
		WithBasicAuth(testUser, testPassword)
	e := newEnv(t, bmc, func(o *Options) { o.PowerStateChangeTimeout = 10 * time.Second })
	err := e.power.SetPowerState(e.ctx, e.task, states.PowerOff, 0)
	wantClass(t, err, "PowerStateFailure", "Failed to set node power state to power off.")
	if got := e.clock.Slept(); got != 10*time.Second {
		t.Fatalf("waited %v, want the 10 s power_state_change_timeout", got)
	}
	// Soft power off defaults to soft_power_off_timeout.
	e.clock.ResetSleeps()
	e.core.opts.SoftPowerOffTimeout = 30 * time.Second
	err = e.power.SetPowerState(e.ctx, e.task, states.SoftPowerOff, 0)
	wantClass(t, err, "PowerStateFailure", "")
	if got := e.clock.Slept(); got != 30*time.Second {
		t.Fatalf("soft power off waited %v, want 30 s", got)
	}
	// An explicit timeout wins.
	e.clock.ResetSleeps()
	wantClass(t, e.power.SetPowerState(e.ctx, e.task, states.PowerOff, 3*time.Second), "PowerStateFailure", "")
	if got := e.clock.Slept(); got != 3*time.Second {
		t.Fatalf("waited %v, want 3 s", got)
	}
}

func TestSetPowerStateInvalid(t *testing.T) {
	bmc := redfishbmc.New(t).System("sys-1")
	e := newEnv(t, bmc, nil)
	wantClass(t, e.power.SetPowerState(e.ctx, e.task, "sideways", 0), "InvalidParameterValue", "")
}

func TestPowerOnRetriesConflictWhileBMCSettles(t *testing.T) {
	bmc := redfishbmc.New(t).System("sys-1").WithBasicAuth(testUser, testPassword)
	bmc.FailNextMatching(redfishbmc.Match{Method: http.MethodPost, Path: "ComputerSystem.Reset"}, 2,
		http.StatusConflict, "Base.1.8.ActionParameterValueConflict")
	e := newEnv(t, bmc, nil)
	must(t, e.power.SetPowerState(e.ctx, e.task, states.PowerOn, 0))
	if got := bmc.Power("sys-1"); got != redfishbmc.On {
		t.Fatalf("power %s", got)
	}
	if n := bmc.Count(http.MethodPost, sysPath+"/Actions/ComputerSystem.Reset"); n != 3 {
		t.Fatalf("%d reset POSTs, want 3", n)
	}
	if e.clock.Sleeps()[0] != 10*time.Second || e.clock.Sleeps()[1] != 10*time.Second {
		t.Fatalf("sleeps %v, want two power_on_conflict_retry_interval waits first", e.clock.Sleeps())
	}
}

func TestSetPowerStateAlreadyInStateAfterRefusal(t *testing.T) {
	bmc := redfishbmc.New(t).System("sys-1", redfishbmc.PowerState(redfishbmc.Off)).WithBasicAuth(testUser, testPassword)
	bmc.FailNextMatching(redfishbmc.Match{Method: http.MethodPost, Path: "ComputerSystem.Reset"}, 1, http.StatusBadRequest, "")
	e := newEnv(t, bmc, nil)
	must(t, e.power.SetPowerState(e.ctx, e.task, states.PowerOff, 0))

	bmc.FailNextMatching(redfishbmc.Match{Method: http.MethodPost, Path: "ComputerSystem.Reset"}, 1, http.StatusBadRequest, "")
	err := e.power.SetPowerState(e.ctx, e.task, states.PowerOn, 0)
	wantClass(t, err, "RedfishError", "")
	want := "Redfish exception occurred. Error: Setting power state to power on failed for node " + testNode +
		". Error: HTTP POST " + bmc.URL() + sysPath + "/Actions/ComputerSystem.Reset returned code 400. " +
		"Base.1.8.GeneralError: Injected failure 400 Extended information: "
	if !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("message\n got  %s\n want %s...", err, want)
	}
}

func TestRebootPowerCyclesAndRespectsDisablePowerOff(t *testing.T) {
	bmc := redfishbmc.New(t).System("sys-1", redfishbmc.PowerState(redfishbmc.On)).WithBasicAuth(testUser, testPassword)
	e := newEnv(t, bmc, nil)
	must(t, e.power.Reboot(e.ctx, e.task, 0))
	if got := bmc.Snapshot("sys-1").Resets; !slices.Equal(got, []string{"ForceOff", "On"}) {
		t.Fatalf("resets %v", got)
	}
	e.node.DisablePowerOff = true
	must(t, e.power.Reboot(e.ctx, e.task, 0))
	if got := bmc.Snapshot("sys-1").Resets; !slices.Equal(got, []string{"ForceOff", "On", "ForceRestart"}) {
		t.Fatalf("resets %v", got)
	}
	bmc.SetPower("sys-1", redfishbmc.Off)
	must(t, e.power.Reboot(e.ctx, e.task, 0))
	if got := bmc.Snapshot("sys-1").Resets; got[len(got)-1] != "On" {
		t.Fatalf("reboot of an off node sent %v", got)
	}
}

func TestResetTypeNotAllowed(t *testing.T) {
	bmc := redfishbmc.New(t).System("sys-1", redfishbmc.PowerState(redfishbmc.On), redfishbmc.AllowedResetTypes("On", "ForceOff"))
	e := newEnv(t, bmc, nil)
	err := e.power.SetPowerState(e.ctx, e.task, states.SoftPowerOff, 0)
	wantClass(t, err, "RedfishError", "Redfish exception occurred. Error: Setting power state to soft power off failed for node "+
		testNode+`. Error: The parameter "value" value "GracefulShutdown" is invalid. Valid values are: ['On', 'ForceOff']`)
	if n := bmc.Count(http.MethodPost, sysPath+"/Actions/ComputerSystem.Reset"); n != 0 {
		t.Fatalf("a refused reset type was sent")
	}
}

func TestSupportedPowerStates(t *testing.T) {
	p := &Power{core: newCore(DefaultOptions(), nil)}
	got, err := p.GetSupportedPowerStates(nil, nil)
	must(t, err)
	want := []string{states.PowerOn, states.PowerOff, states.Reboot, states.SoftReboot, states.SoftPowerOff}
	if !slices.Equal(got, want) {
		t.Fatalf("%v", got)
	}
}

func TestWritesNeedAnExclusiveLock(t *testing.T) {
	bmc := redfishbmc.New(t).System("sys-1").WithBasicAuth(testUser, testPassword)
	e := newEnv(t, bmc, nil)
	e.task.Shared = true
	const msg = "An exclusive lock is required, but the current context has a shared lock."
	wantClass(t, e.power.SetPowerState(e.ctx, e.task, states.PowerOn, 0), "ExclusiveLockRequired", msg)
	wantClass(t, e.power.Reboot(e.ctx, e.task, 0), "ExclusiveLockRequired", msg)
	wantClass(t, e.mgmt.SetBootDevice(e.ctx, e.task, "pxe", false), "ExclusiveLockRequired", msg)
	wantClass(t, e.mgmt.SetBootMode(e.ctx, e.task, "uefi"), "ExclusiveLockRequired", msg)
	if n := bmc.Requests(); n != 0 {
		t.Fatalf("%d requests sent under a shared lock", n)
	}
	// Reads are fine.
	_, err := e.power.GetPowerState(e.ctx, e.task)
	must(t, err)
}
