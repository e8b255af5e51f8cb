package inspection

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"regexp"
	"sort"
	"strings"

	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/pyfmt"
)

// HookOptions are the [inspector] options the hooks read.
type HookOptions struct {
	// AddPorts is [inspector]/add_ports: all, active, pxe or disabled.
	AddPorts string
	// KeepPorts is [inspector]/keep_ports: all, present or added.
	KeepPorts string
	// UpdatePXEEnabled is [inspector]/update_pxe_enabled.
	UpdatePXEEnabled bool
	// DiskPartitioningSpacing is [inspector]/disk_partitioning_spacing.
	DiskPartitioningSpacing bool
	// CPUCapabilities is [inspector]/cpu_capabilities, CPU flag to
	// capability name, in the order the capabilities are added.
	CPUCapabilities []KeyValue
	// ExtraHardwareStrict is [inspector]/extra_hardware_strict.
	ExtraHardwareStrict bool
	// PCIDeviceAlias is [inspector]/pci_device_alias: JSON objects with
	// vendor_id, product_id and name.
	PCIDeviceAlias []string
	// PhysicalNetworkCIDRMap is [inspector]/physical_network_cidr_map:
	// "CIDR:physnet" items.
	PhysicalNetworkCIDRMap []string
	// KnownAccelerators is [inspector]/known_accelerators; empty means
	// the list shipped with the product.
	KnownAccelerators string
	// Log receives the hooks' warnings; nil means slog.Default().
	Log *slog.Logger
}

// KeyValue is one item of an ordered mapping.
type KeyValue struct{ Key, Value string }

// defaultCPUCapabilities is upstream's default [inspector]/cpu_capabilities
// in its declaration order, which is the order capabilities are added in.
var defaultCPUCapabilities = []KeyValue{
	{"vmx", "cpu_vt"}, {"svm", "cpu_vt"}, {"aes", "cpu_aes"},
	{"pse", "cpu_hugepages"}, {"pdpe1gb", "cpu_hugepages_1g"}, {"smx", "cpu_txt"},
}

// DefaultHookOptions are upstream's defaults.
func DefaultHookOptions() HookOptions {
	return HookOptions{
		AddPorts: "pxe", KeepPorts: "all", UpdatePXEEnabled: true, DiskPartitioningSpacing: true,
		CPUCapabilities: append([]KeyValue(nil), defaultCPUCapabilities...),
	}
}

// HookOptionsFromConfig reads the [inspector] options. The configuration
// keeps no order for a dict option, so a cpu_capabilities other than
// upstream's default is applied in flag order. known_accelerators at
// upstream's default (a file of the Python package) means the shipped
// list.
func HookOptionsFromConfig(c *config.Config) HookOptions {
	o := HookOptions{
		AddPorts:                c.StringOf(config.InspectorAddPorts),
		KeepPorts:               c.StringOf(config.InspectorKeepPorts),
		UpdatePXEEnabled:        c.BoolOf(config.InspectorUpdatePXEEnabled),
		DiskPartitioningSpacing: c.BoolOf(config.InspectorDiskPartitioningSpacing),
		ExtraHardwareStrict:     c.BoolOf(config.InspectorExtraHardwareStrict),
		PCIDeviceAlias:          nonEmpty(c.ListOf(config.InspectorPciDeviceAlias)),
		PhysicalNetworkCIDRMap:  nonEmpty(c.ListOf(config.InspectorPhysicalNetworkCidrMap)),
		CPUCapabilities:         append([]KeyValue(nil), defaultCPUCapabilities...),
	}
	if m := c.DictOf(config.InspectorCPUCapabilities); !isDefaultCPUCapabilities(m) {
		o.CPUCapabilities = make([]KeyValue, 0, len(m))
		for k, v := range m {
			o.CPUCapabilities = append(o.CPUCapabilities, KeyValue{k, v})
		}
		sort.Slice(o.CPUCapabilities, func(i, j int) bool { return o.CPUCapabilities[i].Key < o.CPUCapabilities[j].Key })
	}
	shipped := c.StringOf(config.DefaultPybasedir) + "/drivers/modules/inspector/hooks/known_accelerators.yaml"
	if p := c.StringOf(config.InspectorKnownAccelerators); p != shipped {
		o.KnownAccelerators = p
	}
	return o
}

