package driver

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/openkeel/ironic/internal/pyfmt"
)

// ValidateRAIDConfig is upstream's base RAIDInterface.validate_raid_config
// (ironic.common.raid.validate_configuration): raidConfig is checked
// against the RAID configuration schema, then for more than one root
// volume. Interfaces without checks of their own use it as they are;
// the others call it before theirs, as upstream's call super().
//
// The schema is evaluated here rather than by a JSON schema library
// because the message reaches the user after "RAID config validation
// error: " and must be the one upstream's jsonschema (4.26) picks with
// best_match among all the violations, worded as it words them.
func ValidateRAIDConfig(raidConfig map[string]any) error {
	var instance any = raidConfig
	if raidConfig == nil {
		instance = nil
	}
	if v := bestMatch(raidSchema.check(instance, nil)); v != nil {
		return InvalidParameterValue("RAID config validation error: %s", v.msg)
	}
	roots := 0
	disks, _ := raidConfig["logical_disks"].([]any)
	for _, d := range disks {
		if ld, _ := d.(map[string]any); pyfmt.Truthy(ld["is_root_volume"]) {
			roots++
		}
	}
	if roots > 1 {
		return InvalidParameterValue("Raid config cannot have more than one root volume. %d root volumes were specified", roots)
	}
	return nil
}

// RAIDLogicalDiskProperties is upstream's RAIDInterface
// get_logical_disk_properties: each property a logical disk of the RAID
// configuration may set, with the schema's description of it. Every
// RAID interface answers from this one schema.
func RAIDLogicalDiskProperties() map[string]string {
	disk := raidSchema.properties[0].schema.items
	out := make(map[string]string, len(disk.properties))
	for _, p := range disk.properties {
		out[p.name] = p.schema.description
	}
	return out
}

// schema is the subset of JSON schema draft 4 the RAID schema uses. Its
// keywords are evaluated in the order they appear in upstream's schema
// file for every node of it, which is the order jsonschema reports
// violations of one place in.
type schema struct {
	// description is the schema's text for a logical disk property,
	// which get_logical_disk_properties shows.
	description  string
	typ          string
	enum         []string
	minimum      *float64
	exclusiveMin bool
	anyOf        []*schema
	properties   []property
	items        *schema
	minItems     int
	required     []string
	closed       bool
	dependencies []dependency
}

type property struct {
	name   string
	schema *schema
}

type dependency struct{ property, requires string }

var raidSchema = &schema{
	typ: "object",
	properties: []property{{"logical_disks", &schema{
		typ: "array",
		items: &schema{
			typ: "object",
			properties: []property{
				{"raid_level", &schema{description: "RAID level for the logical disk. Valid values are 'JBOD', '0', '1', '2', '5', '6', '1+0', '5+0' and '6+0'. Required.", typ: "string", enum: []string{"JBOD", "0", "1", "2", "5", "6", "1+0", "5+0", "6+0"}}},
				{"size_gb", &schema{description: "Size in GiB (Integer) for the logical disk. Use 'MAX' as size_gb if this logical disk is supposed to use the rest of the space available. Required.", anyOf: []*schema{
					{typ: "integer", minimum: new(float64)},
					{typ: "string", enum: []string{"MAX"}},
				}}},
				{"volume_name", &schema{description: "Name of the volume to be created. If this is not specified, it will be auto-generated. Optional.", typ: "string"}},
				{"is_root_volume", &schema{description: "Specifies whether this disk is a root volume. By default, this is False. Optional.", typ: "boolean"}},
				{"share_physical_disks", &schema{description: "Specifies whether other logical disks can share physical disks with this logical disk. By default, this is False. Optional.", typ: "boolean"}},
				{"disk_type", &schema{description: "The type of disk preferred. Valid values are 'hdd' and 'ssd'. If this is not specified, disk type will not be a selection criterion for choosing backing physical disks. Optional.", typ: "string", enum: []string{"hdd", "ssd"}}},
				{"interface_type", &schema{description: "The interface type of disk. Valid values are 'sata', 'scsi' and 'sas'. If this is not specified, interface type will not be a selection criterion for choosing backing physical disks. Optional.", typ: "string", enum: []string{"sata", "scsi", "sas"}}},
				{"number_of_physical_disks", &schema{description: "Number of physical disks to use for this logical disk. By default, the driver uses the minimum number of disks required for that RAID level. Optional.", typ: "integer", minimum: new(float64), exclusiveMin: true}},
				{"controller", &schema{description: "Controller to use for this logical disk. If not specified, the driver will choose a suitable RAID controller on the bare metal node. Optional.", typ: "string"}},
				{"physical_disks", &schema{description: "The physical disks to use for this logical disk. If not specified, the driver will choose suitable physical disks to use. Optional.", anyOf: []*schema{
					{typ: "array", items: &schema{typ: "string"}},
					{typ: "array", items: &schema{typ: "object"}, minItems: 2},
				}}},
			},
			required:     []string{"raid_level", "size_gb"},
			closed:       true,
			dependencies: []dependency{{"physical_disks", "controller"}},
		},
		minItems: 1,
	}}},
	required: []string{"logical_disks"},
	closed:   true,
}

// violation is one jsonschema ValidationError: where in the instance it
// lies (relative to the anyOf that holds it, for those in context), and
// what best_match's relevance looks at.
type violation struct {
	path []any
	msg  string
	// weak is an anyOf violation, which others at the same place win over.
	weak bool
	// typeMatches is _matches_type: the instance is of the type the
	// violated schema names.
	typeMatches bool
	// context are the violations of each anyOf branch.
	context []violation
}

