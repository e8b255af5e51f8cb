package redfish

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/testing/fakeclock"
	"github.com/openkeel/ironic/testing/redfishbmc"
)

const (
	testUser     = "admin"
	testPassword = "S3cr3t-Passw0rd"
	testNode     = "1be26c0b-03f2-4d2e-ae87-c02d7f33c123"
)

// lockedBuffer collects log output from every goroutine.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// env is one emulated BMC with the redfish interfaces pointed at it.
type env struct {
	t      *testing.T
	bmc    *redfishbmc.BMC
	clock  *fakeclock.Clock
	logs   *lockedBuffer
	core   *core
	power  *Power
	mgmt   *Management
	node   *model.Node
	task   *driver.Task
	ctx    context.Context
	drvIfs *driver.Interfaces
}

func testOptions(clock *fakeclock.Clock, log *slog.Logger) Options {
	o := DefaultOptions()
	o.Clock = clock
	o.Log = log
	o.ConnectionAttempts = 3
	o.ConnectionRetryInterval = 4 * time.Second
	o.ServerSideRetries = 2
	o.ServerSideRetriesDelay = 3 * time.Second
	return o
}

// newEnv starts bmc (already configured by the caller) and builds the
// interfaces with options adjusted by tune.
func newEnv(t *testing.T, bmc *redfishbmc.BMC, tune func(*Options)) *env {
	t.Helper()
	clock := fakeclock.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	logs := &lockedBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	opts := testOptions(clock, log)
	if tune != nil {
		tune(&opts)
	}
	c := newCore(opts, log)
	e := &env{
		t: t, bmc: bmc, clock: clock, logs: logs, core: c,
		power: &Power{core: c}, mgmt: &Management{core: c}, ctx: context.Background(),
	}
	e.node = &model.Node{
		UUID: testNode, Driver: "redfish",
		DriverInfo: map[string]any{
			"redfish_address": bmc.URL(), "redfish_username": testUser, "redfish_password": testPassword,
		},
		DriverInternalInfo: map[string]any{},
		Properties:         map[string]any{},
	}
	e.drvIfs = &driver.Interfaces{HardwareType: "redfish", Power: e.power, Management: e.mgmt}
	e.task = &driver.Task{Node: e.node, Driver: e.drvIfs, Log: log}
	t.Cleanup(func() {
		if strings.Contains(logs.String(), testPassword) {
			t.Errorf("the BMC password appears in the driver log:\n%s", logs.String())
		}
	})
	return e
}

func wantClass(t *testing.T, err error, class errs.Class, msg string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %s", class)
	}
	if !errs.Is(err, class) {
		t.Fatalf("error %T %v, want class %s", err, err, class)
	}
	if msg != "" && err.Error() != msg {
		t.Fatalf("message\n got  %q\n want %q", err.Error(), msg)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
