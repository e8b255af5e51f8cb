package agent

import (
	"context"
	"testing"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/driver/fake"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/states"
)

// paramsBoot records the ramdisk parameters and the ramdisk calls.
type paramsBoot struct {
	fake.Boot
	j      *journal
	params map[string]any
}

func (b *paramsBoot) PrepareRamdisk(_ context.Context, _ *driver.Task, params map[string]any) error {
	b.j.add("prepare_ramdisk")
	b.params = params
	return nil
}

func (b *paramsBoot) CleanUpRamdisk(context.Context, *driver.Task) error {
	b.j.add("clean_up_ramdisk")
	return nil
}

// With fast track on for the node (configured, or driver_info's
// fast_track over it), inspection gives the ramdisk the API URL, as
// upstream's prepare_managed_inspection, and still power cycles the node
// into it; tear down, at the end or on abort, leaves the node on with its
// agent instead of [inspector]/power_off's power off.
func TestInspectFastTrack(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name       string
		configured bool
		perNode    any
		wantAPI    bool
		wantStart  string
		wantFinish string
	}{
		{"off", false, nil, false, "power off,prepare_ramdisk,power on", "clean_up_ramdisk,power off"},
		{"configured", true, nil, true, "power off,prepare_ramdisk,power on", "clean_up_ramdisk"},
		{"driver_info on", false, "true", true, "power off,prepare_ramdisk,power on", "clean_up_ramdisk"},
		{"driver_info off", true, false, false, "power off,prepare_ramdisk,power on", "clean_up_ramdisk,power off"},
	} {
		for _, finish := range []string{"continue", "abort"} {
			j := &journal{}
			task := newTask(j, &journalNetwork{j: j}, false)
			boot := &paramsBoot{j: j}
			task.Driver.Boot = boot
			task.Node.ProvisionState = states.Inspecting
			if c.perNode != nil {
				task.Node.DriverInfo["fast_track"] = c.perNode
			}
			i := NewInspect(InspectOptions{PowerOff: true, APIURL: "http://127.0.0.1:6385/", CallbackURL: "http://127.0.0.1:6385/v1/continue_inspection",
				FastTrack: driver.FastTrack{Enabled: c.configured}})
			if st, err := i.InspectHardware(ctx, task); err != nil || st != "inspect wait" {
				t.Fatalf("%s: inspect_hardware = %q, %v", c.name, st, err)
			}
			if got := j.String(); got != c.wantStart {
				t.Errorf("%s: start calls %q, want %q", c.name, got, c.wantStart)
			}
			api, ok := boot.params["ipa-api-url"]
			if ok != c.wantAPI || (ok && api != "http://127.0.0.1:6385") {
				t.Errorf("%s: ipa-api-url = %v (set %v), want set %v", c.name, api, ok, c.wantAPI)
			}
			j.calls = nil
			task.Node.ProvisionState = states.InspectWait
			var err error
			if finish == "continue" {
				_, err = i.ContinueInspection(ctx, task, nil, nil)
			} else {
				err = i.Abort(ctx, task)
			}
			if err != nil {
				t.Fatalf("%s %s: %v", c.name, finish, err)
			}
			if got := j.String(); got != c.wantFinish {
				t.Errorf("%s %s: calls %q, want %q", c.name, finish, got, c.wantFinish)
			}
		}
	}
}

// A driver_info fast_track that is not a boolean fails the start of
// inspection before the node is touched and fails its tear down, with
// upstream's InvalidParameterValue rather than a clean-up failure.
func TestInspectFastTrackInvalid(t *testing.T) {
	ctx := context.Background()
	j := &journal{}
	task := newTask(j, &journalNetwork{j: j}, false)
	task.Driver.Boot = &paramsBoot{j: j}
	task.Node.DriverInfo["fast_track"] = "maybe"
	i := NewInspect(InspectOptions{PowerOff: true})
	if _, err := i.InspectHardware(ctx, task); !errs.Is(err, errs.ClassInvalidParameterValue) {
		t.Fatalf("inspect_hardware error = %v, want InvalidParameterValue", err)
	}
	if got := j.String(); got != "clean_up_ramdisk" {
		t.Errorf("calls %q, want only the ramdisk clean-up", got)
	}
	if err := i.Abort(ctx, task); !errs.Is(err, errs.ClassInvalidParameterValue) {
		t.Fatalf("abort error = %v, want InvalidParameterValue", err)
	}
}
