package inspection_test

import (
	"context"
	"encoding/hex"
	"fmt"
	"reflect"
	"testing"

	"github.com/openkeel/ironic/internal/inspection"
	"github.com/openkeel/ironic/internal/model"
)

// tlv builds an IPA LLDP TLV pair: the type and the value bytes in hex,
// given as hex fragments and quoted text.
func tlv(typ int, parts ...string) []any {
	v := ""
	for _, p := range parts {
		if len(p) > 1 && p[0] == '"' {
			v += hex.EncodeToString([]byte(p[1 : len(p)-1]))
		} else {
			v += p
		}
	}
	return []any{float64(typ), v}
}

// leafSwitchTLVs is what an Arista leaf advertises on Ethernet1/18.
func leafSwitchTLVs() []any {
	return []any{
		tlv(1, "04", "885a92ecd0a1"),
		tlv(2, "05", `"Ethernet1/18"`),
		tlv(3, "0078"),
		tlv(4, `"host-port eth0"`),
		tlv(5, `"leaf-01.example.net"`),
		tlv(6, `"Arista Networks EOS"`),
		tlv(7, "0014", "0014"),
		tlv(8, "05", "01", "c0000202", "02", "00000001", "00"),
		tlv(127, "0080c2", "01", "0064"),
		tlv(127, "0080c2", "03", "0064", "09", `"provision"`),
		tlv(127, "0080c2", "03", "00c8", "07", `"tenant1"`),
		tlv(127, "00120f", "01", "03", "6c03", "001e"),
		tlv(127, "00120f", "04", "2328"),
		tlv(0),
	}
}

// leafSwitchParsed is upstream's parse of leafSwitchTLVs.
const leafSwitchParsed = `{"switch_capabilities_enabled":["Bridge","Router"],"switch_capabilities_support":["Bridge","Router"],` +
	`"switch_chassis_id":"88:5a:92:ec:d0:a1","switch_mgmt_addresses":["192.0.2.2"],` +
	`"switch_port_autonegotiation_enabled":true,"switch_port_autonegotiation_support":true,` +
	`"switch_port_description":"host-port eth0","switch_port_id":"Ethernet1/18","switch_port_mau_type":"1000BASE-T full duplex",` +
	`"switch_port_mtu":9000,"switch_port_physical_capabilities":["1000BASE-T fdx","1000BASE-T hdx","100BASE-TX fdx","100BASE-TX hdx","10BASE-T fdx","10BASE-T hdx"],` +
	`"switch_port_untagged_vlan_id":100,"switch_port_vlans":[{"id":100,"name":"provision"},{"id":200,"name":"tenant1"}],` +
	`"switch_system_description":"Arista Networks EOS","switch_system_name":"leaf-01.example.net"}`

func lldpInventory(t *testing.T, lldp ...any) map[string]any {
	t.Helper()
	inv := decode(t, ipaInventory)
	ifaces := inv["interfaces"].([]any)
	for i, l := range lldp {
		ifaces[i].(map[string]any)["lldp"] = l
	}
	return inv
}

func TestParseLLDPSwitch(t *testing.T) {
	tg := newTarget()
	// eth1's TLVs come from plugin data lldp_raw, which wins over the
	// inventory; lo has none.
	pd := map[string]any{"lldp_raw": map[string]any{"eth1": []any{tlv(1, "04", "885a92ecd0b2"), tlv(2, "05", `"Ethernet1/19"`)}}}
	inv := lldpInventory(t, leafSwitchTLVs(), []any{tlv(1, "04", "000000000001")})
	if err := runHooks(t, tg, "parse-lldp", inspection.DefaultHookOptions(), inv, pd); err != nil {
		t.Fatal(err)
	}
	want := `{"eth0":` + leafSwitchParsed + `,"eth1":{"switch_chassis_id":"88:5a:92:ec:d0:b2","switch_port_id":"Ethernet1/19"}}`
	if got := jsonOf(pd["parsed_lldp"]); got != want {
		t.Errorf("parsed_lldp =\n%s\nwant\n%s", got, want)
	}
}

