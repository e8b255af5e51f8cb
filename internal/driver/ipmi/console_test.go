package ipmi

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/errs"
)

// consoleCore is a core whose socat cannot start, so the tests see how far
// StartConsole got without running anything.
func consoleCore(t *testing.T, run Executor) (*SocatConsole, *fakeBMC) {
	t.Helper()
	c, bmc, _, _ := testCore(t, func(o *Options) {
		o.CommandRetryTimeout = 5 * time.Second
		o.SocatAddress = "127.0.0.1"
		o.SocatBinary = filepath.Join(t.TempDir(), "no-socat")
		if run != nil {
			o.Exec = run
		}
	})
	return &SocatConsole{core: c}, bmc
}

func consoleInfo() map[string]any {
	info := baseInfo()
	info["ipmi_terminal_port"] = float64(14400)
	return info
}

func TestConsoleSOLDeactivateOutcomes(t *testing.T) {
	ctx := context.Background()

	t.Run("no active session", func(t *testing.T) {
		s, bmc := consoleCore(t, nil)
		bmc.answer("sol deactivate", Result{ExitCode: 1, Stderr: "Info: SOL payload already de-activated"})
		task := testTask(consoleInfo(), &bytes.Buffer{})
		got, err := s.GetConsole(ctx, task)
		must(t, err)
		if got["type"] != "socat" || got["url"] != "tcp://127.0.0.1:14400" {
			t.Fatalf("console %v", got)
		}
	})

	t.Run("other failures are returned with ipmitool's text", func(t *testing.T) {
		s, bmc := consoleCore(t, nil)
		bmc.answer("sol deactivate",
			Result{ExitCode: 2, Stderr: "Segmentation fault"}, Result{ExitCode: 2, Stderr: "Segmentation fault"})
		task := testTask(consoleInfo(), &bytes.Buffer{})
		for name, call := range map[string]func() error{
			"start": func() error { return s.StartConsole(ctx, task) },
			"get":   func() error { _, err := s.GetConsole(ctx, task); return err },
		} {
			err := call()
			var execErr *ExecError
			if !errors.As(err, &execErr) || !strings.HasPrefix(err.Error(), "Unexpected error while running command.\nCommand: ") ||
				!strings.HasSuffix(err.Error(), "sol deactivate\nExit code: 2\nStdout: ''\nStderr: 'Segmentation fault'") {
				t.Fatalf("%s: error %v", name, err)
			}
		}
		if _, err := os.Stat(s.passwordFilePath(task.Node.UUID)); !os.IsNotExist(err) {
			t.Fatal("console password file written although the console was not started")
		}
	})

	t.Run("ipmitool that cannot run is passed over", func(t *testing.T) {
		missing := func(context.Context, Command) (Result, error) {
			return Result{}, &exec.Error{Name: "ipmitool", Err: exec.ErrNotFound}
		}
		s, _ := consoleCore(t, missing)
		task := testTask(consoleInfo(), &bytes.Buffer{})
		if _, err := s.GetConsole(ctx, task); err != nil {
			t.Fatalf("get console: %v", err)
		}
		// StartConsole goes on to socat, which is missing here.
		if err := s.StartConsole(ctx, task); !errs.Is(err, errs.ClassConsoleSubprocessFailed) {
			t.Fatalf("start console: %v", err)
		}
		if _, err := os.Stat(s.passwordFilePath(task.Node.UUID)); !os.IsNotExist(err) {
			t.Fatal("console password file left after socat failed to start")
		}
	})
}

func TestConsoleValidate(t *testing.T) {
	ctx := context.Background()
	s, _ := consoleCore(t, nil)
	task := testTask(baseInfo(), &bytes.Buffer{})
	if err := s.Validate(ctx, task); !errs.Is(err, errs.ClassMissingParameterValue) || err.Error() !=
		"Either missing 'ipmi_terminal_port' parameter in node's driver_info or [console]port_range is not configured" {
		t.Fatalf("no port: %v", err)
	}
	s.core.opts.PortRange = []PortRange{{Start: 14400, End: 14401}}
	must(t, s.Validate(ctx, task))
	task.Node.DriverInfo["ipmi_protocol_version"] = "1.5"
	if err := s.Validate(ctx, task); !errs.Is(err, errs.ClassInvalidParameterValue) || err.Error() !=
		"Serial over lan only works with IPMI protocol version 2.0. Check the 'ipmi_protocol_version' parameter in node's driver_info" {
		t.Fatalf("IPMI 1.5: %v", err)
	}
	task.Node.DriverInfo["ipmi_protocol_version"] = "2.0"
	task.Node.DriverInfo["ipmi_terminal_port"] = "port"
	if err := s.Validate(ctx, task); err == nil || err.Error() != `ipmi_terminal_port "port" is not a valid port.` {
		t.Fatalf("bad port: %v", err)
	}
}

// TestConsolePortAllocation allocates terminal ports from the range,
// skipping ports held by this conductor or bound by anyone, until none is
// left.
func TestConsolePortAllocation(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	defer taken.Close()
	busy := taken.Addr().(*net.TCPAddr).Port
	ranges := []PortRange{{Start: busy, End: busy}, {Start: busy - 2, End: busy - 1}}
	for _, p := range []int{busy - 2, busy - 1} {
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			t.Skipf("port %d, next to the one the test binds, is in use by others: %v", p, err)
		}
		must(t, l.Close())
	}
	a := newPortAllocator()
	var got []int
	for range 2 {
		p, err := a.acquire(ranges, "127.0.0.1", "cond-1")
		must(t, err)
		got = append(got, p)
	}
	if got[0] != busy-2 || got[1] != busy-1 {
		t.Fatalf("allocated %v from %v with %d bound", got, ranges, busy)
	}
	if _, err := a.acquire(ranges, "127.0.0.1", "cond-1"); !errs.Is(err, errs.ClassNoFreeIPMITerminalPorts) ||
		err.Error() != "Unable to allocate a free port on host cond-1 for IPMI terminal, not enough free ports." {
		t.Fatalf("exhausted range: %v", err)
	}
	a.release(got[0])
	if p, err := a.acquire(ranges, "127.0.0.1", "cond-1"); err != nil || p != got[0] {
		t.Fatalf("released port not reused: %d %v", p, err)
	}
}
