// Command ironic is the one openkeel-ironic binary: API, conductor, both in
// one process (the default), and database management. Invoked through a link
// named ironic-api, ironic-conductor or ironic-dbsync it behaves as that
// upstream program, so it drops into existing images.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	code := run(ctx, os.Args, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
