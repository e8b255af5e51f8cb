// Command redfishbmc runs the Redfish BMC emulator of testing/redfishbmc as
// a process, for tests and labs that need a BMC outside their own address
// space. It reads a redfishbmc.Config as JSON from the file named by
// -config (so that the BMC password is not on its command line), prints
// "URL <base URL>" on its standard output once it listens, logs every
// request to standard error with credentials left out, and stops on
// SIGINT or SIGTERM. With "control": true, faults are injected through
// the control API under /emulator/ (redfishbmc.BMC.WithControl).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"

	"github.com/openkeel/ironic/testing/redfishbmc"
)

func main() {
	path := flag.String("config", "", "JSON file holding the emulator's configuration")
	flag.Parse()
	logger := log.New(os.Stderr, "", log.LstdFlags)
	if err := run(*path, logger); err != nil {
		logger.Fatal(err)
	}
}

func run(path string, logger *log.Logger) error {
	if path == "" {
		return fmt.Errorf("redfishbmc: -config is required")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("redfishbmc: read configuration: %w", err)
	}
	var cfg redfishbmc.Config
	if err := json.Unmarshal(data, &cfg); err != nil {
		return fmt.Errorf("redfishbmc: parse %s: %w", path, err)
	}
	bmc, err := redfishbmc.Build(cfg, logger)
	if err != nil {
		return err
	}
	// Signals are caught before the URL is announced, so that a parent
	// that stops the emulator as soon as it read the URL is heard.
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	url, err := bmc.Serve(cfg.Listen)
	if err != nil {
		return err
	}
	fmt.Printf("URL %s\n", url)
	sig := <-stop
	logger.Printf("redfishbmc: %v, stopping", sig)
	bmc.Close()
	return nil
}
