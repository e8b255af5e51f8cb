package main

import (
	"context"
	"fmt"
	"io"

	"github.com/openkeel/ironic/testing/ipa"
	"github.com/openkeel/ironic/testing/redfishbmc"
)

// lab runs the peers of a laptop lab from the binary, so that trying the
// Redfish and agent paths needs no BMC and no ramdisk: `ironic lab bmc`
// is the Redfish BMC emulator of testing/redfishbmc, `ironic lab agent`
// the ironic-python-agent stand-in of testing/ipa. They are the test
// fixtures themselves, not copies, and take their flags
// (docs/operators.md#laptop-lab). The emulator's systems behave as
// servers: one that boots the conductor's ISO runs `ironic lab agent`
// as its ramdisk (lab_machines.go).
func lab(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: lab needs bmc or agent", errUsage)
	}
	name := "ironic lab " + args[0]
	switch args[0] {
	case "bmc":
		return redfishbmc.Main(ctx, name, args[1:], stdout, stderr, labRamdisk(stderr))
	case "agent":
		return ipa.Main(ctx, name, args[1:], stdout, stderr)
	default:
		return fmt.Errorf("%w: unknown lab command %q", errUsage, args[0])
	}
}
