package tbn

import (
	"fmt"

	"github.com/openkeel/ironic/internal/model"
)

// ActionKind is what a trait action does with what its filter picks.
type ActionKind string

// The actions upstream recognises; bond_ports is accepted in the file
// but not planned (upstream renders it as not implemented).
const (
	AttachPort          ActionKind = "attach_port"
	AttachPortgroup     ActionKind = "attach_portgroup"
	BondPorts           ActionKind = "bond_ports"
	GroupAndAttachPorts ActionKind = "group_and_attach_ports"
)

var actionKinds = map[ActionKind]bool{AttachPort: true, AttachPortgroup: true, BondPorts: true, GroupAndAttachPorts: true}

// minGroupCount is the fewest ports a dynamic portgroup is made of
// (upstream's DEFAULT_GROUP_AND_ATTACH_MIN_COUNT).
const minGroupCount = 2

// TraitAction is one action of a trait.
type TraitAction struct {
	TraitName string
	Action    ActionKind
	Filter    *Filter
	// MinCount and MaxCount bound how many pairs an attach matches (none:
	// the first one) and how many ports a group gathers.
	MinCount *int
	MaxCount *int
}

// Validate is upstream's TraitAction.validate: a group needs at least two
// ports and a max_count no smaller than its min_count. The string is why
// the action is invalid.
func (a *TraitAction) Validate() (bool, string) {
	if a.Action != GroupAndAttachPorts {
		return true, ""
	}
	if a.MinCount == nil || *a.MinCount < minGroupCount {
		return false, fmt.Sprintf("%s must have a min_count of %d or greater. Got '%s'.", a.Action, minGroupCount, pyInt(a.MinCount))
	}
	if a.MaxCount != nil && *a.MaxCount < *a.MinCount {
		return false, fmt.Sprintf("%s must have a max_count greater or equal to it's min_count. min_count is '%d' while max_count is '%d'.",
			a.Action, *a.MinCount, *a.MaxCount)
	}
	return true, ""
}

// pyInt renders an optional count as Python's str() does.
func pyInt(n *int) string {
	if n == nil {
		return "None"
	}
	return fmt.Sprint(*n)
}

func (a *TraitAction) matches(p PortLike, n Network) (bool, error) { return a.Filter.Matches(p, n) }

// NetworkTrait is a trait of the file: its actions, applied in file
// order, and its order among the traits of a node (ascending).
type NetworkTrait struct {
	Name    string
	Actions []*TraitAction
	Order   int
}

// DefaultTraitName is the trait applied, when
// [conductor]/trait_based_networking_enable_default_trait is set, to a
// node none of whose traits the file names.
const DefaultTraitName = "CUSTOM_DEFAULT_TBN_TRAIT"

// builtinDefault attaches the first free port, as upstream's DEFAULT_TRAIT.
var builtinDefault = func() *NetworkTrait {
	f, err := ParseFilter("port.is_port || port.is_portgroup")
	if err != nil {
		panic(err)
	}
	one := 1
	return &NetworkTrait{Name: DefaultTraitName, Order: 1,
		Actions: []*TraitAction{{TraitName: DefaultTraitName, Action: AttachPort, Filter: f, MaxCount: &one}}}
}()

// DefaultTrait is upstream's default_network_trait: the file's
// CUSTOM_DEFAULT_TBN_TRAIT when it defines one, else the built-in trait
// that attaches the first free port.
func DefaultTrait(configured []*NetworkTrait) *NetworkTrait {
	for _, t := range configured {
		if t.Name == DefaultTraitName {
			return t
		}
	}
	return builtinDefault
}

// TenantVIFKey is the internal_info key of an attached VIF.
const TenantVIFKey = "tenant_vif_port_id"

// FromPort is the planner's view of a port (upstream's Port.from_ironic_port).
func FromPort(p *model.Port) PortLike {
	return PortLike{ID: p.ID, UUID: p.UUID, Address: p.Address, Category: p.Category,
		PhysicalNetwork: p.PhysicalNetwork, Vendor: p.Vendor,
		AvailableForDynamicPortgroup: p.AvailableForDynamicPortgroup, Attached: attached(p.InternalInfo)}
}

// FromPortgroup is the planner's view of a portgroup. Portgroups have no
// vendor, so port.vendor fails on one as any absent attribute does
// (upstream reads a vendor field its Portgroup object does not have).
func FromPortgroup(pg *model.Portgroup) PortLike {
	return PortLike{ID: pg.ID, UUID: pg.UUID, Address: pg.Address, Category: pg.Category,
		PhysicalNetwork: pg.PhysicalNetwork, IsPortgroup: true, Attached: attached(pg.InternalInfo)}
}

// attached is upstream's is_portlike_attached: only a non-null
// tenant_vif_port_id in internal_info counts.
func attached(internalInfo map[string]any) bool {
	v, ok := internalInfo[TenantVIFKey]
	return ok && v != nil
}

// NodeTraits is upstream's filter_traits_for_node: the traits of the
// file that the node's instance_info "traits" names (what Nova sets from
// the flavor), in file order.
func NodeTraits(node *model.Node, traits []*NetworkTrait) []*NetworkTrait {
	names := map[string]bool{}
	switch list := node.InstanceInfo["traits"].(type) {
	case []any:
		for _, n := range list {
			if s, ok := n.(string); ok {
				names[s] = true
			}
		}
	case []string:
		for _, s := range list {
			names[s] = true
		}
	}
	var out []*NetworkTrait
	for _, t := range traits {
		if names[t.Name] {
			out = append(out, t)
		}
	}
	return out
}
