package redfishbmc

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

func badRequest(messageID, format string, a ...any) response {
	return redfishError(http.StatusBadRequest, messageID, fmt.Sprintf(format, a...))
}

func decode(body []byte, v any) (response, bool) {
	if err := json.Unmarshal(body, v); err != nil {
		return badRequest("Base.1.8.MalformedJSON", "The request body is not valid JSON: %v", err), false
	}
	return response{}, true
}

var noContent = response{status: http.StatusNoContent}

func (b *BMC) systemRoute(r *http.Request, path string, body []byte) response {
	s, sub, ok := b.systemByPath(path)
	if !ok {
		return notFound(path)
	}
	base := SystemPath(s.ID)
	switch sub {
	case "":
		switch r.Method {
		case http.MethodGet:
			s.poll()
			return response{status: http.StatusOK, body: b.renderSystem(s)}
		case http.MethodPatch:
			if resp, ok := b.checkIfMatch(r, b.renderSystem(s)); !ok {
				return resp
			}
			return b.patchSystem(s, body)
		}
		return methodNotAllowed()
	case "Actions/ComputerSystem.Reset":
		if r.Method != http.MethodPost {
			return methodNotAllowed()
		}
		var req struct{ ResetType string }
		if resp, ok := decode(body, &req); !ok {
			return resp
		}
		if !s.reset(req.ResetType) {
			return badRequest("Base.1.8.ActionParameterNotSupported",
				"The parameter ResetType for the action ComputerSystem.Reset is not supported: %s", req.ResetType)
		}
		b.systemReset()
		return noContent
	case "SecureBoot":
		if s.secureBoot == nil {
			return notFound(path)
		}
		switch r.Method {
		case http.MethodGet:
			return response{status: http.StatusOK, body: renderSecureBoot(base, s.secureBoot)}
		case http.MethodPatch:
			if resp, ok := b.checkIfMatch(r, renderSecureBoot(base, s.secureBoot)); !ok {
				return resp
			}
			var req struct{ SecureBootEnable *bool }
			if resp, ok := decode(body, &req); !ok {
				return resp
			}
			if req.SecureBootEnable == nil {
				return badRequest("Base.1.8.PropertyMissing", "SecureBootEnable is required.")
			}
			s.secureBoot.Enabled = *req.SecureBootEnable
			return noContent
		}
		return methodNotAllowed()
	case "SecureBoot/Actions/SecureBoot.ResetKeys":
		if s.secureBoot == nil {
			return notFound(path)
		}
		if r.Method != http.MethodPost {
			return methodNotAllowed()
		}
		var req struct{ ResetKeysType string }
		if resp, ok := decode(body, &req); !ok {
			return resp
		}
		if !slices.Contains(resetKeysTypes, req.ResetKeysType) {
			return badRequest("Base.1.8.ActionParameterNotSupported", "Unsupported ResetKeysType %s", req.ResetKeysType)
		}
		s.secureBoot.KeyResets = append(s.secureBoot.KeyResets, req.ResetKeysType)
		return noContent
	case "SimpleStorage":
		return b.getOnly(r, func() any {
			return collection(path, "SimpleStorageCollection", base+"/SimpleStorage/1")
		})
	case "SimpleStorage/1":
		return b.getOnly(r, func() any {
			devices := []any{}
			for _, d := range s.Disks {
				dev := map[string]any{"Name": d.Name, "Model": d.Model,
					"Status": map[string]any{"State": "Enabled", "Health": "OK"}}
				if d.CapacityBytes > 0 {
					dev["CapacityBytes"] = d.CapacityBytes
				}
				devices = append(devices, dev)
			}
			return map[string]any{"@odata.id": path, "@odata.type": "#SimpleStorage.v1_3_0.SimpleStorage",
				"Id": "1", "Name": "Simple Storage Controller", "Devices": devices}
		})
	case "EthernetInterfaces":
		return b.getOnly(r, func() any {
			var members []string
			for _, n := range s.NICs {
				members = append(members, base+"/EthernetInterfaces/"+n.ID)
			}
			return collection(base+"/EthernetInterfaces", "EthernetInterfaceCollection", members...)
		})
	}
	if nicID, ok := strings.CutPrefix(sub, "EthernetInterfaces/"); ok {
		for _, n := range s.NICs {
			if n.ID == nicID {
				return b.getOnly(r, func() any {
					out := map[string]any{
						"@odata.id": path, "@odata.type": "#EthernetInterface.v1_6_0.EthernetInterface",
						"Id": n.ID, "Name": n.ID, "MACAddress": n.MAC, "PermanentMACAddress": n.MAC,
						"SpeedMbps": nil, "Status": map[string]any{"State": n.State, "Health": "OK"},
					}
					if n.SpeedMbps > 0 {
						out["SpeedMbps"] = n.SpeedMbps
					}
					return out
				})
			}
		}
	}
	if resp, ok := b.hardwareRoute(r, s, sub, path, body); ok {
		return resp
	}
	return notFound(path)
}

