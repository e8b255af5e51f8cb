package redfishbmc

// The servers behind the BMC (the laptop lab, `ironic lab bmc`): a
// machine does with its power and boot device what a server does. Powered
// on or restarted from the virtual CD, or by UEFI HTTP boot, it downloads
// the ISO the conductor built, reads the kernel parameters of its boot
// loader and runs the ramdisk they describe; powered off, the ramdisk
// goes with it. Booted from its disk, it runs the instance, which the lab
// does not emulate.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// Ramdisk is the agent ramdisk a machine boots.
type Ramdisk struct {
	SystemID string
	// Device is where the machine booted from, Source the ISO's URL.
	Device BootDevice
	Source string
	// Params are the kernel parameters of the ISO's boot loader
	// configuration: ipa-api-url, ipa-agent-token,
	// ipa-inspection-callback-url...
	Params map[string]string
	// MACs are the machine's NICs, which the agent's lookup sends.
	MACs []string
	// Inventory is what IPA's collectors report on the machine's
	// hardware (AgentInventory).
	Inventory map[string]any
	// Config is the emulator's configuration of its ramdisks.
	Config RamdiskConfig
	// PowerOff is the ramdisk's operating system switching the machine
	// off, as after standby.power_off.
	PowerOff func()
}

// RamdiskStarter starts the agent of a ramdisk. The returned stop ends
// it when the machine loses power and returns once it is gone.
type RamdiskStarter func(ctx context.Context, r Ramdisk) (stop func(), err error)

// RunMachines makes every system behave as a server until ctx ends,
// looking at each every poll; the ramdisks are started by start, and
// stopped when their machine loses power or ctx ends.
func (b *BMC) RunMachines(ctx context.Context, poll time.Duration, start RamdiskStarter) {
	b.mu.Lock()
	ids := slices.Clone(b.order)
	b.mu.Unlock()
	var wg sync.WaitGroup
	for _, id := range ids {
		m := &machine{b: b, id: id, start: start}
		wg.Add(1)
		go func() {
			defer wg.Done()
			m.run(ctx, poll)
		}()
	}
	wg.Wait()
}

// machine is one server: what it last saw of its system, and its
// running ramdisk.
type machine struct {
	b     *BMC
	id    string
	start RamdiskStarter

	power  string
	resets int
	stop   func()
}

