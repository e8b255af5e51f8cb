package redfish

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/stmcginnis/gofish/common"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/states"
)

// cpuArchMap is upstream CPU_ARCH_MAP: Redfish ProcessorArchitecture to
// the node's cpu_arch.
var cpuArchMap = map[string]string{"x86": "x86_64", "IA-64": "ia64", "ARM": "arm", "MIPS": "mips", "OEM": "oem"}

// essentialProperties are upstream InspectInterface.ESSENTIAL_PROPERTIES.
var essentialProperties = []string{"cpu_arch", "cpus", "local_gb", "memory_mb"}

const gib = int64(1) << 30

// Inspect is upstream RedfishInspect: out-of-band inspection from the
// system's processors, memory, storage, NICs and boot mode.
type Inspect struct {
	driver.NoSteps
	core *core
}

var _ driver.InspectInterface = (*Inspect)(nil)

// Properties are the common redfish driver_info properties.
func (i *Inspect) Properties() map[string]string { return Properties() }

// Validate checks driver_info.
func (i *Inspect) Validate(_ context.Context, task *driver.Task) error {
	_, err := ParseDriverInfo(task.Node, &i.core.opts)
	return err
}

// Inspection is what an out-of-band inspection found: the node properties
// it set, the MACs of the enabled NICs (the ports to create) and an
// inventory in the shape the agent reports.
type Inspection struct {
	Properties map[string]any
	MACs       []string
	Inventory  map[string]any
}

// InspectHardware is upstream inspect_hardware: it updates the node's
// properties (cpus, cpu_arch, memory_mb, local_gb, the boot_mode
// capability) and answers manageable. Creating the ports and storing the
// inventory is the conductor's part, through DiscoverHardware, as the
// driver layer has no store.
func (i *Inspect) InspectHardware(ctx context.Context, task *driver.Task) (string, error) {
	res, err := i.DiscoverHardware(ctx, task)
	if err != nil {
		return "", err
	}
	task.Node.Properties = res.Properties
	task.Logger().Debug("node properties updated by inspection", "node", task.Node.UUID, "properties", res.Properties)
	return states.Manageable, nil
}

