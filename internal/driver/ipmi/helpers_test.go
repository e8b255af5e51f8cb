package ipmi

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/testing/fakeclock"
)

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// call is one command the fake executor saw, with what it found in the
// password file while the command ran.
type call struct {
	Args     []string
	Env      []string
	Timeout  time.Duration
	PWFile   string
	Password string
	PWMode   os.FileMode
	At       time.Time
}

// command is the ipmitool command words after the password file.
func (c call) command() string {
	for i, a := range c.Args {
		if a == "-f" || a == "-E" {
			if a == "-f" {
				i++
			}
			return strings.Join(c.Args[i+1:], " ")
		}
	}
	return ""
}

// fakeBMC scripts ipmitool answers by command (each used once, then
// success with no output) and records every call.
type fakeBMC struct {
	mu      sync.Mutex
	clock   *fakeclock.Clock
	calls   []call
	answers map[string][]Result
	// each call takes this long on the fake clock
	duration time.Duration
}

func (f *fakeBMC) answer(command string, results ...Result) {
	if f.answers == nil {
		f.answers = map[string][]Result{}
	}
	f.answers[command] = append(f.answers[command], results...)
}

func (f *fakeBMC) exec(_ context.Context, cmd Command) (Result, error) {
	c := call{Args: cmd.Args, Env: cmd.Env, Timeout: cmd.Timeout}
	if f.clock != nil {
		c.At = f.clock.Now()
	}
	for i, a := range cmd.Args {
		if a == "-f" && i+1 < len(cmd.Args) {
			c.PWFile = cmd.Args[i+1]
			if st, err := os.Stat(c.PWFile); err == nil {
				c.PWMode = st.Mode().Perm()
			}
			data, _ := os.ReadFile(c.PWFile)
			c.Password = string(data)
		}
	}
	f.mu.Lock()
	f.calls = append(f.calls, c)
	res := Result{}
	if q := f.answers[c.command()]; len(q) > 0 {
		res = q[0]
		f.answers[c.command()] = q[1:]
	}
	f.mu.Unlock()
	if f.clock != nil && f.duration > 0 {
		f.clock.Advance(f.duration)
	}
	return res, nil
}

func (f *fakeBMC) commands() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, c := range f.calls {
		out = append(out, c.command())
	}
	return out
}

var allSupported = &Support{Timing: true, SingleBridge: true, DualBridge: true}

// testCore builds a core on a fake BMC and clock.
func testCore(t *testing.T, mutate func(*Options)) (*core, *fakeBMC, *fakeclock.Clock, *bytes.Buffer) {
	t.Helper()
	clock := fakeclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	bmc := &fakeBMC{clock: clock}
	logs := &bytes.Buffer{}
	o := DefaultOptions()
	o.TempDir = t.TempDir()
	o.Clock = clock
	o.Exec = bmc.exec
	o.Support = allSupported
	o.Log = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if mutate != nil {
		mutate(&o)
	}
	return newCore(o, *o.Support), bmc, clock, logs
}

func testTask(info map[string]any, logs *bytes.Buffer) *driver.Task {
	n := &model.Node{UUID: "1be26c0b-03f2-4d2e-ae87-c02d7f33c123", Driver: "ipmi", DriverInfo: info,
		DriverInternalInfo: map[string]any{}, InstanceInfo: map[string]any{}, Properties: map[string]any{}}
	return &driver.Task{Node: n, Log: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
}

func baseInfo() map[string]any {
	return map[string]any{"ipmi_address": "10.0.0.9", "ipmi_username": "admin", "ipmi_password": "Sup3r-s3cret"}
}
