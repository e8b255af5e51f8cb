package redfishbmc

import (
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// hardware is what out-of-band inspection and the BIOS interface read:
// processors, memory, Storage volumes and drives, and the Bios resource.
type hardware struct {
	cpus     []CPU
	pcie     [][]PCIeFunction
	memory   []int // MiB per DIMM
	totalGiB int
	volumes  []int64
	drives   []int64
	bios     *bios
	raid     *raidStorage
}

// CPU is one Processor resource.
type CPU struct {
	Arch string // ProcessorArchitecture: x86, ARM, IA-64, MIPS, OEM
	// InstructionSet is reported as is; empty means x86-64 for x86,
	// ARM-A64 for ARM and none for the others.
	InstructionSet string
	Cores          int
	Threads        int
	Model          string
	// MaxSpeedMHz is left out when zero.
	MaxSpeedMHz int
}

func (c CPU) instructionSet() any {
	if c.InstructionSet != "" {
		return c.InstructionSet
	}
	if is, ok := map[string]string{"x86": "x86-64", "ARM": "ARM-A64"}[c.Arch]; ok {
		return is
	}
	return nil
}

// RegistryAttribute is one entry of the BIOS AttributeRegistry.
type RegistryAttribute struct {
	Name            string
	Type            string
	ReadOnly        bool
	ResetRequired   bool
	AllowableValues []string
	LowerBound      *int64
	UpperBound      *int64
	MinLength       *int
	MaxLength       *int
}

type bios struct {
	attrs    map[string]any
	defaults map[string]any
	pending  map[string]any
	registry []RegistryAttribute
	// ignored names are accepted in the settings object but never applied,
	// as a BMC that silently drops a setting does.
	ignored      []string
	resetPending bool
	resetBios    int
	patches      int
}

const biosRegistryID = "BiosAttributeRegistry.v1_0_0"

// Processor adds a Processor resource.
func Processor(cpu CPU) SystemOption {
	return func(s *System) { s.hw.cpus = append(s.hw.cpus, cpu) }
}

// MemoryGiB sets MemorySummary.TotalSystemMemoryGiB and adds one DIMM of
// that size to the Memory collection.
func MemoryGiB(gib int) SystemOption {
	return func(s *System) { s.hw.totalGiB = gib; s.hw.memory = append(s.hw.memory, gib*1024) }
}

// StorageVolume adds a volume of the system's Storage controller.
func StorageVolume(capacityBytes int64) SystemOption {
	return func(s *System) { s.hw.volumes = append(s.hw.volumes, capacityBytes) }
}

// StorageDrive adds a drive of the system's Storage controller.
func StorageDrive(capacityBytes int64) SystemOption {
	return func(s *System) { s.hw.drives = append(s.hw.drives, capacityBytes) }
}

// Bios gives the system a Bios resource with these attributes, which are
// also what ResetBios restores.
func Bios(attrs map[string]any) SystemOption {
	return func(s *System) {
		s.hw.bios = &bios{attrs: maps.Clone(attrs), defaults: maps.Clone(attrs), pending: map[string]any{}}
	}
}

// BiosRegistry publishes an AttributeRegistry for the system's Bios.
func BiosRegistry(entries ...RegistryAttribute) SystemOption {
	return func(s *System) {
		if s.hw.bios != nil {
			s.hw.bios.registry = entries
		}
	}
}

// BiosIgnores makes the BMC accept but never apply the named settings.
func BiosIgnores(names ...string) SystemOption {
	return func(s *System) {
		if s.hw.bios != nil {
			s.hw.bios.ignored = names
		}
	}
}

// applyOnReset applies the pending BIOS settings (or the factory reset) as
// a BIOS does when the system restarts.
func (h *hardware) applyOnReset() {
	b := h.bios
	if b == nil {
		return
	}
	if b.resetPending {
		b.attrs, b.resetPending = maps.Clone(b.defaults), false
	}
	for k, v := range b.pending {
		if !slices.Contains(b.ignored, k) {
			b.attrs[k] = v
		}
	}
	b.pending = map[string]any{}
}

// BiosState is what tests read of a system's Bios.
type BiosState struct {
	Attributes map[string]any
	Pending    map[string]any
	// ResetBios counts ResetBios actions; Patches counts settings PATCHes.
	ResetBios, Patches int
}

// BiosOf returns the Bios state of a system.
func (b *BMC) BiosOf(id string) BiosState {
	b.mu.Lock()
	defer b.mu.Unlock()
	bs := b.mustSystem(id).hw.bios
	if bs == nil {
		return BiosState{}
	}
	return BiosState{Attributes: maps.Clone(bs.attrs), Pending: maps.Clone(bs.pending),
		ResetBios: bs.resetBios, Patches: bs.patches}
}

// SetBiosAttribute changes a BIOS attribute behind the client's back.
func (b *BMC) SetBiosAttribute(id, name string, value any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if bs := b.mustSystem(id).hw.bios; bs != nil {
		bs.attrs[name] = value
	}
}

func (b *BMC) renderHardware(s *System, out map[string]any) {
	base := SystemPath(s.ID)
	h := &s.hw
	if len(h.cpus) > 0 {
		out["Processors"] = link(base + "/Processors")
		cores := 0
		for _, c := range h.cpus {
			cores += c.Cores
		}
		out["ProcessorSummary"] = map[string]any{"Count": len(h.cpus), "CoreCount": cores, "Model": h.cpus[0].Model}
	}
	if h.totalGiB > 0 {
		out["Memory"] = link(base + "/Memory")
		out["MemorySummary"] = map[string]any{"TotalSystemMemoryGiB": h.totalGiB,
			"Status": map[string]any{"State": "Enabled", "Health": "OK"}}
	}
	if len(h.volumes)+len(h.drives) > 0 {
		out["Storage"] = link(base + "/Storage")
	}
	if h.bios != nil {
		out["Bios"] = link(base + "/Bios")
	}
	if len(h.pcie) > 0 {
		out["PCIeDevices"] = linkList(memberPaths(base, "PCIeDevices", len(h.pcie)))
	}
}

// hardwareRoute answers the resources of hardware; ok is false for paths
// it does not know.
func (b *BMC) hardwareRoute(r *http.Request, s *System, sub, path string, body []byte) (response, bool) {
	base := SystemPath(s.ID)
	h := &s.hw
	member := func(prefix string, n int) (int, bool) {
		rest, ok := strings.CutPrefix(sub, prefix+"/")
		if !ok {
			return 0, false
		}
		i, err := strconv.Atoi(rest)
		if err != nil || i < 1 || i > n {
			return 0, false
		}
		return i - 1, true
	}
	members := func(prefix string, n int) []string { return memberPaths(base, prefix, n) }
	if h.raid != nil {
		if resp, ok := b.raidRoute(r, s, sub, path, body); ok {
			return resp, true
		}
	}
	switch {
	case sub == "Processors" && len(h.cpus) > 0:
		return b.getOnly(r, func() any { return collection(path, "ProcessorCollection", members("Processors", len(h.cpus))...) }), true
	case sub == "Memory" && h.totalGiB > 0:
		return b.getOnly(r, func() any { return collection(path, "MemoryCollection", members("Memory", len(h.memory))...) }), true
	case sub == "Storage" && len(h.volumes)+len(h.drives) > 0:
		return b.getOnly(r, func() any { return collection(path, "StorageCollection", base+"/Storage/1") }), true
	case sub == "Storage/1" && len(h.volumes)+len(h.drives) > 0:
		return b.getOnly(r, func() any {
			return map[string]any{"@odata.id": path, "@odata.type": "#Storage.v1_8_0.Storage", "Id": "1",
				"Name": "Storage Controller", "Drives": linkList(members("Storage/1/Drives", len(h.drives))),
				"Volumes": link(base + "/Storage/1/Volumes"),
				"StorageControllers": []any{map[string]any{"MemberId": "0", "Name": "SATA Controller", "SpeedGbps": 6,
					"SupportedControllerProtocols": []string{"PCIe"}, "SupportedDeviceProtocols": []string{"SATA"},
					"Status": map[string]any{"State": "Enabled", "Health": "OK"}}}}
		}), true
	case sub == "Storage/1/Volumes" && len(h.volumes)+len(h.drives) > 0:
		return b.getOnly(r, func() any {
			return collection(path, "VolumeCollection", members("Storage/1/Volumes", len(h.volumes))...)
		}), true
	case strings.HasPrefix(sub, "Bios") && h.bios != nil:
		return b.biosRoute(r, s, strings.TrimPrefix(sub, "Bios"), path, body), true
	case strings.HasPrefix(sub, "PCIeDevices/"):
		return b.pcieRoute(r, s, strings.TrimPrefix(sub, "PCIeDevices/"), path)
	}
	if i, ok := member("Processors", len(h.cpus)); ok {
		c := h.cpus[i]
		return b.getOnly(r, func() any {
			out := map[string]any{"@odata.id": path, "@odata.type": "#Processor.v1_9_0.Processor",
				"Id": strconv.Itoa(i + 1), "Name": "CPU", "ProcessorType": "CPU", "ProcessorArchitecture": c.Arch,
				"InstructionSet": c.instructionSet(), "Model": c.Model, "TotalCores": c.Cores, "TotalThreads": c.Threads,
				"Status": map[string]any{"State": "Enabled", "Health": "OK"}}
			if c.MaxSpeedMHz > 0 {
				out["MaxSpeedMHz"] = c.MaxSpeedMHz
			}
			return out
		}), true
	}
	if i, ok := member("Memory", len(h.memory)); ok {
		return b.getOnly(r, func() any {
			return map[string]any{"@odata.id": path, "@odata.type": "#Memory.v1_10_0.Memory",
				"Id": strconv.Itoa(i + 1), "Name": "DIMM", "CapacityMiB": h.memory[i],
				"Status": map[string]any{"State": "Enabled", "Health": "OK"}}
		}), true
	}
	if i, ok := member("Storage/1/Volumes", len(h.volumes)); ok {
		return b.getOnly(r, func() any {
			return map[string]any{"@odata.id": path, "@odata.type": "#Volume.v1_5_0.Volume",
				"Id": strconv.Itoa(i + 1), "Name": "Volume " + strconv.Itoa(i+1), "CapacityBytes": h.volumes[i],
				"Status": map[string]any{"State": "Enabled", "Health": "OK"}}
		}), true
	}
	if i, ok := member("Storage/1/Drives", len(h.drives)); ok {
		return b.getOnly(r, func() any {
			return map[string]any{"@odata.id": path, "@odata.type": "#Drive.v1_9_0.Drive",
				"Id": strconv.Itoa(i + 1), "Name": "Drive " + strconv.Itoa(i+1), "CapacityBytes": h.drives[i],
				"MediaType": "HDD", "Protocol": "SATA", "Manufacturer": "OpenKeel", "Model": "Emulated Disk",
				"SerialNumber": "DRIVE-" + strconv.Itoa(i+1), "Revision": "1.0",
				"Status": map[string]any{"State": "Enabled", "Health": "OK"}}
		}), true
	}
	return response{}, false
}

// memberPaths are the paths base/prefix/1..n.
func memberPaths(base, prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = base + "/" + prefix + "/" + strconv.Itoa(i+1)
	}
	return out
}

