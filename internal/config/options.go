package config

import (
	"fmt"
	"sort"
)

// Type is the value type of an option, named after the oslo.config type it
// mirrors.
type Type int

// Option types. Item types (TypePortRange, TypeAbsPath) only appear as the
// Item of a list option.
const (
	TypeString      Type = iota + 1 // StrOpt and untyped Opt
	TypeInt                         // IntOpt
	TypeFloat                       // FloatOpt
	TypeBool                        // BoolOpt
	TypePort                        // PortOpt: integer 0..65535
	TypeOctal                       // Ironic's Octal: integer written in base 8
	TypeIP                          // IPOpt
	TypeHostAddress                 // HostAddressOpt: IP address or host name
	TypeHostDomain                  // HostDomainOpt: like HostAddress, '_' allowed
	TypeURI                         // URIOpt
	TypeList                        // ListOpt
	TypeDict                        // DictOpt
	TypeMultiString                 // MultiStrOpt: repeated keys accumulate
	TypeMultiDict                   // MultiOpt of Dict: repeated keys accumulate
	TypePortRange                   // list item "start:end"
	TypeAbsPath                     // list item: explicit absolute path
)

var typeNames = map[Type]string{
	TypeString: "string", TypeInt: "integer", TypeFloat: "float", TypeBool: "boolean",
	TypePort: "port", TypeOctal: "octal integer", TypeIP: "IP address",
	TypeHostAddress: "host address", TypeHostDomain: "host domain", TypeURI: "URI",
	TypeList: "list", TypeDict: "dict", TypeMultiString: "multi-valued string",
	TypeMultiDict: "multi-valued dict", TypePortRange: "port range", TypeAbsPath: "absolute path",
}

func (t Type) String() string {
	if s, ok := typeNames[t]; ok {
		return s
	}
	return fmt.Sprintf("Type(%d)", int(t))
}

// Name is a section/option pair.
type Name struct {
	Section string
	Name    string
}

func (n Name) String() string { return "[" + n.Section + "]/" + n.Name }

// Option describes one configuration option as oslo.config registers it.
//
// Default holds the Go form of the upstream default: string, int, float64,
// bool, []string or map[string]string; nil means None (no value). String
// defaults may hold $option templates, expanded at load time.
type Option struct {
	Section     string
	Name        string
	Type        Type
	Item        Type // list item type when not a plain string
	Default     any
	Min, Max    *float64
	Choices     []string
	ItemChoices []string
	Schemes     []string // URI schemes allowed
	Deprecated  []Name   // older section/name pairs still honoured
	Secret      bool     // value masked in Dump and Display
	// Help describes an option of openkeel's own (ourOptions); upstream's
	// options are described by upstream's reference.
	Help string
}

func bound(v float64) *float64 { return &v }

// registry is the option table, built once at start: the generated
// upstream inventory, the library options Ironic reads, the defaults Ironic
// sets at registration time and the machine-computed defaults.
var registry = buildRegistry()

type table struct {
	byName map[Name]*Option
	// known holds every section/name a file may use, current or deprecated.
	known    map[Name]bool
	sections map[string]bool
	ordered  []*Option
}

func buildRegistry() *table {
	t := &table{byName: map[Name]*Option{}, known: map[Name]bool{}, sections: map[string]bool{}}
	add := func(opts []Option) {
		for i := range opts {
			o := opts[i]
			n := Name{o.Section, o.Name}
			if _, dup := t.byName[n]; dup {
				panic("config: option registered twice: " + n.String())
			}
			t.byName[n] = &o
			t.ordered = append(t.ordered, &o)
		}
	}
	add(generatedOptions)
	add(libraryOptions)
	add(ourOptions)
	for n, v := range registrationDefaults {
		o, ok := t.byName[n]
		if !ok {
			panic("config: registration default for unknown option " + n.String())
		}
		o.Default = v
	}
	for n, f := range machineDefaults {
		o, ok := t.byName[n]
		if !ok {
			panic("config: machine default for unknown option " + n.String())
		}
		o.Default = f()
	}
	for _, o := range t.ordered {
		t.known[Name{o.Section, o.Name}] = true
		t.sections[o.Section] = true
		for _, d := range o.Deprecated {
			t.known[d] = true
			t.sections[d.Section] = true
		}
	}
	sort.Slice(t.ordered, func(i, j int) bool {
		a, b := t.ordered[i], t.ordered[j]
		if a.Section != b.Section {
			return a.Section < b.Section
		}
		return a.Name < b.Name
	})
	return t
}

// Lookup returns the definition of an option.
func Lookup(section, name string) (Option, bool) {
	o, ok := registry.byName[Name{section, name}]
	if !ok {
		return Option{}, false
	}
	return *o, true
}

// Options returns every option of the table, sorted by section and name.
func Options() []Option {
	out := make([]Option, len(registry.ordered))
	for i, o := range registry.ordered {
		out[i] = *o
	}
	return out
}
