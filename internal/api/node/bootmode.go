package node

import (
	"slices"
	"strings"

	"github.com/openkeel/ironic/internal/errs"
)

// checkAllowBootMode refuses a node whose capabilities ask for a boot
// mode of [api]/disallowed_enrollment_boot_modes, on create and on PATCH
// of /properties/capabilities, as master's check_allow_boot_mode:
// 400 BootModeNotAllowed. Upstream fails with a 500 on a value that is
// not a "key:value,…" string; such a value is left alone here, as it
// names no boot mode.
func checkAllowBootMode(capabilities []any, disallowed []string) error {
	if len(capabilities) == 0 || len(disallowed) == 0 {
		return nil
	}
	for _, c := range capabilities {
		s, ok := c.(string)
		if !ok {
			continue
		}
		for _, item := range strings.Split(strings.ToLower(s), ",") {
			key, value, ok := strings.Cut(item, ":")
			if !ok || strings.Contains(value, ":") {
				continue
			}
			if mode := strings.TrimSpace(value); strings.TrimSpace(key) == "boot_mode" && slices.Contains(disallowed, mode) {
				return errs.New(errs.ClassBootModeNotAllowed, map[string]any{"mode": mode, "op": "provisioning"})
			}
		}
	}
	return nil
}
