package tbn

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/model"
)

func intp(n int) *int { return &n }

func action(t *testing.T, trait string, kind ActionKind, filter string, counts ...int) *TraitAction {
	t.Helper()
	a := &TraitAction{TraitName: trait, Action: kind, Filter: mustFilter(t, filter)}
	if len(counts) > 0 {
		a.MinCount = intp(counts[0])
	}
	if len(counts) > 1 {
		a.MaxCount = intp(counts[1])
	}
	return a
}

// describe renders an action with every field, so that plans compare as
// upstream's dataclass equality compares them.
func describe(a Action) string {
	s := a.Source()
	head := fmt.Sprintf("%s/%s/%s/%s/%s", s.TraitName, s.Action, s.Filter, pyInt(s.MinCount), pyInt(s.MaxCount))
	switch a := a.(type) {
	case *AttachPortAction:
		return fmt.Sprintf("AttachPort{%s %s %s %s}", head, a.NodeUUID, a.PortUUID, a.NetworkID)
	case *AttachPortgroupAction:
		return fmt.Sprintf("AttachPortgroup{%s %s %s %s}", head, a.NodeUUID, a.PortgroupUUID, a.NetworkID)
	case *GroupAndAttachPortsAction:
		return fmt.Sprintf("GroupAndAttachPorts{%s %s %v %s}", head, a.NodeUUID, a.PortUUIDs, a.NetworkID)
	case *NoMatch:
		return fmt.Sprintf("NoMatch{%s %s %q}", head, a.NodeUUID, a.Reason)
	case *NotImplemented:
		return fmt.Sprintf("NotImplemented{%s %s %s}", head, a.NodeUUID, a.Kind)
	}
	return "unknown"
}

func describeAll(actions []Action) []string {
	out := []string{}
	for _, a := range actions {
		out = append(out, describe(a))
	}
	return out
}

func checkPlan(t *testing.T, got []Action, err error, want []Action) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	if g, w := describeAll(got), describeAll(want); !reflect.DeepEqual(g, w) {
		t.Errorf("plan\n got %s\nwant %s", strings.Join(g, "\n     "), strings.Join(w, "\n     "))
	}
}

func withUUID(uuid string, mod func(*PortLike)) PortLike {
	return fauxPort(func(p *PortLike) {
		p.UUID = uuid
		if mod != nil {
			mod(p)
		}
	})
}

const node = "fake_node_uuid"

// Upstream's test_plan_attach_portlike, plus min/max counts.
func TestPlanAttach(t *testing.T) {
	net := []Network{{ID: "fake_net_id", Name: str("network_name")}}
	clover := action(t, "CUSTOM_TRAIT", AttachPort, "port.vendor == 'clover'")
	cogwork := action(t, "CUSTOM_TRAIT", AttachPort, "port.vendor == 'cogwork'")
	hypernet := action(t, "CUSTOM_TRAIT", AttachPortgroup, "port.physical_network == 'hypernet'")
	blue := action(t, "CUSTOM_TRAIT", AttachPortgroup, "port.category == 'blue'")
	red := action(t, "CUSTOM_TRAIT", AttachPortgroup, "port.category == 'red'")
	vendor := func(v string) func(*PortLike) { return func(p *PortLike) { p.Vendor = str(v) } }
	cat := func(c string) func(*PortLike) { return func(p *PortLike) { p.Category = str(c) } }
	twoToThree := action(t, "CUSTOM_TRAIT", AttachPort, "port.is_port", 2, 3)
	fourOrMore := action(t, "CUSTOM_TRAIT", AttachPort, "port.is_port", 4)
	four := []PortLike{withUUID("p1", nil), withUUID("p2", nil), withUUID("p3", nil), withUUID("p4", nil)}
	cases := []struct {
		name     string
		ta       *TraitAction
		portLike []PortLike
		typeName string
		want     []Action
	}{
		{"match a port", clover, []PortLike{withUUID("fake_port_uuid", vendor("clover"))}, "port",
			[]Action{&AttachPortAction{rendered{clover, node}, "fake_port_uuid", "fake_net_id"}}},
		{"match no ports", cogwork, []PortLike{withUUID("fake_port_uuid", vendor("clover")), withUUID("fake_port_uuid2", vendor("clover"))}, "port",
			[]Action{&NoMatch{rendered{cogwork, node}, "No (port, network) pairs matched rule."}}},
		{"match a specific port based on order", cogwork, []PortLike{withUUID("fake_port_uuid", vendor("clover")),
			withUUID("fake_port_uuid3", vendor("cogwork")), withUUID("fake_port_uuid2", vendor("cogwork"))}, "port",
			[]Action{&AttachPortAction{rendered{cogwork, node}, "fake_port_uuid3", "fake_net_id"}}},
		{"match one portgroup", hypernet, []PortLike{withUUID("fake_portgroup_uuid", func(p *PortLike) { p.PhysicalNetwork = str("hypernet") })}, "portgroup",
			[]Action{&AttachPortgroupAction{rendered{hypernet, node}, "fake_portgroup_uuid", "fake_net_id"}}},
		{"match no portgroups", blue, []PortLike{withUUID("fake_portgroup_uuid", cat("green")), withUUID("fake_portgroup_uuid2", cat("red"))}, "portgroup",
			[]Action{&NoMatch{rendered{blue, node}, "No (portgroup, network) pairs matched rule."}}},
		{"match a specific portgroup based on order", red, []PortLike{withUUID("fake_portgroup_uuid", vendor("clover")),
			withUUID("fake_portgroup_uuid3", cat("red")), withUUID("fake_portgroup_uuid2", cat("red"))}, "portgroup",
			[]Action{&AttachPortgroupAction{rendered{red, node}, "fake_portgroup_uuid3", "fake_net_id"}}},
		{"min_count set: all up to max_count", twoToThree, four, "port", []Action{
			&AttachPortAction{rendered{twoToThree, node}, "p1", "fake_net_id"},
			&AttachPortAction{rendered{twoToThree, node}, "p2", "fake_net_id"},
			&AttachPortAction{rendered{twoToThree, node}, "p3", "fake_net_id"}}},
		{"below min_count", fourOrMore, four[:3], "port", []Action{&NoMatch{rendered{fourOrMore, node},
			"Not enough (port, network) pairs matched to meet minimum count threshold. Matched 3 but min_count is 4."}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := planAttach(c.ta, node, c.portLike, net, c.typeName)
			checkPlan(t, got, err, c.want)
		})
	}
}

