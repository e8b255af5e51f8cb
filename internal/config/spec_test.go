package config

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/spectest"
)

type specOption struct {
	Section     string          `json:"section"`
	Name        string          `json:"name"`
	Dest        string          `json:"dest"`
	Origin      string          `json:"origin"`
	OptClass    string          `json:"opt_class"`
	Type        string          `json:"type"`
	ItemType    string          `json:"item_type"`
	Default     json.RawMessage `json:"default"`
	Min         *float64        `json:"min"`
	Max         *float64        `json:"max"`
	Choices     []string        `json:"choices"`
	ItemChoices []string        `json:"item_choices"`
	Schemes     []string        `json:"schemes"`
	Secret      bool            `json:"secret"`
	Deprecated  []struct {
		Group *string `json:"group"`
		Name  *string `json:"name"`
	} `json:"deprecated_names"`
}

func loadSpec(t *testing.T) []specOption {
	t.Helper()
	var doc struct {
		Options []specOption `json:"options"`
	}
	spectest.LoadJSON(t, "ironic/core/config-options.json", &doc)
	if len(doc.Options) == 0 {
		t.Fatal("config-options.json lists no options")
	}
	return doc.Options
}

// specTypes is the oracle's (type, opt class) to loader type mapping.
func specType(s specOption) Type {
	switch s.Type {
	case "String", "KernelParameterString", "type":
		return TypeString
	case "Integer":
		return TypeInt
	case "Float":
		return TypeFloat
	case "Boolean":
		return TypeBool
	case "Port":
		return TypePort
	case "Octal":
		return TypeOctal
	case "IPAddress":
		return TypeIP
	case "HostAddress":
		return TypeHostAddress
	case "URI":
		return TypeURI
	case "MultiString":
		return TypeMultiString
	case "List":
		return TypeList
	case "Dict":
		if s.OptClass == "MultiOpt" {
			return TypeMultiDict
		}
		return TypeDict
	}
	return 0
}

