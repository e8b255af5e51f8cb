package agent

import (
	"context"
	"fmt"
	"strings"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
)

// InspectOptions configures the agent inspect interface.
type InspectOptions struct {
	// CallbackURL is where the ramdisk posts its inventory
	// (ipa-inspection-callback-url); empty leaves the ramdisk to find the
	// API itself.
	CallbackURL string
	// PowerOff is [inspector]/power_off: power the node off once the data
	// is in.
	PowerOff bool
	// PreCreatePorts is [inspector]/pre_create_ports: create the ports of
	// the MACs the management interface reports before booting; it needs
	// Ports, the conductor's store.
	PreCreatePorts bool
	Ports          PortCreator
	// Resolver resolves the BMC host names of driver_info for the
	// continue_inspection lookup; nil is the system resolver. Tests give
	// their own so that no made-up name reaches DNS.
	Resolver HostResolver
	// FastTrack is [deploy]/fast_track: with it on for the node, the
	// ramdisk is told the API URL so that it keeps heartbeating after the
	// inspection, and the node is left on with it for the next operation.
	FastTrack driver.FastTrack
	// APIURL is the Ironic API URL given to a fast-track ramdisk as
	// ipa-api-url; empty leaves the ramdisk to find the API itself.
	APIURL string
	// AllowUnmanagedBoot is [inspector]/require_managed_boot = False: a
	// node whose boot interface cannot boot the inspection ramdisk is
	// inspected unmanaged, network booted into a ramdisk the operator's
	// own (i)PXE environment serves, instead of refused.
	AllowUnmanagedBoot bool
	// ExtraKernelParams is [inspector]/extra_kernel_params: parameters
	// the managed inspection ramdisk boots with besides the callback URL.
	ExtraKernelParams string
	// DisableKernelParameterParsing is [conductor]/
	// disable_kernel_parameter_parsing: ExtraKernelParams is then split
	// as shell words instead of checked against the kernel grammar.
	DisableKernelParameterParsing bool
	// ForceDHCP is [inspector]/force_dhcp: the managed inspection ramdisk
	// collects LLDP on every interface (ipa-collect-lldp) unless
	// ExtraKernelParams says otherwise; the virtual media boot leaves out
	// the static network data for it.
	ForceDHCP bool
}

// InspectCallbackURL is upstream get_inspection_callback: the override
// when set, else the API's continue_inspection endpoint.
func InspectCallbackURL(override, apiURL string) string {
	if override != "" {
		return override
	}
	if apiURL == "" {
		return ""
	}
	return strings.TrimRight(apiURL, "/") + "/v1/continue_inspection"
}

// Inspect is upstream's agent inspect interface: boot the ramdisk and
// wait in inspect wait for continue_inspection. The conductor runs the
// inspection hooks for interfaces that say so (InspectionHooks), as the
// hooks write ports and traits through the store.
type Inspect struct {
	o InspectOptions
}

var (
	_ driver.InspectInterface = (*Inspect)(nil)
	_ driver.HookedInspector  = (*Inspect)(nil)
)

// NewInspect returns the agent inspect interface.
func NewInspect(o InspectOptions) *Inspect { return &Inspect{o: o} }

// RegisterInspect adds the "agent" inspect interface.
func RegisterInspect(r *driver.Registry, o InspectOptions) error {
	if err := r.Register(driver.KindInspect, "agent", NewInspect(o)); err != nil {
		return fmt.Errorf("register agent inspect: %w", err)
	}
	return nil
}

// InspectionHooks is true: in-band data is processed by the hooks.
func (i *Inspect) InspectionHooks() bool { return true }

// Properties has no driver_info keys.
func (i *Inspect) Properties() map[string]string { return map[string]string{} }

// Steps declares none.
func (i *Inspect) Steps() []driver.StepSpec { return nil }

// Validate is upstream's: with require_managed_boot, a node whose boot
// cannot be managed for inspection is refused.
func (i *Inspect) Validate(ctx context.Context, task *driver.Task) error {
	if _, err := i.extraParams(); err != nil {
		return err
	}
	if i.o.AllowUnmanagedBoot {
		return nil
	}
	_, err := managesBoot(ctx, task)
	return err
}

