package tbn

import (
	"fmt"
	"strconv"

	"gopkg.in/yaml.v3"
)

// actionKeys are the keys of an action in the file; the first two are
// required (upstream's TraitAction.NECESSARY_KEYS and ALL_KEYS).
var actionKeys = []string{"action", "filter", "min_count", "max_count"}

const requiredActionKeys = 2

// ParseConfig reads a trait-based networking file (upstream's ConfigFile):
//
//	CUSTOM_TRAIT:
//	  order: 1            # optional, default 1; traits apply in ascending order
//	  actions:
//	    - action: attach_port
//	      filter: port.vendor == 'purple' && network.name == 'storage'
//	      min_count: 1    # optional
//	      max_count: 2    # optional
//
// It returns the traits in file order when the file is valid, else every
// reason it is not, worded as upstream's validate() words them. A file
// that is not YAML, or not a mapping of traits, is one reason.
func ParseConfig(data []byte) ([]*NetworkTrait, []string) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, []string{fmt.Sprintf("not a YAML document: %v", err)}
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, []string{"the file is not a mapping of trait names to traits"}
	}
	top := doc.Content[0]
	var traits []*NetworkTrait
	var reasons []string
	for i := 0; i+1 < len(top.Content); i += 2 {
		t, why := parseTrait(top.Content[i].Value, top.Content[i+1])
		reasons = append(reasons, why...)
		if t != nil {
			traits = append(traits, t)
		}
	}
	if len(reasons) > 0 {
		return nil, reasons
	}
	return traits, nil
}

// mapping returns the keys in document order and their values.
func mapping(n *yaml.Node) ([]string, map[string]*yaml.Node) {
	vals := map[string]*yaml.Node{}
	var keys []string
	if n.Kind != yaml.MappingNode {
		return nil, vals
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i].Value
		keys = append(keys, k)
		vals[k] = n.Content[i+1]
	}
	return keys, vals
}

func parseTrait(name string, n *yaml.Node) (*NetworkTrait, []string) {
	_, members := mapping(n)
	actionsNode, ok := members["actions"]
	if !ok {
		return nil, []string{fmt.Sprintf("'%s' trait does not include an 'actions' key ", name)}
	}
	if actionsNode.Kind != yaml.SequenceNode {
		return nil, []string{fmt.Sprintf("'%s.actions' does not consist of a list of actions", name)}
	}
	var reasons []string
	t := &NetworkTrait{Name: name, Order: 1}
	if o, ok := members["order"]; ok {
		order, err := strconv.Atoi(o.Value)
		if err != nil || o.Kind != yaml.ScalarNode {
			reasons = append(reasons, fmt.Sprintf("'%s' trait has an order that is not an integer: '%s'", name, o.Value))
		}
		t.Order = order
	}
	for _, an := range actionsNode.Content {
		a, why := parseAction(name, an)
		reasons = append(reasons, why...)
		if a != nil {
			t.Actions = append(t.Actions, a)
		}
	}
	if len(reasons) > 0 {
		return nil, reasons
	}
	return t, nil
}

func parseAction(trait string, n *yaml.Node) (*TraitAction, []string) {
	keys, vals := mapping(n)
	var reasons []string
	for _, k := range actionKeys[:requiredActionKeys] {
		if _, ok := vals[k]; !ok {
			reasons = append(reasons, fmt.Sprintf("'%s' trait is missing '%s' key", trait, k))
		}
	}
	known := map[string]bool{}
	for _, k := range actionKeys {
		known[k] = true
	}
	for _, k := range keys {
		if !known[k] {
			reasons = append(reasons, fmt.Sprintf("'%s' trait action has unrecognized key '%s'", trait, k))
		}
	}
	a := &TraitAction{TraitName: trait}
	if v, ok := vals["action"]; ok {
		a.Action = ActionKind(v.Value)
		if !actionKinds[a.Action] {
			reasons = append(reasons, fmt.Sprintf("'%s' trait action has unrecognized action '%s'", trait, v.Value))
		}
	}
	if v, ok := vals["filter"]; ok {
		f, err := ParseFilter(v.Value)
		if err != nil || v.Kind != yaml.ScalarNode {
			reasons = append(reasons, fmt.Sprintf("'%s' trait action has malformed filter expression: '%s'", trait, v.Value))
		}
		a.Filter = f
	}
	for _, c := range []struct {
		key string
		dst **int
	}{{"min_count", &a.MinCount}, {"max_count", &a.MaxCount}} {
		v, ok := vals[c.key]
		if !ok || v.Tag == "!!null" {
			continue
		}
		n, err := strconv.Atoi(v.Value)
		if err != nil || v.Kind != yaml.ScalarNode {
			reasons = append(reasons, fmt.Sprintf("'%s' trait action has a %s that is not an integer: '%s'", trait, c.key, v.Value))
			continue
		}
		*c.dst = &n
	}
	if len(reasons) > 0 {
		return nil, reasons
	}
	if ok, why := a.Validate(); !ok {
		return nil, []string{fmt.Sprintf("'%s' has an invalid '%s': %s", trait, a.Action, why)}
	}
	return a, nil
}
