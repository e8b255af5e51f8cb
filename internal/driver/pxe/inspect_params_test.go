package pxe

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/driver/agent"
	"github.com/openkeel/ironic/internal/driver/fake"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/states"
)

// The kernel command line of a managed inspection's PXE configuration
// carries [inspector]/extra_kernel_params besides the callback URL, and
// with [inspector]/force_dhcp asks the ramdisk for LLDP on every
// interface unless the extra parameters say otherwise, as upstream's
// prepare_managed_inspection. With [conductor]/
// disable_kernel_parameter_parsing the option is split as shell words.
func TestInspectionKernelParams(t *testing.T) {
	const cb = "ipa-inspection-callback-url=http://127.0.0.1:6385/v1/continue_inspection"
	cases := []struct {
		name      string
		extra     string
		noParse   bool
		forceDHCP bool
		// want are the ramdisk parameters, in key order.
		want string
	}{
		{name: "default", want: cb},
		{name: "extra", extra: "nomodeset ipa-debug=1", want: "ipa-debug=1 " + cb + " nomodeset"},
		{name: "first key wins, init args dropped", extra: `foo=1 foo=2 msg="a b" -- init`,
			want: "foo=1 " + cb + ` msg="a b"`},
		{name: "shell words, last key wins", extra: `foo=1 foo='2'`, noParse: true, want: "foo=2 " + cb},
		{name: "force dhcp", forceDHCP: true, want: "ipa-collect-lldp=1 " + cb},
		{name: "force dhcp keeps the operator's lldp", extra: "ipa-collect-lldp=0", forceDHCP: true, want: "ipa-collect-lldp=0 " + cb},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			e := newEnv(t, "bios")
			e.node.ProvisionState = states.Inspecting
			e.task.Driver.Boot = NewIPXE(e.opts)
			e.task.Driver.Power = &fake.Power{}
			i := agent.NewInspect(agent.InspectOptions{
				CallbackURL:       "http://127.0.0.1:6385/v1/continue_inspection",
				ExtraKernelParams: tc.extra, DisableKernelParameterParsing: tc.noParse, ForceDHCP: tc.forceDHCP,
			})
			if err := i.Validate(ctx, e.task); err != nil {
				t.Fatalf("validate: %v", err)
			}
			if st, err := i.InspectHardware(ctx, e.task); err != nil || st != states.InspectWait {
				t.Fatalf("inspect_hardware = %q, %v", st, err)
			}
			cfg, err := os.ReadFile(filepath.Join(e.http, e.node.UUID, "config"))
			if err != nil {
				t.Fatal(err)
			}
			line := regexp.MustCompile(`(?m)^kernel .*$`).FindString(string(cfg))
			// [pxe]/kernel_append_params, the ramdisk parameters in key
			// order, then the template's own.
			if want := " nofb vga=normal " + tc.want + " BOOTIF=${mac} "; !strings.Contains(line, want) {
				t.Errorf("kernel line %q, want it to hold %q", line, want)
			}
		})
	}
}

// A malformed [inspector]/extra_kernel_params fails validation and the
// start of the inspection with upstream's InvalidParameterValue, before
// the node is powered or booted.
func TestInspectionKernelParamsMalformed(t *testing.T) {
	for _, tc := range []struct {
		extra   string
		noParse bool
	}{{extra: `foo="bar`}, {extra: "a=1 \x01b"}, {extra: `foo='bar`, noParse: true}} {
		ctx := context.Background()
		e := newEnv(t, "bios")
		e.node.ProvisionState = states.Inspecting
		e.node.PowerState = "power on"
		e.task.Driver.Boot = NewIPXE(e.opts)
		e.task.Driver.Power = &fake.Power{}
		i := agent.NewInspect(agent.InspectOptions{ExtraKernelParams: tc.extra, DisableKernelParameterParsing: tc.noParse})
		if err := i.Validate(ctx, e.task); !errs.Is(err, errs.ClassInvalidParameterValue) {
			t.Errorf("%q: validate = %v, want InvalidParameterValue", tc.extra, err)
		}
		if _, err := i.InspectHardware(ctx, e.task); !errs.Is(err, errs.ClassInvalidParameterValue) {
			t.Errorf("%q: inspect_hardware = %v, want InvalidParameterValue", tc.extra, err)
		}
		if got := tree(t, e.http); len(got) != 0 || e.node.PowerState != "power on" {
			t.Errorf("%q: node touched: files %v, power %q", tc.extra, got, e.node.PowerState)
		}
	}
}
