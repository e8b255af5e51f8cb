package ipmi

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/testing/await"
	"github.com/openkeel/ironic/testing/ipmisim"
)

// recorder wraps the real executor, keeping each run's argv and times.
type recorder struct {
	mu   sync.Mutex
	runs []run
}

type run struct {
	args       []string
	start, end time.Time
}

func (r *recorder) exec(ctx context.Context, c Command) (Result, error) {
	start := time.Now()
	res, err := execCommand(ctx, c)
	r.mu.Lock()
	r.runs = append(r.runs, run{args: c.Args, start: start, end: time.Now()})
	r.mu.Unlock()
	return res, err
}

// simDriver registers the ipmitool interfaces with the real ipmitool
// (probed as at start-up) and a short throttle to keep the test quick.
func simDriver(t *testing.T, interval time.Duration) (*driver.Interfaces, *recorder, *bytes.Buffer) {
	t.Helper()
	r, rec, logs := simRegistry(t, interval)
	get := func(kind driver.Kind, name string) driver.Interface {
		impl, ok := r.Implementation(kind, name)
		if !ok {
			t.Fatalf("%s/%s not registered", kind, name)
		}
		return impl
	}
	return &driver.Interfaces{
		HardwareType: "ipmi",
		Power:        get(driver.KindPower, "ipmitool").(driver.PowerInterface),
		Management:   get(driver.KindManagement, "ipmitool").(driver.ManagementInterface),
		Vendor:       get(driver.KindVendor, "ipmitool").(driver.VendorInterface),
		Console:      get(driver.KindConsole, "ipmitool-socat").(driver.ConsoleInterface),
	}, rec, logs
}

// simRegistry is the registry simDriver picks its interfaces from; mutate
// adjusts the options before registration.
func simRegistry(t *testing.T, interval time.Duration, mutate ...func(*Options)) (*driver.Registry, *recorder, *bytes.Buffer) {
	t.Helper()
	rec := &recorder{}
	logs := &bytes.Buffer{}
	o := DefaultOptions()
	o.TempDir = t.TempDir()
	o.MinCommandInterval = interval
	o.CommandRetryTimeout = 10 * time.Second
	o.PowerStateChangeTimeout = 20 * time.Second
	o.SocatAddress = "127.0.0.1"
	o.Exec = rec.exec
	o.Log = slog.New(slog.NewTextHandler(logs, nil))
	for _, m := range mutate {
		m(&o)
	}
	r := driver.NewRegistry()
	must(t, Register(r, o))
	return r, rec, logs
}

func simTask(b *ipmisim.BMC, ifaces *driver.Interfaces, logs *bytes.Buffer) *driver.Task {
	n := &model.Node{
		UUID: "6a1e0c7e-3f3c-4a6f-9d55-" + strconv.Itoa(100000000000+b.Port), Driver: "ipmi",
		DriverInfo: map[string]any{
			"ipmi_address": b.Address, "ipmi_port": float64(b.Port),
			"ipmi_username": b.Username, "ipmi_password": b.Password,
			"ipmi_cipher_suite": ipmisim.CipherSuite,
		},
		DriverInternalInfo: map[string]any{}, InstanceInfo: map[string]any{}, Properties: map[string]any{},
	}
	return &driver.Task{Node: n, Driver: ifaces, Log: slog.New(slog.NewTextHandler(logs, nil))}
}

func TestPowerAgainstIPMISim(t *testing.T) {
	b := ipmisim.Start(t, ipmisim.Options{})
	ifaces, rec, logs := simDriver(t, time.Second)
	task := simTask(b, ifaces, logs)
	ctx := context.Background()
	p := ifaces.Power
	must(t, p.Validate(ctx, task))

	state, err := p.GetPowerState(ctx, task)
	must(t, err)
	if state != states.PowerOff {
		t.Fatalf("initial state %q", state)
	}
	must(t, p.SetPowerState(ctx, task, states.PowerOn, 0))
	if !b.PoweredOn(t) {
		t.Fatal("power on did not reach the BMC")
	}
	if state, _ = p.GetPowerState(ctx, task); state != states.PowerOn {
		t.Fatalf("state after power on %q", state)
	}
	must(t, p.Reboot(ctx, task, 0))
	if log := b.ControlLog(t); !slices.Contains(log, "set power 0") || log[len(log)-1] != "get power" {
		t.Fatalf("reboot did not power off then on: %q", log)
	}
	if !b.PoweredOn(t) {
		t.Fatal("node off after reboot")
	}
	must(t, p.SetPowerState(ctx, task, states.SoftPowerOff, 0))
	if b.PoweredOn(t) {
		t.Fatal("soft power off left the node on")
	}
	b.SetPower(t, true)
	if state, _ = p.GetPowerState(ctx, task); state != states.PowerOn {
		t.Fatalf("change behind our back not seen: %q", state)
	}
	must(t, p.SetPowerState(ctx, task, states.PowerOff, 0))
	if b.PoweredOn(t) {
		t.Fatal("power off did not reach the BMC")
	}

	for _, r := range rec.runs {
		if strings.Contains(strings.Join(r.args, " "), b.Password) {
			t.Fatalf("password on the ipmitool command line: %q", r.args)
		}
		if i := slices.Index(r.args, "-f"); i < 0 {
			t.Fatalf("no password file: %q", r.args)
		} else if _, err := os.Stat(r.args[i+1]); !os.IsNotExist(err) {
			t.Fatalf("password file %s left behind", r.args[i+1])
		}
	}
	if strings.Contains(logs.String(), b.Password) {
		t.Fatal("password in the log")
	}
}

