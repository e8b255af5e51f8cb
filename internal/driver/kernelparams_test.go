package driver_test

import (
	"testing"

	"github.com/openkeel/ironic/internal/driver"
)

// The PXE boot interfaces write these words into the PXE/iPXE/GRUB
// configuration and the virtual-media boot into the ISO's command line.
func TestFormatKernelParams(t *testing.T) {
	cases := []struct {
		name string
		in   map[string]any
		want string
	}{
		{"none", nil, ""},
		{"empty", map[string]any{}, ""},
		{"one", map[string]any{"ipa-api-url": "http://127.0.0.1:6385"}, "ipa-api-url=http://127.0.0.1:6385"},
		{"sorted", map[string]any{"ipa-debug": 1, "BOOTIF": "01-52-54-00-12-34-56", "coreos.configdrive": 0},
			"BOOTIF=01-52-54-00-12-34-56 coreos.configdrive=0 ipa-debug=1"},
		{"bare key for nil", map[string]any{"nofb": nil, "ipa-agent-token": "tok"}, "ipa-agent-token=tok nofb"},
		{"bool and float", map[string]any{"ipa-insecure": true, "ratio": 1.5}, "ipa-insecure=true ratio=1.5"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := driver.FormatKernelParams(c.in); got != c.want {
				t.Errorf("FormatKernelParams(%v) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}
