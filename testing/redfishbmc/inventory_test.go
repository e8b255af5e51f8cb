package redfishbmc

import (
	"net/http"
	"testing"
)

func TestInventoryResources(t *testing.T) {
	b := New(t).System("s1",
		SerialNumber("SN-1"), Model("R1"),
		Processor(CPU{Arch: "x86", Threads: 8, MaxSpeedMHz: 3200}),
		Processor(CPU{Arch: "ARM", InstructionSet: "ARM-A32", Threads: 2}),
		EthernetInterface("nic1", "52:54:00:aa:bb:01", "Enabled"), NICSpeed("nic1", 25000),
		EthernetInterface("nic2", "52:54:00:aa:bb:02", "Enabled"),
		PCIeDevice(PCIeFunction{DeviceClass: "NetworkController", DeviceID: "0x16d7", VendorID: "0x14e4"}),
		PCIeDevice(),
	).WithNetworkAdapter(NetworkAdapter{ID: "NIC.1", Ports: []AdapterPort{
		{ID: "p1", LLDP: &LLDPReceive{ChassisID: "aa:bb:cc:dd:ee:ff", PortID: "Eth1/1", ManagementVlanID: 100}},
		{ID: "p2"},
	}})
	c := call{t: t, base: b.URL()}
	_, sys := c.do(http.MethodGet, "/redfish/v1/Systems/s1", nil)
	if sys["SerialNumber"] != "SN-1" || sys["Model"] != "R1" {
		t.Errorf("system serial/model: %v %v", sys["SerialNumber"], sys["Model"])
	}
	devs, _ := sys["PCIeDevices"].([]any)
	if len(devs) != 2 {
		t.Fatalf("PCIeDevices %v", sys["PCIeDevices"])
	}

	_, p1 := c.do(http.MethodGet, "/redfish/v1/Systems/s1/Processors/1", nil)
	_, p2 := c.do(http.MethodGet, "/redfish/v1/Systems/s1/Processors/2", nil)
	if p1["InstructionSet"] != "x86-64" || p1["MaxSpeedMHz"] != float64(3200) || p2["InstructionSet"] != "ARM-A32" {
		t.Errorf("processors %v / %v", p1, p2)
	}
	if _, has := p2["MaxSpeedMHz"]; has {
		t.Errorf("MaxSpeedMHz of a CPU without one: %v", p2)
	}

	_, n1 := c.do(http.MethodGet, "/redfish/v1/Systems/s1/EthernetInterfaces/nic1", nil)
	_, n2 := c.do(http.MethodGet, "/redfish/v1/Systems/s1/EthernetInterfaces/nic2", nil)
	if n1["SpeedMbps"] != float64(25000) || n2["SpeedMbps"] != nil {
		t.Errorf("NIC speeds %v %v", n1["SpeedMbps"], n2["SpeedMbps"])
	}

	_, dev := c.do(http.MethodGet, "/redfish/v1/Systems/s1/PCIeDevices/1", nil)
	fl, _ := dev["PCIeFunctions"].(map[string]any)
	_, fns := c.do(http.MethodGet, fl["@odata.id"].(string), nil)
	members, _ := fns["Members"].([]any)
	if len(members) != 1 {
		t.Fatalf("functions %v", fns)
	}
	_, fn := c.do(http.MethodGet, members[0].(map[string]any)["@odata.id"].(string), nil)
	if fn["DeviceClass"] != "NetworkController" || fn["DeviceId"] != "0x16d7" || fn["VendorId"] != "0x14e4" || fn["SubsystemId"] != nil {
		t.Errorf("function %v", fn)
	}
	_, bare := c.do(http.MethodGet, "/redfish/v1/Systems/s1/PCIeDevices/2", nil)
	if _, has := bare["PCIeFunctions"]; has {
		t.Errorf("device without functions lists them: %v", bare)
	}
	resp, _ := c.do(http.MethodGet, "/redfish/v1/Systems/s1/PCIeDevices/3", nil)
	wantStatus(t, resp, http.StatusNotFound)

	_, ad := c.do(http.MethodGet, "/redfish/v1/Chassis/1U/NetworkAdapters/NIC.1", nil)
	pl, _ := ad["Ports"].(map[string]any)
	if pl == nil {
		t.Fatalf("adapter without Ports: %v", ad)
	}
	_, ports := c.do(http.MethodGet, pl["@odata.id"].(string), nil)
	if m, _ := ports["Members"].([]any); len(m) != 2 {
		t.Fatalf("ports %v", ports)
	}
	_, port := c.do(http.MethodGet, pl["@odata.id"].(string)+"/p1", nil)
	eth, _ := port["Ethernet"].(map[string]any)
	lldp, _ := eth["LLDPReceive"].(map[string]any)
	if lldp["ChassisId"] != "aa:bb:cc:dd:ee:ff" || lldp["PortId"] != "Eth1/1" || lldp["ManagementVlanId"] != float64(100) {
		t.Errorf("LLDP %v", port)
	}
	if _, has := lldp["SystemName"]; has {
		t.Errorf("empty SystemName served: %v", lldp)
	}
	_, port2 := c.do(http.MethodGet, pl["@odata.id"].(string)+"/p2", nil)
	if _, has := port2["Ethernet"]; has {
		t.Errorf("port without LLDP: %v", port2)
	}
}