func TestWrongPasswordIsAnIPMIFailure(t *testing.T) {
	b := ipmisim.Start(t, ipmisim.Options{})
	ifaces, _, logs := simDriver(t, 100*time.Millisecond)
	task := simTask(b, ifaces, logs)
	task.Node.DriverInfo["ipmi_password"] = "wrong-password"
	_, err := ifaces.Power.GetPowerState(context.Background(), task)
	if err == nil || err.Error() != "IPMI call failed: power status." {
		t.Fatalf("error %v", err)
	}
	if strings.Contains(logs.String(), "wrong-password") {
		t.Fatal("password in the log")
	}
}

func TestBootDeviceAgainstIPMISim(t *testing.T) {
	b := ipmisim.Start(t, ipmisim.Options{})
	ifaces, rec, logs := simDriver(t, 500*time.Millisecond)
	ctx := context.Background()
	m := ifaces.Management
	cases := []struct {
		name     string
		props    map[string]any
		device   string
		simName  string
		wantLast string
	}{
		{"legacy bios mode uses chassis bootdev", map[string]any{"capabilities": "boot_mode:bios"}, "pxe", "pxe", "chassis bootdev pxe options=persistent"},
		{"uefi mode sends raw boot flags", map[string]any{}, "disk", "default", "raw 0x00 0x08 0x05 0xe0 0x08 0x00 0x00 0x00"},
		{"uefi cdrom", map[string]any{}, "cdrom", "cdrom", "raw 0x00 0x08 0x05 0xe0 0x14 0x00 0x00 0x00"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			task := simTask(b, ifaces, logs)
			task.Node.Properties = tc.props
			must(t, m.SetBootDevice(ctx, task, tc.device, true))
			if got := b.BootDevice(t); got != tc.simName {
				t.Fatalf("BMC boot device %q, want %q", got, tc.simName)
			}
			last := rec.runs[len(rec.runs)-1].args
			cmd := strings.Join(last[slices.Index(last, "-f")+2:], " ")
			if cmd != tc.wantLast {
				t.Fatalf("last command %q, want %q", cmd, tc.wantLast)
			}
			prev := rec.runs[len(rec.runs)-2].args
			if got := strings.Join(prev[slices.Index(prev, "-f")+2:], " "); got != "raw "+disableBootTimeoutRaw {
				t.Fatalf("boot timeout not disabled first: %q", got)
			}
			got, err := m.GetBootDevice(ctx, task)
			must(t, err)
			// ipmi_sim does not keep the persistent flag, so it reads back
			// as a one-time device.
			if got.BootDevice != tc.device || got.Persistent == nil || *got.Persistent {
				t.Fatalf("boot device %+v", got)
			}
		})
	}
	task := simTask(b, ifaces, logs)
	if err := m.SetBootDevice(ctx, task, "floppy", false); err == nil || err.Error() != "Invalid boot device floppy specified." {
		t.Fatalf("error %v", err)
	}
	// ipmi_sim refuses diag interrupts, which must surface as IPMIFailure.
	if err := m.(driver.NMIInjector).InjectNMI(ctx, task); err == nil || err.Error() != "IPMI call failed: power diag." {
		t.Fatalf("inject NMI: %v", err)
	}
}

