package driver

import (
	"testing"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
)

// The cases follow upstream's grammar rule by rule
// (ironic/common/kernel_parameters.py).
func TestCheckKernelCommandLine(t *testing.T) {
	for _, tc := range []struct {
		line string
		ok   bool
	}{
		{"", true},
		{"  nofb vga=normal  ", true},
		{"console=ttyS0,115200n8 ipa-debug=1 a.b_c-d", true},
		{`rd.break root="/dev/disk/by-label/my root" quiet`, true},
		{"a=b=c x=!#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", true},
		{"nofb -- init args with spaces = ok", true},
		{"-- single", true},
		{`a="x y"b c`, true}, // adjacency in the first run
		{`c a="x y"b`, false},
		{"foo=", false},
		{`foo=""`, false},
		{`foo="unterminated`, false},
		{`foo=a"b`, false},
		{"tab\there", false},
		{"new\nline", false},
		{"café=1", false},
		{"$(reboot)", false},
		{"nofb -- \"quoted\"", false},
	} {
		err := CheckKernelCommandLine(tc.line)
		if (err == nil) != tc.ok {
			t.Errorf("%q: %v, want ok=%v", tc.line, err, tc.ok)
		}
		if err != nil && !errs.Is(err, errs.ClassInvalidParameterValue) {
			t.Errorf("%q: class of %v", tc.line, err)
		}
	}
}

func TestKernelAppendParams(t *testing.T) {
	n := &model.Node{
		InstanceInfo: map[string]any{"kernel_append_params": "%default% console=\"tty S0"},
		DriverInfo:   map[string]any{"kernel_append_params": "ignored"},
	}
	if _, err := KernelAppendParams(n, "nofb", true); err == nil ||
		err.Error() != "node's instance_info['kernel_append_params'] contains malformed kernel command line" {
		t.Fatalf("malformed instance_info: %v", err)
	}
	// With parsing off only the sanitisation remains.
	n.InstanceInfo["kernel_append_params"] = "%default% a=b\nreboot\r\x00"
	if got, err := KernelAppendParams(n, "nofb", false); err != nil || got != "nofb a=breboot" {
		t.Fatalf("unparsed: %q %v", got, err)
	}
	delete(n.InstanceInfo, "kernel_append_params")
	n.DriverInfo["kernel_append_params"] = "a=\"b"
	if _, err := KernelAppendParams(n, "", true); err == nil ||
		err.Error() != "node's driver_info['kernel_append_params'] contains malformed kernel command line" {
		t.Fatalf("malformed driver_info: %v", err)
	}
	delete(n.DriverInfo, "kernel_append_params")
	if got, err := KernelAppendParams(n, "nofb vga=normal", true); err != nil || got != "nofb vga=normal" {
		t.Fatalf("configured: %q %v", got, err)
	}
}
