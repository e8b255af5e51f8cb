package redfishbmc

import (
	"net/http"
	"strconv"
	"strings"
)

// PCIeFunction is one function of a PCIe device; empty fields are null.
type PCIeFunction struct {
	DeviceClass, DeviceID, VendorID, SubsystemID, SubsystemVendorID, RevisionID string
}

// PCIeDevice adds a PCIe device, listed in the system's PCIeDevices. A
// device without functions has no PCIeFunctions collection, as some BMCs
// serve them.
func PCIeDevice(functions ...PCIeFunction) SystemOption {
	return func(s *System) { s.hw.pcie = append(s.hw.pcie, functions) }
}

// SerialNumber sets the system's SerialNumber.
func SerialNumber(sn string) SystemOption { return func(s *System) { s.SerialNumber = sn } }

// Model sets the system's Model.
func Model(m string) SystemOption { return func(s *System) { s.Model = m } }

// NICSpeed sets SpeedMbps of the NIC id, added before.
func NICSpeed(id string, mbps int) SystemOption {
	return func(s *System) {
		for i := range s.NICs {
			if s.NICs[i].ID == id {
				s.NICs[i].SpeedMbps = mbps
			}
		}
	}
}

// pcieRoute answers PCIeDevices/<n>[/PCIeFunctions[/<m>]].
func (b *BMC) pcieRoute(r *http.Request, s *System, sub, path string) (response, bool) {
	devID, rest, _ := strings.Cut(sub, "/")
	d, err := strconv.Atoi(devID)
	if err != nil || d < 1 || d > len(s.hw.pcie) {
		return response{}, false
	}
	fns := s.hw.pcie[d-1]
	devPath := SystemPath(s.ID) + "/PCIeDevices/" + devID
	switch {
	case rest == "":
		return b.getOnly(r, func() any {
			out := map[string]any{"@odata.id": path, "@odata.type": "#PCIeDevice.v1_9_0.PCIeDevice",
				"Id": devID, "Name": "PCIe Device " + devID,
				"Status": map[string]any{"State": "Enabled", "Health": "OK"}}
			if len(fns) > 0 {
				out["PCIeFunctions"] = link(devPath + "/PCIeFunctions")
			}
			return out
		}), true
	case rest == "PCIeFunctions" && len(fns) > 0:
		return b.getOnly(r, func() any {
			return collection(path, "PCIeFunctionCollection", memberPaths(devPath, "PCIeFunctions", len(fns))...)
		}), true
	}
	fnID, ok := strings.CutPrefix(rest, "PCIeFunctions/")
	f, err := strconv.Atoi(fnID)
	if !ok || err != nil || f < 1 || f > len(fns) {
		return response{}, false
	}
	fn := fns[f-1]
	return b.getOnly(r, func() any {
		out := map[string]any{"@odata.id": path, "@odata.type": "#PCIeFunction.v1_5_0.PCIeFunction",
			"Id": fnID, "Name": "PCIe Function " + fnID}
		for k, v := range map[string]string{"DeviceClass": fn.DeviceClass, "DeviceId": fn.DeviceID,
			"VendorId": fn.VendorID, "SubsystemId": fn.SubsystemID, "SubsystemVendorId": fn.SubsystemVendorID,
			"RevisionId": fn.RevisionID} {
			if v != "" {
				out[k] = v
			} else {
				out[k] = nil
			}
		}
		return out
	}), true
}