// TestThrottleAgainstTwoSimulators runs commands to two BMCs at once with
// upstream's default [ipmi]min_command_interval: each BMC sees its
// commands at least 5 s apart, while the other BMC is served in between.
func TestThrottleAgainstTwoSimulators(t *testing.T) {
	interval := DefaultOptions().MinCommandInterval
	if interval < 5*time.Second {
		t.Fatalf("default min_command_interval %v, upstream's is 5 s", interval)
	}
	bmcs := []*ipmisim.BMC{ipmisim.Start(t, ipmisim.Options{}), ipmisim.Start(t, ipmisim.Options{})}
	ifaces, rec, logs := simDriver(t, interval)
	var wg sync.WaitGroup
	for _, b := range bmcs {
		task := simTask(b, ifaces, logs)
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := ifaces.Power.GetPowerState(context.Background(), task); err != nil {
					t.Error(err)
				}
			}()
		}
	}
	wg.Wait()
	byPort := map[string][]run{}
	for _, r := range rec.runs {
		port := r.args[slices.Index(r.args, "-p")+1]
		byPort[port] = append(byPort[port], r)
	}
	if len(byPort) != 2 {
		t.Fatalf("runs by BMC: %v", byPort)
	}
	var firsts []time.Time
	for port, runs := range byPort {
		if len(runs) < 2 {
			t.Fatalf("BMC %s: %d commands, want 2 or more", port, len(runs))
		}
		slices.SortFunc(runs, func(a, b run) int { return a.start.Compare(b.start) })
		for i := 1; i < len(runs); i++ {
			gap := runs[i].start.Sub(runs[i-1].end)
			if gap < interval {
				t.Errorf("BMC %s: commands %v apart", port, gap)
			}
			t.Logf("BMC %s: commands %v apart", port, gap)
		}
		firsts = append(firsts, runs[0].start)
	}
	d := firsts[0].Sub(firsts[1]).Abs()
	if d >= interval {
		t.Errorf("the second BMC waited for the first: %v", d)
	}
	t.Logf("first commands to the two BMCs %v apart", d)
}

func requireSocat(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("socat"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("socat is not installed; CI must provide it")
		}
		t.Skip("socat is not installed")
	}
}

func TestSocatConsoleAgainstIPMISim(t *testing.T) {
	requireSocat(t)
	b := ipmisim.Start(t, ipmisim.Options{})
	ifaces, _, logs := simDriver(t, 100*time.Millisecond)
	task := simTask(b, ifaces, logs)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	must(t, l.Close())
	task.Node.DriverInfo["ipmi_terminal_port"] = float64(port)
	ctx := context.Background()
	c := ifaces.Console
	must(t, c.Validate(ctx, task))
	must(t, c.StartConsole(ctx, task))
	sc := c.(*SocatConsole)
	t.Cleanup(func() { _ = c.StopConsole(context.Background(), task) })

	pid, err := sc.readPID(task.Node.UUID)
	must(t, err)
	cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	must(t, err)
	if bytes.Contains(cmdline, []byte(b.Password)) || !bytes.Contains(cmdline, []byte("sol activate")) {
		t.Fatalf("socat command line %q", cmdline)
	}
	st, err := os.Stat(sc.passwordFilePath(task.Node.UUID))
	must(t, err)
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("console password file mode %o", st.Mode().Perm())
	}
	conn, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
	must(t, err)
	must(t, conn.Close())

	info, err := c.GetConsole(ctx, task)
	must(t, err)
	if info["type"] != "socat" || info["url"] != "tcp://127.0.0.1:"+strconv.Itoa(port) {
		t.Fatalf("console info %v", info)
	}
	must(t, c.StopConsole(ctx, task))
	// StopConsole has signalled socat (SIGKILL at the end of the kill
	// timeout); its exit and reaping are asynchronous, so wait for them
	// as a condition rather than for a fixed second a loaded machine may
	// not honour.
	await.Until(t, time.Minute, "socat to exit after stop", func() bool { return syscall.Kill(pid, 0) != nil })
	for _, p := range []string{sc.passwordFilePath(task.Node.UUID), sc.pidFile(task.Node.UUID)} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Fatalf("%s left behind", p)
		}
	}
}

// TestRawCommandsAgainstIPMISim sends raw requests through the vendor
// passthru and the intel-ipmitool deploy step. ipmi_sim answers Get
// Device ID and rejects the Intel OEM and BMC reset requests, which must
// come back as upstream's IPMIFailure texts.
func TestRawCommandsAgainstIPMISim(t *testing.T) {
	b := ipmisim.Start(t, ipmisim.Options{})
	r, rec, logs := simRegistry(t, 100*time.Millisecond)
	impl, ok := r.Implementation(driver.KindManagement, "intel-ipmitool")
	if !ok {
		t.Fatal("intel-ipmitool not registered")
	}
	vendorImpl, _ := r.Implementation(driver.KindVendor, "ipmitool")
	vendor := vendorImpl.(driver.VendorInterface)
	intel := impl.(driver.ManagementInterface)
	ifaces := &driver.Interfaces{HardwareType: "intel-ipmi", Management: intel, Vendor: vendor}
	task := simTask(b, ifaces, logs)
	ctx := context.Background()

	_, err := vendor.VendorRoutes()["send_raw"].Func(ctx, task, "POST", map[string]any{"raw_bytes": "0x06 0x01"})
	must(t, err)
	if _, err := vendor.VendorRoutes()["bmc_reset"].Func(ctx, task, "POST", map[string]any{"warm": true}); err == nil ||
		err.Error() != "IPMI call failed: bmc reset warm." {
		t.Fatalf("bmc reset on a BMC that refuses it: %v", err)
	}
	vendorName, err := intel.(driver.VendorDetector).DetectVendor(ctx, task)
	must(t, err)
	if vendorName != "montavista software, inc." {
		t.Fatalf("vendor %q", vendorName)
	}

	step := driver.Step{Kind: driver.StepDeploy, Interface: driver.KindManagement, Name: "configure_intel_speedselect",
		Args: map[string]any{"intel_speedselect_config": "0x01", "socket_count": float64(2)}}
	_, err = driver.ExecuteStep(ctx, task, intel, step)
	want := "Failed to set Intel SST-PP configuration level 0x01 on socket number 0 due to reason " +
		"IPMI call failed: raw 0x2c 0x41 0x04 0x00 0x00 0x01.."
	if err == nil || err.Error() != want {
		t.Fatalf("speed select on a BMC without it: %v", err)
	}
	last := rec.runs[len(rec.runs)-1].args
	if got := strings.Join(last[slices.Index(last, "-f")+2:], " "); got != "raw 0x2c 0x41 0x04 0x00 0x00 0x01" {
		t.Fatalf("last command %q", got)
	}
}

