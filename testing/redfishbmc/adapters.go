package redfishbmc

import (
	"net/http"
	"slices"
	"strings"
)

// NetworkAdapter is a chassis NetworkAdapter with one controller running
// FirmwarePackageVersion and, when Ports is set, a Ports collection.
type NetworkAdapter struct {
	ID, SerialNumber, Manufacturer, Model, FirmwarePackageVersion string
	Ports                                                         []AdapterPort
}

// AdapterPort is a Port of a NetworkAdapter; LLDP, when set, is what the
// port received from its switch (Ethernet.LLDPReceive).
type AdapterPort struct {
	ID   string
	LLDP *LLDPReceive
}

// LLDPReceive is Port.Ethernet.LLDPReceive; empty fields are left out.
type LLDPReceive struct {
	ChassisID, PortID, SystemName, SystemDescription string
	ManagementVlanID                                 int
}

func (l *LLDPReceive) render() map[string]any {
	out := map[string]any{}
	for k, v := range map[string]string{"ChassisId": l.ChassisID, "PortId": l.PortID,
		"SystemName": l.SystemName, "SystemDescription": l.SystemDescription} {
		if v != "" {
			out[k] = v
		}
	}
	if l.ManagementVlanID != 0 {
		out["ManagementVlanId"] = l.ManagementVlanID
	}
	return out
}

// WithNetworkAdapter adds a network adapter to the chassis. A firmware
// image registered for component "nic:<serial or id>" updates it.
func (b *BMC) WithNetworkAdapter(a NetworkAdapter) *BMC {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.adapters = append(b.adapters, &a)
	return b
}

// NetworkAdapterFirmware returns the firmware package version of an
// adapter.
func (b *BMC) NetworkAdapterFirmware(id string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, a := range b.adapters {
		if a.ID == id {
			return a.FirmwarePackageVersion
		}
	}
	return ""
}

// TasksStartOnReset makes new tasks wait in the Starting state until a
// system resets, as NICs and BIOSes that apply firmware only while the
// host restarts do.
func (b *BMC) TasksStartOnReset() *BMC {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.startOnReset = true
	return b
}

// systemReset lets the tasks waiting for a reset run. Called with b.mu
// held.
func (b *BMC) systemReset() {
	for _, t := range b.tasks {
		t.waitReset = false
	}
}

// updateAdapter applies a NIC firmware image to the adapter it names.
func (b *BMC) updateAdapter(component, version string) {
	name := strings.TrimPrefix(component, "nic:")
	for _, a := range b.adapters {
		if a.SerialNumber == name || a.ID == name {
			a.FirmwarePackageVersion = version
		}
	}
}

// adapterRoute answers the chassis NetworkAdapters; ok is false for other
// paths.
func (b *BMC) adapterRoute(r *http.Request, base, path string) (response, bool) {
	coll := base + "/NetworkAdapters"
	if len(b.adapters) == 0 || (path != coll && !strings.HasPrefix(path, coll+"/")) {
		return response{}, false
	}
	if path == coll {
		return b.getOnly(r, func() any {
			members := make([]string, 0, len(b.adapters))
			for _, a := range b.adapters {
				members = append(members, coll+"/"+a.ID)
			}
			return collection(path, "NetworkAdapterCollection", members...)
		}), true
	}
	id, sub, _ := strings.Cut(strings.TrimPrefix(path, coll+"/"), "/")
	i := slices.IndexFunc(b.adapters, func(a *NetworkAdapter) bool { return a.ID == id })
	if i < 0 {
		return notFound(path), true
	}
	a := b.adapters[i]
	if sub != "" {
		return b.adapterPortRoute(r, a, coll+"/"+a.ID, sub, path), true
	}
	return b.getOnly(r, func() any {
		out := map[string]any{"@odata.id": path, "@odata.type": "#NetworkAdapter.v1_5_0.NetworkAdapter",
			"Id": a.ID, "Name": "Network Adapter " + a.ID, "Manufacturer": a.Manufacturer, "Model": a.Model,
			"Controllers": []any{map[string]any{"FirmwarePackageVersion": a.FirmwarePackageVersion}}}
		if a.SerialNumber != "" {
			out["SerialNumber"] = a.SerialNumber
		}
		if len(a.Ports) > 0 {
			out["Ports"] = link(path + "/Ports")
		}
		return out
	}), true
}

// adapterPortRoute answers an adapter's Ports collection and its members.
func (b *BMC) adapterPortRoute(r *http.Request, a *NetworkAdapter, base, sub, path string) response {
	if len(a.Ports) == 0 {
		return notFound(path)
	}
	if sub == "Ports" {
		return b.getOnly(r, func() any {
			members := make([]string, 0, len(a.Ports))
			for _, p := range a.Ports {
				members = append(members, base+"/Ports/"+p.ID)
			}
			return collection(path, "PortCollection", members...)
		})
	}
	id, ok := strings.CutPrefix(sub, "Ports/")
	i := slices.IndexFunc(a.Ports, func(p AdapterPort) bool { return p.ID == id })
	if !ok || i < 0 {
		return notFound(path)
	}
	p := a.Ports[i]
	return b.getOnly(r, func() any {
		out := map[string]any{"@odata.id": path, "@odata.type": "#Port.v1_9_0.Port", "Id": p.ID,
			"Name": "Port " + p.ID, "LinkStatus": "LinkUp"}
		if p.LLDP != nil {
			out["Ethernet"] = map[string]any{"LLDPReceive": p.LLDP.render()}
		}
		return out
	})
}
