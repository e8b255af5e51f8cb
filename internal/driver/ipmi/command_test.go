package ipmi

import (
	"context"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/errs"
)

func TestPasswordFileLivesOnlyForTheCommand(t *testing.T) {
	c, bmc, _, logs := testCore(t, nil)
	task := testTask(baseInfo(), logs)
	p := &Power{core: c}
	bmc.answer("power status", Result{Stdout: "Chassis Power is on\n"})
	state, err := p.GetPowerState(context.Background(), task)
	must(t, err)
	if state != "power on" {
		t.Fatalf("state %q", state)
	}
	got := bmc.calls[0]
	if got.Password != "Sup3r-s3cret" || got.PWMode != 0o600 {
		t.Fatalf("password file held %q with mode %o", got.Password, got.PWMode)
	}
	if !strings.HasPrefix(got.PWFile, c.opts.TempDir) {
		t.Fatalf("password file %s outside [DEFAULT]tempdir", got.PWFile)
	}
	if _, err := os.Stat(got.PWFile); !os.IsNotExist(err) {
		t.Fatalf("password file left behind: %v", err)
	}
	for _, a := range got.Args {
		if strings.Contains(a, "Sup3r-s3cret") {
			t.Fatalf("password on the command line: %q", got.Args)
		}
	}
	// A failing command is logged in full; the password must not be.
	bmc.answer("power status", Result{ExitCode: 1, Stderr: "Error: Unable to establish IPMI v2 / RMCP+ session"})
	c.opts.UseIpmitoolRetries = true
	if _, err := p.GetPowerState(context.Background(), task); !errs.Is(err, errs.ClassIPMIFailure) {
		t.Fatalf("error %v", err)
	}
	if strings.Contains(logs.String(), "Sup3r-s3cret") || !strings.Contains(logs.String(), "RMCP+ session") {
		t.Fatalf("log:\n%s", logs.String())
	}
}

func TestEmptyPasswordIsANulByte(t *testing.T) {
	c, bmc, _, logs := testCore(t, nil)
	d, err := c.parse(testTask(map[string]any{"ipmi_address": "10.0.0.9"}, logs))
	must(t, err)
	_, _, err = c.exec(context.Background(), d, "power status", execOptions{})
	must(t, err)
	if bmc.calls[0].Password != "\x00" {
		t.Fatalf("password file %q", bmc.calls[0].Password)
	}
}

func TestPasswordInEnvironment(t *testing.T) {
	c, bmc, _, logs := testCore(t, func(o *Options) { o.StoreCredInEnv = true })
	d, err := c.parse(testTask(baseInfo(), logs))
	must(t, err)
	_, _, err = c.exec(context.Background(), d, "power status", execOptions{})
	must(t, err)
	if !slices.Equal(bmc.calls[0].Env, []string{"IPMI_PASSWORD=Sup3r-s3cret"}) || bmc.calls[0].PWFile != "" {
		t.Fatalf("call %+v", bmc.calls[0])
	}
}

func TestThrottlePerBMC(t *testing.T) {
	c, bmc, _, logs := testCore(t, nil)
	bmc.duration = 300 * time.Millisecond
	a, err := c.parse(testTask(baseInfo(), logs))
	must(t, err)
	other := baseInfo()
	other["ipmi_address"] = "10.0.0.10"
	b, err := c.parse(testTask(other, logs))
	must(t, err)
	ctx := context.Background()
	for _, d := range []DriverInfo{a, b, a, a, b} {
		_, _, err := c.exec(ctx, d, "power status", execOptions{})
		must(t, err)
	}
	last := map[string]time.Time{}
	for i, call := range bmc.calls {
		addr := call.Args[slices.Index(call.Args, "-H")+1]
		if prev, ok := last[addr]; ok {
			// the gap runs from the end of one command to the start of the next
			if gap := call.At.Sub(prev.Add(bmc.duration)); gap < 5*time.Second {
				t.Errorf("call %d to %s only %v after the previous one ended", i, addr, gap)
			}
		}
		last[addr] = call.At
	}
	// The second BMC's first command did not wait for the first BMC.
	if bmc.calls[1].At.Sub(bmc.calls[0].At) != bmc.duration {
		t.Errorf("different BMCs throttled together: %v", bmc.calls[1].At.Sub(bmc.calls[0].At))
	}
}

func TestThrottleSerializesConcurrentCommands(t *testing.T) {
	c, bmc, _, logs := testCore(t, nil)
	bmc.duration = time.Second
	d, err := c.parse(testTask(baseInfo(), logs))
	must(t, err)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, err := c.exec(context.Background(), d, "power status", execOptions{})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	times := make([]time.Time, len(bmc.calls))
	for i, call := range bmc.calls {
		times[i] = call.At
	}
	slices.SortFunc(times, func(a, b time.Time) int { return a.Compare(b) })
	for i := 1; i < len(times); i++ {
		if gap := times[i].Sub(times[i-1]); gap < 6*time.Second {
			t.Fatalf("concurrent commands %v apart", gap)
		}
	}
}

