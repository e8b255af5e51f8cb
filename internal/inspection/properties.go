package inspection

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/openkeel/ironic/internal/pyfmt"
)

// memoryHook is upstream's memory hook: physical_mb is copied as it is,
// even null; only a missing memory section or key is an error.
func memoryHook(_ context.Context, r *hookRun) error {
	n := r.t.Node()
	mem, ok := r.inventory["memory"].(map[string]any)
	v, has := mem["physical_mb"]
	if !ok || !has {
		return invalidInventory(n, fmt.Sprintf("Inventory has missing memory information: %s for node %s.", pyRepr(r.inventory["memory"]), n.UUID))
	}
	setProperty(n, "memory_mb", v)
	return nil
}

// cpusHook is upstream's cpus hook: int() of the count, zero or absent
// only warns; a count int() refuses fails the hook.
func cpusHook(_ context.Context, r *hookRun) error {
	cpu, err := sectionGet(r.inventory, "cpu")
	if err != nil {
		return err
	}
	raw, ok := cpu["count"]
	if !ok {
		raw = 0.0
	}
	count, err := pyIntCall(raw)
	if err != nil {
		return err
	}
	if count == 0 {
		r.log.Warn("No CPU count available for node")
		return nil
	}
	setProperty(r.t.Node(), "cpus", count)
	return nil
}

// sectionGet is upstream's inventory.get(key, {}): absent is empty, and
// anything but a mapping fails the next .get() as in Python.
func sectionGet(m map[string]any, key string) (map[string]any, error) {
	v, ok := m[key]
	if !ok {
		return map[string]any{}, nil
	}
	sec, ok := v.(map[string]any)
	if !ok {
		return nil, pyErr("AttributeError", "'%s' object has no attribute 'get'", pyType(v))
	}
	return sec, nil
}

// pyIntCall is Python's int(v) for a JSON value.
func pyIntCall(v any) (int64, error) {
	switch x := v.(type) {
	case bool:
		if x {
			return 1, nil
		}
		return 0, nil
	case float64:
		return int64(x), nil
	case int:
		return int64(x), nil
	case int64:
		return x, nil
	case string:
		i, ok := pyfmt.Int(x)
		if !ok {
			return 0, pyErr("ValueError", "invalid literal for int() with base 10: %s", pyRepr(x))
		}
		return int64(i), nil
	}
	return 0, pyErr("TypeError", "int() argument must be a string, a bytes-like object or a real number, not '%s'", pyType(v))
}

// jsonInt reads a number a JSON document gave as an integer.
func jsonInt(v any) (int64, bool) {
	switch x := v.(type) {
	case float64:
		if x == float64(int64(x)) {
			return int64(x), true
		}
	case int:
		return int64(x), true
	case int64:
		return x, true
	}
	return 0, false
}

// updatedCapabilities is upstream utils.get_updated_capabilities: the
// "key:value,..." string with the new keys set, existing keys keeping
// their place and new ones appended in order.
func updatedCapabilities(current any, updates []KeyValue) (string, error) {
	var out []KeyValue
	if pyfmt.Truthy(current) {
		s, ok := current.(string)
		if !ok {
			return "", pyErr("AttributeError", "'%s' object has no attribute 'split'", pyType(current))
		}
		for _, item := range strings.Split(s, ",") {
			k, v, ok := strings.Cut(item, ":")
			if !ok {
				return "", pyErr("ValueError", "Invalid capabilities string '%s'.", s)
			}
			out = setKV(out, k, v)
		}
	}
	for _, kv := range updates {
		out = setKV(out, kv.Key, kv.Value)
	}
	parts := make([]string, len(out))
	for i, kv := range out {
		parts[i] = kv.Key + ":" + kv.Value
	}
	return strings.Join(parts, ","), nil
}

// setKV is assignment into a Python dict: an existing key keeps its place.
func setKV(l []KeyValue, k, v string) []KeyValue {
	for i := range l {
		if l[i].Key == k {
			l[i].Value = v
			return l
		}
	}
	return append(l, KeyValue{k, v})
}

