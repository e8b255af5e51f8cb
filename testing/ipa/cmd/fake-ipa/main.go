// Command fake-ipa runs the IPA fixture as a process (ipa.Main), the way
// a ramdisk runs ironic-python-agent:
//
//	fake-ipa -api-url http://127.0.0.1:6385 -mac 52:54:00:12:34:56 [-tls]
//	         [-token T] [-inspection-data data.json]
//	         [-fail-step erase_devices_metadata] [-no-heartbeat] [-wrong-token]
//	         [-power-off-delay 2s]
//
// Once listening it prints "IPA_URL=<url>" on stdout; its log goes to
// stderr. It stops on SIGINT or SIGTERM. `ironic lab agent` is the same
// program inside the ironic binary.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/openkeel/ironic/testing/ipa"
)

func main() {
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := ipa.Main(ctx, "fake-ipa", os.Args[1:], os.Stdout, os.Stderr)
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "fake-ipa: %v\n", err)
		os.Exit(1)
	}
}