// Upstream's test_plan_network, plus the id order and the not-implemented
// action.
func TestPlanNetwork(t *testing.T) {
	hyper := action(t, "CUSTOM_TRAIT", AttachPort, "port.physical_network == 'hypernet'")
	clover := action(t, "CUSTOM_TRAIT", AttachPort, "port.vendor == 'clover'")
	bond := action(t, "CUSTOM_TRAIT", BondPorts, "port.is_port")
	port := withUUID("fake_port_uuid", func(p *PortLike) { p.Vendor, p.PhysicalNetwork = str("clover"), str("hypernet") })
	net := []Network{{ID: "fake_net_id", Name: str("fake_net_name")}}
	older := withUUID("older", func(p *PortLike) { p.ID = 1 })
	newer := withUUID("newer", func(p *PortLike) { p.ID = 2 })
	any := action(t, "CUSTOM_TRAIT", AttachPort, "port.is_port")
	cases := []struct {
		name  string
		trait *NetworkTrait
		ports []PortLike
		want  []Action
	}{
		{"attach one port", &NetworkTrait{Name: "CUSTOM_TRAIT", Actions: []*TraitAction{hyper}}, []PortLike{port},
			[]Action{&AttachPortAction{rendered{hyper, node}, "fake_port_uuid", "fake_net_id"}}},
		{"only one port attach generated for two actions matching the same port",
			&NetworkTrait{Name: "CUSTOM_TRAIT", Actions: []*TraitAction{hyper, clover}}, []PortLike{port},
			[]Action{&AttachPortAction{rendered{hyper, node}, "fake_port_uuid", "fake_net_id"},
				&NoMatch{rendered{clover, node}, "No (port, network) pairs matched rule."}}},
		{"newest port first", &NetworkTrait{Name: "CUSTOM_TRAIT", Actions: []*TraitAction{any}}, []PortLike{older, newer},
			[]Action{&AttachPortAction{rendered{any, node}, "newer", "fake_net_id"}}},
		{"bond_ports is not implemented", &NetworkTrait{Name: "CUSTOM_TRAIT", Actions: []*TraitAction{bond}}, []PortLike{port},
			[]Action{&NotImplemented{rendered{bond, node}, BondPorts}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := PlanNetwork(c.trait, node, c.ports, nil, net)
			checkPlan(t, got, err, c.want)
		})
	}
}

