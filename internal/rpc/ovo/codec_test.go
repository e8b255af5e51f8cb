package ovo

import (
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/model"
)

func sampleNode() *model.Node {
	when := time.Date(2026, 8, 20, 10, 11, 12, 345000000, time.UTC)
	return &model.Node{
		ID: 7, UUID: "1be26c0b-03f2-4d2e-ae87-c02d7f33c123", CreatedAt: when, Version: "1.44",
		Name: model.Ptr("node-7"), Driver: "fake-hardware", ProvisionState: "manageable", PowerState: "power off",
		DriverInfo: map[string]any{"ipmi_port": 623.0}, Extra: map[string]any{"rack": "r2"},
		Shard: model.Ptr("s1"), ParentNode: model.Ptr("parent"), FirmwareInterface: "fake",
		ServiceStep: map[string]any{}, DisablePowerOff: true, Health: model.Ptr("OK"),
		InstanceName: model.Ptr("vm"), Traits: []string{"CUSTOM_GPU"}, Tags: []string{"t"},
	}
}

// A node pinned to 21.4 leaves out every field Node 1.38 to 1.44 added,
// writes its datetimes as upstream's isotime and its traits as a TraitList
// 1.0 of Trait 1.0; unpinned, it carries them all at 1.44.
func TestEncodeDownLevelsToThePin(t *testing.T) {
	c, err := NewCodec("21.4")
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.Encode(sampleNode(), []string{"extra", "health"})
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "Node" || p.Namespace != "ironic" || p.Version != "1.37" {
		t.Errorf("header %s %s %s", p.Name, p.Namespace, p.Version)
	}
	for _, f := range []string{"parent_node", "firmware_interface", "service_step", "disable_power_off", "instance_name", "health", "tags", "version"} {
		if _, ok := p.Data[f]; ok {
			t.Errorf("1.37 carries %s", f)
		}
	}
	if string(p.Data["shard"]) != `"s1"` || string(p.Data["created_at"]) != `"2026-08-20T10:11:12Z"` {
		t.Errorf("shard %s created_at %s", p.Data["shard"], p.Data["created_at"])
	}
	if !slices.Equal(p.Changes, []string{"extra"}) {
		t.Errorf("changes %v: health is not a field of 1.37", p.Changes)
	}
	var traits Primitive
	if err := json.Unmarshal(p.Data["traits"], &traits); err != nil || traits.Name != "TraitList" || traits.Version != "1.0" {
		t.Errorf("traits %s (%v)", p.Data["traits"], err)
	}

	latest, err := Latest().Encode(sampleNode(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if latest.Version != "1.44" || string(latest.Data["health"]) != `"OK"` || len(latest.Changes) != 0 {
		t.Errorf("latest: %s health %s changes %v", latest.Version, latest.Data["health"], latest.Changes)
	}
}

// What Debian's Ironic 21.4 writes for a node is read with its fields,
// traits and changes.
func TestDecodeUpstreamNode(t *testing.T) {
	raw, err := os.ReadFile("testdata/node-21.4.json")
	if err != nil {
		t.Fatal(err)
	}
	var o Obj[model.Node]
	if err := json.Unmarshal(raw, &o); err != nil {
		t.Fatal(err)
	}
	n := o.V
	if n.ID != 7 || n.UUID != "1be26c0b-03f2-4d2e-ae87-c02d7f33c123" || model.Deref(n.Shard) != "s1" || n.Extra["rack"] != "r2" ||
		!n.CreatedAt.Equal(time.Date(2026, 8, 20, 10, 11, 12, 0, time.UTC)) || !slices.Equal(n.Traits, []string{"CUSTOM_GPU"}) {
		t.Errorf("decoded %+v", n)
	}
	if !slices.Contains(o.Changes, "extra") {
		t.Errorf("changes %v", o.Changes)
	}
}

// Every class goes through the wire and back unchanged at its latest
// version (sub-second times aside, which upstream's isotime drops), and a
// bare model JSON is still read.
func TestRoundTrip(t *testing.T) {
	n := sampleNode()
	n.Version, n.Tags = "", nil
	n.CreatedAt = n.CreatedAt.Truncate(time.Second)
	cases := []any{
		n,
		&model.Port{ID: 3, UUID: "u", Address: model.Ptr("52:54:00:12:34:56"), NodeID: model.Ptr[int64](7), Category: model.Ptr("c"), LocalLinkConnection: map[string]any{}, PXEEnabled: model.Ptr(false)},
		&model.Portgroup{ID: 4, UUID: "u", Name: model.Ptr("pg"), DynamicPortgroup: model.Ptr(true), StandalonePortsSupported: model.Ptr(false)},
		&model.Allocation{ID: 8, UUID: "u", State: "allocating", Traits: []string{"CUSTOM_X"}, Owner: model.Ptr("p")},
		&model.VolumeConnector{ID: 5, UUID: "u", Type: model.Ptr("iqn")},
		&model.VolumeTarget{ID: 6, UUID: "u", BootIndex: model.Ptr(0), VolumeID: model.Ptr("v")},
	}
	for _, in := range cases {
		p, err := Latest().Encode(in, nil)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(p)
		out := reflect.New(reflect.TypeOf(in).Elem()).Interface()
		if _, err := Decode(raw, out); err != nil {
			t.Fatalf("%T: %v", in, err)
		}
		if g, w := mustJSON(t, out), mustJSON(t, in); g != w {
			t.Errorf("%T:\n got %s\nwant %s", in, g, w)
		}
		bare := reflect.New(reflect.TypeOf(in).Elem()).Interface()
		if _, err := Decode(json.RawMessage(mustJSON(t, in)), bare); err != nil || mustJSON(t, bare) != mustJSON(t, in) {
			t.Errorf("%T bare: %v", in, err)
		}
	}
}

// An object newer than ours (or of another major) is refused, as oslo's
// IncompatibleObjectVersion.
func TestDecodeRefusesIncompatibleVersion(t *testing.T) {
	for _, v := range []string{"1.45", "2.0"} {
		raw := []byte(`{"ironic_object.name": "Node", "ironic_object.namespace": "ironic", "ironic_object.version": "` + v + `", "ironic_object.data": {}}`)
		if _, err := Decode(raw, &model.Node{}); err == nil {
			t.Errorf("version %s accepted", v)
		}
	}
}

func TestReleases(t *testing.T) {
	for _, tc := range []struct{ pin, rpc, node string }{
		{"21.4", "1.55", "1.37"}, {"antelope", "1.55", "1.37"}, {"2025.1", "1.61", "1.41"}, {"", "", "1.44"},
	} {
		c, err := NewCodec(tc.pin)
		if err != nil {
			t.Fatal(err)
		}
		if c.RPCVersionCap() != tc.rpc || c.Version(NodeClass) != tc.node {
			t.Errorf("%q: rpc %q node %q", tc.pin, c.RPCVersionCap(), c.Version(NodeClass))
		}
	}
	if _, err := NewCodec("zed"); err == nil {
		t.Error("a pin older than 21.4 was accepted")
	}
	c, _ := NewCodec("21.4")
	if !c.CanSendVersion("1.55") || c.CanSendVersion("1.56") || !Latest().CanSendVersion("1.62") {
		t.Error("can_send_version")
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A port whose sender left pxe_enabled unset (upstream's API does when the
// request has none) gets the database's default, true; one of ours holding
// null goes out as true, since upstream's object refuses None there.
func TestNotNullFieldsTakeUpstreamsDefault(t *testing.T) {
	raw := []byte(`{"ironic_object.name": "Port", "ironic_object.namespace": "ironic", "ironic_object.version": "1.11",
		"ironic_object.data": {"uuid": "u", "address": "52:54:00:00:00:01"}, "ironic_object.changes": ["uuid", "address"]}`)
	var p model.Port
	if _, err := Decode(raw, &p); err != nil {
		t.Fatal(err)
	}
	if p.PXEEnabled == nil || !*p.PXEEnabled || p.LocalLinkConnection == nil || !p.AvailableForDynamicPortgroup {
		t.Errorf("decoded %+v", p)
	}
	out, err := Latest().Encode(&model.Port{UUID: "u"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if string(out.Data["pxe_enabled"]) != "true" || string(out.Data["local_link_connection"]) != "{}" {
		t.Errorf("encoded pxe_enabled %s local_link_connection %s", out.Data["pxe_enabled"], out.Data["local_link_connection"])
	}
}