// managesBoot is upstream ironic_manages_boot: the boot and network
// interfaces validate a managed inspection (validate_inspection), and
// UnsupportedDriverExtension from either means the boot is left to the
// operator; that error is returned with false, any other fails.
// Upstream's base interfaces raise UnsupportedDriverExtension when they do
// not override validate_inspection; here an interface without
// ValidateInspection (the fake boot, the flat and neutron networks) is
// taken as managing the inspection boot, which those interfaces do.
func managesBoot(ctx context.Context, task *driver.Task) (bool, error) {
	for _, iface := range []any{task.Driver.Boot, task.Driver.Network} {
		v, ok := iface.(driver.InspectionValidator)
		if !ok {
			continue
		}
		if err := v.ValidateInspection(ctx, task); err != nil {
			return false, err
		}
	}
	return true, nil
}

// manageBootKey is upstream's _IRONIC_MANAGES_BOOT.
const manageBootKey = model.DIIInspectorManageBoot

// InspectHardware starts a managed inspection when the node's boot can
// be managed (upstream _start_managed_inspection), else, when
// require_managed_boot allows it, an unmanaged one
// (_start_unmanaged_inspection); either waits in inspect wait for the
// ramdisk's data.
func (i *Inspect) InspectHardware(ctx context.Context, task *driver.Task) (string, error) {
	n := task.Node
	if i.o.PreCreatePorts {
		i.preCreatePorts(ctx, task)
	}
	managed, err := managesBoot(ctx, task)
	if err != nil && (!i.o.AllowUnmanagedBoot || !errs.Is(err, errs.ClassUnsupportedDriverExtension)) {
		return "", err
	}
	if !managed {
		n.InternalInfo().Set(manageBootKey, false)
		i.cacheLookupAddresses(ctx, task)
		task.Logger().DebugContext(ctx, "starting inspection, booting is not managed by ironic", "node", n.UUID, "reason", err)
		return i.startUnmanaged(ctx, task)
	}
	n.InternalInfo().Set(manageBootKey, true)
	i.cacheLookupAddresses(ctx, task)
	params, err := i.extraParams()
	if err != nil {
		return "", err
	}
	if i.o.CallbackURL != "" {
		params["ipa-inspection-callback-url"] = i.o.CallbackURL
	}
	if _, set := params["ipa-collect-lldp"]; i.o.ForceDHCP && !set {
		// The forced DHCP inspection exists to see every interface's
		// switch port.
		params["ipa-collect-lldp"] = "1"
	}
	fail := func(err error) (string, error) {
		if _, tdErr := i.tearDown(ctx, task, false); tdErr != nil {
			return "", tdErr
		}
		return "", errs.New(errs.ClassHardwareInspectionFailure, map[string]any{"error": fmt.Sprintf("unable to start inspection: %s", err)})
	}
	fastTrack, err := i.o.FastTrack.EnabledFor(n)
	if err != nil {
		return fail(err)
	}
	if fastTrack && i.o.APIURL != "" {
		params["ipa-api-url"] = strings.TrimRight(i.o.APIURL, "/")
	}
	if !n.DisablePowerOff {
		if err := ensurePoweredOff(ctx, task); err != nil {
			return fail(err)
		}
	}
	if nw, ok := task.Driver.Network.(driver.InspectionNetworker); ok {
		if err := nw.AddInspectionNetwork(ctx, task); err != nil {
			return fail(asUpstream(err, "add inspection network"))
		}
	}
	if err := task.Driver.Boot.PrepareRamdisk(ctx, task, params); err != nil {
		return fail(asUpstream(err, "prepare ramdisk"))
	}
	if err := powerOnOrReboot(ctx, task); err != nil {
		return fail(err)
	}
	return "inspect wait", nil
}

// extraParams is [inspector]/extra_kernel_params as ramdisk parameters,
// read as upstream's prepare_managed_inspection does. Upstream checks the
// option when the configuration is loaded; here a malformed value fails
// the validation and the start of an inspection with
// InvalidParameterValue, before anything is changed.
func (i *Inspect) extraParams() (map[string]any, error) {
	return driver.KernelParamsDict(i.o.ExtraKernelParams, !i.o.DisableKernelParameterParsing)
}