func linkList(paths []string) []any {
	out := make([]any, 0, len(paths))
	for _, p := range paths {
		out = append(out, link(p))
	}
	return out
}

func (b *BMC) biosRoute(r *http.Request, s *System, sub, path string, body []byte) response {
	base := SystemPath(s.ID) + "/Bios"
	bs := s.hw.bios
	switch sub {
	case "":
		return b.getOnly(r, func() any {
			return map[string]any{"@odata.id": base, "@odata.type": "#Bios.v1_1_0.Bios", "Id": "BIOS",
				"Name": "BIOS Configuration", "AttributeRegistry": biosRegistryID, "Attributes": bs.attrs,
				"@Redfish.Settings": map[string]any{"SettingsObject": link(base + "/Settings"),
					"SupportedApplyTimes": []string{"OnReset", "Immediate"}},
				"Actions": map[string]any{"#Bios.ResetBios": map[string]any{"target": base + "/Actions/Bios.ResetBios"}},
			}
		})
	case "/Settings":
		switch r.Method {
		case http.MethodGet:
			return response{status: http.StatusOK, body: map[string]any{"@odata.id": path,
				"@odata.type": "#Bios.v1_1_0.Bios", "Id": "Settings", "Attributes": bs.pending}}
		case http.MethodPatch:
			var req struct {
				Attributes map[string]json.RawMessage
			}
			if resp, ok := decode(body, &req); !ok {
				return resp
			}
			next := maps.Clone(bs.pending)
			for k, raw := range req.Attributes {
				if _, known := bs.attrs[k]; !known {
					return badRequest("Base.1.8.PropertyUnknown", "The property %s is not in the list of valid properties for the resource.", k)
				}
				for _, e := range bs.registry {
					if e.Name == k && e.ReadOnly {
						return badRequest("Base.1.8.PropertyNotWritable", "The property %s is a read only property and cannot be assigned a value.", k)
					}
				}
				var v any
				if err := json.Unmarshal(raw, &v); err != nil {
					return badRequest("Base.1.8.MalformedJSON", "The value of %s is not valid JSON.", k)
				}
				next[k] = v
			}
			bs.pending = next
			bs.patches++
			return noContent
		}
		return methodNotAllowed()
	case "/Actions/Bios.ResetBios":
		if r.Method != http.MethodPost {
			return methodNotAllowed()
		}
		bs.resetBios++
		bs.resetPending = true
		return noContent
	}
	return notFound(path)
}