// DiscoverHardware reads the system and returns what inspection finds,
// without changing the node. It fails as upstream does when an essential
// property cannot be found.
func (i *Inspect) DiscoverHardware(ctx context.Context, task *driver.Task) (*Inspection, error) {
	sys, err := i.core.getSystem(ctx, task)
	if err != nil {
		return nil, err
	}
	log := task.Logger()
	n := task.Node
	props := map[string]any{}
	for k, v := range n.Properties {
		props[k] = v
	}
	inv := map[string]any{
		"system_vendor": map[string]any{"manufacturer": sys.Manufacturer, "product_name": sys.Model,
			"serial_number": sys.SerialNumber},
	}
	memGiB := sys.MemorySummary.TotalSystemMemoryGiB
	if memGiB > 0 {
		props["memory_mb"] = strconv.FormatInt(int64(memGiB)*1024, 10)
		inv["memory"] = map[string]any{"physical_mb": int64(memGiB) * 1024}
	}
	cpus, arch, err := processorSummary(sys)
	if err != nil {
		return nil, redfishError(fmt.Sprintf("Failed to get processor information of node %s: %s", n.UUID, err))
	}
	if cpus > 0 {
		props["cpus"] = cpus
	}
	if arch != "" {
		if a, ok := cpuArchMap[arch]; ok {
			props["cpu_arch"] = a
		} else {
			log.Warn("unknown CPU arch discovered", "node", n.UUID, "arch", arch)
		}
	}
	inv["cpu"] = map[string]any{"count": cpus, "architecture": props["cpu_arch"]}

	disks, localGB := detectLocalGB(task, sys)
	if localGB > 0 {
		props["local_gb"] = strconv.FormatInt(localGB, 10)
	} else {
		log.Warn("could not provide a valid storage size configured for node; assuming this is a disk-less node", "node", n.UUID)
		props["local_gb"] = "0"
	}
	inv["disks"] = disks

	if mode := sys.bootField("BootSourceOverrideMode"); mode != "" {
		inv["boot"] = map[string]any{"current_boot_mode": bootModeMap[mode]}
		if capability(n.Properties["capabilities"], "boot_mode") == "" {
			if bm, ok := bootModeMap[mode]; ok {
				props["capabilities"] = updatedCapabilities(props["capabilities"], "boot_mode", bm)
			}
		}
	}

	var missing []string
	for _, k := range essentialProperties {
		if _, ok := props[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return nil, errs.New("HardwareInspectionFailure", map[string]any{"error": fmt.Sprintf(
			"Failed to discover the following properties: %s on node %s", strings.Join(missing, ", "), n.UUID)})
	}

	macs, ifaces := i.enabledNICs(task, sys)
	inv["interfaces"] = ifaces
	return &Inspection{Properties: props, MACs: macs, Inventory: inv}, nil
}

// enabledNICs is upstream _create_ports' selection: the MACs of NICs in
// the Enabled state, lower case, in collection order.
func (i *Inspect) enabledNICs(task *driver.Task, sys *system) ([]string, []any) {
	log := task.Logger()
	ifaces := []any{}
	if _, has := sys.raw["EthernetInterfaces"]; !has {
		log.Warn("no NIC information discovered for node", "node", task.Node.UUID)
		return nil, ifaces
	}
	coll, err := common.GetCollection(sys.cl, sys.rawLink("EthernetInterfaces"))
	if err != nil || len(coll.ItemLinks) == 0 {
		log.Warn("no NIC information discovered for node", "node", task.Node.UUID, "error", err)
		return nil, ifaces
	}
	var macs []string
	for _, p := range coll.ItemLinks {
		var doc struct {
			ID         string `json:"Id"`
			Name       string
			MACAddress string
			Status     struct{ State string }
		}
		if err := sys.cl.getJSON(p, &doc); err != nil {
			log.Warn("cannot read NIC", "node", task.Node.UUID, "nic", p, "error", err)
			continue
		}
		if doc.MACAddress == "" {
			continue
		}
		mac := strings.ToLower(doc.MACAddress)
		ifaces = append(ifaces, map[string]any{"name": doc.ID, "mac_address": mac})
		if doc.Status.State == "Enabled" && !slices.Contains(macs, mac) {
			macs = append(macs, mac)
		}
	}
	if len(macs) == 0 {
		log.Warn("not creating any port as no NICs were discovered in 'enabled' state", "node", task.Node.UUID)
	}
	return macs, ifaces
}

// processorSummary is sushy's ProcessorCollection.summary: the total of
// the processors' threads and the first architecture reported.
func processorSummary(sys *system) (int, string, error) {
	if _, has := sys.raw["Processors"]; !has {
		return 0, "", nil
	}
	coll, err := common.GetCollection(sys.cl, sys.rawLink("Processors"))
	if err != nil {
		return 0, "", err
	}
	count, arch := 0, ""
	for _, p := range coll.ItemLinks {
		var doc struct {
			ProcessorArchitecture string
			TotalThreads          int
		}
		if err := sys.cl.getJSON(p, &doc); err != nil {
			return 0, "", err
		}
		count += doc.TotalThreads
		if arch == "" {
			arch = doc.ProcessorArchitecture
		}
	}
	return count, arch, nil
}

// detectLocalGB is upstream _detect_local_gb: the smallest disk of at
// least 4 GiB among SimpleStorage devices and Storage volumes (drives when
// there are no volumes), in GiB less one. It also returns the disks seen,
// for the inventory.
func detectLocalGB(task *driver.Task, sys *system) ([]any, int64) {
	log := task.Logger()
	disks := []any{}
	pick := func(sizes []int64) int64 {
		slices.Sort(sizes)
		for _, s := range sizes {
			if s >= 4*gib {
				return s
			}
		}
		return 0
	}
	simple, err := simpleStorageSizes(sys, &disks)
	if err != nil {
		log.Debug("no simple storage information discovered", "node", task.Node.UUID, "error", err)
	}
	simpleSize := pick(simple)
	volumes, drives, err := storageSizes(sys, &disks)
	if err != nil {
		log.Debug("no storage information discovered", "node", task.Node.UUID, "error", err)
	}
	storageSize := pick(volumes)
	if storageSize == 0 {
		storageSize = pick(drives)
	}
	size := max(simpleSize, storageSize)
	if simpleSize > 0 && storageSize > 0 {
		size = min(simpleSize, storageSize)
	}
	return disks, max(0, size/gib-1)
}

func simpleStorageSizes(sys *system, disks *[]any) ([]int64, error) {
	if _, has := sys.raw["SimpleStorage"]; !has {
		return nil, nil
	}
	coll, err := common.GetCollection(sys.cl, sys.rawLink("SimpleStorage"))
	if err != nil {
		return nil, err
	}
	var sizes []int64
	for _, p := range coll.ItemLinks {
		var doc struct {
			Devices []struct {
				Name          string
				CapacityBytes int64
				Status        struct{ State string }
			}
		}
		if err := sys.cl.getJSON(p, &doc); err != nil {
			return nil, err
		}
		for _, d := range doc.Devices {
			if d.CapacityBytes > 0 && d.Status.State == "Enabled" && !slices.Contains(sizes, d.CapacityBytes) {
				sizes = append(sizes, d.CapacityBytes)
				*disks = append(*disks, map[string]any{"name": d.Name, "size": d.CapacityBytes})
			}
		}
	}
	return sizes, nil
}

func storageSizes(sys *system, disks *[]any) (volumes, drives []int64, err error) {
	if _, has := sys.raw["Storage"]; !has {
		return nil, nil, nil
	}
	coll, err := common.GetCollection(sys.cl, sys.rawLink("Storage"))
	if err != nil {
		return nil, nil, err
	}
	for _, p := range coll.ItemLinks {
		var st struct {
			Drives  []common.Link
			Volumes common.Link
		}
		if err := sys.cl.getJSON(p, &st); err != nil {
			return nil, nil, err
		}
		for _, d := range st.Drives {
			var doc struct {
				Name          string
				CapacityBytes int64
			}
			if err := sys.cl.getJSON(d.String(), &doc); err != nil {
				return nil, nil, err
			}
			if doc.CapacityBytes > 0 && !slices.Contains(drives, doc.CapacityBytes) {
				drives = append(drives, doc.CapacityBytes)
				*disks = append(*disks, map[string]any{"name": doc.Name, "size": doc.CapacityBytes})
			}
		}
		if st.Volumes == "" {
			continue
		}
		vc, err := common.GetCollection(sys.cl, st.Volumes.String())
		if err != nil {
			return nil, nil, err
		}
		for _, v := range vc.ItemLinks {
			var doc struct{ CapacityBytes int64 }
			if err := sys.cl.getJSON(v, &doc); err != nil {
				return nil, nil, err
			}
			if doc.CapacityBytes > 0 && !slices.Contains(volumes, doc.CapacityBytes) {
				volumes = append(volumes, doc.CapacityBytes)
			}
		}
	}
	return volumes, drives, nil
}

// rawLink is the @odata.id of a navigation property of the system.
func (s *system) rawLink(name string) string {
	var l common.Link
	if err := l.UnmarshalJSON(s.raw[name]); err != nil {
		return ""
	}
	return l.String()
}

// updatedCapabilities is upstream utils.get_updated_capabilities for one
// key: the "k:v,..." string with key set, existing order kept.
func updatedCapabilities(current any, key, value string) string {
	var parts []string
	replaced := false
	switch c := current.(type) {
	case string:
		for item := range strings.SplitSeq(c, ",") {
			k, _, ok := strings.Cut(item, ":")
			if !ok {
				continue
			}
			if strings.TrimSpace(k) == key {
				item, replaced = key+":"+value, true
			}
			parts = append(parts, item)
		}
	case map[string]any:
		keys := make([]string, 0, len(c))
		for k := range c {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if k == key {
				continue
			}
			parts = append(parts, fmt.Sprintf("%s:%v", k, c[k]))
		}
	}
	if !replaced {
		parts = append(parts, key+":"+value)
	}
	return strings.Join(parts, ",")
}