func isDefaultCPUCapabilities(m map[string]string) bool {
	if len(m) != len(defaultCPUCapabilities) {
		return false
	}
	for _, kv := range defaultCPUCapabilities {
		if m[kv.Key] != kv.Value {
			return false
		}
	}
	return true
}

func nonEmpty(l []string) []string {
	if len(l) == 0 {
		return nil
	}
	return l
}

// hook is upstream's InspectionHook: preprocess failures are collected
// over all hooks, run failures stop at the first.
type hook struct {
	deps       []string
	preprocess func(ctx context.Context, h *hookRun) error
	run        func(ctx context.Context, h *hookRun) error
}

type hookRun struct {
	t            Target
	o            HookOptions
	log          *slog.Logger
	inventory    map[string]any
	pluginData   map[string]any
	accelerators []map[string]any
}

// hooks are upstream's ironic.inspection.hooks entry points.
var hooks = map[string]hook{
	"ramdisk-error":         {preprocess: ramdiskError},
	"validate-interfaces":   {preprocess: validateInterfacesHook},
	"ports":                 {deps: []string{"validate-interfaces"}, run: portsHook},
	"architecture":          {run: architectureHook},
	"accelerators":          {run: acceleratorsHook},
	"boot-mode":             {run: bootModeHook},
	"cpu-capabilities":      {run: cpuCapabilitiesHook},
	"cpus":                  {run: cpusHook},
	"extra-hardware":        {run: extraHardwareHook},
	"memory":                {run: memoryHook},
	"pci-devices":           {run: pciDevicesHook},
	"physical-network":      {deps: []string{"validate-interfaces"}, run: physicalNetworkHook},
	"raid-device":           {run: raidDeviceHook},
	"root-device":           {run: rootDeviceHook},
	"local-link-connection": {deps: []string{"validate-interfaces"}, run: localLinkConnectionHook},
	"parse-lldp":            {run: parseLLDPHook},
}

