package ipmi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/pyfmt"
)

// retryableFailures is upstream IPMITOOL_RETRYABLE_FAILURES: ipmitool's
// fixed (untranslated) texts for completion codes worth retrying.
var retryableFailures = []string{
	"insufficient resources for session",
	"Node busy",
	"Timeout",
	"Out of space",
	"BMC initialization in progress",
}

// cipherSuiteErrors are the stderr texts upstream reads as "this cipher
// suite is not accepted", which make it try the next configured one.
var cipherSuiteErrors = []string{
	"Unsupported cipher suite ID",
	"Error in open session response message : no matching cipher suite",
	"Error in open session response message : invalid role",
}

// Support says which optional ipmitool flags the local binary accepts
// (upstream TIMING_SUPPORT, SINGLE_BRIDGE_SUPPORT, DUAL_BRIDGE_SUPPORT).
type Support struct {
	Timing, SingleBridge, DualBridge bool
}

// ProbeSupport runs ipmitool with each optional flag set, as upstream's
// _check_option_support does: exit code 0 means supported. It fails when
// the binary cannot be run at all.
func ProbeSupport(ctx context.Context, binary string) (Support, error) {
	probe := func(args ...string) (bool, error) {
		err := exec.CommandContext(ctx, binary, args...).Run()
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			return false, nil
		}
		return err == nil, err
	}
	var s Support
	var err error
	if s.Timing, err = probe("-N", "0", "-R", "0", "-h"); err != nil {
		return Support{}, err
	}
	if s.SingleBridge, err = probe("-m", "0", "-b", "0", "-t", "0", "-h"); err != nil {
		return Support{}, err
	}
	if s.DualBridge, err = probe("-m", "0", "-b", "0", "-t", "0", "-B", "0", "-T", "0", "-h"); err != nil {
		return Support{}, err
	}
	return s, nil
}

// Command is one process to run.
type Command struct {
	// Args is the argument vector; Args[0] is the program.
	Args []string
	// Env is added to the conductor's environment ("KEY=value").
	Env []string
	// Timeout kills the process when it runs longer; 0 means no limit.
	Timeout time.Duration
}

// Result is what a finished process left behind.
type Result struct {
	Stdout, Stderr string
	ExitCode       int
}

// Executor runs a command to completion. It returns an error only when the
// process could not run or was killed (ErrTimeout); a non-zero exit code
// is a Result.
type Executor func(ctx context.Context, cmd Command) (Result, error)

// ErrTimeout is returned by an Executor when it killed the process after
// its timeout.
var ErrTimeout = errors.New("command timed out")

func execCommand(ctx context.Context, c Command) (Result, error) {
	if c.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.Timeout)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, c.Args[0], c.Args[1:]...)
	if len(c.Env) > 0 {
		cmd.Env = append(os.Environ(), c.Env...)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	res := Result{Stdout: stdout.String(), Stderr: stderr.String()}
	var exitErr *exec.ExitError
	switch {
	case err == nil:
		return res, nil
	case ctx.Err() != nil:
		if errors.Is(ctx.Err(), context.DeadlineExceeded) && c.Timeout > 0 {
			return res, ErrTimeout
		}
		return res, ctx.Err()
	case errors.As(err, &exitErr):
		res.ExitCode = exitErr.ExitCode()
		return res, nil
	}
	return res, err
}

// ExecError is a failed ipmitool run, worded as oslo's
// ProcessExecutionError since the retry decision and operators' log
// searches look at that text. Args never hold the password.
type ExecError struct {
	Args     []string
	ExitCode int
	Stdout   string
	Stderr   string
	// Err is set when the process could not run or was killed.
	Err error
}

func (e *ExecError) Error() string {
	desc := "Unexpected error while running command."
	exit := strconv.Itoa(e.ExitCode)
	if e.Err != nil {
		desc = e.Err.Error()
		exit = "-"
	}
	return fmt.Sprintf("%s\nCommand: %s\nExit code: %s\nStdout: %s\nStderr: %s",
		desc, strings.Join(e.Args, " "), exit, pyfmt.Repr(e.Stdout), pyfmt.Repr(e.Stderr))
}

