// Package vbm is a virtual bare-metal lab for end-to-end tests: machines,
// each behind its own Redfish BMC emulator (testing/redfishbmc), that do
// what a server does when the conductor drives its BMC. Powered on with
// the virtual CD as boot device, a machine fetches the inserted ISO from
// the conductor's HTTP server, reads the kernel parameters the conductor
// put in its grub.cfg, and runs the ramdisk: an IPA fixture
// (testing/ipa) that sends the inspection data when asked to, looks the
// node up, heartbeats with its callback URL, downloads and verifies the
// image it is told to write, and powers the machine off when told to.
// Powered off, the agent goes away; booted from disk, the machine runs
// what was written.
//
// Everything listens on 127.0.0.1. The lab stops with the test.
package vbm

import (
	"context"
	"crypto/md5"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openkeel/ironic/testing/ipa"
	"github.com/openkeel/ironic/testing/redfishbmc"
)

// Options tune the lab; zero values take the defaults.
type Options struct {
	// HeartbeatInterval is how often a running agent heartbeats (IPA
	// derives it from the heartbeat_timeout lookup returns; tests want it
	// short). Default 500 ms.
	HeartbeatInterval time.Duration
	// Poll is how often the lab looks at the BMCs. Default 20 ms.
	Poll time.Duration
	// BootDelay is how long a ramdisk takes to boot before it calls the
	// API. A real one takes minutes, long after the conductor has moved
	// the node to its wait state; IPA sends its inspection data once, so
	// a ramdisk faster than the conductor would lose it. Default 2 s.
	BootDelay time.Duration
}

// Lab runs machines.
type Lab struct {
	t    testing.TB
	opts Options

	mu       sync.Mutex
	machines []*Machine

	cancel context.CancelFunc
	done   chan struct{}
}

// New starts an empty lab; it stops when the test ends.
func New(t testing.TB, opts Options) *Lab {
	t.Helper()
	if _, err := exec.LookPath("xorriso"); err != nil {
		t.Fatalf("vbm: machines read the conductor's ISOs with xorriso: %v", err)
	}
	if opts.HeartbeatInterval <= 0 {
		opts.HeartbeatInterval = 500 * time.Millisecond
	}
	if opts.Poll <= 0 {
		opts.Poll = 20 * time.Millisecond
	}
	if opts.BootDelay <= 0 {
		opts.BootDelay = 2 * time.Second
	}
	ctx, cancel := context.WithCancel(context.Background())
	l := &Lab{t: t, opts: opts, cancel: cancel, done: make(chan struct{})}
	go l.run(ctx)
	t.Cleanup(l.stop)
	return l
}

func (l *Lab) stop() {
	l.cancel()
	<-l.done
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, m := range l.machines {
		m.shutdown()
	}
}

// Boot is one start of a machine.
type Boot struct {
	// Device is where it booted from.
	Device redfishbmc.BootDevice
	// Params are the kernel parameters of the ramdisk ISO.
	Params map[string]string
	// Err tells why the ramdisk did not start (no media, unreadable ISO).
	Err error
}

// Written is an image the agent wrote to the machine's disk.
type Written struct {
	URL, ImageID string
	Size         int64
	SHA256       string
	Configdrive  bool
}

// Machine is one server. Its agent serves HTTPS with a certificate it
// sends in its heartbeats (agent_verify_ca), as IPA's automatic TLS does.
type Machine struct {
	lab *Lab
	// ID is the Redfish system id, BMC its emulator, Agent the ramdisk's
	// REST API (up only while the ramdisk runs), MACs its NICs.
	ID    string
	BMC   *redfishbmc.BMC
	Agent *ipa.Agent
	MACs  []string

	mu        sync.Mutex
	power     string
	resets    int
	session   context.CancelFunc
	sessionWG sync.WaitGroup
	boots     []Boot
	written   []Written
	failures  []error
}

// The credentials every BMC of the lab accepts (HTTP basic and sessions).
const (
	BMCUsername = "admin"
	BMCPassword = "vbm-bmc-s3cret"
)