// startUnmanaged is upstream _start_unmanaged_inspection: the node is
// power cycled into a one-time network boot, and the ramdisk comes from
// the operator's (i)PXE environment, so nothing is prepared for it. A
// failure leaves nothing to tear down.
func (i *Inspect) startUnmanaged(ctx context.Context, task *driver.Task) (string, error) {
	fail := func(err error) (string, error) {
		return "", errs.New(errs.ClassHardwareInspectionFailure, map[string]any{"error": fmt.Sprintf("unable to start inspection: %s", err)})
	}
	if !task.Node.DisablePowerOff {
		if err := ensurePoweredOff(ctx, task); err != nil {
			return fail(err)
		}
	}
	if err := task.Driver.Management.SetBootDevice(ctx, task, "pxe", false); err != nil {
		return fail(asUpstream(err, "set boot device"))
	}
	if err := powerOnOrReboot(ctx, task); err != nil {
		return fail(err)
	}
	return "inspect wait", nil
}

// ContinueInspection tears down the inspection boot once the data is in
// (upstream clean_up with always_power_off); the empty state tells the
// conductor to finish.
func (i *Inspect) ContinueInspection(ctx context.Context, task *driver.Task, _, _ map[string]any) (string, error) {
	task.Node.InternalInfo().Delete(lookupCacheKey)
	errsList, err := i.tearDown(ctx, task, true)
	if err != nil {
		return "", err
	}
	if len(errsList) > 0 {
		return "", errs.New(errs.ClassHardwareInspectionFailure, map[string]any{"error": fmt.Sprintf("Inspection clean up failed: %s", strings.Join(errsList, ", "))})
	}
	return "", nil
}

// Abort tears down the inspection boot and powers off (unless fast track
// keeps the ramdisk running).
func (i *Inspect) Abort(ctx context.Context, task *driver.Task) error {
	task.Node.InternalInfo().Delete(lookupCacheKey)
	errsList, err := i.tearDown(ctx, task, true)
	if err != nil {
		return err
	}
	if len(errsList) > 0 {
		return errs.New(errs.ClassHardwareInspectionFailure, map[string]any{"error": fmt.Sprintf("Inspection clean up failed: %s", strings.Join(errsList, ", "))})
	}
	return nil
}

// tearDown is upstream tear_down_managed_boot: ramdisk and inspection
// network go; [inspector]/power_off then powers off a node whose boot was
// managed here, or any node when asked to (one that must stay on is
// rebooted out of the ramdisk instead), unless fast track keeps the
// ramdisk running for the next operation. The returned error is a
// driver_info fast_track that cannot be read, which upstream raises as
// it is rather than as a clean-up failure.
func (i *Inspect) tearDown(ctx context.Context, task *driver.Task, alwaysPowerOff bool) ([]string, error) {
	var out []string
	n := task.Node
	managed, _ := n.InternalInfo().Bool(manageBootKey)
	n.InternalInfo().Delete(manageBootKey)
	if managed {
		// An unmanaged inspection prepared neither.
		if err := task.Driver.Boot.CleanUpRamdisk(ctx, task); err != nil {
			out = append(out, fmt.Sprintf("unable to clean up ramdisk boot: %s", err))
		}
		if nw, ok := task.Driver.Network.(driver.InspectionNetworker); ok {
			if err := nw.RemoveInspectionNetwork(ctx, task); err != nil {
				out = append(out, fmt.Sprintf("unable to remove inspection ports: %s", err))
			}
		}
	}
	if !(managed || alwaysPowerOff) || !i.o.PowerOff {
		return out, nil
	}
	fastTrack, err := i.o.FastTrack.EnabledFor(n)
	if err != nil {
		return out, err
	}
	if fastTrack {
		return out, nil
	}
	if n.DisablePowerOff {
		task.Logger().DebugContext(ctx, "rebooting node instead of powering it off because disable_power_off is set", "node", n.UUID)
		if err := rebootNode(ctx, task, "reboot"); err != nil {
			out = append(out, fmt.Sprintf("unable to reboot the node: %s", err))
		}
	} else if err := ensurePoweredOff(ctx, task); err != nil {
		out = append(out, fmt.Sprintf("unable to power off the node: %s", err))
	}
	return out, nil
}