func (e *ExecError) Unwrap() error { return e.Err }

// throttle keeps at most one command in flight per BMC and at least the
// minimum interval between the end of one and the start of the next
// (upstream LAST_CMD_TIME). Commands to different BMCs do not wait for each
// other. Upstream keys BMCs by address alone; here the RMCP port is part of
// the key, so BMCs sharing a host on different ports (virtual BMCs, one
// ipmi_sim per port) are not throttled together.
type throttle struct {
	mu   sync.Mutex
	bmcs map[string]*bmcSlot
}

type bmcSlot struct {
	busy chan struct{}
	last time.Time
}

func newThrottle() *throttle { return &throttle{bmcs: map[string]*bmcSlot{}} }

// acquire takes the BMC's slot; the caller must release it.
func (t *throttle) acquire(ctx context.Context, address string) (*bmcSlot, error) {
	t.mu.Lock()
	s, ok := t.bmcs[address]
	if !ok {
		s = &bmcSlot{busy: make(chan struct{}, 1)}
		t.bmcs[address] = s
	}
	t.mu.Unlock()
	select {
	case s.busy <- struct{}{}:
		return s, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// bmcKey identifies the BMC for the throttle.
func (d DriverInfo) bmcKey() string {
	if d.DestPort != nil && *d.DestPort != 0 {
		return net.JoinHostPort(d.Address, strconv.Itoa(*d.DestPort))
	}
	return d.Address
}

func (s *bmcSlot) release(now time.Time) {
	s.last = now
	<-s.busy
}

// ipmitoolArgs is upstream _get_ipmitool_args without a password flag:
// the connection arguments for the node's BMC.
func (c *core) ipmitoolArgs(d DriverInfo) []string {
	iface := "lanplus"
	if d.ProtocolVersion != "2.0" {
		iface = "lan"
	}
	args := []string{c.opts.binary(), "-I", iface, "-H", d.Address, "-L", d.PrivLevel}
	if d.DestPort != nil && *d.DestPort != 0 {
		args = append(args, "-p", strconv.Itoa(*d.DestPort))
	}
	if d.Username != "" {
		args = append(args, "-U", d.Username)
	}
	if d.HexKgKey != "" {
		args = append(args, "-y", d.HexKgKey)
	}
	if d.CipherSuite != "" {
		args = append(args, "-C", d.CipherSuite)
	}
	for _, o := range d.bridgingOptions() {
		if o.value != nil {
			args = append(args, o.flag, *o.value)
		}
	}
	return args
}

// debugArgs is the -v upstream adds after the connection arguments (and
// the console's password flag) when [ipmi]debug is set.
func (c *core) debugArgs() []string {
	if c.opts.Debug {
		return []string{"-v"}
	}
	return nil
}

// timingArgs is upstream _ipmitool_timing_args: without ipmitool retries
// one attempt per run (Ironic retries); with them as many attempts, each
// one second longer than the last, as fit in command_retry_timeout.
func (c *core) timingArgs() []string {
	if !c.support.Timing {
		return nil
	}
	interval := int(c.opts.MinCommandInterval / time.Second)
	if !c.opts.UseIpmitoolRetries {
		return []string{"-R", "1", "-N", strconv.Itoa(interval)}
	}
	timeout := int(c.opts.CommandRetryTimeout / time.Second)
	tries, duration, next := 0, 0, interval
	for duration+next <= timeout {
		duration += next
		next++
		tries++
	}
	return []string{"-R", strconv.Itoa(tries), "-N", strconv.Itoa(interval)}
}

// chooseCipherSuite is upstream choose_cipher_suite: start from the last
// configured version and walk towards the first.
func (c *core) chooseCipherSuite(actual string) string {
	versions := c.opts.CipherSuiteVersions
	i := slices.Index(versions, actual)
	if actual == "" || i < 0 {
		return versions[len(versions)-1]
	}
	return versions[max(i-1, 0)]
}

// execOptions are the keyword arguments of upstream _exec_ipmitool.
type execOptions struct {
	// okCodes are the accepted exit codes; nil means only 0.
	okCodes       []int
	killOnTimeout bool
}

// passwordArgs prepares the password for one run: a fresh 0600 file in
// the temp directory (its remover must be called after the run), or the
// IPMI_PASSWORD environment variable with [ipmi]store_cred_in_env.
func (c *core) passwordArgs(d DriverInfo) (args, env []string, remove func(), err error) {
	if c.opts.StoreCredInEnv {
		if d.Password != "" {
			env = []string{"IPMI_PASSWORD=" + d.Password}
		}
		return []string{"-E"}, env, func() {}, nil
	}
	pw := d.Password
	if pw == "" {
		// ipmitool prompts for a password when -f is missing, so an empty
		// password is written as a NUL byte, as upstream does.
		pw = "\x00"
	}
	f, err := os.CreateTemp(c.opts.TempDir, "ipmi-")
	if err != nil {
		return nil, nil, nil, errs.New(errs.ClassPasswordFileFailedToCreate, map[string]any{"error": err.Error()})
	}
	remove = func() { _ = os.Remove(f.Name()) }
	if err := f.Chmod(0o600); err != nil {
		_ = f.Close()
		remove()
		return nil, nil, nil, errs.New(errs.ClassPasswordFileFailedToCreate, map[string]any{"error": err.Error()})
	}
	if _, err := f.WriteString(pw); err != nil {
		_ = f.Close()
		remove()
		return nil, nil, nil, errs.New(errs.ClassPasswordFileFailedToCreate, map[string]any{"error": err.Error()})
	}
	if err := f.Close(); err != nil {
		remove()
		return nil, nil, nil, errs.New(errs.ClassPasswordFileFailedToCreate, map[string]any{"error": err.Error()})
	}
	return []string{"-f", f.Name()}, nil, remove, nil
}

// exec is upstream _exec_ipmitool: it runs "ipmitool <connection args>
// <command>" against the node's BMC, waiting for the BMC's throttle slot
// before each attempt and retrying failures until command_retry_timeout
// passes or the attempts run out. Only errors ipmitool reports as
// transient are retried when ipmitool does its own retries.
func (c *core) exec(ctx context.Context, d DriverInfo, command string, o execOptions) (string, string, error) {
	clock := c.opts.clock()
	log := c.opts.log()
	args := slices.Concat(c.ipmitoolArgs(d), c.debugArgs(), c.timingArgs())
	changeCS := len(c.opts.CipherSuiteVersions) > 0 && !d.hasCipherSuite
	actualCS := ""
	timeout := c.opts.CommandRetryTimeout
	var runTimeout time.Duration
	if o.killOnTimeout {
		runTimeout = timeout
	}
	interval := max(c.opts.MinCommandInterval, time.Second)
	tries := max(int(timeout/interval), 1)
	end := clock.Now().Add(timeout)
	okCodes := o.okCodes
	if okCodes == nil {
		okCodes = []int{0}
	}
	for {
		tries--
		res, cmdArgs, err := c.attempt(ctx, d, args, command, runTimeout, okCodes)
		if err != nil {
			return "", "", err
		}
		if res.err == nil && slices.Contains(okCodes, res.ExitCode) {
			return res.Stdout, res.Stderr, nil
		}
		execErr := &ExecError{Args: cmdArgs, ExitCode: res.ExitCode, Stdout: res.Stdout, Stderr: res.Stderr, Err: res.err}
		if res.err != nil {
			// A killed or unstartable ipmitool is not retried (upstream
			// lets the timeout propagate).
			log.Error("IPMI error while attempting command", "command", command, "node", d.UUID, "error", execErr)
			return "", "", execErr
		}
		if changeCS && containsAny(res.Stderr, cipherSuiteErrors) {
			actualCS = c.chooseCipherSuite(actualCS)
			if i := slices.Index(args, "-C"); i >= 0 {
				args[i+1] = actualCS
			} else {
				args = append(args, "-C", actualCS)
			}
		} else {
			changeCS = false
		}
		retryable := containsAny(execErr.Error(), retryableFailures) ||
			containsAny(execErr.Error(), c.opts.AdditionalRetryableIPMIErrors) || !c.opts.UseIpmitoolRetries
		if clock.Now().After(end) || tries == 0 || !retryable {
			log.Error("IPMI error while attempting command", "command", command, "node", d.UUID, "error", execErr)
			return "", "", execErr
		}
		log.Warn("IPMI error encountered, retrying", "command", command, "node", d.UUID, "error", execErr)
	}
}

// attemptResult is one run's outcome; err is the executor's error.
type attemptResult struct {
	Result
	err error
}

// attempt runs the command once inside the BMC's throttle slot, with a
// password file that exists only for the duration of the run.
func (c *core) attempt(ctx context.Context, d DriverInfo, args []string, command string, timeout time.Duration, okCodes []int) (attemptResult, []string, error) {
	clock := c.opts.clock()
	slot, err := c.throttle.acquire(ctx, d.bmcKey())
	if err != nil {
		return attemptResult{}, nil, fmt.Errorf("wait for BMC %s: %w", d.bmcKey(), err)
	}
	defer func() { slot.release(clock.Now()) }()
	if !slot.last.IsZero() {
		if wait := c.opts.MinCommandInterval - clock.Now().Sub(slot.last); wait > 0 {
			if err := clock.Sleep(ctx, wait); err != nil {
				return attemptResult{}, nil, fmt.Errorf("wait for BMC %s: %w", d.bmcKey(), err)
			}
		}
	}
	pwArgs, env, remove, err := c.passwordArgs(d)
	if err != nil {
		return attemptResult{}, nil, err
	}
	defer remove()
	cmdArgs := slices.Concat(args, pwArgs, strings.Split(command, " "))
	start := clock.Now()
	res, runErr := c.executor()(ctx, Command{Args: cmdArgs, Env: env, Timeout: timeout})
	if c.opts.Observe != nil {
		c.opts.Observe(operation(command), clock.Now().Sub(start), runErr != nil || !slices.Contains(okCodes, res.ExitCode))
	}
	if runErr != nil && ctx.Err() != nil {
		return attemptResult{}, nil, fmt.Errorf("run ipmitool %s: %w", command, ctx.Err())
	}
	return attemptResult{Result: res, err: runErr}, cmdArgs, nil
}

// operation names command for metrics: the ipmitool subcommand and its
// action word ("power status", "chassis bootdev", "sdr"), or "raw" for raw
// bytes. Boot devices, parameters and bytes are left out, so that the
// names are the few the interfaces use whatever the nodes or the callers
// of send_raw ask.
func operation(command string) string {
	words := strings.Fields(command)
	if len(words) == 0 {
		return ""
	}
	if words[0] == "raw" || len(words) == 1 || !isWord(words[1]) {
		return words[0]
	}
	return words[0] + " " + words[1]
}

func isWord(s string) bool {
	for _, r := range s {
		if r < 'a' || r > 'z' {
			return false
		}
	}
	return s != ""
}

func (c *core) executor() Executor {
	if c.opts.Exec != nil {
		return c.opts.Exec
	}
	return execCommand
}

func containsAny(s string, subs []string) bool {
	for _, x := range subs {
		if x != "" && strings.Contains(s, x) {
			return true
		}
	}
	return false
}

// ipmiFailure is upstream IPMIFailure(cmd=...): what callers see when a
// command failed; the details went to the log.
func ipmiFailure(cmd string) error {
	return errs.New(errs.ClassIPMIFailure, map[string]any{"cmd": cmd})
}
