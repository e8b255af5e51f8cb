package redfish

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/stmcginnis/gofish/common"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/inspection"
	"github.com/openkeel/ironic/internal/states"
)

// processorInstructionSetMap is upstream PROCESSOR_INSTRUCTION_SET_MAP:
// the first processor's InstructionSet to the inventory's CPU
// architecture. OEM and sets it does not list give "".
var processorInstructionSetMap = map[string]string{
	"ARM-A32": "arm", "ARM-A64": "aarch64", "IA-64": "ia64", "MIPS32": "mips", "MIPS64": "mips64",
	"x86": "i686", "x86-64": "x86_64",
}

// essentialProperties are upstream InspectInterface.ESSENTIAL_PROPERTIES,
// in the order a failure lists the missing ones.
var essentialProperties = []string{"cpu_arch", "local_gb", "memory_mb"}

const gib = int64(1) << 30

// Inspect is upstream RedfishInspect: out-of-band inspection from the
// system's processors, memory, storage, NICs, PCIe devices and boot mode.
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

// InspectHardware is InspectOutOfBand with nothing between discovery and
// the essential properties check: no hooks run and nothing is stored, as
// the driver layer has no store. The conductor calls InspectOutOfBand.
func (i *Inspect) InspectHardware(ctx context.Context, task *driver.Task) (string, error) {
	return i.InspectOutOfBand(ctx, task, nil)
}

