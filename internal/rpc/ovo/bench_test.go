package ovo

import (
	"encoding/json"
	"testing"

	"github.com/openkeel/ironic/internal/model"
)

// enrolledNode is a node as the API hands a creation to the conductor:
// a BMC's driver_info, properties and free-form fields of a real fleet.
func enrolledNode() *model.Node {
	n := sampleNode()
	n.DriverInfo = map[string]any{"redfish_address": "https://10.0.0.7", "redfish_username": "root",
		"redfish_password": "secret", "redfish_system_id": "/redfish/v1/Systems/1", "redfish_verify_ca": false,
		"deploy_kernel": "http://images/ipa.kernel", "deploy_ramdisk": "http://images/ipa.initramfs"}
	n.Properties = map[string]any{"cpu_arch": "x86_64", "cpus": json.Number("64"), "memory_mb": json.Number("524288"),
		"local_gb": json.Number("3500"), "capabilities": "boot_mode:uefi,secure_boot:true"}
	n.Extra = map[string]any{"rack": "r2", "row": json.Number("12"), "labels": []any{"gpu", "nvme"}}
	n.InstanceInfo = map[string]any{}
	n.DriverInternalInfo = map[string]any{}
	return n
}

// BenchmarkNodeThroughTheWire is a node sent and read back as the
// in-process transport and a JSON-RPC peer pass it (Encode, marshal,
// Decode).
func BenchmarkNodeThroughTheWire(b *testing.B) {
	n := enrolledNode()
	b.ReportAllocs()
	for b.Loop() {
		raw, err := json.Marshal(Wrap(Latest(), n))
		if err != nil {
			b.Fatal(err)
		}
		var out Obj[model.Node]
		if err := json.Unmarshal(raw, &out); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNodeTranscode is the same node through the in-process
// transport's shortcut.
func BenchmarkNodeTranscode(b *testing.B) {
	n := enrolledNode()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Transcode(Latest(), n); err != nil {
			b.Fatal(err)
		}
	}
}
