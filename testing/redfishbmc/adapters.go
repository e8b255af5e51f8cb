package redfishbmc

import (
	"net/http"
	"slices"
	"strings"
)

// NetworkAdapter is a chassis NetworkAdapter with one controller running
// FirmwarePackageVersion.
type NetworkAdapter struct {
	ID, SerialNumber, Manufacturer, Model, FirmwarePackageVersion string
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
	id := strings.TrimPrefix(path, coll+"/")
	i := slices.IndexFunc(b.adapters, func(a *NetworkAdapter) bool { return a.ID == id })
	if i < 0 {
		return notFound(path), true
	}
	a := b.adapters[i]
	return b.getOnly(r, func() any {
		out := map[string]any{"@odata.id": path, "@odata.type": "#NetworkAdapter.v1_5_0.NetworkAdapter",
			"Id": a.ID, "Name": "Network Adapter " + a.ID, "Manufacturer": a.Manufacturer, "Model": a.Model,
			"Controllers": []any{map[string]any{"FirmwarePackageVersion": a.FirmwarePackageVersion}}}
		if a.SerialNumber != "" {
			out["SerialNumber"] = a.SerialNumber
		}
		return out
	}), true
}
