package idrac

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/driver/redfish"
)

// pxeDevices are the BIOS attributes that enable a UEFI PXE device and
// name its NIC.
var pxeDevices = [][2]string{
	{"PxeDev1EnDis", "PxeDev1Interface"}, {"PxeDev2EnDis", "PxeDev2Interface"},
	{"PxeDev3EnDis", "PxeDev3Interface"}, {"PxeDev4EnDis", "PxeDev4Interface"},
}

// serviceTagAsSerial is upstream DracRedfishInspect
// _get_system_vendor_info: a Dell system's SerialNumber is its
// motherboard's, the service tag (SKU) is what identifies the machine.
func serviceTagAsSerial(s *redfish.Session, vendor map[string]any) error {
	var sys struct{ SKU string }
	if err := s.GetJSON(s.SystemPath(), &sys); err != nil {
		return redfishError("%s", err)
	}
	if sys.SKU != "" {
		vendor["serial_number"] = sys.SKU
	}
	return nil
}

// ethernetMACs maps the system's EthernetInterfaces' Ids to their MAC
// addresses (upstream _get_mac_address).
func ethernetMACs(s *redfish.Session) (map[string]string, error) {
	var sys struct{ EthernetInterfaces odataLink }
	if err := s.GetJSON(s.SystemPath(), &sys); err != nil {
		return nil, err
	}
	out := map[string]string{}
	if sys.EthernetInterfaces.ODataID == "" {
		return out, nil
	}
	var coll struct{ Members []odataLink }
	if err := s.GetJSON(sys.EthernetInterfaces.ODataID, &coll); err != nil {
		return nil, err
	}
	for _, m := range coll.Members {
		var nic struct {
			ID         string `json:"Id"`
			MACAddress string
		}
		if err := s.GetJSON(m.ODataID, &nic); err != nil {
			return nil, err
		}
		out[nic.ID] = nic.MACAddress
	}
	return out, nil
}

// pxePortMACs is upstream DracRedfishInspect _get_pxe_port_macs: in UEFI
// mode the NICs of the enabled PxeDev BIOS settings, in legacy BIOS mode
// the NICs whose LegacyBootProto is PXE in the exported NIC configuration.
func (d *dell) pxePortMACs(ctx context.Context, task *driver.Task, s *redfish.Session, bootMode string) ([]string, error) {
	macs, err := ethernetMACs(s)
	if err != nil {
		return nil, redfishError("%s", err)
	}
	var out []string
	switch bootMode {
	case "uefi":
		var sys struct{ Bios odataLink }
		if err := s.GetJSON(s.SystemPath(), &sys); err != nil {
			return nil, redfishError("%s", err)
		}
		var bios struct{ Attributes map[string]any }
		if sys.Bios.ODataID != "" {
			if err := s.GetJSON(sys.Bios.ODataID, &bios); err != nil {
				return nil, redfishError("%s", err)
			}
		}
		for _, dev := range pxeDevices {
			// Upstream reads the four pairs unconditionally; an iDRAC
			// without them has no UEFI PXE device to report.
			if bios.Attributes[dev[0]] != "Enabled" {
				continue
			}
			nic, _ := bios.Attributes[dev[1]].(string)
			if mac, ok := macs[nic]; ok {
				out = append(out, mac)
			}
		}
	case "bios":
		err := d.execOEMOn(ctx, task, s, "get PXE port MAC addresses",
			func(ctx context.Context, s *redfish.Session, mgr *dellManager) error {
				var err error
				out, err = d.legacyPXEMACs(ctx, s, mgr, macs)
				return err
			})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// exportedConfiguration is a system configuration profile in JSON.
type exportedConfiguration struct {
	SystemConfiguration *struct {
		Components []struct {
			FQDD       string
			Attributes []struct{ Name, Value string }
		}
	}
}

// legacyPXEMACs is sushy's get_pxe_port_macs_bios: the NIC part of the
// system configuration is exported and the NICs booting with PXE picked.
func (d *dell) legacyPXEMACs(ctx context.Context, s *redfish.Session, mgr *dellManager, macs map[string]string) ([]string, error) {
	target, err := mgr.action("#OemManager.ExportSystemConfiguration")
	if err != nil {
		return nil, err
	}
	resp, err := d.asyncCall(ctx, s, target, map[string]any{"ShareParameters": map[string]any{"Target": "NIC"},
		"ExportFormat": "JSON", "ExportUse": "Default", "IncludeInExport": "Default"}, importPoll)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return nil, &extensionError{msg: "An error occurred when attempting to export the system configuration. " +
			"Status code: " + strconv.Itoa(resp.StatusCode)}
	}
	var conf exportedConfiguration
	if err := json.NewDecoder(resp.Body).Decode(&conf); err != nil || conf.SystemConfiguration == nil {
		return nil, &extensionError{msg: "Failed to get system configuration from response"}
	}
	var out []string
	for _, c := range conf.SystemConfiguration.Components {
		for _, a := range c.Attributes {
			if a.Name == "LegacyBootProto" && a.Value == "PXE" {
				mac, ok := macs[c.FQDD]
				if !ok {
					return nil, &extensionError{msg: fmt.Sprintf("No ethernet interface %s", c.FQDD)}
				}
				out = append(out, mac)
			}
		}
	}
	return out, nil
}

// switchLLDP is upstream DracRedfishInspect _collect_lldp_data: the
// iDRAC's DellSwitchConnections give each NIC's switch chassis and port;
// connections without a link are left out. An unreadable collection gives
// none; only a malformed one falls back to the standard collection.
func (d *dell) switchLLDP(task *driver.Task, s *redfish.Session) (map[string]any, bool) {
	path := "/redfish/v1/Systems/" + s.SystemID() + "/NetworkPorts/Oem/Dell/DellSwitchConnections"
	var doc struct{ Members []map[string]any }
	resp, err := s.Get(path)
	if err != nil {
		task.Logger().Debug("failed to get Dell switch connections", "node", task.Node.UUID, "error", err)
		return map[string]any{}, false
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		task.Logger().Debug("Dell OEM LLDP collection failed, falling back to standard", "node", task.Node.UUID, "error", err)
		return nil, true
	}
	parsed := map[string]any{}
	for _, c := range doc.Members {
		fqdd, _ := c["FQDD"].(string)
		chassis, _ := c["SwitchConnectionID"].(string)
		port, _ := c["SwitchPortConnectionID"].(string)
		if fqdd == "" || chassis == "" || port == "" || chassis == "No Link" || port == "No Link" {
			continue
		}
		parsed[fqdd] = map[string]any{"switch_chassis_id": chassis, "switch_port_id": port}
	}
	return parsed, false
}
