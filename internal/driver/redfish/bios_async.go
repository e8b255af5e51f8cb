package redfish

import (
	"context"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/stmcginnis/gofish/redfish"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/pyfmt"
)

// The BIOS steps write the settings (or reset them), reboot and wait; the
// periodic below resumes the step once the system is back, and the step,
// run again (skip_current_step is false), verifies what the BIOS took.
// The state is upstream's redfish_bios_state dict.
const (
	biosStateKey       = model.DIIRedfishBIOSState
	biosRebootKey      = "reboot_requested"
	biosRequestedAttrs = model.DIIRequestedBIOSAttrs
)

var _ driver.AsyncStepPoller = (*BIOS)(nil)

func biosState(n *model.Node) map[string]any {
	s, _ := n.InternalInfo().Get(biosStateKey).(map[string]any)
	return s
}

func biosRebootRequested(n *model.Node) bool {
	v, _ := biosState(n)[biosRebootKey].(bool)
	return v
}

// requestedBiosAttrs reads the attributes asked for, also from where
// older releases kept them.
func requestedBiosAttrs(n *model.Node) map[string]any {
	if a, ok := biosState(n)[biosRequestedAttrs].(map[string]any); ok && len(a) > 0 {
		return a
	}
	a, _ := n.InternalInfo().Get(biosRequestedAttrs).(map[string]any)
	return a
}

// setBiosRebootRequested is upstream _set_reboot_requested: the state for
// the periodic and the async flags (reboot, run the step again, and let
// only the periodic move the step along when there is no ramdisk to
// heartbeat).
func setBiosRebootRequested(n *model.Node, attrs map[string]any) {
	state := map[string]any{biosRebootKey: true}
	if len(attrs) > 0 {
		state[biosRequestedAttrs] = attrs
	}
	n.InternalInfo().Set(biosStateKey, state)
	disabled, _ := n.InternalInfo().Get(flagsOf(n).disableRamdisk).(bool)
	setAsyncStepFlags(n, ptr(true), ptr(false), ptr(disabled))
}

// clearBiosFlags is upstream _clear_reboot_requested, with the keys older
// releases left behind.
func clearBiosFlags(n *model.Node) {
	for _, k := range []string{biosStateKey, "post_bios_reboot_requested", biosRequestedAttrs,
		"post_config_reboot_requested", "post_factory_reset_reboot_requested"} {
		n.InternalInfo().Delete(k)
	}
}

// pending reads the attributes waiting in the settings object; none when
// the BMC has no separate one or it cannot be read.
func (d *biosDoc) pending(sys *system) map[string]any {
	target := d.Settings.SettingsObject.String()
	if sys == nil || target == "" || target == d.ODataID {
		return map[string]any{}
	}
	var doc struct{ Attributes map[string]any }
	if err := sys.cl.getJSON(target, &doc); err != nil || doc.Attributes == nil {
		return map[string]any{}
	}
	return doc.Attributes
}

// biosAttrsMatch tells whether every requested attribute already has its
// value and no conflicting change is pending.
func biosAttrsMatch(requested, current, pending map[string]any) bool {
	for k, v := range requested {
		if !reflect.DeepEqual(current[k], v) {
			return false
		}
		if p, ok := pending[k]; ok && !reflect.DeepEqual(p, v) {
			return false
		}
	}
	return true
}