func setCapabilities(r *hookRun, updates []KeyValue) error {
	n := r.t.Node()
	caps, err := updatedCapabilities(n.Properties["capabilities"], updates)
	if err != nil {
		return err
	}
	setProperty(n, "capabilities", caps)
	return nil
}

// bootModeHook is upstream's boot-mode hook: the boot_mode capability
// from the mode the ramdisk booted in.
func bootModeHook(_ context.Context, r *hookRun) error {
	boot, err := sectionGet(r.inventory, "boot")
	if err != nil {
		return err
	}
	mode := boot["current_boot_mode"]
	if mode == nil {
		r.log.Warn("No boot mode information available for node")
		return nil
	}
	return setCapabilities(r, []KeyValue{{"boot_mode", pyStr(mode)}})
}

// cpuCapabilitiesHook is upstream's cpu-capabilities hook: a "true"
// capability per configured CPU flag present. The capabilities are
// rewritten even when no flag matches.
func cpuCapabilitiesHook(_ context.Context, r *hookRun) error {
	cpu, err := sectionGet(r.inventory, "cpu")
	if err != nil {
		return err
	}
	flags := cpu["flags"]
	if !pyfmt.Truthy(flags) {
		r.log.Warn("No CPU flags available for node")
		return nil
	}
	present := map[string]bool{}
	switch x := flags.(type) {
	case []any:
		for _, f := range x {
			if _, unhashable := f.([]any); unhashable {
				return pyErr("TypeError", "unhashable type: 'list'")
			}
			if _, unhashable := f.(map[string]any); unhashable {
				return pyErr("TypeError", "unhashable type: 'dict'")
			}
			present[pyStr(f)] = true
		}
	case string:
		// set() of a string is its characters.
		for _, c := range x {
			present[string(c)] = true
		}
	default:
		return pyErr("TypeError", "'%s' object is not iterable", pyType(flags))
	}
	var caps []KeyValue
	for _, kv := range r.o.CPUCapabilities {
		if present[kv.Key] {
			caps = setKV(caps, kv.Value, "true")
		}
	}
	r.log.Info("CPU capabilities for node", "capabilities", caps)
	return setCapabilities(r, caps)
}

// pciAlias is one usable [inspector]/pci_device_alias entry.
type pciAlias struct {
	vendor, product any
	name            string
}

// parsePCIAliases is upstream _parse_pci_alias_entries: entries that are
// not JSON objects with exactly vendor_id, product_id and name are logged
// and skipped; a later entry for the same IDs renames them.
func parsePCIAliases(r *hookRun) []pciAlias {
	var out []pciAlias
	for _, raw := range r.o.PCIDeviceAlias {
		var entry map[string]any
		if err := json.Unmarshal([]byte(raw), &entry); err != nil || len(entry) != 3 || !hasKeys(entry, "vendor_id", "product_id", "name") {
			r.log.Error("Error parsing 'pci_device_alias' option: the entry should contain exactly the \"vendor_id\", \"product_id\" and \"name\" keys", "entry", raw)
			continue
		}
		a := pciAlias{vendor: entry["vendor_id"], product: entry["product_id"], name: pyStr(entry["name"])}
		replaced := false
		for i := range out {
			if pyEqual(out[i].vendor, a.vendor) && pyEqual(out[i].product, a.product) {
				out[i].name, replaced = a.name, true
			}
		}
		if !replaced {
			out = append(out, a)
		}
	}
	return out
}

func hasKeys(m map[string]any, keys ...string) bool {
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			return false
		}
	}
	return true
}