// InspectOutOfBand is upstream inspect_hardware. It reads the system,
// sets memory_mb and local_gb (integers) and the boot_mode capability on
// the node, builds an inventory shaped as the agent's and plugin data
// with the LLDP the BMC saw, then hands both to process, where the
// conductor runs the [redfish]/inspection_hooks (which create the ports
// and set cpu_arch), stores them and applies the inspection rules. Last,
// it fails as upstream does when an essential property is still missing.
// The node is not saved here.
func (i *Inspect) InspectOutOfBand(ctx context.Context, task *driver.Task,
	process func(ctx context.Context, inventory, pluginData map[string]any) error) (string, error) {
	sys, err := i.core.getSystem(ctx, task)
	if err != nil {
		return "", err
	}
	n := task.Node
	props := make(map[string]any, len(n.Properties)+3)
	for k, v := range n.Properties {
		props[k] = v
	}
	inventory, err := i.discover(ctx, task, sys, props)
	if err != nil {
		return "", err
	}
	pluginData := map[string]any{}
	lldp := map[string]any{}
	fallback := true
	if vendorLLDP := i.core.ext.LLDP; vendorLLDP != nil {
		lldp, fallback = vendorLLDP(task, &Session{cl: sys.cl, sys: sys})
	}
	if fallback {
		lldp = collectLLDP(task, sys)
	}
	if len(lldp) > 0 {
		pluginData["parsed_lldp"] = lldp
		task.Logger().Info("collected LLDP data", "node", n.UUID, "interfaces", len(lldp))
	}
	// The hooks and rules work on the node with what was found, as
	// upstream's act on the very dict it filled.
	n.Properties = props
	if process != nil {
		if err := process(ctx, inventory, pluginData); err != nil {
			return "", err
		}
	}
	var missing []string
	for _, k := range essentialProperties {
		if _, ok := n.Properties[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return "", errs.New(errs.ClassHardwareInspectionFailure, map[string]any{"error": fmt.Sprintf(
			"Failed to discover the following properties: %s on node %s", strings.Join(missing, ", "), n.UUID)})
	}
	task.Logger().Debug("node properties updated by inspection", "node", n.UUID, "properties", n.Properties)
	return states.Manageable, nil
}

// discover fills props and returns the inventory.
func (i *Inspect) discover(ctx context.Context, task *driver.Task, sys *system, props map[string]any) (map[string]any, error) {
	log := task.Logger()
	inv := map[string]any{}
	if mem := memoryMB(sys); mem != nil {
		props["memory_mb"] = mem
		inv["memory"] = map[string]any{"physical_mb": mem}
	}
	cpu, err := processorInfo(sys)
	if err != nil {
		return nil, err
	}
	inv["cpu"] = cpu

	view := readStorage(sys)
	if localGB := detectLocalGB(task, view); localGB > 0 {
		props["local_gb"] = localGB
	} else {
		log.Warn("could not provide a valid storage size configured for node; assuming this is a disk-less node", "node", task.Node.UUID)
		props["local_gb"] = int64(0)
	}
	disks, err := inventoryDisks(view)
	if err != nil {
		return nil, err
	}
	if disks != nil {
		inv["disks"] = disks
	}
	if sc := storageControllers(task, view); len(sc) > 0 {
		inv["storage_controllers"] = sc
	}
	ifaces, err := interfaceInfo(task, sys)
	if err != nil {
		return nil, err
	}
	inv["interfaces"] = ifaces
	if pci := pcieDevices(task, sys); len(pci) > 0 {
		inv["pci_devices"] = pci
	}
	v := systemVendor(sys)
	if hook := i.core.ext.SystemVendor; hook != nil {
		if err := hook(&Session{cl: sys.cl, sys: sys}, v); err != nil {
			return nil, err
		}
	}
	if len(v) > 0 {
		inv["system_vendor"] = v
	}
	mode, hasMode := bootModeMap[sys.bootField("BootSourceOverrideMode")]
	if hasMode {
		if driver.Capability(task.Node.Properties["capabilities"], "boot_mode") == "" {
			props["capabilities"] = updatedCapabilities(props["capabilities"], "boot_mode", mode)
		}
		inv["boot"] = map[string]any{"current_boot_mode": mode}
	}
	if hook := i.core.ext.PXEPortMACs; hook != nil {
		macs, err := hook(ctx, task, &Session{cl: sys.cl, sys: sys}, mode)
		if err != nil {
			return nil, err
		}
		// Upstream keeps one address: the inventory has room for one.
		if boot, ok := inv["boot"].(map[string]any); ok && len(macs) > 0 {
			boot["pxe_interface"] = macs[0]
		}
	}
	return inv, nil
}

// unexpected is how upstream's conductor reports an exception that is not
// an Ironic one (sushy's MissingAttributeError, an IndexError): its class
// and text, which become the node's last_error as they are.
func unexpected(class, msg string) error {
	return errs.NewMessage(errs.ClassHardwareInspectionFailure, fmt.Sprintf("Unexpected exception of type %s: %s", class, msg))
}

// missingAttribute is sushy's MissingAttributeError for a navigation
// property of the system.
func missingAttribute(sys *system, name string) error {
	return unexpected("MissingAttributeError", fmt.Sprintf("The attribute %s is missing from the resource %s", name, sys.ODataID))
}

// memoryMB is MemorySummary.TotalSystemMemoryGiB in MiB, nil when the BMC
// reports none; an integral size stays an integer, as in upstream's JSON.
func memoryMB(sys *system) any {
	var ms struct{ TotalSystemMemoryGiB json.Number }
	if json.Unmarshal(sys.raw["MemorySummary"], &ms) != nil || ms.TotalSystemMemoryGiB == "" {
		return nil
	}
	if n, err := ms.TotalSystemMemoryGiB.Int64(); err == nil {
		if n == 0 {
			return nil
		}
		return n * 1024
	}
	f, err := ms.TotalSystemMemoryGiB.Float64()
	if err != nil || f == 0 {
		return nil
	}
	return f * 1024
}

// processorInfo is upstream _get_processor_info over the defaults the
// inventory starts with: the count is the processors' threads, the rest
// comes from the first processor.
func processorInfo(sys *system) (map[string]any, error) {
	cpu := map[string]any{"count": 0, "architecture": ""}
	path := sys.rawLink("Processors")
	if path == "" {
		return nil, missingAttribute(sys, "Processors")
	}
	coll, err := common.GetCollection(sys.cl, path)
	if err != nil {
		return nil, redfishError(err.Error())
	}
	if len(coll.ItemLinks) == 0 {
		return nil, unexpected("IndexError", "list index out of range")
	}
	count := 0
	for idx, p := range coll.ItemLinks {
		var doc struct {
			InstructionSet string
			Model          *string
			MaxSpeedMHz    any
			TotalThreads   any
		}
		if err := sys.cl.getJSON(p, &doc); err != nil {
			return nil, redfishError(err.Error())
		}
		if n, ok := pyInt(doc.TotalThreads); ok {
			count += int(n)
		}
		if idx > 0 {
			continue
		}
		if doc.Model != nil {
			cpu["model_name"] = *doc.Model
		}
		if mhz, ok := pyInt(doc.MaxSpeedMHz); ok {
			cpu["frequency"] = int(mhz)
		}
		cpu["architecture"] = processorInstructionSetMap[doc.InstructionSet]
	}
	cpu["count"] = count
	return cpu, nil
}

// interfaceInfo is upstream _get_interface_info: every EthernetInterface
// with a valid MAC (lower-cased), named by its Id, with its speed when
// the BMC gives one.
func interfaceInfo(task *driver.Task, sys *system) ([]any, error) {
	path := sys.rawLink("EthernetInterfaces")
	if path == "" {
		return nil, missingAttribute(sys, "EthernetInterfaces")
	}
	coll, err := common.GetCollection(sys.cl, path)
	if err != nil {
		return nil, redfishError(err.Error())
	}
	out := []any{}
	for _, p := range coll.ItemLinks {
		var doc struct {
			ID         string `json:"Id"`
			MACAddress *string
			SpeedMbps  any
		}
		if err := sys.cl.getJSON(p, &doc); err != nil {
			return nil, redfishError(err.Error())
		}
		mac := ""
		if doc.MACAddress != nil {
			mac = strings.ToLower(*doc.MACAddress)
		}
		if !inspection.ValidMAC(mac) {
			task.Logger().Warn("ignoring NIC address because it is not a valid MAC", "node", task.Node.UUID,
				"interface", doc.ID, "address", mac)
			continue
		}
		iface := map[string]any{"mac_address": mac, "name": doc.ID}
		if speed, ok := pyInt(doc.SpeedMbps); ok {
			iface["speed_mbps"] = speed
		}
		out = append(out, iface)
	}
	return out, nil
}

// pyInt is Python's int() of a JSON value, reporting false where it
// raises.
func pyInt(v any) (int64, bool) {
	switch x := v.(type) {
	case float64:
		return int64(x), true
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	case string:
		n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
		return n, err == nil
	}
	return 0, false
}

// systemVendor is upstream _get_system_vendor_info: what the system
// reports of these, leaving out empty ones.
func systemVendor(sys *system) map[string]any {
	out := map[string]any{}
	for k, v := range map[string]string{"product_name": sys.Model, "serial_number": sys.SerialNumber,
		"manufacturer": sys.Manufacturer, "system_uuid": sys.UUID} {
		if v != "" {
			out[k] = v
		}
	}
	return out
}

// detectLocalGB is upstream _detect_local_gb: the smallest disk of at
// least 4 GiB among SimpleStorage devices and Storage volumes (drives when
// there are no volumes), in GiB less one. Errors reading storage count as
// no storage.
func detectLocalGB(task *driver.Task, view *storageView) int64 {
	log := task.Logger()
	pick := func(sizes []int64) int64 {
		slices.Sort(sizes)
		for _, s := range sizes {
			if s >= 4*gib {
				return s
			}
		}
		return 0
	}
	simple, err := view.simpleSizes()
	if err != nil {
		log.Debug("no simple storage information discovered", "node", task.Node.UUID, "error", err)
	}
	simpleSize := pick(simple)
	volumes, drives, err := view.storageSizes()
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
	return max(0, size/gib-1)
}

// simpleDevice is a SimpleStorage device.
type simpleDevice struct {
	Name          any
	CapacityBytes *int64
	Status        struct{ State string }
}

// inspectedStorage is a Storage resource as inspection reads it, with its
// drives.
type inspectedStorage struct {
	ID                 string `json:"Id"`
	Name               any
	Drives             []common.Link
	Volumes            common.Link
	StorageControllers []map[string]any
	drives             []driveDoc
}

// driveDoc is a Drive resource as inspection reads it.
type driveDoc struct {
	ID            any `json:"Id"`
	Name          any
	CapacityBytes *int64
	MediaType     any
	SerialNumber  any
	Manufacturer  any
	Model         any
	Revision      any
	Protocol      any
	Status        map[string]any
}

func (d driveDoc) size() any {
	if d.CapacityBytes == nil {
		return nil
	}
	return *d.CapacityBytes
}

// storageView is the system's Storage and SimpleStorage, read once for
// the three parts of inspection that use them, as sushy caches them.
type storageView struct {
	sys *system
	// hasStorage and hasSimple tell whether the system links them.
	hasStorage, hasSimple bool
	storage               []inspectedStorage
	storageErr            error
	simple                []simpleDevice
	simpleErr             error
}

func readStorage(sys *system) *storageView {
	v := &storageView{sys: sys, hasStorage: sys.rawLink("Storage") != "", hasSimple: sys.rawLink("SimpleStorage") != ""}
	if v.hasStorage {
		v.storage, v.storageErr = readStorageMembers(sys)
	}
	if v.hasSimple {
		v.simple, v.simpleErr = readSimpleDevices(sys)
	}
	return v
}

func readStorageMembers(sys *system) ([]inspectedStorage, error) {
	coll, err := common.GetCollection(sys.cl, sys.rawLink("Storage"))
	if err != nil {
		return nil, err
	}
	out := make([]inspectedStorage, 0, len(coll.ItemLinks))
	for _, p := range coll.ItemLinks {
		var st inspectedStorage
		if err := sys.cl.getJSON(p, &st); err != nil {
			return nil, err
		}
		for _, l := range st.Drives {
			var d driveDoc
			if err := sys.cl.getJSON(l.String(), &d); err != nil {
				return nil, err
			}
			st.drives = append(st.drives, d)
		}
		out = append(out, st)
	}
	return out, nil
}

func readSimpleDevices(sys *system) ([]simpleDevice, error) {
	coll, err := common.GetCollection(sys.cl, sys.rawLink("SimpleStorage"))
	if err != nil {
		return nil, err
	}
	var out []simpleDevice
	for _, p := range coll.ItemLinks {
		var doc struct{ Devices []simpleDevice }
		if err := sys.cl.getJSON(p, &doc); err != nil {
			return nil, err
		}
		out = append(out, doc.Devices...)
	}
	return out, nil
}

// simpleSizes is sushy's disks_sizes_bytes: enabled devices with a
// capacity.
func (v *storageView) simpleSizes() ([]int64, error) {
	if v.simpleErr != nil {
		return nil, v.simpleErr
	}
	var sizes []int64
	for _, d := range v.simple {
		if d.CapacityBytes != nil && d.Status.State == "Enabled" {
			sizes = append(sizes, *d.CapacityBytes)
		}
	}
	return sizes, nil
}

// storageSizes are sushy's volumes_sizes_bytes and drives_sizes_bytes.
func (v *storageView) storageSizes() (volumes, drives []int64, err error) {
	if v.storageErr != nil {
		return nil, nil, v.storageErr
	}
	for _, st := range v.storage {
		for _, d := range st.drives {
			if d.CapacityBytes != nil {
				drives = append(drives, *d.CapacityBytes)
			}
		}
		if st.Volumes == "" {
			continue
		}
		vc, err := common.GetCollection(v.sys.cl, st.Volumes.String())
		if err != nil {
			return nil, nil, err
		}
		for _, p := range vc.ItemLinks {
			var doc struct{ CapacityBytes *int64 }
			if err := v.sys.cl.getJSON(p, &doc); err != nil {
				return nil, nil, err
			}
			if doc.CapacityBytes != nil {
				volumes = append(volumes, *doc.CapacityBytes)
			}
		}
	}
	return volumes, drives, nil
}

// inventoryDisks is upstream's disk list: every drive of the Storage
// resources or, without them, every SimpleStorage device, as name and
// size; nil when the system has neither.
func inventoryDisks(v *storageView) ([]any, error) {
	disks := []any{}
	switch {
	case v.hasStorage:
		if v.storageErr != nil {
			return nil, redfishError(v.storageErr.Error())
		}
		for _, st := range v.storage {
			for _, d := range st.drives {
				disks = append(disks, map[string]any{"name": d.Name, "size": d.size()})
			}
		}
	case v.hasSimple:
		if v.simpleErr != nil {
			return nil, redfishError(v.simpleErr.Error())
		}
		for _, d := range v.simple {
			var size any
			if d.CapacityBytes != nil {
				size = *d.CapacityBytes
			}
			disks = append(disks, map[string]any{"name": d.Name, "size": size})
		}
	default:
		return nil, nil
	}
	return disks, nil
}
