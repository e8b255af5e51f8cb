package driver

import (
	"fmt"
	"slices"
	"strings"
)

// FormatKernelParams renders the ramdisk parameters a deploy interface
// hands to BootInterface.PrepareRamdisk as kernel command-line words:
// key=value, a bare key for a nil value, in key order so that the PXE
// configuration or the ISO's command line is the same for the same
// parameters. Every boot interface appends them the same way.
func FormatKernelParams(params map[string]any) string {
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		if params[k] == nil {
			parts = append(parts, k)
			continue
		}
		parts = append(parts, fmt.Sprintf("%s=%v", k, params[k]))
	}
	return strings.Join(parts, " ")
}