func TestRetries(t *testing.T) {
	busy := Result{ExitCode: 1, Stderr: "Set Chassis Power Control to Up/On failed: Node busy"}
	auth := Result{ExitCode: 1, Stderr: "Error: Unable to establish IPMI v2 / RMCP+ session"}
	ok := Result{Stdout: "Chassis Power Control: Up/On\n"}
	cases := []struct {
		name      string
		ipmitool  bool
		extra     []string
		answers   []Result
		wantCalls int
		wantErr   bool
	}{
		{"ironic retries every error", false, nil, []Result{auth, auth, ok}, 3, false},
		{"ironic gives up after timeout/interval attempts", false, nil, slices.Repeat([]Result{auth}, 20), 12, true},
		{"ipmitool retries: transient error retried", true, nil, []Result{busy, ok}, 2, false},
		{"ipmitool retries: other errors are final", true, nil, []Result{auth, ok}, 1, true},
		{"ipmitool retries: configured extra error", true, []string{"RMCP+ session"}, []Result{auth, ok}, 2, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, bmc, _, logs := testCore(t, func(o *Options) {
				o.UseIpmitoolRetries = tc.ipmitool
				o.AdditionalRetryableIPMIErrors = tc.extra
			})
			bmc.answer("power on", tc.answers...)
			d, err := c.parse(testTask(baseInfo(), logs))
			must(t, err)
			_, _, err = c.exec(context.Background(), d, "power on", execOptions{})
			if (err != nil) != tc.wantErr || len(bmc.calls) != tc.wantCalls {
				t.Fatalf("err %v after %d calls, want error=%v after %d", err, len(bmc.calls), tc.wantErr, tc.wantCalls)
			}
			if err != nil && !strings.Contains(err.Error(), "Exit code: 1") {
				t.Fatalf("error text %q", err)
			}
		})
	}
}

func TestRetriesStopAtCommandRetryTimeout(t *testing.T) {
	c, bmc, clock, logs := testCore(t, nil)
	bmc.duration = 20 * time.Second
	bmc.answer("power on", slices.Repeat([]Result{{ExitCode: 1, Stderr: "Timeout"}}, 20)...)
	d, err := c.parse(testTask(baseInfo(), logs))
	must(t, err)
	start := clock.Now()
	if _, _, err := c.exec(context.Background(), d, "power on", execOptions{}); err == nil {
		t.Fatal("no error")
	}
	if n := len(bmc.calls); n != 3 {
		t.Fatalf("%d attempts in %v", n, clock.Now().Sub(start))
	}
}

func TestCipherSuiteFallback(t *testing.T) {
	c, bmc, _, logs := testCore(t, func(o *Options) { o.CipherSuiteVersions = []string{"1", "3", "17"} })
	csErr := Result{ExitCode: 1, Stderr: "Unsupported cipher suite ID : 17"}
	bmc.answer("power status", csErr, csErr, Result{Stdout: "Chassis Power is off\n"})
	d, err := c.parse(testTask(baseInfo(), logs))
	must(t, err)
	_, _, err = c.exec(context.Background(), d, "power status", execOptions{})
	must(t, err)
	var suites []string
	for _, call := range bmc.calls {
		if i := slices.Index(call.Args, "-C"); i >= 0 {
			suites = append(suites, call.Args[i+1])
		} else {
			suites = append(suites, "")
		}
	}
	if !slices.Equal(suites, []string{"", "17", "3"}) {
		t.Fatalf("cipher suites tried: %q", suites)
	}
}

func TestAcceptedExitCodesAndKillTimeout(t *testing.T) {
	c, bmc, _, logs := testCore(t, nil)
	bmc.answer("sol deactivate", Result{ExitCode: 1, Stderr: "Info: SOL payload already de-activated"})
	d, err := c.parse(testTask(baseInfo(), logs))
	must(t, err)
	_, _, err = c.exec(context.Background(), d, "sol deactivate", execOptions{okCodes: []int{0, 1}})
	must(t, err)
	_, _, err = c.exec(context.Background(), d, "power status", execOptions{killOnTimeout: true})
	must(t, err)
	if bmc.calls[0].Timeout != 0 || bmc.calls[1].Timeout != 60*time.Second {
		t.Fatalf("timeouts %v %v", bmc.calls[0].Timeout, bmc.calls[1].Timeout)
	}
}