var resetKeysTypes = []string{"ResetAllKeysToDefault", "DeleteAllKeys", "DeletePK"}

func renderSecureBoot(base string, sb *secureBoot) map[string]any {
	current := "Disabled"
	if sb.Enabled {
		current = "Enabled"
	}
	return map[string]any{
		"@odata.id": base + "/SecureBoot", "@odata.type": "#SecureBoot.v1_1_0.SecureBoot",
		"Id": "SecureBoot", "Name": "UEFI Secure Boot",
		"SecureBootEnable": sb.Enabled, "SecureBootCurrentBoot": current, "SecureBootMode": sb.Mode,
		"Actions": map[string]any{"#SecureBoot.ResetKeys": map[string]any{
			"target":                                base + "/SecureBoot/Actions/SecureBoot.ResetKeys",
			"ResetKeysType@Redfish.AllowableValues": resetKeysTypes,
		}},
	}
}

func (b *BMC) renderSystem(s *System) map[string]any {
	base := SystemPath(s.ID)
	boot := map[string]any{
		"BootSourceOverrideTarget":                         s.BootTarget,
		"BootSourceOverrideEnabled":                        s.BootEnabled,
		"BootSourceOverrideTarget@Redfish.AllowableValues": s.AllowedTargets,
	}
	if !s.noBootMode {
		boot["BootSourceOverrideMode"] = s.BootMode
	}
	renderHTTPBoot(s, boot)
	out := map[string]any{
		"@odata.id": base, "@odata.type": "#ComputerSystem.v1_13_0.ComputerSystem",
		"Id": s.ID, "Name": s.ID, "UUID": s.UUID, "Manufacturer": s.Manufacturer, "Model": s.Model,
		"SystemType": "Physical", "PowerState": s.PowerState,
		"Status":                  b.systemStatus(s.ID),
		"IndicatorLED":            s.IndicatorLED,
		"LocationIndicatorActive": s.LocationIndicatorActive,
		"Boot":                    boot,
		"Actions": map[string]any{"#ComputerSystem.Reset": map[string]any{
			"target":                            base + "/Actions/ComputerSystem.Reset",
			"ResetType@Redfish.AllowableValues": s.AllowedResets,
		}},
		"EthernetInterfaces": link(base + "/EthernetInterfaces"),
		"SimpleStorage":      link(base + "/SimpleStorage"),
		"Links": map[string]any{
			"Chassis":   []any{link(root + "/Chassis/" + b.chassis.ID)},
			"ManagedBy": []any{link(root + "/Managers/" + b.manager.ID)},
		},
	}
	if s.BiosVersion != "" {
		out["BiosVersion"] = s.BiosVersion
	}
	if s.SerialNumber != "" {
		out["SerialNumber"] = s.SerialNumber
	}
	if s.secureBoot != nil {
		out["SecureBoot"] = link(base + "/SecureBoot")
	}
	b.renderHardware(s, out)
	if b.sensors.noSimpleStorage[s.ID] {
		delete(out, "SimpleStorage")
	}
	return out
}