// Machine adds a server with one NIC per MAC, 16 GiB of memory, 4 CPUs
// and a 100 GiB disk, its system id being id.
func (l *Lab) Machine(id string, macs ...string) *Machine {
	l.t.Helper()
	opts := []redfishbmc.SystemOption{
		redfishbmc.MemoryGiB(16),
		redfishbmc.Processor(redfishbmc.CPU{Model: "Virtual CPU", Arch: "x86", Cores: 4, Threads: 4}),
		redfishbmc.SimpleStorageDevice("sda", "Virtual Disk", 100<<30),
	}
	for i, mac := range macs {
		opts = append(opts, redfishbmc.EthernetInterface(fmt.Sprintf("%d", i+1), mac, "Enabled"))
	}
	m := &Machine{lab: l, ID: id, BMC: redfishbmc.New(l.t).WithBasicAuth(BMCUsername, BMCPassword).WithSessions().System(id, opts...), Agent: ipa.New(l.t).WithTLS(), MACs: macs, power: "Off"}
	m.Agent.Down()
	m.Agent.Handle("deploy.execute_deploy_step", m.executeDeployStep)
	m.Agent.Handle("standby.power_off", m.osPowerOff)
	m.Agent.Handle("standby.run_image", m.osReboot)
	m.Agent.Handle("rescue.finalize_rescue", m.finalizeRescue)
	m.Agent.URL()
	l.mu.Lock()
	l.machines = append(l.machines, m)
	l.mu.Unlock()
	return m
}

// Boots returns the machine's starts so far.
func (m *Machine) Boots() []Boot {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.boots)
}

// Written returns the images written so far.
func (m *Machine) Written() []Written {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.written)
}

// Failures returns what went wrong inside the ramdisk (failed lookups,
// heartbeats refused), for tests to print when a flow stalls.
func (m *Machine) Failures() []error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.failures)
}

func (m *Machine) fail(err error) {
	m.lab.t.Logf("vbm %s: %v", m.ID, err)
	m.mu.Lock()
	m.failures = append(m.failures, err)
	m.mu.Unlock()
}

func (l *Lab) run(ctx context.Context) {
	defer close(l.done)
	tick := time.NewTicker(l.opts.Poll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		l.mu.Lock()
		machines := slices.Clone(l.machines)
		l.mu.Unlock()
		for _, m := range machines {
			m.observe(ctx)
		}
	}
}

// restarts are the reset types that reboot a machine that is on.
var restarts = []string{"ForceRestart", "GracefulRestart", "PowerCycle"}

// observe compares the BMC with what the machine last saw and starts or
// stops it accordingly.
func (m *Machine) observe(ctx context.Context) {
	snap := m.BMC.Snapshot(m.ID)
	m.mu.Lock()
	wasOn := m.power == "On"
	rebooted := false
	for _, r := range snap.Resets[min(m.resets, len(snap.Resets)):] {
		rebooted = rebooted || slices.Contains(restarts, r)
	}
	m.resets = len(snap.Resets)
	m.power = snap.PowerState
	m.mu.Unlock()
	isOn := snap.PowerState == "On"
	switch {
	case isOn && (!wasOn || rebooted):
		m.shutdown()
		m.boot(ctx)
	case !isOn && wasOn:
		m.shutdown()
	}
}

// shutdown stops the running ramdisk, if any.
func (m *Machine) shutdown() {
	m.mu.Lock()
	cancel := m.session
	m.session = nil
	m.mu.Unlock()
	if cancel != nil {
		cancel()
		m.sessionWG.Wait()
	}
	m.Agent.Down()
}

func (m *Machine) boot(ctx context.Context) {
	dev := m.BMC.StartBoot(m.ID)
	b := Boot{Device: dev}
	switch {
	case dev.Target == "Cd" && dev.Media == "":
		b.Err = errors.New("no media in the virtual CD")
	case dev.Target == "Cd":
		b.Params, b.Err = redfishbmc.ISOKernelParams(ctx, dev.Media)
	case dev.Target != "Hdd":
		b.Err = fmt.Errorf("boot from %s is not simulated", dev.Target)
	}
	m.mu.Lock()
	m.boots = append(m.boots, b)
	m.mu.Unlock()
	if b.Err != nil {
		m.fail(fmt.Errorf("boot from %s: %w", dev.Target, b.Err))
		return
	}
	if b.Params == nil {
		return
	}
	sctx, cancel := context.WithCancel(ctx)
	m.mu.Lock()
	m.session = cancel
	m.mu.Unlock()
	m.sessionWG.Add(1)
	go func() {
		defer m.sessionWG.Done()
		m.ramdisk(sctx, b.Params)
	}()
}