// check lists the violations of instance at path in evaluation order.
func (s *schema) check(instance any, path []any) []violation {
	var out []violation
	add := func(msg string) {
		out = append(out, violation{path: path, msg: msg, typeMatches: s.typ != "" && isType(instance, s.typ)})
	}
	if s.typ != "" && !isType(instance, s.typ) {
		add(fmt.Sprintf("%s is not of type %s", pyfmt.ReprJSON(instance), pyfmt.Quote(s.typ)))
	}
	if s.enum != nil {
		if str, ok := instance.(string); !ok || !slices.Contains(s.enum, str) {
			add(fmt.Sprintf("%s is not one of %s", pyfmt.ReprJSON(instance), pyfmt.Repr(s.enum)))
		}
	}
	if n, ok := number(instance); ok && s.minimum != nil {
		switch {
		case s.exclusiveMin && n <= *s.minimum:
			add(fmt.Sprintf("%s is less than or equal to the minimum of %s", pyfmt.ReprJSON(instance), pyfmt.ReprJSON(*s.minimum)))
		case !s.exclusiveMin && n < *s.minimum:
			add(fmt.Sprintf("%s is less than the minimum of %s", pyfmt.ReprJSON(instance), pyfmt.ReprJSON(*s.minimum)))
		}
	}
	if s.anyOf != nil {
		var ctx []violation
		matched := false
		for _, branch := range s.anyOf {
			errs := branch.check(instance, nil)
			if len(errs) == 0 {
				matched = true
				break
			}
			ctx = append(ctx, errs...)
		}
		if !matched {
			out = append(out, violation{path: path, weak: true, context: ctx,
				msg: fmt.Sprintf("%s is not valid under any of the given schemas", pyfmt.ReprJSON(instance))})
		}
	}
	if obj, ok := instance.(map[string]any); ok {
		for _, p := range s.properties {
			if v, ok := obj[p.name]; ok {
				out = append(out, p.schema.check(v, appendPath(path, p.name))...)
			}
		}
	}
	if list, ok := instance.([]any); ok {
		if s.items != nil {
			for i, item := range list {
				out = append(out, s.items.check(item, appendPath(path, i))...)
			}
		}
		if len(list) < s.minItems {
			if s.minItems == 1 {
				add(fmt.Sprintf("%s should be non-empty", pyfmt.ReprJSON(instance)))
			} else {
				add(fmt.Sprintf("%s is too short", pyfmt.ReprJSON(instance)))
			}
		}
	}
	if obj, ok := instance.(map[string]any); ok {
		for _, r := range s.required {
			if _, ok := obj[r]; !ok {
				add(fmt.Sprintf("%s is a required property", pyfmt.Quote(r)))
			}
		}
		if s.closed {
			var extra []string
			for k := range obj {
				if !slices.ContainsFunc(s.properties, func(p property) bool { return p.name == k }) {
					extra = append(extra, pyfmt.Quote(k))
				}
			}
			if len(extra) > 0 {
				slices.Sort(extra)
				verb := "was"
				if len(extra) > 1 {
					verb = "were"
				}
				add(fmt.Sprintf("Additional properties are not allowed (%s %s unexpected)", strings.Join(extra, ", "), verb))
			}
		}
		for _, d := range s.dependencies {
			_, has := obj[d.property]
			if _, ok := obj[d.requires]; has && !ok {
				add(fmt.Sprintf("%s is a dependency of %s", pyfmt.Quote(d.requires), pyfmt.Quote(d.property)))
			}
		}
	}
	return out
}

func appendPath(path []any, elem any) []any {
	return append(slices.Clip(path), elem)
}

// isType is draft 4's type check of a value decoded from JSON: a boolean
// is no integer, an integral number is one.
func isType(v any, typ string) bool {
	switch typ {
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "integer":
		n, ok := number(v)
		return ok && n == math.Trunc(n) && !math.IsInf(n, 0)
	}
	return false
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	}
	return 0, false
}

// relevance is jsonschema's by_relevance key: shallower, then the later
// sibling, then not weak, then of a type the instance does not match.
func relevance(a, b violation) int {
	if c := cmp.Compare(len(b.path), len(a.path)); c != 0 {
		return c
	}
	if c := comparePaths(a.path, b.path); c != 0 {
		return c
	}
	if a.weak != b.weak {
		if a.weak {
			return -1
		}
		return 1
	}
	if a.typeMatches != b.typeMatches {
		if a.typeMatches {
			return -1
		}
		return 1
	}
	return 0
}

// comparePaths orders paths as Python orders their deques; elements at
// one position are all names or all indexes in this schema.
func comparePaths(a, b []any) int {
	for i := range min(len(a), len(b)) {
		var c int
		switch x := a[i].(type) {
		case int:
			y, _ := b[i].(int)
			c = cmp.Compare(x, y)
		case string:
			y, _ := b[i].(string)
			c = cmp.Compare(x, y)
		}
		if c != 0 {
			return c
		}
	}
	return cmp.Compare(len(a), len(b))
}

// bestMatch is jsonschema's best_match: the most relevant violation (the
// first of equals); within an anyOf, the least relevant of its branches'
// violations, unless the two least relevant tie.
func bestMatch(vs []violation) *violation {
	if len(vs) == 0 {
		return nil
	}
	best := vs[0]
	for _, v := range vs[1:] {
		if relevance(v, best) > 0 {
			best = v
		}
	}
	for len(best.context) > 0 {
		sorted := slices.Clone(best.context)
		slices.SortStableFunc(sorted, relevance)
		if len(sorted) >= 2 && relevance(sorted[0], sorted[1]) == 0 {
			break
		}
		best = sorted[0]
	}
	return &best
}