func (b *BMC) patchSystem(s *System, body []byte) response {
	var req struct {
		Boot *struct {
			BootSourceOverrideTarget  *string
			BootSourceOverrideEnabled *string
			BootSourceOverrideMode    *string
			HTTPBootURI               *string `json:"HttpBootUri"`
		}
		IndicatorLED            *string
		LocationIndicatorActive *bool
	}
	if resp, ok := decode(body, &req); !ok {
		return resp
	}
	applyHTTPBoot, resp, ok := httpBootPatch(body)
	if !ok {
		return resp
	}
	if req.Boot != nil {
		bt := req.Boot
		if bt.BootSourceOverrideTarget != nil && !slices.Contains(s.AllowedTargets, *bt.BootSourceOverrideTarget) {
			return badRequest("Base.1.8.PropertyValueNotInList",
				"The value %s for the property BootSourceOverrideTarget is not in the list of acceptable values.", *bt.BootSourceOverrideTarget)
		}
		if e := bt.BootSourceOverrideEnabled; e != nil {
			if !slices.Contains([]string{"Once", "Continuous", "Disabled"}, *e) || (*e == "Continuous" && s.rejectContinuous) {
				return badRequest("Base.1.8.PropertyValueNotInList",
					"The value %s for the property BootSourceOverrideEnabled is not in the list of acceptable values.", *e)
			}
		}
		if m := bt.BootSourceOverrideMode; m != nil {
			if s.noBootMode || !slices.Contains([]string{"UEFI", "Legacy"}, *m) {
				return badRequest("Base.1.8.PropertyNotWritable", "The property BootSourceOverrideMode is not writable.")
			}
		}
		if bt.BootSourceOverrideTarget != nil {
			s.BootTarget = *bt.BootSourceOverrideTarget
			if bt.BootSourceOverrideEnabled == nil && s.BootEnabled == "Disabled" {
				s.BootEnabled = "Once"
			}
		}
		if bt.BootSourceOverrideEnabled != nil {
			s.BootEnabled = *bt.BootSourceOverrideEnabled
		}
		if m := bt.BootSourceOverrideMode; m != nil {
			if s.bootModeAfterReboot {
				s.pendingBootMode = *m
			} else {
				s.BootMode = *m
			}
		}
	}
	if req.IndicatorLED != nil {
		if !slices.Contains([]string{"Lit", "Off", "Blinking"}, *req.IndicatorLED) {
			return badRequest("Base.1.8.PropertyValueNotInList", "Invalid IndicatorLED %s", *req.IndicatorLED)
		}
		s.IndicatorLED = *req.IndicatorLED
	}
	if req.LocationIndicatorActive != nil {
		s.LocationIndicatorActive = *req.LocationIndicatorActive
	}
	applyHTTPBoot(s)
	return noContent
}

func (b *BMC) chassisRoute(r *http.Request, path string, body []byte) response {
	base := root + "/Chassis/" + b.chassis.ID
	switch path {
	case base + "/Thermal":
		return b.getOnly(r, func() any { return b.renderThermal(path) })
	case base + "/Power":
		return b.getOnly(r, func() any { return b.renderPower(path) })
	}
	if resp, ok := b.adapterRoute(r, base, path); ok {
		return resp
	}
	if path != base {
		return notFound(path)
	}
	render := func() any {
		var systems []any
		for _, id := range b.order {
			systems = append(systems, link(SystemPath(id)))
		}
		out := map[string]any{
			"@odata.id": path, "@odata.type": "#Chassis.v1_14_0.Chassis",
			"Id": b.chassis.ID, "Name": b.chassis.ID, "UUID": b.chassis.UUID, "ChassisType": "RackMount",
			"IndicatorLED": b.chassis.IndicatorLED,
			"Status":       map[string]any{"State": "Enabled", "Health": "OK"},
			"Thermal":      link(base + "/Thermal"),
			"Power":        link(base + "/Power"),
			"Links": map[string]any{
				"ComputerSystems": systems,
				"ManagedBy":       []any{link(root + "/Managers/" + b.manager.ID)},
			},
		}
		if len(b.adapters) > 0 {
			out["NetworkAdapters"] = link(base + "/NetworkAdapters")
		}
		return out
	}
	switch r.Method {
	case http.MethodGet:
		return response{status: http.StatusOK, body: render()}
	case http.MethodPatch:
		if resp, ok := b.checkIfMatch(r, render()); !ok {
			return resp
		}
		var req struct{ IndicatorLED *string }
		if resp, ok := decode(body, &req); !ok {
			return resp
		}
		if req.IndicatorLED == nil || !slices.Contains([]string{"Lit", "Off", "Blinking"}, *req.IndicatorLED) {
			return badRequest("Base.1.8.PropertyValueNotInList", "Invalid IndicatorLED")
		}
		b.chassis.IndicatorLED = *req.IndicatorLED
		return noContent
	}
	return methodNotAllowed()
}

