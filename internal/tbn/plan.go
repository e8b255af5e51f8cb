package tbn

import (
	"fmt"
	"sort"
)

// Action is a planned action (upstream's RenderedAction): one of
// *AttachPortAction, *AttachPortgroupAction, *GroupAndAttachPortsAction,
// *NoMatch or *NotImplemented.
type Action interface {
	// Source is the trait action the plan rendered this from.
	Source() *TraitAction
	String() string
}

type rendered struct {
	TraitAction *TraitAction
	NodeUUID    string
}

func (r rendered) Source() *TraitAction { return r.TraitAction }

// AttachPortAction attaches a port to the network.
type AttachPortAction struct {
	rendered
	PortUUID  string
	NetworkID string
}

// AttachPortgroupAction attaches a portgroup to the network.
type AttachPortgroupAction struct {
	rendered
	PortgroupUUID string
	NetworkID     string
}

// GroupAndAttachPortsAction gathers ports into a new dynamic portgroup
// and attaches that to the network.
type GroupAndAttachPortsAction struct {
	rendered
	PortUUIDs []string
	NetworkID string
}

// NoMatch says why a trait action matched nothing.
type NoMatch struct {
	rendered
	Reason string
}

// NotImplemented is an action the planner recognises but cannot plan.
type NotImplemented struct {
	rendered
	Kind ActionKind
}

func (a *AttachPortAction) String() string {
	return fmt.Sprintf("Attach port '%s' on node '%s' to network '%s' via trait %s", a.PortUUID, a.NodeUUID, a.NetworkID, a.TraitAction.TraitName)
}

// String keeps upstream's missing space before "via".
func (a *AttachPortgroupAction) String() string {
	return fmt.Sprintf("Attach portgroup '%s' on node '%s' to network '%s'via trait %s", a.PortgroupUUID, a.NodeUUID, a.NetworkID, a.TraitAction.TraitName)
}

func (a *GroupAndAttachPortsAction) String() string {
	return fmt.Sprintf("Assemble node '%s' ports into a dynamic portgroup and attach it to network '%s'. Selected Port UUIDs: %s.",
		a.NodeUUID, a.NetworkID, pyStrList(a.PortUUIDs))
}

func (a *NoMatch) String() string {
	return fmt.Sprintf("No match found for action under trait '%s' on node '%s': %s", a.TraitAction.TraitName, a.NodeUUID, a.Reason)
}

func (a *NotImplemented) String() string {
	return fmt.Sprintf("Action '%s' not yet implemented.", a.Kind)
}

// pyStrList renders a list of strings as Python's str() of a list.
func pyStrList(items []string) string {
	s := "["
	for i, it := range items {
		if i > 0 {
			s += ", "
		}
		s += "'" + it + "'"
	}
	return s + "]"
}

// AllNoMatch is upstream's all_no_match: true for a plan of nothing but
// NoMatch actions, and for an empty plan.
func AllNoMatch(actions []Action) bool {
	for _, a := range actions {
		if _, ok := a.(*NoMatch); !ok {
			return false
		}
	}
	return true
}

func isNoMatchList(actions []Action) bool {
	if len(actions) != 1 {
		return false
	}
	_, ok := actions[0].(*NoMatch)
	return ok
}

// PlanNetwork is upstream's plan_network: the trait's actions in order,
// each over the port-likes earlier actions left, newest (highest id)
// first, against the networks.
func PlanNetwork(trait *NetworkTrait, nodeUUID string, ports, portgroups []PortLike, networks []Network) ([]Action, error) {
	ports = newestFirst(ports)
	portgroups = newestFirst(portgroups)
	var plan []Action
	for _, ta := range trait.Actions {
		var actions []Action
		var err error
		switch ta.Action {
		case AttachPort:
			actions, err = planAttach(ta, nodeUUID, ports, networks, "port")
			if err == nil && !isNoMatchList(actions) {
				ports = without(ports, actions)
			}
		case AttachPortgroup:
			actions, err = planAttach(ta, nodeUUID, portgroups, networks, "portgroup")
			if err == nil && !isNoMatchList(actions) {
				portgroups = without(portgroups, actions)
			}
		case GroupAndAttachPorts:
			actions, err = planGroup(ta, nodeUUID, ports, networks)
			if err == nil && !isNoMatchList(actions) {
				ports = without(ports, actions)
			}
		default:
			actions = []Action{&NotImplemented{rendered{ta, nodeUUID}, ta.Action}}
		}
		if err != nil {
			return nil, err
		}
		plan = append(plan, actions...)
	}
	return plan, nil
}

func newestFirst(in []PortLike) []PortLike {
	out := append([]PortLike(nil), in...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].ID > out[j].ID })
	return out
}

// without drops the port-likes the actions attached or grouped.
func without(in []PortLike, actions []Action) []PortLike {
	used := map[string]bool{}
	for _, a := range actions {
		switch a := a.(type) {
		case *AttachPortAction:
			used[a.PortUUID] = true
		case *AttachPortgroupAction:
			used[a.PortgroupUUID] = true
		case *GroupAndAttachPortsAction:
			for _, u := range a.PortUUIDs {
				used[u] = true
			}
		}
	}
	var out []PortLike
	for _, p := range in {
		if !used[p.UUID] {
			out = append(out, p)
		}
	}
	return out
}

