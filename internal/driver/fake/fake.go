// Package fake holds the fake-hardware interfaces of upstream
// ironic/drivers/modules/fake.py: implementations that touch no hardware,
// succeed, and optionally sleep ([fake]*_delay) to imitate slow BMCs. They
// back the fake-hardware type used by tests and CI.
package fake

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/openkeel/ironic/internal/clock"
	"github.com/openkeel/ironic/internal/driver"
)

// Delays are the [fake]*_delay options: "N" seconds, or "A,B" for a random
// delay between A and B with a triangular distribution weighted towards A.
// Empty and "0" mean no delay.
type Delays struct {
	BIOS, Boot, Deploy, Firmware, Inspect, Management, Power, RAID, Rescue, Storage, Vendor string
}

// delay is a parsed [fake]*_delay option.
type delay struct{ earliest, latest float64 }

func parseDelay(option, s string) (delay, error) {
	if strings.TrimSpace(s) == "" {
		return delay{}, nil
	}
	parts := strings.Split(s, ",")
	a, err := strconv.Atoi(strings.TrimSpace(parts[0]))
	if err != nil {
		return delay{}, fmt.Errorf("[fake]%s %q: %w", option, s, err)
	}
	b := a
	if len(parts) > 1 {
		if b, err = strconv.Atoi(strings.TrimSpace(parts[1])); err != nil {
			return delay{}, fmt.Errorf("[fake]%s %q: %w", option, s, err)
		}
	}
	return delay{earliest: float64(a), latest: float64(b)}, nil
}

// sleep waits for the configured delay, or until ctx ends.
func (d delay) sleep(ctx context.Context) error {
	if d.earliest == 0 && d.latest == 0 {
		return nil
	}
	secs := d.earliest
	if d.latest != d.earliest {
		secs = triangular(d.earliest, d.latest, d.earliest)
	}
	return clock.Sleep(ctx, time.Duration(secs*float64(time.Second)))
}

// triangular draws from the triangular distribution on [low, high] with the
// given mode, as Python's random.triangular does.
func triangular(low, high, mode float64) float64 {
	u := rand.Float64()
	c := 0.5
	if high != low {
		c = (mode - low) / (high - low)
	}
	if u > c {
		u, c = 1-u, 1-c
		low, high = high, low
	}
	return low + (high-low)*math.Sqrt(u*c)
}

// Register adds every fake implementation and the fake-hardware type's
// interfaces to r. FakeVendorA has no entry point upstream either; it is
// exported as VendorA for tests that compose vendor interfaces.
func Register(r *driver.Registry, d Delays) error {
	parsed := map[string]delay{}
	for _, o := range []struct{ name, value string }{
		{"bios_delay", d.BIOS}, {"boot_delay", d.Boot}, {"deploy_delay", d.Deploy},
		{"firmware_delay", d.Firmware}, {"inspect_delay", d.Inspect},
		{"management_delay", d.Management}, {"power_delay", d.Power}, {"raid_delay", d.RAID},
		{"rescue_delay", d.Rescue}, {"storage_delay", d.Storage}, {"vendor_delay", d.Vendor},
	} {
		p, err := parseDelay(o.name, o.value)
		if err != nil {
			return err
		}
		parsed[o.name] = p
	}
	impls := []struct {
		kind driver.Kind
		impl driver.Interface
	}{
		{driver.KindBIOS, &BIOS{delay: parsed["bios_delay"]}},
		{driver.KindBoot, &Boot{delay: parsed["boot_delay"]}},
		{driver.KindConsole, &Console{}},
		{driver.KindDeploy, &Deploy{delay: parsed["deploy_delay"]}},
		{driver.KindFirmware, &Firmware{delay: parsed["firmware_delay"]}},
		{driver.KindInspect, &Inspect{delay: parsed["inspect_delay"]}},
		{driver.KindManagement, &Management{delay: parsed["management_delay"]}},
		{driver.KindPower, &Power{delay: parsed["power_delay"]}},
		{driver.KindRAID, &RAID{delay: parsed["raid_delay"]}},
		{driver.KindRescue, &Rescue{delay: parsed["rescue_delay"]}},
		{driver.KindStorage, &Storage{delay: parsed["storage_delay"]}},
		{driver.KindVendor, &VendorB{delay: parsed["vendor_delay"]}},
	}
	for _, i := range impls {
		if err := r.Register(i.kind, "fake", i.impl); err != nil {
			return fmt.Errorf("register fake interfaces: %w", err)
		}
	}
	return nil
}

// noProperties is embedded by fake interfaces whose get_properties is empty.
type noProperties struct{}

func (noProperties) Properties() map[string]string { return map[string]string{} }

// accept is embedded by fake interfaces whose validate accepts any node.
type accept struct{}

func (accept) Validate(context.Context, *driver.Task) error { return nil }