// ramdisk is IPA's life: inspection when asked for, lookup, then
// heartbeats until the machine stops.
func (m *Machine) ramdisk(ctx context.Context, params map[string]string) {
	api := params["ipa-api-url"]
	if api == "" {
		m.fail(errors.New("the ramdisk has no ipa-api-url"))
		return
	}
	if !sleep(ctx, m.lab.opts.BootDelay) {
		return
	}
	token := params["ipa-agent-token"]
	m.Agent.WithToken(token)
	m.Agent.Up()
	client := &ipa.IronicClient{BaseURL: api, Token: token}
	if cb := params["ipa-inspection-callback-url"]; cb != "" {
		inspector := &ipa.IronicClient{BaseURL: strings.TrimSuffix(cb, "/v1/continue_inspection"), Token: token}
		inv := m.Inventory()
		// IPA's default collector adds the disk it would deploy to.
		pluginData := map[string]any{"boot_interface": m.MACs[0], "root_disk": inv["disks"].([]any)[0]}
		if _, err := inspector.ContinueInspection(ctx, inv, pluginData); err != nil {
			m.fail(fmt.Errorf("continue_inspection: %w", err))
		}
	}
	var node string
	for node == "" {
		out, err := client.Lookup(ctx, m.MACs, "")
		if err == nil {
			n, _ := out["node"].(map[string]any)
			node, _ = n["uuid"].(string)
		} else if ctx.Err() == nil {
			m.fail(fmt.Errorf("lookup: %w", err))
		}
		if node == "" && !sleep(ctx, m.lab.opts.HeartbeatInterval) {
			return
		}
	}
	m.Agent.WithToken(client.Token)
	for {
		if err := client.Heartbeat(ctx, node, m.Agent.URL(), m.Agent.CAPEM()); err != nil && ctx.Err() == nil {
			m.fail(fmt.Errorf("heartbeat: %w", err))
		}
		if !sleep(ctx, m.lab.opts.HeartbeatInterval) {
			return
		}
	}
}

func sleep(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}

// Inventory is what IPA's default collector reports for the machine.
func (m *Machine) Inventory() map[string]any {
	ifaces := make([]any, 0, len(m.MACs))
	for i, mac := range m.MACs {
		ifaces = append(ifaces, map[string]any{
			"name": fmt.Sprintf("eth%d", i), "mac_address": mac,
			"ipv4_address": fmt.Sprintf("192.0.2.%d", 10+i), "ipv6_address": nil,
			"has_carrier": true, "lldp": nil, "vendor": "0x1af4", "product": "0x0001",
			"client_id": nil, "biosdevname": nil, "speed_mbps": 10000,
		})
	}
	disk := map[string]any{
		"name": "/dev/sda", "model": "Virtual Disk", "size": int64(100 << 30), "rotational": false,
		"wwn": nil, "serial": "vbm-" + m.ID, "vendor": "OpenKeel", "wwn_with_extension": nil,
		"wwn_vendor_extension": nil, "hctl": "0:0:0:0", "by_path": "/dev/disk/by-path/pci-0000:00:05.0-scsi-0:0:0:0",
	}
	return map[string]any{
		"interfaces": ifaces,
		"cpu": map[string]any{"model_name": "Virtual CPU", "frequency": "2400.000", "count": 4,
			"architecture": "x86_64", "flags": []any{"fpu", "vmx", "lm"}},
		"memory":        map[string]any{"total": int64(16 << 30), "physical_mb": 16384},
		"disks":         []any{disk},
		"bmc_address":   "127.0.0.1",
		"bmc_v6address": "::/0",
		"system_vendor": map[string]any{"product_name": "Emulated", "serial_number": "vbm-" + m.ID, "manufacturer": "OpenKeel"},
		"boot":          map[string]any{"current_boot_mode": "uefi", "pxe_interface": m.MACs[0]},
		"hostname":      "vbm-" + m.ID,
	}
}

