package idrac

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/driver/redfish"
	"github.com/openkeel/ironic/internal/states"
)

// Message ids of the iDRAC's refusals of a configuration import that a
// retry overcomes: LC068 (a configuration change is pending, cleared by a
// reboot of the system) and RAC0679 (a job is running).
const (
	idracConfigPending = "LC068"
	idracJobRunning    = "RAC0679"
)

// Retries of sushy-oem-idrac's set_virtual_boot_device.
const (
	importAttempts   = 35
	importRetryDelay = 15 * time.Second
	importPoll       = time.Second
)

// bootConfigProfile is the system configuration profile that sets the
// next boot from the iDRAC's virtual CD (VCD-DVD) or floppy (VFDD), once
// or for good: what Dell documents for booting from virtual media, which
// its BootSourceOverrideTarget cannot select.
func bootConfigProfile(manager, device string, persistent bool) string {
	once := "Enabled"
	if persistent {
		once = "Disabled"
	}
	dev := "VCD-DVD"
	if device == "floppy" {
		dev = "VFDD"
	}
	return fmt.Sprintf(`<SystemConfiguration><Component FQDD="%s">`+
		`<Attribute Name="ServerBoot.1#BootOnce">%s</Attribute>`+
		`<Attribute Name="ServerBoot.1#FirstBootDevice">%s</Attribute>`+
		`</Component></SystemConfiguration>`, manager, once, dev)
}

// setVirtualBootDevice is upstream DracRedfishVirtualMediaBoot
// _set_boot_device for the CD and floppy: the OEM ImportSystemConfiguration
// of bootConfigProfile, followed to its end. An import the iDRAC refuses
// because a configuration is pending gets the system power cycled once; one
// refused because a job runs is tried again, importAttempts times at most.
func (d *dell) setVirtualBootDevice(ctx context.Context, task *driver.Task, s *redfish.Session, device string, persistent bool) error {
	return d.execOEMOn(ctx, task, s, "set virtual boot device", func(ctx context.Context, s *redfish.Session, mgr *dellManager) error {
		target, err := mgr.action("#OemManager.ImportSystemConfiguration")
		if err != nil {
			return err
		}
		payload := map[string]any{"ShareParameters": map[string]any{"Target": "ALL"},
			"ImportBuffer": bootConfigProfile(mgr.ID, device, persistent)}
		rebooted := false
		for attempts := importAttempts; ; attempts-- {
			resp, err := d.asyncCall(ctx, s, target, payload, importPoll)
			if err == nil {
				_ = resp.Body.Close()
				task.Logger().Info("set boot device via Dell OEM configuration import", "node", task.Node.UUID,
					"device", device, "retries", importAttempts-attempts)
				return nil
			}
			var herr *redfish.HTTPError
			if !errors.As(err, &herr) {
				return err
			}
			task.Logger().Warn("Dell OEM set boot device failed", "node", task.Node.UUID, "attempts_left", attempts, "error", err)
			pending, running := importRefusal(herr)
			switch {
			case pending && !rebooted:
				task.Logger().Warn("power cycling the system to clear a pending configuration; this may consume "+
					"one-time boot settings set before", "node", task.Node.UUID)
				if err := d.powerCycle(ctx, task); err != nil {
					return err
				}
				rebooted = true
			case pending || running:
				if err := d.set.Clock().Sleep(ctx, importRetryDelay); err != nil {
					return err
				}
			default:
				return err
			}
			if attempts == 0 {
				task.Logger().Error("too many retries of the Dell OEM configuration import", "node", task.Node.UUID,
					"retries", importAttempts)
				return err
			}
		}
	})
}

// importRefusal tells whether an import's error names a pending
// configuration or a running job.
func importRefusal(herr *redfish.HTTPError) (pending, running bool) {
	for _, id := range herr.MessageIDs() {
		pending = pending || strings.Contains(id, idracConfigPending)
		running = running || strings.Contains(id, idracJobRunning)
	}
	return pending, running
}

// powerCycle is sushy-oem-idrac's reboot_system through the node's power
// interface: off (unless off already), then on.
func (d *dell) powerCycle(ctx context.Context, task *driver.Task) error {
	p := task.Driver.Power
	if err := p.SetPowerState(ctx, task, states.PowerOff, 0); err != nil {
		return fmt.Errorf("power off node %s to clear a pending iDRAC configuration: %w", task.Node.UUID, err)
	}
	if err := p.SetPowerState(ctx, task, states.PowerOn, 0); err != nil {
		return fmt.Errorf("power on node %s after clearing a pending iDRAC configuration: %w", task.Node.UUID, err)
	}
	return nil
}

// acceptableMediaID is upstream _get_acceptable_media_id: an iDRAC10 takes
// virtual media only in slot 1 of the system's collection; other iDRACs,
// and media reached through the manager, take any slot.
func (d *dell) acceptableMediaID(s *redfish.Session, viaSystem bool) (string, error) {
	if !viaSystem {
		return "", nil
	}
	for _, p := range s.Managers() {
		var m struct{ Model string }
		if err := s.GetJSON(p, &m); err != nil {
			return "", err
		}
		if idracVersion(m.Model) == 10 {
			return "1", nil
		}
	}
	return "", nil
}

// idracVersion maps the hardware generation leading the manager's Model
// ("16G Monolithic") to its iDRAC version, 0 when unknown.
func idracVersion(model string) int {
	if len(model) < 2 {
		return 0
	}
	gen, err := strconv.Atoi(model[:2])
	switch {
	case err != nil:
		return 0
	case gen > 16:
		return 10
	case gen >= 14:
		return 9
	case gen >= 12:
		return 8
	}
	return 0
}