// Upstream's test_plan_vif_attach.
func TestPlanVIFAttach(t *testing.T) {
	hyper := func(name string) *TraitAction {
		return action(t, name, AttachPort, "port.physical_network == 'hypernet'")
	}
	second, first := hyper("CUSTOM_TRAIT_ORDER_SECOND"), hyper("CUSTOM_TRAIT_ORDER_FIRST")
	only := hyper("CUSTOM_TRAIT")
	port := withUUID("fake_port_uuid", func(p *PortLike) { p.PhysicalNetwork = str("hypernet") })
	busy := withUUID("fake_port_uuid", func(p *PortLike) { p.PhysicalNetwork, p.Attached = str("hypernet"), true })
	noMatch := &NoMatch{rendered{action(t, "plan_vif_attach", AttachPort, "port.category == 'plan_vif_attach'"), node},
		"Could not find an applicable port or portgroup to attach to network 'fake_net_id' in any applicable trait."}
	cases := []struct {
		name   string
		traits []*NetworkTrait
		ports  []PortLike
		want   []Action
	}{
		{"match a port", []*NetworkTrait{{Name: "CUSTOM_TRAIT", Actions: []*TraitAction{only}, Order: 1}}, []PortLike{port},
			[]Action{&AttachPortAction{rendered{only, node}, "fake_port_uuid", "fake_net_id"}}},
		{"trait order matters", []*NetworkTrait{
			{Name: "CUSTOM_TRAIT_ORDER_SECOND", Actions: []*TraitAction{second}, Order: 2},
			{Name: "CUSTOM_TRAIT_ORDER_FIRST", Actions: []*TraitAction{first}, Order: 1}}, []PortLike{port},
			[]Action{&AttachPortAction{rendered{first, node}, "fake_port_uuid", "fake_net_id"}}},
		{"already attached port not considered", []*NetworkTrait{{Name: "CUSTOM_TRAIT", Actions: []*TraitAction{only}, Order: 1}},
			[]PortLike{busy}, []Action{noMatch}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := PlanVIFAttach(c.traits, node, c.ports, nil, map[string]any{"id": "fake_net_id"})
			checkPlan(t, got, err, c.want)
		})
	}
}

// Upstream's test_is_portlike_attached, through the model.
func TestAttached(t *testing.T) {
	for _, c := range []struct {
		name string
		info map[string]any
		want bool
	}{
		{"port is attached", map[string]any{TenantVIFKey: "vif_id"}, true},
		{"port is not attached", map[string]any{TenantVIFKey: nil}, false},
		{"internal_info is None", nil, false},
	} {
		if got := FromPort(&model.Port{InternalInfo: c.info}).Attached; got != c.want {
			t.Errorf("%s: got %v", c.name, got)
		}
		if got := FromPortgroup(&model.Portgroup{InternalInfo: c.info}).Attached; got != c.want {
			t.Errorf("%s (portgroup): got %v", c.name, got)
		}
	}
}

