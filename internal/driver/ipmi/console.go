package ipmi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/pyfmt"
)

// SocatConsole is upstream IPMISocatConsole: socat listens on the node's
// terminal port and, for each client, runs "ipmitool ... sol activate".
type SocatConsole struct {
	driver.NoSteps
	core *core
}

var _ driver.ConsoleInterface = (*SocatConsole)(nil)

// Properties returns the ipmitool driver_info keys plus the terminal port.
func (s *SocatConsole) Properties() map[string]string { return ConsoleProperties() }

// Validate needs a terminal port (or a range to allocate from) and IPMI
// 2.0, the only version with serial over LAN.
func (s *SocatConsole) Validate(_ context.Context, task *driver.Task) error {
	d, err := s.core.parse(task)
	if err != nil {
		return err
	}
	if d.Port == nil && len(s.core.opts.PortRange) == 0 {
		return driver.MissingParameterValue(
			"Either missing 'ipmi_terminal_port' parameter in node's driver_info or [console]port_range is not configured")
	}
	if d.ProtocolVersion != "2.0" {
		return driver.InvalidParameterValue(
			"Serial over lan only works with IPMI protocol version 2.0. Check the 'ipmi_protocol_version' parameter in node's driver_info")
	}
	return nil
}

// StartConsole (re)starts socat for the node, allocating a port from
// [console]port_range when driver_info has none.
func (s *SocatConsole) StartConsole(ctx context.Context, task *driver.Task) error {
	s.releaseAllocatedPort(task)
	d, err := s.core.parse(task)
	if err != nil {
		return err
	}
	if d.Port == nil {
		port, err := s.core.ports.acquire(s.core.opts.PortRange, s.core.opts.SocatAddress, s.core.opts.Host)
		if err != nil {
			return err
		}
		task.Node.InternalInfo().Set(model.DIIAllocatedIPMITerminalPort, port)
		d.Port = &port
	}
	if err := s.dropSOLSession(ctx, d); err != nil {
		return err
	}
	return s.startConsole(ctx, task, d)
}

// StopConsole stops socat, removes the console's password file, ends the
// BMC's SOL session and releases an allocated port.
func (s *SocatConsole) StopConsole(ctx context.Context, task *driver.Task) error {
	d, err := s.core.parse(task)
	if err != nil {
		return err
	}
	stopErr := s.stopSocat(ctx, task)
	_ = os.Remove(s.passwordFilePath(task.Node.UUID))
	if stopErr != nil && !errs.Is(stopErr, errs.ClassNoConsolePid) {
		return stopErr
	}
	// Returned as is: upstream lets ipmitool's failure through unchanged
	// and the conductor records its text as the node's last_error.
	if _, _, err := s.core.exec(ctx, d, "sol deactivate", execOptions{okCodes: []int{0, 1}}); err != nil {
		return err
	}
	s.releaseAllocatedPort(task)
	return nil
}

// GetConsole ends a stale SOL session and returns the socat URL.
func (s *SocatConsole) GetConsole(ctx context.Context, task *driver.Task) (map[string]any, error) {
	d, err := s.core.parse(task)
	if err != nil {
		return nil, err
	}
	if err := s.dropSOLSession(ctx, d); err != nil {
		return nil, err
	}
	port := "None"
	if d.Port != nil {
		port = strconv.Itoa(*d.Port)
	}
	host := s.core.opts.SocatAddress
	if ip, err := netip.ParseAddr(host); err == nil && ip.Is6() {
		host = "[" + host + "]"
	}
	return map[string]any{"type": "socat", "url": "tcp://" + host + ":" + port}, nil
}

// dropSOLSession ends the BMC's serial-over-LAN session before a client
// connects, as upstream's start_console and get_console do. Exit code 1
// means no session was active; an ipmitool that cannot be started at all
// (upstream's ignored OSError) is logged and passed over. Any other
// failure is returned unchanged, since upstream lets it through with its
// text.
func (s *SocatConsole) dropSOLSession(ctx context.Context, d DriverInfo) error {
	_, _, err := s.core.exec(ctx, d, "sol deactivate", execOptions{okCodes: []int{0, 1}})
	var execErr *ExecError
	if errors.As(err, &execErr) && execErr.Err != nil && !errors.Is(execErr.Err, ErrTimeout) {
		s.core.opts.log().Debug("sol deactivate could not run", "node", d.UUID, "error", err)
		return nil
	}
	return err
}

