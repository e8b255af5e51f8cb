package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/openkeel/ironic/testing/ipa"
	"github.com/openkeel/ironic/testing/redfishbmc"
)

// What a lab machine's ramdisk does when the emulator's configuration
// leaves it unsaid: a ramdisk that boots in seconds rather than minutes,
// and IPA's own pace otherwise.
const (
	labBootDelay         = 3 * time.Second
	labHeartbeatInterval = 5 * time.Second
	// labStopGrace is how long a stopped agent may take to go before it
	// is killed.
	labStopGrace = 5 * time.Second
)

// labRamdisk starts the agent of a lab machine's ramdisk as a process of
// this binary (`ironic lab agent`), configured as IPA configures itself:
// the API URL and token from the kernel parameters the conductor put on
// the ISO, the MACs and inventory from the emulated hardware. Its log
// goes to stderr, each line prefixed with the machine.
func labRamdisk(stderr io.Writer) redfishbmc.RamdiskStarter {
	var logMu sync.Mutex
	return func(ctx context.Context, r redfishbmc.Ramdisk) (func(), error) {
		api := r.Params["ipa-api-url"]
		if api == "" {
			return nil, errors.New("the ramdisk's kernel parameters have no ipa-api-url")
		}
		if len(r.MACs) == 0 {
			return nil, errors.New("the machine has no NIC for the agent's lookup")
		}
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("find the ironic binary: %w", err)
		}
		dir, err := os.MkdirTemp("", "ironic-lab-"+r.SystemID+"-")
		if err != nil {
			return nil, fmt.Errorf("ramdisk directory: %w", err)
		}
		args, err := labAgentArgs(r, dir)
		if err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		cmd := exec.Command(exe, args...)
		// The token is on a real ramdisk's kernel command line; here it
		// stays out of the process list.
		cmd.Env = append(os.Environ(), ipa.TokenEnv+"="+r.Params["ipa-agent-token"])
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		logs, err := cmd.StderrPipe()
		if err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		if err := cmd.Start(); err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("start the agent: %w", err)
		}
		var readers sync.WaitGroup
		readers.Add(2)
		go func() {
			defer readers.Done()
			lines := bufio.NewScanner(logs)
			for lines.Scan() {
				logMu.Lock()
				fmt.Fprintf(stderr, "[%s] %s\n", r.SystemID, lines.Text())
				logMu.Unlock()
			}
		}()
		go func() {
			defer readers.Done()
			lines := bufio.NewScanner(stdout)
			for lines.Scan() {
				// After standby.power_off and its flush, the OS
				// switches the machine off.
				if lines.Text() == ipa.PoweredOffLine {
					r.PowerOff()
				}
			}
		}()
		exited := make(chan struct{})
		go func() {
			readers.Wait()
			_ = cmd.Wait()
			close(exited)
		}()
		stop := func() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-exited:
			case <-time.After(labStopGrace):
				_ = cmd.Process.Kill()
				<-exited
			}
			os.RemoveAll(dir)
		}
		return stop, nil
	}
}

// labAgentArgs are the `ironic lab agent` arguments of r's ramdisk; the
// inspection data, when the ISO asks for inspection, is written to dir.
func labAgentArgs(r redfishbmc.Ramdisk, dir string) ([]string, error) {
	c := r.Config
	bootDelay, interval := time.Duration(c.BootDelay), time.Duration(c.HeartbeatInterval)
	if bootDelay <= 0 {
		bootDelay = labBootDelay
	}
	if interval <= 0 {
		interval = labHeartbeatInterval
	}
	args := []string{"lab", "agent", "-api-url", r.Params["ipa-api-url"], "-mac", strings.Join(r.MACs, ","),
		"-tls", "-boot-delay", bootDelay.String(), "-heartbeat-interval", interval.String()}
	if c.PowerOffDelay > 0 {
		args = append(args, "-power-off-delay", time.Duration(c.PowerOffDelay).String())
	}
	cb := r.Params["ipa-inspection-callback-url"]
	if cb == "" {
		return args, nil
	}
	// IPA's default collectors add the interface it booted from and the
	// disk it would deploy to.
	plugin := map[string]any{"boot_interface": r.MACs[0]}
	if disks, _ := r.Inventory["disks"].([]any); len(disks) > 0 {
		plugin["root_disk"] = disks[0]
	}
	data, err := json.Marshal(map[string]any{"inventory": r.Inventory, "plugin_data": plugin})
	if err != nil {
		return nil, fmt.Errorf("encode the inspection data: %w", err)
	}
	path := filepath.Join(dir, "inspection.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return nil, fmt.Errorf("write the inspection data: %w", err)
	}
	return append(args, "-inspection-data", path, "-inspection-callback-url", cb), nil
}
