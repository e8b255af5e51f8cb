package ipmi

import (
	"context"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
)

func speedSelectStep(args map[string]any) driver.Step {
	return driver.Step{Kind: driver.StepDeploy, Interface: driver.KindManagement, Name: "configure_intel_speedselect", Args: args}
}

func TestIntelSpeedSelectSendsOneRequestPerSocket(t *testing.T) {
	cases := []struct {
		name string
		args map[string]any
		want []string
	}{
		{"one socket by default", map[string]any{"intel_speedselect_config": "0x01"},
			[]string{"raw 0x2c 0x41 0x04 0x00 0x00 0x01"}},
		{"socket count as number", map[string]any{"intel_speedselect_config": "0x02", "socket_count": float64(3)},
			[]string{"raw 0x2c 0x41 0x04 0x00 0x00 0x02", "raw 0x2c 0x41 0x04 0x00 0x01 0x02", "raw 0x2c 0x41 0x04 0x00 0x02 0x02"}},
		{"socket count as string", map[string]any{"intel_speedselect_config": "0x00", "socket_count": "2"},
			[]string{"raw 0x2c 0x41 0x04 0x00 0x00 0x00", "raw 0x2c 0x41 0x04 0x00 0x01 0x00"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, bmc, _, logs := testCore(t, nil)
			m := &IntelManagement{Management: &Management{core: c}}
			out, err := driver.ExecuteStep(context.Background(), testTask(baseInfo(), logs), m, speedSelectStep(tc.args))
			must(t, err)
			if out != "" {
				t.Fatalf("step returned %q, want synchronous completion", out)
			}
			if got := bmc.commands(); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("commands %q, want %q", got, tc.want)
			}
		})
	}
}

func TestIntelSpeedSelectValidation(t *testing.T) {
	cases := []struct {
		name string
		args map[string]any
		want string
	}{
		{"unknown level", map[string]any{"intel_speedselect_config": "0x03"},
			"Invalid Intel SST-PP configuration value 0x03 specified. Valid values are ['0x00', '0x01', '0x02']."},
		{"missing level", map[string]any{},
			"Invalid Intel SST-PP configuration value None specified. Valid values are ['0x00', '0x01', '0x02']."},
		{"level as number", map[string]any{"intel_speedselect_config": float64(1)},
			"Invalid Intel SST-PP configuration value 1 specified. Valid values are ['0x00', '0x01', '0x02']."},
		{"zero sockets", map[string]any{"intel_speedselect_config": "0x01", "socket_count": float64(0)},
			"Invalid number of socket 0 value specified. Expected a positive integer."},
		{"negative sockets", map[string]any{"intel_speedselect_config": "0x01", "socket_count": "-2"},
			"Invalid number of socket -2 value specified. Expected a positive integer."},
		{"sockets not a number", map[string]any{"intel_speedselect_config": "0x01", "socket_count": "two"},
			"Invalid number of socket two value specified. Expected a positive integer."},
		{"null sockets", map[string]any{"intel_speedselect_config": "0x01", "socket_count": nil},
			"Invalid number of socket None value specified. Expected a positive integer."},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, bmc, _, logs := testCore(t, nil)
			m := &IntelManagement{Management: &Management{core: c}}
			_, err := driver.ExecuteStep(context.Background(), testTask(baseInfo(), logs), m, speedSelectStep(tc.args))
			if !errs.Is(err, errs.ClassInvalidParameterValue) || err.Error() != tc.want {
				t.Fatalf("error %v, want InvalidParameterValue %q", err, tc.want)
			}
			if len(bmc.calls) != 0 {
				t.Fatalf("BMC contacted for invalid input: %q", bmc.commands())
			}
		})
	}
}

func TestIntelSpeedSelectFailureNamesTheSocket(t *testing.T) {
	c, bmc, _, logs := testCore(t, func(o *Options) { o.CommandRetryTimeout = 5 * time.Second })
	bmc.answer("raw 0x2c 0x41 0x04 0x00 0x01 0x02", Result{ExitCode: 1, Stderr: "Unable to send RAW command (channel=0x0 netfn=0x2c lun=0x0 cmd=0x41 rsp=0xc1): Invalid command"})
	m := &IntelManagement{Management: &Management{core: c}}
	args := map[string]any{"intel_speedselect_config": "0x02", "socket_count": float64(4)}
	_, err := driver.ExecuteStep(context.Background(), testTask(baseInfo(), logs), m, speedSelectStep(args))
	want := "Failed to set Intel SST-PP configuration level 0x02 on socket number 1 due to reason " +
		"IPMI call failed: raw 0x2c 0x41 0x04 0x00 0x01 0x02.."
	if !errs.Is(err, errs.ClassIPMIFailure) || err.Error() != want {
		t.Fatalf("error %v, want IPMIFailure %q", err, want)
	}
	if got := bmc.commands(); len(got) != 2 {
		t.Fatalf("commands %q: later sockets must not be tried after a failure", got)
	}
}

// TestIntelManagementKeepsIPMIManagement checks that intel-ipmitool is
// ipmitool management underneath: it sets boot devices the same way and
// only adds its deploy step.
func TestIntelManagementKeepsIPMIManagement(t *testing.T) {
	c, bmc, _, logs := testCore(t, nil)
	m := &IntelManagement{Management: &Management{core: c}}
	task := testTask(baseInfo(), logs)
	task.Node.Properties["capabilities"] = "boot_mode:bios"
	must(t, m.SetBootDevice(context.Background(), task, "pxe", false))
	if got := bmc.commands(); !slices.Equal(got, []string{"raw " + disableBootTimeoutRaw, "chassis bootdev pxe"}) {
		t.Fatalf("commands %q", got)
	}
	for _, sk := range driver.StepKinds {
		steps, err := driver.StepsOf(context.Background(), task, driver.KindManagement, m, sk)
		must(t, err)
		var names []string
		for _, s := range steps {
			names = append(names, s.Name)
		}
		want := []string(nil)
		if sk == driver.StepDeploy {
			want = []string{"configure_intel_speedselect"}
		}
		if !slices.Equal(names, want) {
			t.Errorf("%s steps %q, want %q", sk, names, want)
		}
	}
}