func (s *SocatConsole) releaseAllocatedPort(task *driver.Task) {
	ii := task.Node.InternalInfo()
	v, ok := ii.Lookup(model.DIIAllocatedIPMITerminalPort)
	if !ok {
		return
	}
	ii.Delete(model.DIIAllocatedIPMITerminalPort)
	if p, ok := pyInt(v); ok {
		s.core.ports.release(p)
	}
}

func (s *SocatConsole) passwordFilePath(uuid string) string {
	return filepath.Join(s.core.opts.TempDir, uuid+".pw")
}

func (s *SocatConsole) pidDir() string {
	if s.core.opts.TerminalPIDDir != "" {
		return s.core.opts.TerminalPIDDir
	}
	return s.core.opts.TempDir
}

func (s *SocatConsole) pidFile(uuid string) string { return filepath.Join(s.pidDir(), uuid+".pid") }

// startConsole is upstream _start_console with start_socat_console: the
// password goes to a persistent 0600 file (or the environment) that lives
// as long as the console, since socat runs ipmitool for every client.
func (s *SocatConsole) startConsole(ctx context.Context, task *driver.Task, d DriverInfo) error {
	args := s.core.ipmitoolArgs(d)
	var env []string
	pwFile := ""
	if s.core.opts.StoreCredInEnv {
		args = append(args, "-E")
		if d.Password != "" {
			env = []string{"IPMI_PASSWORD=" + d.Password}
		}
	} else {
		pwFile = s.passwordFilePath(d.UUID)
		pw := d.Password
		if pw == "" {
			pw = "\x00"
		}
		_ = os.Remove(pwFile)
		if err := os.WriteFile(pwFile, []byte(pw), 0o600); err != nil {
			_ = os.Remove(pwFile)
			return errs.New(errs.ClassPasswordFileFailedToCreate, map[string]any{"error": err.Error()})
		}
		args = append(args, "-f", pwFile)
	}
	args = append(args, s.core.debugArgs()...)
	cmd := strings.Join(args, " ") + " sol activate"
	if err := s.startSocat(ctx, task, d.UUID, *d.Port, cmd, env); err != nil {
		if pwFile != "" {
			_ = os.Remove(pwFile)
		}
		task.Logger().Error("IPMI error while starting the console", "node", d.UUID, "error", err)
		return err
	}
	return nil
}

// socatMeta are the characters socat's two lexing passes of an EXEC
// address treat specially.
const socatMeta = ",:!'\"()[]{}\\"

