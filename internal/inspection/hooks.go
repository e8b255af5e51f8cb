package inspection

import (
	"context"
	"fmt"
	"net"
	"sort"
	"strings"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
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
}

// DefaultHookOptions are upstream's defaults.
func DefaultHookOptions() HookOptions {
	return HookOptions{AddPorts: "pxe", KeepPorts: "all", UpdatePXEEnabled: true, DiskPartitioningSpacing: true}
}

// hook is upstream's InspectionHook: preprocess failures are collected
// over all hooks, run failures stop at the first.
type hook struct {
	deps       []string
	preprocess func(ctx context.Context, h *hookRun) error
	run        func(ctx context.Context, h *hookRun) error
}

type hookRun struct {
	t          Target
	o          HookOptions
	inventory  map[string]any
	pluginData map[string]any
}

var hooks = map[string]hook{
	"ramdisk-error":       {preprocess: ramdiskError},
	"validate-interfaces": {preprocess: validateInterfacesHook},
	"ports":               {deps: []string{"validate-interfaces"}, run: portsHook},
	"architecture":        {run: architectureHook},
	"memory":              {run: memoryHook},
	"cpus":                {run: cpusHook},
	"root-device":         {run: rootDeviceHook},
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
// (upstream validate_inspection_hooks).
func ParseHooks(hooksOpt, defaultHooks string) ([]string, error) {
	var names []string
	for _, n := range strings.Split(strings.ReplaceAll(hooksOpt, "$default_hooks", defaultHooks), ",") {
		if n = strings.TrimSpace(n); n != "" {
			names = append(names, n)
		}
	}
	seen := map[string]bool{}
	var missing []string
	for _, n := range names {
		h, ok := hooks[n]
		if !ok {
			return nil, errs.NewMessage("HardwareInspectionFailure", fmt.Sprintf("Failed to inspect hardware. Reason: the following inspection hooks are not available: %s", n))
		}
		for _, d := range h.deps {
			if !seen[d] {
				missing = append(missing, fmt.Sprintf("%s requires %s", n, d))
			}
		}
		seen[n] = true
	}
	if len(missing) > 0 {
		return nil, errs.NewMessage("HardwareInspectionFailure", fmt.Sprintf("Failed to inspect hardware. Reason: the following hook dependencies are not met: %s", strings.Join(missing, ", ")))
	}
	return names, nil
}

// RunHooks is upstream run_inspection_hooks: every preprocess, failures
// joined, then every hook in order.
func RunHooks(ctx context.Context, t Target, names []string, o HookOptions, inventory, pluginData map[string]any) error {
	r := &hookRun{t: t, o: o, inventory: inventory, pluginData: pluginData}
	var failures []string
	for _, n := range names {
		h := hooks[n]
		if h.preprocess == nil {
			continue
		}
		if err := h.preprocess(ctx, r); err != nil {
			failures = append(failures, fmt.Sprintf("Error in preprocess hook %s: %s", n, err))
		}
	}
	if len(failures) > 0 {
		return errs.New("HardwareInspectionFailure", map[string]any{"error": fmt.Sprintf(
			"The following failures happened while running preprocess hooks for node %s:\n%s", t.Node().UUID, strings.Join(failures, "\n"))})
	}
	for _, n := range names {
		h := hooks[n]
		if h.run == nil {
			continue
		}
		if err := h.run(ctx, r); err != nil {
			if errs.Is(err, "HardwareInspectionFailure") {
				return err
			}
			return errs.New("HardwareInspectionFailure", map[string]any{"error": fmt.Sprintf(
				"Unexpected exception %s during processing for node: %s. Error: %s", errClass(err), t.Node().UUID, err)})
		}
	}
	return nil
}

func errClass(err error) string {
	if e, ok := errs.As(err); ok {
		return e.Class
	}
	return fmt.Sprintf("%T", err)
}

func invalidInventory(n *model.Node, reason string) error {
	return errs.New("InvalidNodeInventory", map[string]any{"node": n.UUID, "reason": reason})
}

func ramdiskError(_ context.Context, r *hookRun) error {
	if e := r.pluginData["error"]; e != nil && e != "" && e != false {
		return errs.New("HardwareInspectionFailure", map[string]any{"error": fmt.Sprintf("Ramdisk reported error: %v", e)})
	}
	return nil
}

// normalizeMAC lower-cases a MAC, refusing anything but 6 octets.
func normalizeMAC(s string) (string, bool) {
	hw, err := net.ParseMAC(s)
	if err != nil || len(hw) != 6 {
		return "", false
	}
	return hw.String(), true
}

func pxeMAC(inventory map[string]any) string {
	boot, _ := inventory["boot"].(map[string]any)
	mac, _ := boot["pxe_interface"].(string)
	if mac == "" {
		return ""
	}
	if strings.Contains(mac, "-") {
		// pxelinux form 01-aa-bb-cc-dd-ee-ff
		_, rest, _ := strings.Cut(mac, "-")
		mac = strings.ReplaceAll(rest, "-", ":")
	}
	return strings.ToLower(mac)
}

func validateInterfacesHook(_ context.Context, r *hookRun) error {
	n := r.t.Node()
	raw, ok := r.inventory["interfaces"].([]any)
	if !ok {
		return invalidInventory(n, "no interfaces present in inventory")
	}
	pxe := pxeMAC(r.inventory)
	all := map[string]any{}
	for _, it := range raw {
		iface, _ := it.(map[string]any)
		name, _ := iface["name"].(string)
		mac, _ := iface["mac_address"].(string)
		if name == "" || mac == "" {
			continue
		}
		mac, ok := normalizeMAC(mac)
		if !ok {
			continue
		}
		v6, _ := iface["ipv6_address"].(string)
		v6, _, _ = strings.Cut(v6, "%")
		out := make(map[string]any, len(iface)+2)
		for k, v := range iface {
			out[k] = v
		}
		out["mac_address"] = mac
		out["pxe_enabled"] = mac == pxe
		if iface["ipv6_address"] != nil {
			out["ipv6_address"] = v6
		}
		all[name] = out
	}
	if len(all) == 0 {
		return invalidInventory(n, "no valid network interfaces")
	}
	valid := map[string]any{}
	var macs []any
	names := make([]string, 0, len(all))
	for name := range all {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		iface := all[name].(map[string]any)
		ip := ifaceIP(iface)
		if name == "lo" || (ip != nil && ip.IsLoopback()) {
			continue
		}
		if r.o.AddPorts == "pxe" && pxe != "" && iface["pxe_enabled"] != true {
			continue
		}
		if r.o.AddPorts == "active" && ip == nil {
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

func ifaceIP(iface map[string]any) net.IP {
	for _, k := range []string{"ipv4_address", "ipv6_address"} {
		if s, _ := iface[k].(string); s != "" {
			return net.ParseIP(s)
		}
	}
	return nil
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
			mac, _ := iface["mac_address"].(string)
			pxe, _ := iface["pxe_enabled"].(bool)
			extra := map[string]any{}
			if cid, _ := iface["client_id"].(string); cid != "" {
				extra["client-id"] = cid
			}
			id := n.ID
			p := &model.Port{Address: &mac, NodeID: &id, PXEEnabled: &pxe, Extra: extra}
			if err := r.t.CreatePort(ctx, p); err != nil && !errs.Is(err, "MACAlreadyExists") {
				return fmt.Errorf("create port %s: %w", mac, err)
			}
		}
	}
	var expected map[string]bool
	switch r.o.KeepPorts {
	case "present":
		expected = map[string]bool{}
		for _, iface := range sortedIfaces(all) {
			expected[iface["mac_address"].(string)] = true
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
		mac := iface["mac_address"].(string)
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
	cpu, _ := r.inventory["cpu"].(map[string]any)
	arch, ok := cpu["architecture"].(string)
	if !ok {
		return invalidInventory(n, fmt.Sprintf("Inventory has malformed or missing CPU architecture information: %s for node %s.", pyRepr(r.inventory["cpu"]), n.UUID))
	}
	setProperty(n, "cpu_arch", arch)
	return nil
}

func memoryHook(_ context.Context, r *hookRun) error {
	n := r.t.Node()
	mem, _ := r.inventory["memory"].(map[string]any)
	v, ok := mem["physical_mb"]
	if !ok || v == nil {
		return invalidInventory(n, fmt.Sprintf("Inventory has missing memory information: %s for node %s.", pyRepr(r.inventory["memory"]), n.UUID))
	}
	setProperty(n, "memory_mb", v)
	return nil
}

func cpusHook(_ context.Context, r *hookRun) error {
	cpu, _ := r.inventory["cpu"].(map[string]any)
	count, ok := toInt(cpu["count"])
	if !ok || count == 0 {
		return nil
	}
	setProperty(r.t.Node(), "cpus", count)
	return nil
}

// rootDeviceHook sets local_gb from the root disk the ramdisk reported
// (IPA sends it as plugin data root_disk), less a GiB for partitioning
// when disk_partitioning_spacing; no root disk means a diskless node.
// Root device hints are matched on exact name, serial, wwn, model,
// vendor and size (GiB) only.
func rootDeviceHook(_ context.Context, r *hookRun) error {
	n := r.t.Node()
	if hints, ok := n.Properties["root_device"].(map[string]any); ok && len(hints) > 0 {
		disks, _ := r.inventory["disks"].([]any)
		var found map[string]any
		for _, d := range disks {
			disk, _ := d.(map[string]any)
			if disk != nil && diskMatches(disk, hints) {
				found = disk
				break
			}
		}
		if found == nil {
			return errs.New("HardwareInspectionFailure", map[string]any{"error": fmt.Sprintf("No disks satisfied root device hints for node %s", n.UUID)})
		}
		r.pluginData["root_disk"] = found
	}
	localGB := int64(0)
	if disk, ok := r.pluginData["root_disk"].(map[string]any); ok {
		size, _ := toInt(disk["size"])
		localGB = size / (1 << 30)
		if localGB > 0 && r.o.DiskPartitioningSpacing {
			localGB--
		}
	}
	r.pluginData["local_gb"] = localGB
	setProperty(n, "local_gb", localGB)
	return nil
}

func diskMatches(disk, hints map[string]any) bool {
	for k, want := range hints {
		switch k {
		case "size":
			w, ok1 := toInt(want)
			s, ok2 := toInt(disk["size"])
			if !ok1 || !ok2 || s/(1<<30) != w {
				return false
			}
		default:
			got, _ := disk[k].(string)
			if ws, ok := want.(string); !ok || !strings.EqualFold(ws, got) {
				return false
			}
		}
	}
	return true
}

func toInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int:
		return int64(x), true
	case int64:
		return x, true
	case float64:
		return int64(x), true
	case string:
		var i int64
		if _, err := fmt.Sscan(x, &i); err == nil {
			return i, true
		}
	}
	return 0, false
}
