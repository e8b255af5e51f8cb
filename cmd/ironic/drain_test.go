package main

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Issue 23 item 7: SIGUSR2 drains the conductor and stops the service, as
// upstream's handle_drain: the process says so and exits cleanly.
func TestDrainSignalStopsTheService(t *testing.T) {
	dir := t.TempDir()
	port := freePort(t)
	conf := writeConf(t, dir, fmt.Sprintf("[DEFAULT]\ndrain_shutdown_timeout = 120\n[api]\nport = %d\n[database]\nconnection = sqlite:///%s/db.sqlite\n", port, dir))
	p := startIronic(t, dir, "ironic", "--config-file", conf)
	waitHealthy(t, p, fmt.Sprintf("http://127.0.0.1:%d/healthcheck", port))
	if err := p.cmd.Process.Signal(syscall.SIGUSR2); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.done:
		if err != nil {
			t.Fatalf("exit after SIGUSR2: %v\n%s", err, p.out)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("no exit within 30 s of SIGUSR2:\n%s", p.out)
	}
	log := p.out.String()
	for _, want := range []string{"got signal SIGUSR2, initiating a workload drain and shutdown", "successfully stopped conductor"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
}