// HookNames lists the hooks this package implements.
func HookNames() []string {
	out := make([]string, 0, len(hooks))
	for n := range hooks {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// ParseHooks splits [inspector]/hooks, expanding "$default_hooks", and
// checks every name exists and comes after the hooks it depends on
// (upstream validate_inspection_hooks: a hook whose dependencies are not
// met does not count as enabled for the hooks after it).
func ParseHooks(hooksOpt, defaultHooks string) ([]string, error) {
	var names, unknown []string
	for _, n := range strings.Split(strings.ReplaceAll(hooksOpt, "$default_hooks", defaultHooks), ",") {
		if n = strings.TrimSpace(n); n == "" {
			continue
		}
		names = append(names, n)
		if _, ok := hooks[n]; !ok {
			unknown = append(unknown, n)
		}
	}
	if len(unknown) > 0 {
		return nil, errs.New(errs.ClassHardwareInspectionFailure, map[string]any{"error": fmt.Sprintf(
			"The following hook(s) are missing or failed to load: %s", strings.Join(unknown, ", "))})
	}
	valid := map[string]bool{}
	var problems []string
	for _, n := range names {
		var missing []string
		for _, d := range hooks[n].deps {
			if !valid[d] {
				missing = append(missing, d)
			}
		}
		if len(missing) > 0 {
			problems = append(problems, fmt.Sprintf("Hook %s requires these missing hooks to be enabled before it: %s", n, strings.Join(missing, ", ")))
			continue
		}
		valid[n] = true
	}
	if len(problems) > 0 {
		return nil, errs.New(errs.ClassHardwareInspectionFailure, map[string]any{"error": fmt.Sprintf(
			"Some hooks failed to load due to dependency problems: %s", strings.Join(problems, ", "))})
	}
	return names, nil
}

// RunHooks is upstream run_inspection_hooks: every preprocess, failures
// joined, then every hook in order. The accelerators hook's device list
// is loaded first, as upstream loads it with the hook.
func RunHooks(ctx context.Context, t Target, names []string, o HookOptions, inventory, pluginData map[string]any) error {
	r := &hookRun{t: t, o: o, log: o.Log, inventory: inventory, pluginData: pluginData}
	if r.log == nil {
		r.log = slog.Default()
	}
	r.log = r.log.With("node", t.Node().UUID)
	for _, n := range names {
		if n != "accelerators" {
			continue
		}
		devs, err := loadKnownAccelerators(o.KnownAccelerators)
		if err != nil {
			return errs.New(errs.ClassHardwareInspectionFailure, map[string]any{"error": fmt.Sprintf(
				"The following hook(s) are missing or failed to load: accelerators (%s)", err)})
		}
		r.accelerators = devs
	}
	var failures []string
	for _, n := range names {
		h := hooks[n]
		if h.preprocess == nil {
			continue
		}
		err := h.preprocess(ctx, r)
		switch {
		case err == nil:
		case errs.Is(err, errs.ClassHardwareInspectionFailure):
			failures = append(failures, fmt.Sprintf("Error in preprocess hook %s: %s", n, err))
		default:
			failures = append(failures, fmt.Sprintf("Unexpected exception %s during preprocess hook %s: %s", errClass(err), n, err))
		}
	}
	if len(failures) > 0 {
		return errs.New(errs.ClassHardwareInspectionFailure, map[string]any{"error": fmt.Sprintf(
			"The following failures happened while running preprocess hooks for node %s:\n%s", t.Node().UUID, strings.Join(failures, "\n"))})
	}
	for _, n := range names {
		h := hooks[n]
		if h.run == nil {
			continue
		}
		if err := h.run(ctx, r); err != nil {
			if errs.Is(err, errs.ClassHardwareInspectionFailure) {
				return err
			}
			return errs.New(errs.ClassHardwareInspectionFailure, map[string]any{"error": fmt.Sprintf(
				"Unexpected exception %s during processing for node: %s. Error: %s", errClass(err), t.Node().UUID, err)})
		}
	}
	return nil
}

// pyExc is a Python exception upstream's hooks let escape, which the
// caller reports with its class name.
type pyExc struct{ class, msg string }

func (e *pyExc) Error() string { return e.msg }

func pyErr(class, format string, args ...any) error {
	return &pyExc{class: class, msg: fmt.Sprintf(format, args...)}
}

// keyError is Python's KeyError, whose str() is the key's repr.
func keyError(key string) error { return pyErr("KeyError", "%s", pyRepr(key)) }

func errClass(err error) string {
	if e, ok := errs.As(err); ok {
		return string(e.Class)
	}
	var p *pyExc
	if errors.As(err, &p) {
		return p.class
	}
	return fmt.Sprintf("%T", err)
}

func invalidInventory(n *model.Node, reason string) error {
	return errs.New(errs.ClassInvalidNodeInventory, map[string]any{"node": n.UUID, "reason": reason})
}

func ramdiskError(_ context.Context, r *hookRun) error {
	if e := r.pluginData["error"]; pyfmt.Truthy(e) {
		return errs.New(errs.ClassHardwareInspectionFailure, map[string]any{"error": "Ramdisk reported error: " + pyStr(e)})
	}
	return nil
}

// validMAC is oslo netutils.is_valid_mac: six colon-separated hex pairs.
var validMAC = regexp.MustCompile(`^[0-9a-f]{2}(:[0-9a-f]{2}){5}$`)

// ValidMAC is oslo netutils.is_valid_mac of a lower-cased address, for
// the out-of-band inspections that build an inventory themselves.
func ValidMAC(mac string) bool { return validMAC.MatchString(mac) }

// pxeMAC is upstream get_pxe_mac: boot/pxe_interface, pxelinux's
// "01-aa-bb-..." form turned into a MAC, lower-cased.
func pxeMAC(inventory map[string]any) string {
	boot, _ := inventory["boot"].(map[string]any)
	mac, _ := boot["pxe_interface"].(string)
	if strings.Contains(mac, "-") {
		_, rest, _ := strings.Cut(mac, "-")
		mac = strings.ReplaceAll(rest, "-", ":")
	}
	return strings.ToLower(mac)
}

// validateInterfacesHook is upstream's validate-interfaces preprocess:
// plugin data all_interfaces (named interfaces with a valid MAC, marked
// pxe_enabled, IPv6 address without its scope), valid_interfaces (those
// add_ports keeps, loopback never) and macs, in inventory order. MACs
// keep the inventory's case, as upstream keeps them.
func validateInterfacesHook(_ context.Context, r *hookRun) error {
	n := r.t.Node()
	raw, ok := r.inventory["interfaces"]
	if !ok {
		return invalidInventory(n, "no interfaces present in inventory")
	}
	list, err := pyList(raw)
	if err != nil {
		return err
	}
	pxe := pxeMAC(r.inventory)
	all := map[string]any{}
	var order []string
	for _, it := range list {
		iface, ok := it.(map[string]any)
		if !ok {
			return pyErr("AttributeError", "'%s' object has no attribute 'get'", pyType(it))
		}
		name, mac := iface["name"], iface["mac_address"]
		if !pyfmt.Truthy(name) || !pyfmt.Truthy(mac) {
			continue
		}
		macStr, ok := mac.(string)
		if !ok || !validMAC.MatchString(strings.ToLower(macStr)) {
			r.log.Warn("MAC address of interface is not valid, skipping", "interface", pyStr(name))
			continue
		}
		var v6 any
		if s, _ := iface["ipv6_address"].(string); s != "" {
			s, _, _ = strings.Cut(s, "%")
			v6 = s
		} else if iface["ipv6_address"] != nil {
			v6 = iface["ipv6_address"]
		}
		out := make(map[string]any, len(iface)+2)
		for k, v := range iface {
			out[k] = v
		}
		out["pxe_enabled"] = strings.ToLower(macStr) == pxe
		out["ipv6_address"] = v6
		key := pyStr(name)
		if _, seen := all[key]; !seen {
			order = append(order, key)
		}
		all[key] = out
	}
	if len(all) == 0 {
		return invalidInventory(n, "no valid network interfaces")
	}
	if pxe == "" && r.o.AddPorts == "pxe" {
		r.log.Warn("No boot interface provided in the inventory, will add all ports with IP addresses")
	}
	valid := map[string]any{}
	macs := []any{}
	for _, name := range order {
		iface := all[name].(map[string]any)
		ip := iface["ipv4_address"]
		if !pyfmt.Truthy(ip) {
			ip = iface["ipv6_address"]
		}
		if name == "lo" || (pyfmt.Truthy(ip) && isLoopback(pyStr(ip))) {
			continue
		}
		if r.o.AddPorts == "pxe" && pxe != "" && iface["pxe_enabled"] != true {
			continue
		}
		if r.o.AddPorts == "active" && !pyfmt.Truthy(ip) {
			continue
		}
		cp := make(map[string]any, len(iface))
		for k, v := range iface {
			cp[k] = v
		}
		valid[name] = cp
		macs = append(macs, iface["mac_address"])
	}
	if len(valid) == 0 {
		return invalidInventory(n, fmt.Sprintf("no network interfaces match the configuration (add_ports set to %q)", r.o.AddPorts))
	}
	r.pluginData["all_interfaces"] = all
	r.pluginData["valid_interfaces"] = valid
	r.pluginData["macs"] = macs
	return nil
}

// isLoopback is upstream utils.is_loopback.
func isLoopback(s string) bool {
	if a, err := netip.ParseAddr(s); err == nil {
		return a.IsLoopback()
	}
	return s == "localhost" || s == "localhost.localdomain"
}

// ifaceMAC is a validated interface's MAC, lower-cased.
func ifaceMAC(iface map[string]any) string {
	s, _ := iface["mac_address"].(string)
	return strings.ToLower(s)
}

func sortedIfaces(m map[string]any) []map[string]any {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]map[string]any, 0, len(names))
	for _, n := range names {
		if iface, ok := m[n].(map[string]any); ok {
			out = append(out, iface)
		}
	}
	return out
}