// planAttach is upstream's _plan_attach_portlike: every matching
// (port-like, network) pair, ports outermost; without a min_count only the
// first, and never more than max_count.
func planAttach(ta *TraitAction, nodeUUID string, portLikes []PortLike, networks []Network, typeName string) ([]Action, error) {
	var actions []Action
pairs:
	for _, p := range portLikes {
		for _, n := range networks {
			ok, err := ta.matches(p, n)
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
			r := rendered{ta, nodeUUID}
			if typeName == "port" {
				actions = append(actions, &AttachPortAction{r, p.UUID, n.ID})
			} else {
				actions = append(actions, &AttachPortgroupAction{r, p.UUID, n.ID})
			}
			if ta.MinCount == nil || (ta.MaxCount != nil && *ta.MaxCount == len(actions)) {
				break pairs
			}
		}
	}
	if len(actions) == 0 {
		return []Action{&NoMatch{rendered{ta, nodeUUID}, fmt.Sprintf("No (%s, network) pairs matched rule.", typeName)}}, nil
	}
	if ta.MinCount != nil && len(actions) < *ta.MinCount {
		return []Action{&NoMatch{rendered{ta, nodeUUID}, fmt.Sprintf(
			"Not enough (%s, network) pairs matched to meet minimum count threshold. Matched %d but min_count is %d.",
			typeName, len(actions), *ta.MinCount)}}, nil
	}
	return actions, nil
}

// planGroup is upstream's _plan_group_and_attach_ports: the ports open
// to dynamic grouping that match the filter whatever the network, all on
// the first one's physical network, up to max_count; then the first
// network the first of them matches.
func planGroup(ta *TraitAction, nodeUUID string, ports []PortLike, networks []Network) ([]Action, error) {
	var matched []PortLike
	anyNetwork := Network{universal: true}
	for _, p := range ports {
		if !p.AvailableForDynamicPortgroup {
			continue
		}
		ok, err := ta.matches(p, anyNetwork)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		// A portgroup's ports share one physical network.
		if len(matched) == 0 || samePhysnet(matched[0], p) {
			matched = append(matched, p)
		}
		if ta.MaxCount != nil && len(matched) == *ta.MaxCount {
			break
		}
	}
	// Configuration checks give every group action a min_count; a trait
	// built without one needs a single port.
	minCount := 0
	if ta.MinCount != nil {
		minCount = *ta.MinCount
	}
	r := rendered{ta, nodeUUID}
	if len(matched) < minCount || len(matched) == 0 {
		return []Action{&NoMatch{r, fmt.Sprintf(
			"Couldn't match enough ports to form a dynamic portgroup for node '%s'.Minimum ports needed is %s, and %d ports matched.",
			nodeUUID, pyInt(ta.MinCount), len(matched))}}, nil
	}
	for _, n := range networks {
		ok, err := ta.matches(matched[0], n)
		if err != nil {
			return nil, err
		}
		if ok {
			uuids := make([]string, len(matched))
			for i, p := range matched {
				uuids[i] = p.UUID
			}
			return []Action{&GroupAndAttachPortsAction{r, uuids, n.ID}}, nil
		}
	}
	return []Action{&NoMatch{r, fmt.Sprintf(
		"Enough ports matched to form a dynamic portgroup for node '%s'. Unfortunately no suitable networks were found to attach.", nodeUUID)}}, nil
}

func samePhysnet(a, b PortLike) bool {
	if a.PhysicalNetwork == nil || b.PhysicalNetwork == nil {
		return a.PhysicalNetwork == b.PhysicalNetwork
	}
	return *a.PhysicalNetwork == *b.PhysicalNetwork
}

// PlanVIFAttach is upstream's plan_vif_attach: the node's traits in
// ascending order, each planned over the free (VIF-less) ports and
// portgroups against the VIF's network; the first trait whose plan is
// not all NoMatch wins. When none does, the plan is a single NoMatch.
func PlanVIFAttach(traits []*NetworkTrait, nodeUUID string, ports, portgroups []PortLike, vifInfo map[string]any) ([]Action, error) {
	net := NetworkFromVIFInfo(vifInfo)
	free := func(in []PortLike) []PortLike {
		var out []PortLike
		for _, p := range in {
			if !p.Attached {
				out = append(out, p)
			}
		}
		return out
	}
	freePorts, freeGroups := free(ports), free(portgroups)
	ordered := append([]*NetworkTrait(nil), traits...)
	sort.SliceStable(ordered, func(i, j int) bool { return ordered[i].Order < ordered[j].Order })
	for _, t := range ordered {
		actions, err := PlanNetwork(t, nodeUUID, freePorts, freeGroups, []Network{net})
		if err != nil {
			return nil, err
		}
		if !AllNoMatch(actions) {
			return actions, nil
		}
	}
	f, err := ParseFilter("port.category == 'plan_vif_attach'")
	if err != nil {
		return nil, err
	}
	return []Action{&NoMatch{rendered{&TraitAction{TraitName: "plan_vif_attach", Action: AttachPort, Filter: f}, nodeUUID},
		fmt.Sprintf("Could not find an applicable port or portgroup to attach to network '%s' in any applicable trait.", net.ID)}}, nil
}
