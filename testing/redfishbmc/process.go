package redfishbmc

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"sync"
	"time"
)

// machinePoll is how often the machines of Main look at their BMC: a
// server reacts to its power within a fraction of a second.
const machinePoll = 100 * time.Millisecond

// Main runs an emulator as a process until ctx ends: cmd/redfishbmc and
// `ironic lab bmc` are this, under two names. It reads a Config as JSON
// from the file named by -config (so that the BMC password is not on its
// command line), writes "URL <base URL>" to stdout once it listens, and
// logs every request to stderr with credentials left out. With
// "control": true, faults are injected through the control API under
// /emulator/ (BMC.WithControl). Given a RamdiskStarter, the systems
// behave as servers that boot the ramdisk of the ISO inserted
// (RunMachines, `ironic lab bmc`); without one they only keep state.
func Main(ctx context.Context, name string, args []string, stdout, stderr io.Writer, start ...RamdiskStarter) error {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("config", "", "JSON file holding the emulator's configuration")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *path == "" {
		return errors.New("-config is required")
	}
	data, err := os.ReadFile(*path)
	if err != nil {
		return fmt.Errorf("read configuration: %w", err)
	}
	var cfg Config
	if err := json.Unmarshal(data, &cfg); err != nil {
		return fmt.Errorf("parse %s: %w", *path, err)
	}
	logger := log.New(stderr, "", log.LstdFlags)
	bmc, err := Build(cfg, logger)
	if err != nil {
		return err
	}
	url, err := bmc.Serve(cfg.Listen)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "URL %s\n", url)
	var machines sync.WaitGroup
	for _, s := range start {
		machines.Add(1)
		go func() {
			defer machines.Done()
			bmc.RunMachines(ctx, machinePoll, s)
		}()
	}
	<-ctx.Done()
	logger.Printf("%s: stopping", name)
	// The ramdisks stop first: their machines lose power with the BMC.
	machines.Wait()
	bmc.Close()
	return nil
}