// registryRoute serves the Registries collection with the BIOS attribute
// registry of the first system that has one.
func (b *BMC) registryRoute(r *http.Request, path string) response {
	var reg []RegistryAttribute
	for _, id := range b.order {
		if bs := b.systems[id].hw.bios; bs != nil && bs.registry != nil {
			reg = bs.registry
			break
		}
	}
	file := root + "/Registries/" + biosRegistryID
	switch path {
	case root + "/Registries":
		members := []string{}
		if reg != nil {
			members = append(members, file)
		}
		return b.getOnly(r, func() any { return collection(path, "MessageRegistryFileCollection", members...) })
	case file:
		if reg == nil {
			break
		}
		return b.getOnly(r, func() any {
			return map[string]any{"@odata.id": path, "@odata.type": "#MessageRegistryFile.v1_1_0.MessageRegistryFile",
				"Id": biosRegistryID, "Name": "BIOS Attribute Registry", "Registry": biosRegistryID,
				"Languages": []string{"en"},
				"Location":  []any{map[string]any{"Language": "en", "Uri": file + "/registry"}}}
		})
	case file + "/registry":
		if reg == nil {
			break
		}
		return b.getOnly(r, func() any {
			entries := make([]any, 0, len(reg))
			for _, e := range reg {
				m := map[string]any{"AttributeName": e.Name, "Type": e.Type, "ReadOnly": e.ReadOnly,
					"ResetRequired": e.ResetRequired}
				if e.AllowableValues != nil {
					vals := make([]any, 0, len(e.AllowableValues))
					for _, v := range e.AllowableValues {
						vals = append(vals, map[string]any{"ValueName": v, "ValueDisplayName": v})
					}
					m["Value"] = vals
				}
				for k, v := range map[string]any{"LowerBound": e.LowerBound, "UpperBound": e.UpperBound} {
					if p, _ := v.(*int64); p != nil {
						m[k] = *p
					}
				}
				for k, v := range map[string]*int{"MinLength": e.MinLength, "MaxLength": e.MaxLength} {
					if v != nil {
						m[k] = *v
					}
				}
				entries = append(entries, m)
			}
			return map[string]any{"@odata.id": path, "@odata.type": "#AttributeRegistry.v1_3_0.AttributeRegistry",
				"Id": biosRegistryID, "Name": "BIOS Attribute Registry", "Language": "en",
				"RegistryVersion": "1.0.0", "OwningEntity": "OpenKeel",
				"RegistryEntries": map[string]any{"Attributes": entries}}
		})
	}
	return notFound(path)
}
