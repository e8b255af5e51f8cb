// Command redfishbmc runs the Redfish BMC emulator of testing/redfishbmc as
// a process (redfishbmc.Main), for tests and labs that need a BMC outside
// their own address space. It reads a redfishbmc.Config as JSON from the
// file named by -config, prints "URL <base URL>" on its standard output
// once it listens, logs every request to standard error with credentials
// left out, and stops on SIGINT or SIGTERM. `ironic lab bmc` is the same
// program inside the ironic binary, whose systems also boot the ramdisk
// of the ISO inserted (redfishbmc.RunMachines); here they only keep
// their state.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/openkeel/ironic/testing/redfishbmc"
)

func main() {
	// Signals are caught before the URL is announced, so that a parent
	// that stops the emulator as soon as it read the URL is heard.
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	err := redfishbmc.Main(ctx, "redfishbmc", os.Args[1:], os.Stdout, os.Stderr)
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "redfishbmc: %v\n", err)
		os.Exit(1)
	}
}