func (b *BMC) managerRoute(r *http.Request, path string, body []byte) response {
	base := root + "/Managers/" + b.manager.ID
	sub := strings.TrimPrefix(strings.TrimPrefix(path, base), "/")
	switch sub {
	case "":
		render := func() any {
			var systems []any
			for _, id := range b.order {
				systems = append(systems, link(SystemPath(id)))
			}
			out := map[string]any{
				"@odata.id": base, "@odata.type": "#Manager.v1_10_0.Manager",
				"Id": b.manager.ID, "Name": "Manager", "ManagerType": "BMC",
				"DateTime":            b.manager.DateTime,
				"DateTimeLocalOffset": b.manager.DateTimeLocalOffset,
				"VirtualMedia":        link(base + "/VirtualMedia"),
				"Links":               map[string]any{"ManagerForServers": systems},
			}
			if b.manager.FirmwareVersion != "" {
				out["FirmwareVersion"] = b.manager.FirmwareVersion
			}
			return out
		}
		switch r.Method {
		case http.MethodGet:
			return response{status: http.StatusOK, body: render()}
		case http.MethodPatch:
			if resp, ok := b.checkIfMatch(r, render()); !ok {
				return resp
			}
			var req struct{ DateTime, DateTimeLocalOffset *string }
			if resp, ok := decode(body, &req); !ok {
				return resp
			}
			if req.DateTime != nil {
				if _, err := time.Parse(time.RFC3339Nano, *req.DateTime); err != nil {
					return badRequest("Base.1.8.PropertyValueFormatError", "Invalid DateTime %s", *req.DateTime)
				}
				b.manager.DateTime = *req.DateTime
			}
			if req.DateTimeLocalOffset != nil {
				b.manager.DateTimeLocalOffset = *req.DateTimeLocalOffset
			}
			return noContent
		}
		return methodNotAllowed()
	case "VirtualMedia":
		return b.getOnly(r, func() any {
			ids := make([]string, 0, len(b.manager.VirtualMedia))
			for id := range b.manager.VirtualMedia {
				ids = append(ids, base+"/VirtualMedia/"+id)
			}
			slices.Sort(ids)
			return collection(path, "VirtualMediaCollection", ids...)
		})
	}
	rest, ok := strings.CutPrefix(sub, "VirtualMedia/")
	if !ok {
		return notFound(path)
	}
	id, action, _ := strings.Cut(rest, "/")
	vm, ok := b.manager.VirtualMedia[id]
	if !ok {
		return notFound(path)
	}
	vmBase := base + "/VirtualMedia/" + id
	switch action {
	case "":
		return b.getOnly(r, func() any {
			return map[string]any{
				"@odata.id": vmBase, "@odata.type": "#VirtualMedia.v1_3_0.VirtualMedia",
				"Id": vm.ID, "Name": vm.ID, "MediaTypes": vm.MediaTypes, "Image": vm.Image,
				"Inserted": vm.Inserted, "WriteProtected": true,
				"Actions": map[string]any{
					"#VirtualMedia.InsertMedia": map[string]any{
						"target": vmBase + "/Actions/VirtualMedia.InsertMedia",
						// As BMCs that mount shares advertise it.
						"TransferProtocolType@Redfish.AllowableValues": []string{"CIFS", "HTTP", "HTTPS", "NFS"},
					},
					"#VirtualMedia.EjectMedia": map[string]any{"target": vmBase + "/Actions/VirtualMedia.EjectMedia"},
				},
			}
		})
	case "Actions/VirtualMedia.InsertMedia":
		if r.Method != http.MethodPost {
			return methodNotAllowed()
		}
		var req struct{ Image, TransferProtocolType, UserName, Password string }
		if resp, ok := decode(body, &req); !ok {
			return resp
		}
		if vm.Inserted {
			return redfishError(http.StatusConflict, "Base.1.8.ResourceInUse", "Media is already inserted.")
		}
		vm.Image, vm.Inserted = req.Image, true
		vm.TransferProtocolType, vm.UserName, vm.Password = req.TransferProtocolType, req.UserName, req.Password
		return noContent
	case "Actions/VirtualMedia.EjectMedia":
		if r.Method != http.MethodPost {
			return methodNotAllowed()
		}
		vm.Image, vm.Inserted = "", false
		return noContent
	}
	return notFound(path)
}