// portsHook is upstream's ports hook: add the valid interfaces as ports,
// then delete, or update pxe_enabled and client-id of, the node's ports
// per keep_ports and update_pxe_enabled.
func portsHook(ctx context.Context, r *hookRun) error {
	n := r.t.Node()
	all, _ := r.pluginData["all_interfaces"].(map[string]any)
	valid, _ := r.pluginData["valid_interfaces"].(map[string]any)
	if r.o.AddPorts != "disabled" {
		for _, iface := range sortedIfaces(valid) {
			// The port's address field lower-cases the MAC, as upstream's
			// MACAddressField does.
			mac := ifaceMAC(iface)
			pxe, _ := iface["pxe_enabled"].(bool)
			extra := map[string]any{}
			if cid, _ := iface["client_id"].(string); cid != "" {
				extra["client-id"] = cid
			}
			id := n.ID
			p := &model.Port{Address: &mac, NodeID: &id, PXEEnabled: &pxe, Extra: extra}
			if err := r.t.CreatePort(ctx, p); err != nil && !errs.Is(err, errs.ClassMACAlreadyExists) {
				return fmt.Errorf("create port %s: %w", mac, err)
			}
		}
	}
	var expected map[string]bool
	switch r.o.KeepPorts {
	case "present":
		expected = map[string]bool{}
		for _, iface := range sortedIfaces(all) {
			expected[ifaceMAC(iface)] = true
		}
	case "added":
		expected = map[string]bool{}
		macs, _ := r.pluginData["macs"].([]any)
		for _, m := range macs {
			if s, ok := m.(string); ok {
				expected[strings.ToLower(s)] = true
			}
		}
	}
	pxeMACs := map[string]bool{}
	clientIDs := map[string]string{}
	for _, iface := range sortedIfaces(all) {
		mac := ifaceMAC(iface)
		if iface["pxe_enabled"] == true {
			pxeMACs[mac] = true
		}
		clientIDs[mac], _ = iface["client_id"].(string)
	}
	ports, err := r.t.Ports(ctx)
	if err != nil {
		return fmt.Errorf("list ports: %w", err)
	}
	for _, p := range ports {
		addr := ""
		if p.Address != nil {
			addr = strings.ToLower(*p.Address)
		}
		if len(expected) > 0 && !expected[addr] {
			if err := r.t.DeletePort(ctx, p); err != nil {
				return fmt.Errorf("delete port %s: %w", p.UUID, err)
			}
			continue
		}
		changed := false
		if r.o.UpdatePXEEnabled {
			want := pxeMACs[addr]
			if p.PXEEnabled == nil || *p.PXEEnabled != want {
				p.PXEEnabled = &want
				changed = true
			}
		}
		if cid := clientIDs[addr]; cid != "" {
			if cur, _ := p.Extra["client-id"].(string); cur != cid {
				if p.Extra == nil {
					p.Extra = map[string]any{}
				}
				p.Extra["client-id"] = cid
				changed = true
			}
		}
		if changed {
			if err := r.t.UpdatePort(ctx, p); err != nil {
				return fmt.Errorf("update port %s: %w", p.UUID, err)
			}
		}
	}
	return nil
}

func setProperty(n *model.Node, key string, v any) {
	if n.Properties == nil {
		n.Properties = map[string]any{}
	}
	n.Properties[key] = v
}

func architectureHook(_ context.Context, r *hookRun) error {
	n := r.t.Node()
	cpu, ok := r.inventory["cpu"].(map[string]any)
	arch, has := cpu["architecture"]
	if !ok || !has {
		return invalidInventory(n, fmt.Sprintf("Inventory has malformed or missing CPU architecture information: %s for node %s.", pyRepr(r.inventory["cpu"]), n.UUID))
	}
	setProperty(n, "cpu_arch", arch)
	return nil
}