// normalise turns a Go default and a JSON default into comparable JSON
// values (ints and floats both become float64, nil lists stay null).
func normalise(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestTableMatchesSpecInventory(t *testing.T) {
	spec := loadSpec(t)
	seen := map[Name]bool{}
	ironic := 0
	for _, s := range spec {
		n := Name{s.Section, s.Dest}
		seen[n] = true
		if s.Origin == "ironic" {
			ironic++
		}
		o, ok := Lookup(s.Section, s.Dest)
		if !ok {
			t.Errorf("%s (%s) is missing from the table", n, s.Origin)
			continue
		}
		if want := specType(s); o.Type != want || want == 0 {
			t.Errorf("%s: type %v, spec %s/%s", n, o.Type, s.OptClass, s.Type)
		}
		wantItem := map[string]Type{"": 0, "String": 0, "PortRange": TypePortRange, "ExplicitAbsolutePath": TypeAbsPath}[s.ItemType]
		if o.Item != wantItem {
			t.Errorf("%s: item type %v, spec %q", n, o.Item, s.ItemType)
		}
		if !reflect.DeepEqual(o.Min, s.Min) || !reflect.DeepEqual(o.Max, s.Max) {
			t.Errorf("%s: bounds %v..%v, spec %v..%v", n, o.Min, o.Max, s.Min, s.Max)
		}
		if !reflect.DeepEqual(o.Choices, s.Choices) || !reflect.DeepEqual(o.ItemChoices, s.ItemChoices) || !reflect.DeepEqual(o.Schemes, s.Schemes) {
			t.Errorf("%s: choices %v/%v/%v, spec %v/%v/%v", n, o.Choices, o.ItemChoices, o.Schemes, s.Choices, s.ItemChoices, s.Schemes)
		}
		if o.Secret != s.Secret {
			t.Errorf("%s: secret %v, spec %v", n, o.Secret, s.Secret)
		}
		var dep []Name
		for _, d := range s.Deprecated {
			dn := n
			if d.Group != nil {
				dn.Section = *d.Group
			}
			if d.Name != nil {
				dn.Name = *d.Name
			}
			dep = append(dep, dn)
		}
		if !reflect.DeepEqual(o.Deprecated, dep) {
			t.Errorf("%s: deprecated names %v, spec %v", n, o.Deprecated, dep)
		}
		if _, machine := machineDefaults[n]; machine {
			continue
		}
		var specDefault any
		if err := json.Unmarshal(s.Default, &specDefault); err != nil {
			t.Fatalf("%s: default: %v", n, err)
		}
		if reg, ok := registrationDefaults[n]; ok {
			if !reflect.DeepEqual(o.Default, reg) {
				t.Errorf("%s: default %#v, want the registration default %#v", n, o.Default, reg)
			}
			if reflect.DeepEqual(normalise(t, reg), specDefault) {
				t.Errorf("%s: registration default %#v equals the inventory's; drop it from registrationDefaults", n, reg)
			}
			continue
		}
		if got := normalise(t, o.Default); !reflect.DeepEqual(got, specDefault) {
			t.Errorf("%s: default %#v, spec %s", n, o.Default, s.Default)
		}
	}
	if ironic != 547 {
		t.Errorf("spec lists %d Ironic options, README says 547", ironic)
	}
	for _, o := range generatedOptions {
		if !seen[Name{o.Section, o.Name}] {
			t.Errorf("generated option %s is not in the spec", Name{o.Section, o.Name})
		}
	}
	for _, o := range libraryOptions {
		if seen[Name{o.Section, o.Name}] {
			t.Errorf("library option %s is also in the spec; it belongs to the generated table", Name{o.Section, o.Name})
		}
	}
	// Ours stay out of upstream's sections and say what they do.
	for _, o := range ourOptions {
		n := Name{o.Section, o.Name}
		if !strings.HasPrefix(o.Section, "openkeel_") || seen[n] {
			t.Errorf("our option %s must be in an openkeel_* section upstream does not have", n)
		}
		if o.Help == "" {
			t.Errorf("our option %s has no Help", n)
		}
	}
}

// Machine-computed defaults cannot equal the extraction machine's values;
// they are checked for plausibility instead:
//   - host: the host name (socket.gethostname upstream);
//   - my_ip / my_ipv6: the source address of the default route;
//   - pybasedir: the install folder (here the executable's folder);
//   - tempdir: the system temporary folder.
func TestMachineDefaults(t *testing.T) {
	c, err := Load(LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c.String("DEFAULT", "host") == "" {
		t.Error("host is empty")
	}
	if ip := net.ParseIP(c.String("DEFAULT", "my_ip")); ip == nil || ip.To4() == nil {
		t.Errorf("my_ip %q is not an IPv4 address", c.String("DEFAULT", "my_ip"))
	}
	if c.Has("DEFAULT", "my_ipv6") {
		if ip := net.ParseIP(c.String("DEFAULT", "my_ipv6")); ip == nil || ip.To4() != nil {
			t.Errorf("my_ipv6 %q is not an IPv6 address", c.String("DEFAULT", "my_ipv6"))
		}
	}
	for _, name := range []string{"pybasedir", "tempdir"} {
		p := c.String("DEFAULT", name)
		if st, err := os.Stat(p); err != nil || !st.IsDir() || !filepath.IsAbs(p) {
			t.Errorf("%s %q is not an existing absolute folder", name, p)
		}
	}
	// bindir and state_path keep upstream's templates over pybasedir.
	base := c.String("DEFAULT", "pybasedir")
	if got := c.String("DEFAULT", "bindir"); got != base+"/bin" {
		t.Errorf("bindir = %q, want %q", got, base+"/bin")
	}
	if got := c.String("DEFAULT", "state_path"); got != base {
		t.Errorf("state_path = %q, want %q", got, base)
	}
	if len(machineDefaults) != 5 {
		t.Errorf("machine defaults changed (%d); update this test's list", len(machineDefaults))
	}
}