// unappliedBiosAttrs is upstream _get_unapplied_bios_attrs, sorted: on
// BMCs whose pending area holds only the changes (no more entries than
// requested) an attribute still pending is not applied either.
func unappliedBiosAttrs(current, pending, requested map[string]any) []string {
	purgePending := len(pending) <= len(requested)
	var out []string
	for k, v := range requested {
		_, isPending := pending[k]
		if !reflect.DeepEqual(v, current[k]) || (purgePending && isPending) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// AsyncStepInterval is upstream's spacing of _query_bios_apply_status.
func (b *BIOS) AsyncStepInterval() time.Duration { return b.core.opts.FirmwareUpdateStatusInterval }

// AsyncStepPending is the periodic's predicate: a BIOS step waits for its
// reboot.
func (b *BIOS) AsyncStepPending(n *model.Node) bool { return len(biosState(n)) > 0 }

// PollAsyncStep is upstream _check_node_redfish_bios_apply: once the
// system reports it booted an OS again (when it reports boot progress at
// all) and the requested attributes show, the step is resumed to verify
// them. A BMC that cannot be read is asked again next time.
func (b *BIOS) PollAsyncStep(ctx context.Context, task *driver.Task) (driver.AsyncStepStatus, error) {
	n := task.Node
	state := biosState(n)
	if len(state) == 0 {
		return driver.AsyncStepRunning, nil
	}
	sys, doc, err := b.readBios(ctx, task)
	if sys == nil || (err != nil && err != errNoBios) {
		task.Logger().Warn("unable to query the redfish system while waiting for BIOS reboot completion",
			"node", n.UUID, "error", err)
		return driver.AsyncStepRunning, nil
	}
	switch last := sys.BootProgress.LastState; last {
	case "":
	case redfish.OSBootStartedBootProgressTypes, redfish.OSRunningBootProgressTypes:
		n.ProvisionUpdatedAt = ptr(b.core.opts.clock().Now().UTC())
	default:
		n.ProvisionUpdatedAt = ptr(b.core.opts.clock().Now().UTC())
		task.Logger().Debug("waiting for boot progress to reach OS started", "node", n.UUID, "state", last)
		return driver.AsyncStepRunning, nil
	}
	if requested := requestedBiosAttrs(n); len(requested) > 0 && doc != nil {
		if left := unappliedBiosAttrs(doc.Attributes, doc.pending(sys), requested); len(left) > 0 {
			task.Logger().Debug("BIOS settings not yet applied, polling again", "node", n.UUID, "attributes", left)
			return driver.AsyncStepRunning, nil
		}
	}
	task.Logger().Info("detected post-BIOS reboot completion, resuming the current step", "node", n.UUID)
	return driver.AsyncStepDone, nil
}

// convertBiosSettings is upstream _validate_and_convert_settings, with the
// attribute registry the cached bios_settings rows come from: settings
// that are read-only or out of their registry's range are refused, and
// values sent as strings take the registry's JSON type (Integer, Boolean).
// Attributes the registry does not know pass unchecked.
func convertBiosSettings(node string, attrs map[string]any, registry map[string]registryEntry) error {
	var invalid []string
	for _, name := range slices.Sorted(maps.Keys(attrs)) {
		r, ok := registry[name]
		if !ok {
			continue
		}
		value := attrs[name]
		if r.ReadOnly != nil && *r.ReadOnly {
			invalid = append(invalid, name)
			continue
		}
		typ := ""
		if r.Type != nil {
			typ = *r.Type
		}
		switch typ {
		case "Enumeration":
			var allowed []string
			var s model.BIOSSetting
			r.apply(&s)
			allowed = s.AllowableValues
			if len(allowed) > 0 && !slices.Contains(allowed, pyfmt.StrJSON(value)) {
				invalid = append(invalid, name)
			}
		case "Integer":
			n, err := strconv.ParseInt(strings.TrimSpace(pyfmt.StrJSON(value)), 10, 64)
			if err != nil || (r.LowerBound != nil && n < *r.LowerBound) || (r.UpperBound != nil && n > *r.UpperBound) {
				invalid = append(invalid, name)
				continue
			}
			attrs[name] = n
		case "Boolean":
			if str, isStr := value.(string); isStr {
				attrs[name] = strings.EqualFold(str, "true")
			}
		case "String":
			l := len([]rune(pyfmt.StrJSON(value)))
			if (r.MinLength != nil && l < *r.MinLength) || (r.MaxLength != nil && l > *r.MaxLength) {
				invalid = append(invalid, name)
			}
		}
	}
	if len(invalid) > 0 {
		return driver.InvalidParameterValue("Redfish BIOS apply_configuration failed for node %s: invalid value for setting(s): %s",
			node, strings.Join(invalid, ", "))
	}
	return nil
}
