package inspection

import (
	_ "embed"
	"errors"
	"fmt"
	"os"

	"github.com/openkeel/ironic/internal/pyfmt"
	"gopkg.in/yaml.v3"
)

//go:embed known_accelerators.yaml
var shippedAccelerators []byte

// loadKnownAccelerators reads the accelerators hook's device list and
// checks it as upstream's hook does when it loads: a pci_devices list
// whose every item has a vendor_id and a device_id.
func loadKnownAccelerators(path string) ([]map[string]any, error) {
	raw := shippedAccelerators
	if path != "" {
		var err error
		if raw, err = os.ReadFile(path); err != nil {
			return nil, fmt.Errorf("read known accelerators: %w", err)
		}
	}
	var doc any
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("parse known accelerators %s: %w", path, err)
	}
	top, _ := jsonish(doc).(map[string]any)
	list, ok := top["pci_devices"]
	if !ok {
		return nil, errors.New("Could not find pci_devices in the configuration data.")
	}
	items, ok := list.([]any)
	if !ok {
		return nil, errors.New("pci_devices in the configuration file should contain a list of devices.")
	}
	out := make([]map[string]any, 0, len(items))
	for _, it := range items {
		dev, _ := it.(map[string]any)
		if !pyfmt.Truthy(dev["vendor_id"]) || !pyfmt.Truthy(dev["device_id"]) {
			return nil, errors.New("One of the PCI devices in the configuration file is missing vendor_id or device_id.")
		}
		out = append(out, dev)
	}
	return out, nil
}