// escapeSocatCommand escapes each metacharacter with three backslashes,
// one level per lexing pass plus the escape itself, as upstream does.
func escapeSocatCommand(cmd string) string {
	var b strings.Builder
	for _, r := range cmd {
		if strings.ContainsRune(socatMeta, r) {
			b.WriteString(`\\\`)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// socatArgs is the socat command line upstream builds.
func (s *SocatConsole) socatArgs(uuid string, port int, consoleCmd string) []string {
	bin := s.core.opts.SocatBinary
	if bin == "" {
		bin = "socat"
	}
	args := []string{bin}
	if t := int(s.core.opts.TerminalTimeout / time.Second); t > 0 {
		args = append(args, "-T"+strconv.Itoa(t))
	}
	args = append(args, "-L"+s.pidFile(uuid))
	host := s.core.opts.SocatAddress
	if ip, err := netip.ParseAddr(host); err == nil && ip.Is6() {
		args = append(args, fmt.Sprintf("TCP6-LISTEN:%d,bind=[%s],reuseaddr,fork,max-children=1", port, host))
	} else {
		args = append(args, fmt.Sprintf("TCP4-LISTEN:%d,bind=%s,reuseaddr,fork,max-children=1", port, host))
	}
	return append(args, `EXEC:"`+escapeSocatCommand(consoleCmd)+`",pty,stderr`)
}

// startSocat starts socat in the background and waits until it has
// written its PID file, failing when it exits or takes longer than
// [console]subprocess_timeout.
func (s *SocatConsole) startSocat(ctx context.Context, task *driver.Task, uuid string, port int, consoleCmd string, env []string) error {
	if err := s.stopSocat(ctx, task); err != nil && !errs.Is(err, errs.ClassNoConsolePid) {
		return err
	}
	if err := os.MkdirAll(s.pidDir(), 0o755); err != nil {
		msg := fmt.Sprintf("Cannot create directory '%s' for console PID file. Reason: %s.", s.pidDir(), err)
		return errs.NewMessage(errs.ClassConsoleError, msg)
	}
	args := s.socatArgs(uuid, port, consoleCmd)
	// The console outlives the request that started it.
	cmd := exec.Command(args[0], args[1:]...)
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return errs.New(errs.ClassConsoleSubprocessFailed, map[string]any{
			"error": fmt.Sprintf("%s\nCommand: %s", err, strings.Join(args, " ")),
		})
	}
	exited := make(chan struct{})
	go func() {
		// Reap socat whenever it ends, so a stopped console leaves no zombie.
		_ = cmd.Wait()
		close(exited)
	}()
	clock := s.core.opts.clock()
	deadline := clock.Now().Add(s.core.opts.SubprocessTimeout)
	interval := max(s.core.opts.SubprocessCheckingInterval, 10*time.Millisecond)
	for {
		select {
		case <-exited:
			msg := fmt.Sprintf("Command: %s.\nExit code: %d.\nStderr: %s",
				strings.Join(args, " "), cmd.ProcessState.ExitCode(), pyfmt.Repr(stderr.String()))
			task.Logger().Error("console subprocess exited", "node", uuid, "error", msg)
			return errs.New(errs.ClassConsoleSubprocessFailed, map[string]any{"error": msg})
		default:
		}
		if pid, err := s.readPID(uuid); err == nil && processAlive(pid) {
			return nil
		}
		if clock.Now().After(deadline) {
			_ = cmd.Process.Kill()
			msg := fmt.Sprintf("Timeout while waiting for console subprocess to start for node %s.", uuid)
			return errs.New(errs.ClassConsoleSubprocessFailed, map[string]any{"error": msg})
		}
		if err := clock.Sleep(ctx, interval); err != nil {
			_ = cmd.Process.Kill()
			return err
		}
	}
}

func (s *SocatConsole) readPID(uuid string) (int, error) {
	path := s.pidFile(uuid)
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, errs.New(errs.ClassNoConsolePid, map[string]any{"pid_path": path})
	}
	line, _, _ := strings.Cut(string(data), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || pid <= 0 {
		return 0, errs.New(errs.ClassNoConsolePid, map[string]any{"pid_path": path})
	}
	return pid, nil
}

func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// stopSocat is upstream _stop_console: SIGTERM the PID in the PID file,
// SIGKILL it when it outlives [console]kill_timeout, remove the file.
func (s *SocatConsole) stopSocat(ctx context.Context, task *driver.Task) error {
	uuid := task.Node.UUID
	defer func() { _ = os.Remove(s.pidFile(uuid)) }()
	pid, err := s.readPID(uuid)
	if err != nil {
		task.Logger().Warn("no console pid found while stopping the socat console", "node", uuid)
		return err
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		if errors.Is(err, syscall.ESRCH) {
			task.Logger().Warn("console process is not running but pid file exists", "node", uuid)
			return nil
		}
		return errs.NewMessage(errs.ClassConsoleError, fmt.Sprintf("Could not stop the console for node '%s'. Reason: %s.", uuid, err))
	}
	const step = 200 * time.Millisecond
	attempts := max(int(s.core.opts.KillTimeout/step), 1)
	clock := s.core.opts.clock()
	for i := 0; i < attempts && processAlive(pid); i++ {
		if i == attempts-1 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		if err := clock.Sleep(ctx, step); err != nil {
			return err
		}
	}
	return nil
}

// portAllocator is upstream console_utils ALLOCATED_PORTS: terminal ports
// handed out by this conductor, checked free by binding them.
type portAllocator struct {
	mu        sync.Mutex
	allocated map[int]bool
}

func newPortAllocator() *portAllocator { return &portAllocator{allocated: map[int]bool{}} }

// acquire binds each candidate on host to check it is free; the error
// names the conductor (upstream reports [DEFAULT]host, not the bind
// address).
func (a *portAllocator) acquire(ranges []PortRange, host, conductor string) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, r := range ranges {
		for p := r.Start; p <= r.End; p++ {
			if a.allocated[p] {
				continue
			}
			l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(p)))
			if err != nil {
				continue
			}
			_ = l.Close()
			a.allocated[p] = true
			return p, nil
		}
	}
	return 0, errs.New(errs.ClassNoFreeIPMITerminalPorts, map[string]any{"host": conductor})
}

func (a *portAllocator) release(port int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.allocated, port)
}
