package conductor

import (
	"testing"

	"github.com/openkeel/ironic/internal/errs"
)

func TestValidateUserSteps(t *testing.T) {
	driverSteps := []map[string]any{
		{"interface": "deploy", "step": "erase_devices", "priority": 10, "abortable": true,
			"argsinfo": map[string]any{"secure": map[string]any{"description": "Secure erase", "required": true}}, "requires_ramdisk": true},
		{"interface": "bios", "step": "apply_configuration", "priority": 0, "abortable": false, "argsinfo": nil, "requires_ramdisk": false},
		{"interface": "deploy", "step": "deploy", "priority": 100},
	}
	cases := []struct {
		name           string
		steps          []map[string]any
		kind           string
		prefix         string
		skipMissing    bool
		disableRamdisk bool
		want           string
		wantSteps      []map[string]any
	}{
		{
			name:  "copies priority and abortable for clean steps",
			steps: []map[string]any{{"interface": "deploy", "step": "erase_devices", "args": map[string]any{"secure": true}}},
			kind:  "clean",
			wantSteps: []map[string]any{{"interface": "deploy", "step": "erase_devices", "args": map[string]any{"secure": true},
				"priority": 10, "abortable": true}},
		},
		{
			name:      "reserved steps are kept unvalidated",
			steps:     []map[string]any{{"interface": "power", "step": "reboot"}, {"interface": "bios", "step": "wait", "args": map[string]any{"x": 1}}},
			kind:      "clean",
			wantSteps: []map[string]any{{"interface": "power", "step": "reboot"}, {"interface": "bios", "step": "wait", "args": map[string]any{"x": 1}}},
		},
		{
			name: "all errors joined",
			steps: []map[string]any{
				{"interface": "raid", "step": "create"},
				{"interface": "deploy", "step": "erase_devices", "args": map[string]any{"b": 1, "a": 2}},
			},
			kind: "clean",
			want: "node does not support this clean step: {'interface': 'raid', 'step': 'create'}; " +
				"clean step {'interface': 'deploy', 'step': 'erase_devices', 'args': {'a': 2, 'b': 1}} has these unexpected arguments: a, b; " +
				"clean step {'interface': 'deploy', 'step': 'erase_devices', 'args': {'a': 2, 'b': 1}} is missing these required arguments: secure (Secure erase)",
		},
		{
			name:           "ramdisk needed",
			steps:          []map[string]any{{"interface": "deploy", "step": "erase_devices", "args": map[string]any{"secure": false}}, {"interface": "bios", "step": "apply_configuration"}},
			kind:           "clean",
			disableRamdisk: true,
			want:           "clean step {'interface': 'deploy', 'step': 'erase_devices', 'args': {'secure': False}} requires booting a ramdisk",
		},
		{
			name:        "missing skipped",
			steps:       []map[string]any{{"interface": "raid", "step": "create", "priority": 5}},
			kind:        "deploy",
			skipMissing: true,
		},
		{
			name:      "deploy step with priority 0 needs no args",
			steps:     []map[string]any{{"interface": "deploy", "step": "erase_devices", "priority": 0}},
			kind:      "deploy",
			wantSteps: []map[string]any{{"interface": "deploy", "step": "erase_devices", "priority": 0}},
		},
		{
			name: "deploy duplicates and core step",
			steps: []map[string]any{
				{"interface": "deploy", "step": "deploy", "priority": 5},
				{"interface": "bios", "step": "apply_configuration", "priority": 1},
				{"interface": "bios", "step": "apply_configuration", "priority": 2},
			},
			kind:   "deploy",
			prefix: "P: ",
			want: "P: deploy step deploy on interface deploy is a core step and cannot be overridden by user steps. It may be disabled by setting the priority to 0; " +
				"deploy steps from all deploy templates matching this node's instance traits cannot have the same interface and step. Duplicate deploy steps for bios.apply_configuration",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := validateUserSteps(c.steps, driverSteps, c.kind, c.prefix, c.skipMissing, c.disableRamdisk)
			if c.want != "" {
				if !errs.Is(err, errs.ClassInvalidParameterValue) || err.Error() != c.want {
					t.Fatalf("error\n have %v\n want %s", err, c.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if pyRepr(toAny(got)) != pyRepr(toAny(c.wantSteps)) {
				t.Fatalf("steps\n have %s\n want %s", pyRepr(toAny(got)), pyRepr(toAny(c.wantSteps)))
			}
		})
	}
}

func toAny(list []map[string]any) []any {
	out := make([]any, len(list))
	for i, m := range list {
		out[i] = m
	}
	return out
}

func TestPyRepr(t *testing.T) {
	cases := []struct {
		in   any
		want string
	}{
		{nil, "None"},
		{true, "True"},
		{float64(3), "3"},
		{1.5, "1.5"},
		{"it's", `"it's"`},
		{`a'b"c`, `'a\'b"c'`},
		{[]string{"x", "y"}, "['x', 'y']"},
		{map[string]any{"zeta": 1, "step": "s", "interface": "i", "args": map[string]any{}}, "{'interface': 'i', 'step': 's', 'args': {}, 'zeta': 1}"},
	}
	for _, c := range cases {
		if got := pyRepr(c.in); got != c.want {
			t.Errorf("pyRepr(%v) = %s, want %s", c.in, got, c.want)
		}
	}
	if got := pyTuple([]string{"a"}); got != "('a',)" {
		t.Errorf("one-tuple %s", got)
	}
}
