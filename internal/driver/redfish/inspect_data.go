package redfish

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/stmcginnis/gofish/common"

	"github.com/openkeel/ironic/internal/driver"
)

// statusDict is upstream _status_to_dict: the health, state and health
// rollup a Status reports, nil when it reports none.
func statusDict(st map[string]any) any {
	out := map[string]any{}
	for k, name := range map[string]string{"Health": "health", "State": "state", "HealthRollup": "health_rollup"} {
		if v, ok := st[k].(string); ok {
			out[name] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// strList is a JSON list of strings, empty for anything else.
func strList(v any) []any {
	out := []any{}
	l, _ := v.([]any)
	for _, x := range l {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// storageControllers is upstream _get_storage_controllers: per Storage
// resource its id and name, the controllers it embeds and its drives.
// A BMC failing to list them only loses this part of the inventory.
func storageControllers(task *driver.Task, v *storageView) []any {
	out := []any{}
	if !v.hasStorage {
		return out
	}
	if v.storageErr != nil {
		task.Logger().Debug("failed to get storage members", "node", task.Node.UUID, "error", v.storageErr)
		return out
	}
	for _, st := range v.storage {
		subs := []any{}
		for _, sc := range st.StorageControllers {
			info := map[string]any{
				"member_id": sc["MemberId"], "name": sc["Name"], "raid_types": strList(sc["SupportedRAIDTypes"]),
				"speed_gbps": sc["SpeedGbps"], "controller_protocols": strList(sc["SupportedControllerProtocols"]),
				"device_protocols": strList(sc["SupportedDeviceProtocols"]),
			}
			if status, ok := sc["Status"].(map[string]any); ok {
				info["status"] = statusDict(status)
			}
			subs = append(subs, info)
		}
		drives := []any{}
		for _, d := range st.drives {
			info := map[string]any{"name": d.Name, "size": d.size(), "id": d.ID, "media_type": d.MediaType,
				"serial_number": d.SerialNumber, "manufacturer": d.Manufacturer, "model": d.Model, "revision": d.Revision}
			if p, ok := d.Protocol.(string); ok && p != "" {
				info["protocol"] = p
			}
			if d.Status != nil {
				info["status"] = statusDict(d.Status)
			}
			drives = append(drives, info)
		}
		out = append(out, map[string]any{"id": st.ID, "name": st.Name, "storage_controllers": subs, "drives": drives})
	}
	return out
}

// pcieDeviceClasses are the DeviceClass values sushy knows; it reads any
// other as null.
var pcieDeviceClasses = []string{
	"UnclassifiedDevice", "MassStorageController", "NetworkController", "DisplayController",
	"MultimediaController", "MemoryController", "Bridge", "CommunicationController", "GenericSystemPeripheral",
	"InputDeviceController", "DockingStation", "Processor", "SerialBusController", "WirelessController",
	"IntelligentController", "SatelliteCommunicationsController", "EncryptionController",
	"SignalProcessingController", "ProcessingAccelerators", "NonEssentialInstrumentation", "Coprocessor",
	"UnassignedClass", "Other",
}

// pcieDevicePaths are the system's PCIe devices: a PCIeDevices collection
// or, as ComputerSystem defines it, an array of links.
func pcieDevicePaths(sys *system) ([]string, error) {
	raw := sys.raw["PCIeDevices"]
	var list []common.Link
	if json.Unmarshal(raw, &list) == nil {
		out := make([]string, 0, len(list))
		for _, l := range list {
			if l != "" {
				out = append(out, l.String())
			}
		}
		return out, nil
	}
	path := sys.rawLink("PCIeDevices")
	if path == "" {
		return nil, nil
	}
	coll, err := common.GetCollection(sys.cl, path)
	if err != nil {
		return nil, err
	}
	return coll.ItemLinks, nil
}

// pcieDevices is upstream _get_pcie_devices: one entry per function of
// every device, named as the agent names them; devices without
// functions add nothing.
func pcieDevices(task *driver.Task, sys *system) []any {
	log := task.Logger()
	out := []any{}
	paths, err := pcieDevicePaths(sys)
	if err != nil {
		log.Warn("error fetching PCIe devices", "node", task.Node.UUID, "error", err)
		return out
	}
	for _, p := range paths {
		var dev struct{ PCIeFunctions common.Link }
		if err := sys.cl.getJSON(p, &dev); err != nil {
			log.Warn("error fetching PCIe device", "node", task.Node.UUID, "device", p, "error", err)
			continue
		}
		if dev.PCIeFunctions == "" {
			continue
		}
		coll, err := common.GetCollection(sys.cl, dev.PCIeFunctions.String())
		if err != nil {
			log.Warn("error fetching PCIe functions", "node", task.Node.UUID, "device", p, "error", err)
			continue
		}
		for _, fp := range coll.ItemLinks {
			var fn map[string]any
			if err := sys.cl.getJSON(fp, &fn); err != nil {
				log.Warn("error fetching PCIe function", "node", task.Node.UUID, "function", fp, "error", err)
				continue
			}
			info := map[string]any{}
			if c, ok := fn["DeviceClass"].(string); ok && slices.Contains(pcieDeviceClasses, c) {
				info["class"] = c
			}
			for src, dst := range map[string]string{"DeviceId": "product_id", "VendorId": "vendor_id",
				"SubsystemId": "subsystem_id", "SubsystemVendorId": "subsystem_vendor_id", "RevisionId": "revision"} {
				if v, ok := fn[src]; ok && v != nil {
					info[dst] = v
				}
			}
			if len(info) > 0 {
				out = append(out, info)
			}
		}
	}
	return out
}

// lldpFields map Port.Ethernet.LLDPReceive to parsed_lldp's keys.
var lldpFields = []struct{ redfish, parsed string }{
	{"ChassisId", "switch_chassis_id"}, {"PortId", "switch_port_id"}, {"SystemName", "switch_system_name"},
	{"SystemDescription", "switch_system_description"}, {"ManagementVlanId", "switch_vlan_id"},
}

// collectLLDP is upstream _collect_lldp_data: for every port of every
// NetworkAdapter of the system's chassis, what it received over LLDP,
// keyed by the port's Id. Failures only lose the data concerned.
func collectLLDP(task *driver.Task, sys *system) map[string]any {
	log := task.Logger().With("node", task.Node.UUID)
	out := map[string]any{}
	for _, ch := range sys.links("Chassis") {
		var chassis struct{ NetworkAdapters common.Link }
		if err := sys.cl.getJSON(ch, &chassis); err != nil || chassis.NetworkAdapters == "" {
			log.Debug("failed to get network adapters for chassis", "chassis", ch, "error", err)
			continue
		}
		adapters, err := common.GetCollection(sys.cl, chassis.NetworkAdapters.String())
		if err != nil {
			log.Debug("failed to get network adapters for chassis", "chassis", ch, "error", err)
			continue
		}
		for _, ap := range adapters.ItemLinks {
			var adapter struct{ Ports common.Link }
			if err := sys.cl.getJSON(ap, &adapter); err != nil || adapter.Ports == "" {
				log.Debug("failed to get ports for adapter", "adapter", ap, "error", err)
				continue
			}
			ports, err := common.GetCollection(sys.cl, adapter.Ports.String())
			if err != nil {
				log.Debug("failed to get ports for adapter", "adapter", ap, "error", err)
				continue
			}
			for _, pp := range ports.ItemLinks {
				var port struct {
					ID       string `json:"Id"`
					Ethernet struct{ LLDPReceive map[string]any }
				}
				if err := sys.cl.getJSON(pp, &port); err != nil {
					log.Debug("failed to process LLDP data for port", "port", pp, "error", err)
					continue
				}
				if parsed := parseLLDPReceive(port.Ethernet.LLDPReceive); parsed != nil && port.ID != "" {
					out[port.ID] = parsed
				}
			}
		}
	}
	return out
}

// parseLLDPReceive keeps the fields with a (Python-truthy) value; nil
// when none has one.
func parseLLDPReceive(rx map[string]any) map[string]any {
	out := map[string]any{}
	for _, f := range lldpFields {
		switch v := rx[f.redfish].(type) {
		case string:
			if v != "" {
				out[f.parsed] = v
			}
		case float64:
			if v != 0 {
				out[f.parsed] = int64(v)
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
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