// pciDevicesHook is upstream's pci-devices hook: a capability per
// configured alias counting the matching PCI devices the ramdisk listed.
func pciDevicesHook(_ context.Context, r *hookRun) error {
	aliases := parsePCIAliases(r)
	raw, ok := r.pluginData["pci_devices"]
	if !ok {
		if len(r.o.PCIDeviceAlias) > 0 {
			r.log.Warn("No information about PCI devices was received from the ramdisk.")
		}
		return nil
	}
	devs, err := pyList(raw)
	if err != nil {
		return err
	}
	counts := make([]int, len(aliases))
	var order []int
	for _, d := range devs {
		dev, ok := d.(map[string]any)
		if !ok {
			return pyErr("TypeError", "'%s' object is not subscriptable", pyType(d))
		}
		vendor, ok := dev["vendor_id"]
		if !ok {
			return keyError("vendor_id")
		}
		product, ok := dev["product_id"]
		if !ok {
			return keyError("product_id")
		}
		for i, a := range aliases {
			if pyEqual(a.vendor, vendor) && pyEqual(a.product, product) {
				if counts[i] == 0 {
					order = append(order, i)
				}
				counts[i]++
			}
		}
	}
	var caps []KeyValue
	for _, i := range order {
		caps = setKV(caps, aliases[i].name, fmt.Sprint(counts[i]))
	}
	if len(caps) == 0 {
		return nil
	}
	r.log.Info("Found the following PCI devices", "devices", caps)
	return setCapabilities(r, caps)
}

// pyList is a JSON value iterated as Python would, strings excepted
// since no hook expects one.
func pyList(v any) ([]any, error) {
	l, ok := v.([]any)
	if !ok {
		return nil, pyErr("TypeError", "'%s' object is not iterable", pyType(v))
	}
	return l, nil
}

// pyDicts is pyList whose items must all be dicts; notDict is the error
// Python raises at the first item that is not, which depends on what the
// upstream code does with the item first.
func pyDicts(v any, notDict func(item any) error) ([]map[string]any, error) {
	l, err := pyList(v)
	if err != nil {
		return nil, err
	}
	out := make([]map[string]any, 0, len(l))
	for _, it := range l {
		m, ok := it.(map[string]any)
		if !ok {
			return nil, notDict(it)
		}
		out = append(out, m)
	}
	return out, nil
}

// acceleratorsHook is upstream's accelerators hook: the known devices
// among the PCI devices, each with its bus address, become the
// accelerators property (an empty list when none is known).
func acceleratorsHook(_ context.Context, r *hookRun) error {
	raw := r.pluginData["pci_devices"]
	if !pyfmt.Truthy(raw) {
		r.log.Warn("Unable to process accelerator devices because no PCI device information was received from the ramdisk")
		return nil
	}
	devs, err := pyList(raw)
	if err != nil {
		return err
	}
	accelerators := []any{}
	for _, d := range devs {
		dev, ok := d.(map[string]any)
		if !ok {
			return pyErr("TypeError", "'%s' object is not subscriptable", pyType(d))
		}
		vendor, ok := dev["vendor_id"]
		if !ok {
			return keyError("vendor_id")
		}
		product, ok := dev["product_id"]
		if !ok {
			return keyError("product_id")
		}
		for _, known := range r.accelerators {
			if !pyEqual(known["vendor_id"], vendor) || !pyEqual(known["device_id"], product) {
				continue
			}
			bus, ok := dev["bus"]
			if !ok {
				return keyError("bus")
			}
			acc := make(map[string]any, len(known)+1)
			for k, v := range known {
				acc[k] = v
			}
			acc["pci_address"] = bus
			accelerators = append(accelerators, acc)
			break
		}
	}
	r.log.Info("Accelerator devices found", "count", len(accelerators))
	setProperty(r.t.Node(), "accelerators", accelerators)
	return nil
}

// extraHardwareHook is upstream's extra-hardware hook: the
// hardware-detect records in plugin data "data" ([a, b, c, value] lists)
// become the nested mapping "extra"; "data" goes away.
func extraHardwareHook(_ context.Context, r *hookRun) error {
	data, ok := r.pluginData["data"]
	if !ok {
		r.log.Warn("No extra hardware information was received from the ramdisk")
		return nil
	}
	items, valid := data.([]any)
	for _, it := range items {
		l, ok := it.([]any)
		if !ok || (r.o.ExtraHardwareStrict && len(l) != 4) {
			valid = false
		}
	}
	if !valid {
		r.log.Warn("Extra hardware data was not in a recognised format, and will not be forwarded to inspection rules")
		if r.o.ExtraHardwareStrict {
			delete(r.pluginData, "data")
		}
		return nil
	}
	converted := map[string]any{}
	for _, it := range items {
		item := it.([]any)
		if len(item) == 0 {
			continue
		}
		if err := addExtraItem(converted, item); err != nil {
			r.log.Warn("Ignoring invalid extra data item", "item", pyRepr(item), "error", err)
		}
	}
	r.pluginData["extra"] = converted
	delete(r.pluginData, "data")
	return nil
}