// TestParseLLDPTLVs checks single decoding rules against upstream's
// parser, odd ones included.
func TestParseLLDPTLVs(t *testing.T) {
	chassis := tlv(1, "04", "001122334455")
	const ch = `"switch_chassis_id":"00:11:22:33:44:55"`
	cases := []struct {
		name    string
		tlvs    []any
		want    string // parsed_lldp["eth0"], "" when absent
		wantErr string
	}{
		{name: "organisational TLVs before any other value are lost",
			tlvs: []any{tlv(127, "0080c2", "01", "0064"), tlv(1, "04", "885a92ecd0a1"), tlv(127, "0080c2", "01", "00c8")},
			want: `{"switch_chassis_id":"88:5a:92:ec:d0:a1","switch_port_untagged_vlan_id":200}`},
		{name: "only organisational TLVs", tlvs: []any{tlv(127, "0080c2", "01", "0064")}},
		{name: "port ID IPv4", tlvs: []any{tlv(2, "04", "01", "c0000201")}, want: `{"switch_port_id":"192.0.2.1"}`},
		{name: "port ID IPv6", tlvs: []any{tlv(2, "04", "02", "20010db8000000000000000000000001")}, want: `{"switch_port_id":"2001:db8::1"}`},
		{name: "port ID small IPv6 prints as IPv4", tlvs: []any{tlv(2, "04", "02", "000000000000000000000000c0000201")}, want: `{"switch_port_id":"192.0.2.1"}`},
		{name: "port ID mapped IPv6", tlvs: []any{tlv(2, "04", "02", "00000000000000000000ffffc0000201")}, want: `{"switch_port_id":"::ffff:192.0.2.1"}`},
		{name: "port ID MAC family", tlvs: []any{tlv(2, "04", "06", "aabbccddeeff")}, want: `{"switch_port_id":"aa:bb:cc:dd:ee:ff"}`},
		{name: "port ID unknown family", tlvs: []any{tlv(2, "04", "09", "c0000201")}, want: `{"switch_port_id":null}`},
		{name: "port ID too short", tlvs: []any{tlv(2, "04", "06", "aabbcc")}},
		{name: "first value wins", tlvs: []any{tlv(2, "05", `"a"`), tlv(2, "05", `"b"`)}, want: `{"switch_port_id":"a"}`},
		{name: "undecodable text skipped", tlvs: []any{tlv(5, "ff"), tlv(6, `"Linux"`)}, want: `{"switch_system_description":"Linux"}`},
		{name: "capabilities of the wrong size", tlvs: []any{tlv(7, "0014000400")}},
		{name: "all capabilities", tlvs: []any{tlv(7, "ffffffff")},
			want: `{"switch_capabilities_enabled":["Repeater","Bridge","WLAN","Router","Telephone","DOCSIS cable device","Station only","C-Vlan","S-Vlan","TPMR"],` +
				`"switch_capabilities_support":["Repeater","Bridge","WLAN","Router","Telephone","DOCSIS cable device","Station only","C-Vlan","S-Vlan","TPMR"]}`},
		{name: "unknown MAU type", tlvs: []any{chassis, tlv(127, "00120f", "01", "03", "8001", "0063")}, want: `{` + ch + `}`},
		{name: "protocol VLANs", tlvs: []any{chassis, tlv(127, "0080c2", "02", "06", "00c8"), tlv(127, "0080c2", "02", "04", "00c9")},
			want: `{` + ch + `,"switch_port_protocol_vlan_enabled":true,"switch_port_protocol_vlan_ids":[200,201],"switch_port_protocol_vlan_support":true}`},
		{name: "protocol identity", tlvs: []any{chassis, tlv(127, "0080c2", "04", "03", "abcdef")}, want: `{` + ch + `,"switch_protocol_identities":["abcdef"]}`},
		{name: "802.1 link aggregation wins over 802.3", tlvs: []any{chassis, tlv(127, "0080c2", "07", "03", "00000005"), tlv(127, "00120f", "03", "01", "0000000a")},
			want: `{` + ch + `,"switch_port_link_aggregation_enabled":true,"switch_port_link_aggregation_id":5,"switch_port_link_aggregation_support":true}`},
		{name: "unknown OUI and subtype", tlvs: []any{chassis, tlv(127, "aabbcc", "01"), tlv(127, "0080c2", "09")}, want: `{` + ch + `}`},
		// Upstream names 10BASE-T fdx after the half-duplex bit.
		{name: "autonegotiation capabilities", tlvs: []any{chassis, tlv(127, "00120f", "01", "02", "fffe", "001e")},
			want: `{` + ch + `,"switch_port_autonegotiation_enabled":true,"switch_port_autonegotiation_support":false,"switch_port_mau_type":"1000BASE-T full duplex",` +
				`"switch_port_physical_capabilities":["1000BASE-T hdx","1000BASE-X fdx","1000BASE-X hdx","100BASE-T2 fdx","100BASE-T2 hdx","100BASE-TX fdx","100BASE-TX hdx","10BASE-T fdx","10BASE-T hdx","10BASE-T4","Asym PAUSE fdx","Asym and Sym PAUSE fdx","PAUSE fdx","Sym PAUSE fdx"]}`},
		{name: "10BASE-T full duplex bit alone", tlvs: []any{chassis, tlv(127, "00120f", "01", "03", "2000", "001e")},
			want: `{` + ch + `,"switch_port_autonegotiation_enabled":true,"switch_port_autonegotiation_support":true,"switch_port_mau_type":"1000BASE-T full duplex","switch_port_physical_capabilities":[]}`},
		{name: "VLAN name padding trimmed", tlvs: []any{chassis, tlv(127, "0080c2", "03", "0064", "05", "7674000000"), tlv(127, "0080c2", "03", "0065")},
			want: `{` + ch + `,"switch_port_vlans":[{"id":100,"name":"vt"}]}`},
		{name: "management addresses", tlvs: []any{tlv(8, "07", "06", "aabbccddeeff", "020000000100"), tlv(8, "05", "02", "c0000203")},
			want: `{"switch_mgmt_addresses":["aa:bb:cc:dd:ee:ff"]}`},
		{name: "non-text value skipped", tlvs: []any{[]any{3.0, nil}, tlv(5, `"sw1"`)}, want: `{"switch_system_name":"sw1"}`},
		{name: "type given as text", tlvs: []any{[]any{"5", "737731"}}},
		{name: "chassis ID as IANA address", tlvs: []any{tlv(1, "05", "01", "c0000201"), chassis}, want: `{"switch_chassis_id":"192.0.2.1"}`},
		{name: "unknown chassis subtype", tlvs: []any{tlv(1, "08", "aa")},
			wantErr: unexpected("AttributeError", nodeUUID, "'NoneType' object has no attribute 'value'")},
		{name: "not hexadecimal", tlvs: []any{[]any{2.0, "zz"}}, wantErr: unexpected("Error", nodeUUID, "Non-hexadecimal digit found")},
		{name: "odd length", tlvs: []any{[]any{2.0, "abc"}}, wantErr: unexpected("Error", nodeUUID, "Odd-length string")},
		{name: "pair too short", tlvs: []any{[]any{2.0}}, wantErr: unexpected("ValueError", nodeUUID, "not enough values to unpack (expected 2, got 1)")},
		{name: "pair too long", tlvs: []any{[]any{2.0, "0561", "x"}}, wantErr: unexpected("ValueError", nodeUUID, "too many values to unpack (expected 2)")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pd := map[string]any{}
			err := runHooks(t, newTarget(), "parse-lldp", inspection.DefaultHookOptions(), lldpInventory(t, c.tlvs), pd)
			if c.wantErr != "" {
				if err == nil || err.Error() != c.wantErr {
					t.Fatalf("error =\n%v\nwant\n%s", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			parsed, _ := pd["parsed_lldp"].(map[string]any)
			got := ""
			if v, ok := parsed["eth0"]; ok {
				got = jsonOf(v)
			}
			if got != c.want {
				t.Errorf("parsed =\n%s\nwant\n%s", got, c.want)
			}
		})
	}
}

func TestParseLLDPInterfaceLimit(t *testing.T) {
	var ifaces []any
	for i := 0; i < 70; i++ {
		ifaces = append(ifaces, map[string]any{"name": fmt.Sprintf("eth%d", i), "lldp": []any{tlv(5, fmt.Sprintf(`"sw%d"`, i))}})
	}
	pd := map[string]any{}
	if err := runHooks(t, newTarget(), "parse-lldp", inspection.DefaultHookOptions(), map[string]any{"interfaces": ifaces}, pd); err != nil {
		t.Fatal(err)
	}
	parsed := pd["parsed_lldp"].(map[string]any)
	if len(parsed) != 64 || parsed["eth63"] == nil || parsed["eth64"] != nil {
		t.Errorf("parsed %d interfaces: eth63=%v eth64=%v", len(parsed), parsed["eth63"], parsed["eth64"])
	}
}

// llcTarget has ports for the inventory's NICs, eth1's with a switch
// port already recorded.
func llcTarget(t *testing.T) *memTarget {
	t.Helper()
	tg := newTarget()
	for _, p := range []struct {
		mac string
		llc map[string]any
	}{
		{"52:54:00:aa:bb:01", nil},
		{"52:54:00:aa:bb:02", map[string]any{"port_id": "Ethernet9/9"}},
	} {
		mac, id := p.mac, tg.node.ID
		if err := tg.CreatePort(context.Background(), &model.Port{Address: &mac, NodeID: &id, LocalLinkConnection: p.llc}); err != nil {
			t.Fatal(err)
		}
	}
	return tg
}

func (m *memTarget) llc() map[string]any {
	out := map[string]any{}
	for _, p := range m.ports {
		out[*p.Address] = p.LocalLinkConnection
	}
	return out
}

func TestLocalLinkConnection(t *testing.T) {
	eth1 := []any{tlv(1, "04", "885a92ecd0b2"), tlv(2, "05", `"Ethernet1/19"`), tlv(5, `"leaf-02"`)}
	all := func(o *inspection.HookOptions) { o.AddPorts = "all" }
	cases := []struct {
		name    string
		lldp    []any
		pd      map[string]any
		want    string
		wantErr string
	}{
		{name: "switch port and chassis", lldp: []any{leafSwitchTLVs(), eth1},
			want: `{"52:54:00:aa:bb:01":{"port_id":"Ethernet1/18","switch_id":"88:5a:92:ec:d0:a1","switch_info":"leaf-01.example.net"},` +
				`"52:54:00:aa:bb:02":{"port_id":"Ethernet9/9","switch_id":"88:5a:92:ec:d0:b2","switch_info":"leaf-02"}}`},
		{name: "lldp_raw wins", lldp: []any{leafSwitchTLVs()},
			pd:   map[string]any{"lldp_raw": map[string]any{"eth0": []any{tlv(2, "05", `"Ethernet7/1"`)}}},
			want: `{"52:54:00:aa:bb:01":{"port_id":"Ethernet7/1"},"52:54:00:aa:bb:02":{"port_id":"Ethernet9/9"}}`},
		{name: "later TLV wins, only MAC chassis IDs count", lldp: []any{[]any{tlv(2, "05", `"a"`), tlv(2, "05", `"b"`), tlv(1, "06", `"leaf"`)}},
			want: `{"52:54:00:aa:bb:01":{"port_id":"b"},"52:54:00:aa:bb:02":{"port_id":"Ethernet9/9"}}`},
		{name: "bad hex drops the interface", lldp: []any{[]any{tlv(2, "05", `"a"`), []any{3.0, "zz"}}},
			want: `{"52:54:00:aa:bb:01":null,"52:54:00:aa:bb:02":{"port_id":"Ethernet9/9"}}`},
		{name: "unknown port subtype ignored", lldp: []any{[]any{tlv(2, "08", "aa"), tlv(2, "04", "09", "c0000201")}},
			want: `{"52:54:00:aa:bb:01":null,"52:54:00:aa:bb:02":{"port_id":"Ethernet9/9"}}`},
		{name: "unknown chassis subtype", lldp: []any{[]any{tlv(1, "08", "aa")}},
			wantErr: unexpected("TypeError", nodeUUID, "argument of type 'EnumInteger' is not iterable")},
		{name: "short port ID", lldp: []any{[]any{tlv(2, "03", "aabb")}},
			wantErr: unexpected("StreamError", nodeUUID, "Error in path (parsing) -> value -> value\nstream read less than specified amount, expected 1, found 0")},
		{name: "undecodable system name", lldp: []any{[]any{tlv(5, "ff")}},
			wantErr: unexpected("UnicodeDecodeError", nodeUUID, "'utf-8' codec can't decode byte 0xff in position 0: invalid start byte")},
		{name: "undecodable port name", lldp: []any{[]any{tlv(2, "05", "01c0000201")}},
			wantErr: unexpected("UnicodeDecodeError", nodeUUID, "'utf-8' codec can't decode byte 0xc0 in position 1: invalid start byte")},
		{name: "value not text", lldp: []any{[]any{[]any{2.0, nil}}},
			wantErr: unexpected("TypeError", nodeUUID, "argument should be bytes, buffer or ASCII string, not 'NoneType'")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tg := llcTarget(t)
			o := inspection.DefaultHookOptions()
			all(&o)
			pd := c.pd
			if pd == nil {
				pd = map[string]any{}
			}
			err := runHooks(t, tg, "validate-interfaces,local-link-connection", o, lldpInventory(t, c.lldp...), pd)
			if c.wantErr != "" {
				if err == nil || err.Error() != c.wantErr {
					t.Fatalf("error =\n%v\nwant\n%s", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := jsonOf(tg.llc()); got != c.want {
				t.Errorf("local_link_connection =\n%s\nwant\n%s", got, c.want)
			}
		})
	}
}

// TestLocalLinkConnectionWithoutPort: an interface without a port is
// skipped, no port is created for it.
func TestLocalLinkConnectionWithoutPort(t *testing.T) {
	tg := newTarget()
	inv := lldpInventory(t, leafSwitchTLVs())
	if err := runHooks(t, tg, "validate-interfaces,local-link-connection", inspection.DefaultHookOptions(), inv, map[string]any{}); err != nil {
		t.Fatal(err)
	}
	if len(tg.ports) != 0 {
		t.Errorf("ports = %v", tg.ports)
	}
	// With the ports hook first, the new PXE port gets the switch port.
	if err := runHooks(t, tg, "validate-interfaces,ports,local-link-connection", inspection.DefaultHookOptions(), inv, map[string]any{}); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"52:54:00:aa:bb:01": map[string]any{"port_id": "Ethernet1/18", "switch_id": "88:5a:92:ec:d0:a1", "switch_info": "leaf-01.example.net"}}
	if got := tg.llc(); !reflect.DeepEqual(got, want) {
		t.Errorf("local_link_connection = %v", got)
	}
}