// executeDeployStep writes the image for write_image, as IPA's
// standby extension does: download from the first URL and verify the
// checksum before reporting success.
func (m *Machine) executeDeployStep(params map[string]any) ipa.Outcome {
	st, _ := params["step"].(map[string]any)
	if st["step"] != "write_image" {
		return ipa.ExecuteStep("deploy", 2, nil)(params)
	}
	args, _ := st["args"].(map[string]any)
	info, _ := args["image_info"].(map[string]any)
	if err := m.writeImage(info, args["configdrive"] != nil); err != nil {
		return ipa.Outcome{Async: true, Polls: 1, Error: err}
	}
	return ipa.ExecuteStep("deploy", 2, nil)(params)
}

func (m *Machine) writeImage(info map[string]any, configdrive bool) any {
	id, _ := info["id"].(string)
	urls, _ := info["urls"].([]any)
	if len(urls) == 0 {
		return ipa.CommandError("ImageDownloadError", "Error downloading image", fmt.Sprintf("Download of image id %s failed: no URLs", id), 500)
	}
	u, _ := urls[0].(string)
	algo, want := "md5", ""
	if v, _ := info["os_hash_value"].(string); v != "" {
		algo, want = fmt.Sprint(info["os_hash_algo"]), v
	} else if v, _ := info["checksum"].(string); v != "" {
		want = v
	}
	h, sha := newHash(algo), sha256.New()
	if h == nil {
		return ipa.CommandError("ImageChecksumError", "Error verifying image checksum", "Unsupported checksum algorithm "+algo, 500)
	}
	resp, err := http.Get(u)
	if err != nil {
		return ipa.CommandError("ImageDownloadError", "Error downloading image", fmt.Sprintf("Download of image id %s failed: %v", id, err), 500)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return ipa.CommandError("ImageDownloadError", "Error downloading image",
			fmt.Sprintf("Download of image id %s failed: URL: %s; Error: Received status code %d from %s, expected 200. Response body: %s", id, u, resp.StatusCode, u, ""), 500)
	}
	n, err := io.Copy(io.MultiWriter(h, sha), resp.Body)
	if err != nil {
		return ipa.CommandError("ImageDownloadError", "Error downloading image", fmt.Sprintf("Download of image id %s failed: %v", id, err), 500)
	}
	if got := hex.EncodeToString(h.Sum(nil)); want != "" && got != want {
		return ipa.CommandError("ImageChecksumError", "Error verifying image checksum",
			fmt.Sprintf("Image failed to verify against checksum. location: %s; image ID: %s; image checksum: %s; verification checksum: %s", u, id, want, got), 500)
	}
	m.mu.Lock()
	m.written = append(m.written, Written{URL: u, ImageID: id, Size: n, SHA256: hex.EncodeToString(sha.Sum(nil)), Configdrive: configdrive})
	m.mu.Unlock()
	return nil
}

func newHash(algo string) hash.Hash {
	switch algo {
	case "md5":
		return md5.New()
	case "sha256":
		return sha256.New()
	case "sha512":
		return sha512.New()
	}
	return nil
}

// osPowerOff is standby.power_off: the OS shuts the machine down once it
// has answered.
func (m *Machine) osPowerOff(map[string]any) ipa.Outcome {
	go func() {
		time.Sleep(2 * m.lab.opts.Poll)
		m.BMC.SetPower(m.ID, "Off")
	}()
	return ipa.Outcome{Async: true}
}

// osReboot is standby.run_image: the ramdisk reboots the machine, which
// then starts from its boot device.
func (m *Machine) osReboot(map[string]any) ipa.Outcome {
	go func() {
		time.Sleep(2 * m.lab.opts.Poll)
		m.BMC.SetPower(m.ID, "Off")
		time.Sleep(3 * m.lab.opts.Poll)
		m.BMC.SetPower(m.ID, "On")
	}()
	return ipa.Outcome{Async: true}
}

// finalizeRescue ends IPA: the rescue user logs in to what is left, and
// the agent no longer heartbeats.
func (m *Machine) finalizeRescue(map[string]any) ipa.Outcome {
	m.mu.Lock()
	cancel := m.session
	m.session = nil
	m.mu.Unlock()
	if cancel != nil {
		go func() {
			cancel()
			m.sessionWG.Wait()
		}()
	}
	return ipa.Outcome{}
}