func (m *machine) run(ctx context.Context, poll time.Duration) {
	defer m.shutdown()
	m.resets = len(m.b.Snapshot(m.id).Resets)
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		m.observe(ctx)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// restarts are the reset types that reboot a machine that is on.
var restarts = []string{"ForceRestart", "GracefulRestart", "PowerCycle"}

// observe compares the system with what the machine last saw, and starts
// or stops it accordingly.
func (m *machine) observe(ctx context.Context) {
	snap := m.b.Snapshot(m.id)
	rebooted := false
	for _, r := range snap.Resets[min(m.resets, len(snap.Resets)):] {
		rebooted = rebooted || slices.Contains(restarts, r)
	}
	m.resets = len(snap.Resets)
	wasOn, isOn := m.power == On, snap.PowerState == On
	m.power = snap.PowerState
	switch {
	case isOn && (!wasOn || rebooted):
		m.shutdown()
		m.boot(ctx)
	case !isOn && wasOn:
		m.shutdown()
	}
}

func (m *machine) shutdown() {
	if m.stop != nil {
		m.b.t.Logf("machine %s: power lost, the ramdisk stops", m.id)
		m.stop()
		m.stop = nil
	}
}

func (m *machine) boot(ctx context.Context) {
	dev := m.b.StartBoot(m.id)
	var src string
	switch dev.Target {
	case "Cd":
		src = dev.Media
	case "UefiHttp":
		src = dev.HTTPBootURI
	case "Hdd":
		m.b.t.Logf("machine %s: boots from its disk", m.id)
		return
	default:
		m.b.t.Logf("machine %s: boot from %s is not emulated; the machine idles", m.id, dev.Target)
		return
	}
	if src == "" {
		m.b.t.Logf("machine %s: no boot media for %s; the machine idles", m.id, dev.Target)
		return
	}
	params, err := ISOKernelParams(ctx, src)
	if err != nil {
		m.b.t.Logf("machine %s: boot from %s: %v", m.id, dev.Target, err)
		return
	}
	r := Ramdisk{
		SystemID: m.id, Device: dev, Source: src, Params: params,
		MACs: m.b.macs(m.id), Inventory: m.b.AgentInventory(m.id), Config: m.b.ramdiskConfig(),
		PowerOff: func() { m.b.SetPower(m.id, Off) },
	}
	m.b.t.Logf("machine %s: booting the ramdisk of %s", m.id, redactURL(src))
	stop, err := m.start(ctx, r)
	if err != nil {
		m.b.t.Logf("machine %s: start the ramdisk: %v", m.id, err)
		return
	}
	m.stop = stop
}

// redactURL leaves a URL's query out of the log: a Swift temporary URL
// carries its signature there.
func redactURL(u string) string {
	base, _, _ := strings.Cut(u, "?")
	return base
}

func (b *BMC) ramdiskConfig() RamdiskConfig {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.ramdisk
}

func (b *BMC) macs(id string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, n := range b.mustSystem(id).NICs {
		out = append(out, n.MAC)
	}
	return out
}

// ISOKernelParams downloads the ISO at u and returns the kernel
// parameters of its grub.cfg (UEFI) or isolinux.cfg (BIOS), read with
// xorriso.
func ISOKernelParams(ctx context.Context, u string) (map[string]string, error) {
	dir, err := os.MkdirTemp("", "redfishbmc-iso-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	iso := filepath.Join(dir, "boot.iso")
	if err := download(ctx, u, iso); err != nil {
		return nil, err
	}
	for _, cfg := range []string{"/EFI/BOOT/grub.cfg", "/boot/grub/grub.cfg", "/isolinux/isolinux.cfg"} {
		out := filepath.Join(dir, filepath.Base(cfg))
		cmd := exec.CommandContext(ctx, "xorriso", "-osirrox", "on", "-indev", iso, "-extract", cfg, out)
		if cmd.Run() != nil {
			continue
		}
		data, err := os.ReadFile(out)
		if err != nil {
			continue
		}
		if p := kernelParams(string(data)); p != nil {
			return p, nil
		}
	}
	return nil, errors.New("no boot loader configuration with kernel parameters on the ISO")
}

func download(ctx context.Context, u, dest string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("fetch the ISO: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("fetch the ISO %s: HTTP %d", redactURL(u), resp.StatusCode)
	}
	f, err := os.Create(dest)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return fmt.Errorf("fetch the ISO: %w", err)
	}
	return f.Close()
}

// kernelParams parses the first "linux"/"linuxefi" (grub) or "append"
// (isolinux) line.
func kernelParams(cfg string) map[string]string {
	for _, line := range strings.Split(cfg, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		var args []string
		switch f[0] {
		case "linux", "linuxefi":
			if len(f) > 1 {
				args = f[2:]
			}
		case "append":
			args = f[1:]
		default:
			continue
		}
		p := map[string]string{}
		for _, a := range args {
			k, v, _ := strings.Cut(a, "=")
			p[k] = v
		}
		return p
	}
	return nil
}

// AgentInventory is what IPA's collectors report on the system's emulated
// hardware: its NICs, processors, memory, drives, vendor and boot mode.
// What the emulator does not model gets a plausible default (2 CPUs,
// 4 GiB, one 20 GiB disk).
func (b *BMC) AgentInventory(id string) map[string]any {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.mustSystem(id)
	ifaces := []any{}
	for i, n := range s.NICs {
		speed := any(nil)
		if n.SpeedMbps > 0 {
			speed = n.SpeedMbps
		}
		ifaces = append(ifaces, map[string]any{
			"name": fmt.Sprintf("eth%d", i), "mac_address": strings.ToLower(n.MAC),
			"ipv4_address": fmt.Sprintf("192.0.2.%d", 10+i), "ipv6_address": nil,
			"has_carrier": n.State == "Enabled", "lldp": nil, "vendor": "0x1af4", "product": "0x0001",
			"client_id": nil, "biosdevname": nil, "speed_mbps": speed,
		})
	}
	cpu := map[string]any{"model_name": "Emulated CPU", "frequency": "2400.000", "count": 2,
		"architecture": "x86_64", "flags": []any{"fpu", "vmx", "lm"}}
	if len(s.hw.cpus) > 0 {
		threads := 0
		for _, c := range s.hw.cpus {
			threads += max(c.Threads, c.Cores, 1)
		}
		c := s.hw.cpus[0]
		cpu["count"] = threads
		if c.Model != "" {
			cpu["model_name"] = c.Model
		}
		if c.MaxSpeedMHz > 0 {
			cpu["frequency"] = fmt.Sprintf("%d.000", c.MaxSpeedMHz)
		}
		if arch, ok := map[string]string{"x86": "x86_64", "ARM": "aarch64"}[c.Arch]; ok {
			cpu["architecture"] = arch
		}
	}
	gib := s.hw.totalGiB
	if gib == 0 {
		gib = 4
	}
	var sizes []int64
	sizes = append(sizes, s.hw.drives...)
	for _, d := range s.Disks {
		if d.CapacityBytes > 0 {
			sizes = append(sizes, d.CapacityBytes)
		}
	}
	if len(sizes) == 0 {
		sizes = []int64{20 << 30}
	}
	disks := []any{}
	for i, size := range sizes {
		name := "/dev/sd" + string(rune('a'+i%26))
		disks = append(disks, map[string]any{
			"name": name, "model": "Emulated Disk", "size": size, "rotational": false,
			"wwn": nil, "serial": fmt.Sprintf("%s-disk%d", s.ID, i), "vendor": s.Manufacturer,
			"wwn_with_extension": nil, "wwn_vendor_extension": nil, "hctl": fmt.Sprintf("0:0:%d:0", i),
			"by_path": fmt.Sprintf("/dev/disk/by-path/pci-0000:00:05.0-scsi-0:0:%d:0", i),
		})
	}
	bootMode := "uefi"
	if s.BootMode == "Legacy" {
		bootMode = "bios"
	}
	boot := map[string]any{"current_boot_mode": bootMode, "pxe_interface": nil}
	if len(s.NICs) > 0 {
		boot["pxe_interface"] = strings.ToLower(s.NICs[0].MAC)
	}
	return map[string]any{
		"interfaces":    ifaces,
		"cpu":           cpu,
		"memory":        map[string]any{"total": int64(gib) << 30, "physical_mb": gib * 1024},
		"disks":         disks,
		"bmc_address":   "127.0.0.1",
		"bmc_v6address": "::/0",
		"system_vendor": map[string]any{"product_name": s.Model, "serial_number": s.SerialNumber, "manufacturer": s.Manufacturer},
		"boot":          boot,
		"hostname":      s.ID,
	}
}