// TestSocatConsoleAllocatedPortAgainstIPMISim starts a console without
// ipmi_terminal_port: the port comes from [console]port_range, is kept in
// driver_internal_info while the console runs and is released by stop.
// The password goes to socat's environment ([ipmi]store_cred_in_env).
func TestSocatConsoleAllocatedPortAgainstIPMISim(t *testing.T) {
	requireSocat(t)
	b := ipmisim.Start(t, ipmisim.Options{})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	must(t, l.Close())
	pidDir := filepath.Join(t.TempDir(), "pids")
	r, _, logs := simRegistry(t, 100*time.Millisecond, func(o *Options) {
		o.PortRange = []PortRange{{Start: port, End: port}}
		o.StoreCredInEnv = true
		o.TerminalPIDDir = pidDir
		o.Host = "conductor-7"
	})
	impl, _ := r.Implementation(driver.KindConsole, "ipmitool-socat")
	c := impl.(*SocatConsole)
	task := simTask(b, &driver.Interfaces{HardwareType: "ipmi", Console: c}, logs)
	ctx := context.Background()
	must(t, c.Validate(ctx, task))
	must(t, c.StartConsole(ctx, task))
	t.Cleanup(func() { _ = c.StopConsole(context.Background(), task) })

	if got := task.Node.DriverInternalInfo["allocated_ipmi_terminal_port"]; got != port {
		t.Fatalf("allocated_ipmi_terminal_port %v, want %d", got, port)
	}
	info, err := c.GetConsole(ctx, task)
	must(t, err)
	if info["url"] != "tcp://127.0.0.1:"+strconv.Itoa(port) {
		t.Fatalf("console info %v", info)
	}
	pid, err := c.readPID(task.Node.UUID)
	must(t, err)
	if !strings.HasPrefix(c.pidFile(task.Node.UUID), pidDir+"/") {
		t.Fatalf("pid file %s outside [console]terminal_pid_dir", c.pidFile(task.Node.UUID))
	}
	cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	must(t, err)
	environ, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	must(t, err)
	if bytes.Contains(cmdline, []byte(b.Password)) || !bytes.Contains(cmdline, []byte(" -E ")) {
		t.Fatalf("socat command line %q", cmdline)
	}
	if !slices.Contains(strings.Split(string(environ), "\x00"), "IPMI_PASSWORD="+b.Password) {
		t.Fatal("socat's environment lacks IPMI_PASSWORD for the ipmitool it runs")
	}
	if _, err := os.Stat(c.passwordFilePath(task.Node.UUID)); !os.IsNotExist(err) {
		t.Fatal("a password file was written although the password goes in the environment")
	}

	// The only port of the range is taken, so another node gets none.
	other := simTask(b, &driver.Interfaces{HardwareType: "ipmi", Console: c}, logs)
	other.Node.UUID = "0d4bbd5c-8f25-4b0e-9a70-3b1b0a1b8e01"
	if err := c.StartConsole(ctx, other); err == nil || err.Error() != "Unable to allocate a free port on host conductor-7 for IPMI terminal, not enough free ports." {
		t.Fatalf("second console on an exhausted range: %v", err)
	}

	must(t, c.StopConsole(ctx, task))
	if _, ok := task.Node.DriverInternalInfo["allocated_ipmi_terminal_port"]; ok {
		t.Fatal("allocated port still recorded after stop")
	}
	must(t, c.StartConsole(ctx, other))
	if got := other.Node.DriverInternalInfo["allocated_ipmi_terminal_port"]; got != port {
		t.Fatalf("released port not handed to the next console: %v", got)
	}
	must(t, c.StopConsole(ctx, other))
}