// addExtraItem stores one record as upstream does, step by step: a record
// too short still leaves the levels it named.
func addExtraItem(converted map[string]any, item []any) error {
	k0, err := jsonKey(item[0])
	if err != nil {
		return err
	}
	level0, _ := converted[k0].(map[string]any)
	if level0 == nil {
		level0 = map[string]any{}
		converted[k0] = level0
	}
	if len(item) < 2 {
		return pyErr("IndexError", "list index out of range")
	}
	k1, err := jsonKey(item[1])
	if err != nil {
		return err
	}
	level1, _ := level0[k1].(map[string]any)
	if level1 == nil {
		level1 = map[string]any{}
		level0[k1] = level1
	}
	if len(item) < 4 {
		return pyErr("IndexError", "list index out of range")
	}
	if i, err := pyIntCall(item[3]); err == nil {
		item[3] = i
	}
	k2, err := jsonKey(item[2])
	if err != nil {
		return err
	}
	level1[k2] = item[3]
	return nil
}

// jsonKey is the key a Python dict key becomes in JSON; lists and
// mappings cannot be keys.
func jsonKey(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case nil:
		return "null", nil
	case bool:
		if x {
			return "true", nil
		}
		return "false", nil
	case []any, map[string]any:
		return "", pyErr("TypeError", "unhashable type: '%s'", pyType(v))
	}
	return pyRepr(v), nil
}

// raidDeviceHook is upstream's raid-device hook: on the inspection after
// a RAID volume was built, the one disk serial that the stored inventory
// lacks becomes the root_device hint.
func raidDeviceHook(ctx context.Context, r *hookRun) error {
	n := r.t.Node()
	if _, ok := n.Properties["root_device"]; ok {
		r.log.Info("Root device is already known for node")
		return nil
	}
	current, err := diskSerials(r.inventory)
	if err != nil {
		return err
	}
	if len(current) == 0 {
		r.log.Warn("No block device information was received from the ramdisk")
		return nil
	}
	stored, found, err := r.t.StoredInventory(ctx)
	if err != nil {
		return err
	}
	if !found {
		r.log.Debug("Inventory for node not found in the database, raid device hook exiting")
		return nil
	}
	if stored == nil {
		return pyErr("AttributeError", "'NoneType' object has no attribute 'get'")
	}
	previous, err := diskSerials(stored)
	if err != nil {
		return err
	}
	if previous == nil {
		return pyErr("TypeError", "argument of type 'NoneType' is not iterable")
	}
	var added []any
	for _, s := range current {
		known := false
		for _, p := range previous {
			if pyEqual(s, p) {
				known = true
				break
			}
		}
		if !known {
			added = append(added, s)
		}
	}
	switch len(added) {
	case 0:
		r.log.Warn("No new devices were found for node")
		return nil
	case 1:
		setProperty(n, "root_device", map[string]any{"serial": added[0]})
		return nil
	}
	r.log.Warn("Root device cannot be identified because multiple new devices were found for node")
	return nil
}

// diskSerials is upstream _get_serials: nil when there are no disks, else
// the disks' non-empty serials.
func diskSerials(inventory map[string]any) ([]any, error) {
	if !pyfmt.Truthy(inventory["disks"]) {
		return nil, nil
	}
	disks, err := pyList(inventory["disks"])
	if err != nil {
		return nil, err
	}
	out := []any{}
	for _, d := range disks {
		disk, ok := d.(map[string]any)
		if !ok {
			return nil, pyErr("AttributeError", "'%s' object has no attribute 'get'", pyType(d))
		}
		if pyfmt.Truthy(disk["serial"]) {
			out = append(out, disk["serial"])
		}
	}
	return out, nil
}
