package driver

import (
	"testing"

	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
)

func TestCapability(t *testing.T) {
	for _, tc := range []struct {
		name string
		caps any
		want string
	}{
		{"string", "boot_option:local, boot_mode : uefi", "uefi"},
		{"object", map[string]any{"boot_mode": "bios"}, "bios"},
		{"absent", "boot_option:local", ""},
		{"not a string in an object", map[string]any{"boot_mode": true}, ""},
		{"none", nil, ""},
	} {
		if got := Capability(tc.caps, "boot_mode"); got != tc.want {
			t.Errorf("%s: Capability(%v) = %q, want %q", tc.name, tc.caps, got, tc.want)
		}
	}
}

func TestNeedPrepareRamdisk(t *testing.T) {
	for state, want := range map[string]bool{states.CleanWait: true, states.Inspecting: true, states.Active: false, states.Manageable: false} {
		if got := NeedPrepareRamdisk(&model.Node{ProvisionState: state}); got != want {
			t.Errorf("NeedPrepareRamdisk in %s = %v", state, got)
		}
	}
}