// Upstream's test__plan_group_and_attach_ports.
func TestPlanGroup(t *testing.T) {
	physAndName := action(t, "CUSTOM_TRAIT", GroupAndAttachPorts, "port.physical_network == 'test_physnet' && network.name == 'test'", 2, 2)
	nameOnly := action(t, "CUSTOM_TRAIT", GroupAndAttachPorts, "network.name == 'test'", 2, 2)
	physnet := func(s string) func(*PortLike) { return func(p *PortLike) { p.PhysicalNetwork = str(s) } }
	test := []Network{fauxNet("test")}
	cases := []struct {
		name  string
		ta    *TraitAction
		ports []PortLike
		nets  []Network
		want  []Action
	}{
		{"a dynamic portgroup is created and attached", physAndName, []PortLike{fauxPort(nil), withUUID("fake_uuid2", nil)}, test,
			[]Action{&GroupAndAttachPortsAction{rendered{physAndName, node}, []string{"fake_uuid", "fake_uuid2"}, "fake_net_id"}}},
		{"too few ports matched", physAndName, []PortLike{fauxPort(physnet("wrong")), withUUID("fake_uuid2", nil)}, test,
			[]Action{&NoMatch{rendered{physAndName, node},
				"Couldn't match enough ports to form a dynamic portgroup for node 'fake_node_uuid'.Minimum ports needed is 2, and 1 ports matched."}}},
		{"no suitable network", physAndName, []PortLike{fauxPort(nil), withUUID("fake_uuid2", nil)}, []Network{fauxNet("bad_name")},
			[]Action{&NoMatch{rendered{physAndName, node},
				"Enough ports matched to form a dynamic portgroup for node 'fake_node_uuid'. Unfortunately no suitable networks were found to attach."}}},
		{"only available_for_dynamic_portgroup", nameOnly, []PortLike{
			fauxPort(func(p *PortLike) { p.AvailableForDynamicPortgroup = false }), withUUID("fake_uuid2", nil), withUUID("fake_uuid3", nil)}, test,
			[]Action{&GroupAndAttachPortsAction{rendered{nameOnly, node}, []string{"fake_uuid2", "fake_uuid3"}, "fake_net_id"}}},
		{"all ports share the physical network", nameOnly, []PortLike{
			fauxPort(physnet("alpha")), withUUID("fake_uuid2", physnet("beta")), withUUID("fake_uuid3", physnet("alpha"))}, test,
			[]Action{&GroupAndAttachPortsAction{rendered{nameOnly, node}, []string{"fake_uuid", "fake_uuid3"}, "fake_net_id"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := planGroup(c.ta, node, c.ports, c.nets)
			checkPlan(t, got, err, c.want)
		})
	}
}

// Upstream's test_actions_to_str.
func TestActionStrings(t *testing.T) {
	ta := action(t, "CUSTOM_TRAIT", AttachPort, "port.vendor == 'clover'")
	r := rendered{ta, "fake_node_uuid"}
	for _, c := range []struct {
		a    Action
		want string
	}{
		{&AttachPortAction{r, "fake_port_uuid", "fake_net_id"}, "Attach port 'fake_port_uuid' on node 'fake_node_uuid' to network 'fake_net_id' via trait CUSTOM_TRAIT"},
		{&AttachPortgroupAction{r, "pg", "fake_net_id"}, "Attach portgroup 'pg' on node 'fake_node_uuid' to network 'fake_net_id'via trait CUSTOM_TRAIT"},
		{&GroupAndAttachPortsAction{r, []string{"a", "b"}, "n"}, "Assemble node 'fake_node_uuid' ports into a dynamic portgroup and attach it to network 'n'. Selected Port UUIDs: ['a', 'b']."},
		{&NoMatch{r, "why"}, "No match found for action under trait 'CUSTOM_TRAIT' on node 'fake_node_uuid': why"},
		{&NotImplemented{r, BondPorts}, "Action 'bond_ports' not yet implemented."},
	} {
		if got := c.a.String(); got != c.want {
			t.Errorf("got %q\nwant %q", got, c.want)
		}
	}
}

// Upstream's test_trait_action_validate.
func TestTraitActionValidate(t *testing.T) {
	for _, c := range []struct {
		ta   *TraitAction
		ok   bool
		want string
	}{
		{action(t, "T", AttachPort, "port.is_port"), true, ""},
		{action(t, "T", GroupAndAttachPorts, "port.is_port", 0), false, "group_and_attach_ports must have a min_count of 2 or greater. Got '0'."},
		{action(t, "T", GroupAndAttachPorts, "port.is_port"), false, "group_and_attach_ports must have a min_count of 2 or greater. Got 'None'."},
		{action(t, "T", GroupAndAttachPorts, "port.is_port", 3, 2), false,
			"group_and_attach_ports must have a max_count greater or equal to it's min_count. min_count is '3' while max_count is '2'."},
		{action(t, "T", GroupAndAttachPorts, "port.is_port", 2, 2), true, ""},
	} {
		if ok, why := c.ta.Validate(); ok != c.ok || why != c.want {
			t.Errorf("%+v: got %v %q", c.ta, ok, why)
		}
	}
}

// Upstream's filter_traits_for_node and test_defaults.
func TestNodeTraitsAndDefault(t *testing.T) {
	a := &NetworkTrait{Name: "CUSTOM_A"}
	b := &NetworkTrait{Name: "CUSTOM_B"}
	n := &model.Node{InstanceInfo: map[string]any{"traits": []any{"CUSTOM_B", "CUSTOM_OTHER"}}}
	if got := NodeTraits(n, []*NetworkTrait{a, b}); len(got) != 1 || got[0] != b {
		t.Errorf("NodeTraits = %v", got)
	}
	if got := NodeTraits(&model.Node{}, []*NetworkTrait{a}); len(got) != 0 {
		t.Errorf("no instance traits: %v", got)
	}
	if d := DefaultTrait([]*NetworkTrait{a}); d != builtinDefault || d.Name != DefaultTraitName {
		t.Errorf("default = %+v", d)
	}
	mine := &NetworkTrait{Name: DefaultTraitName}
	if d := DefaultTrait([]*NetworkTrait{a, mine}); d != mine {
		t.Errorf("configured default not used: %+v", d)
	}
	// The built-in default attaches the first port (newest) only.
	got, err := PlanVIFAttach([]*NetworkTrait{builtinDefault}, node,
		[]PortLike{withUUID("p1", nil), withUUID("p2", func(p *PortLike) { p.ID = 5 })}, nil, map[string]any{"id": "v"})
	checkPlan(t, got, err, []Action{&AttachPortAction{rendered{builtinDefault.Actions[0], node}, "p2", "v"}})
}
