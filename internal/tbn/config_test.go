package tbn

import (
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"
)

// Upstream's test_config_file validate cases.
func TestParseConfigValidate(t *testing.T) {
	cases := []struct {
		name    string
		content string
		reasons []string
	}{
		{"valid - single trait", "CUSTOM_TRAIT_NAME:\n  order: 1\n  actions:\n    - action: bond_ports\n      filter: port.vendor == 'vendor_string'\n      min_count: 2\n", nil},
		{"valid - several traits", "CUSTOM_TRAIT_NAME:\n  actions:\n    - action: bond_ports\n      filter: port.vendor == 'vendor_string'\n      min_count: 2\n" +
			"CUSTOM_TRAIT_2:\n  actions:\n    - action: attach_port\n      filter: port.vendor != 'vendor_string'\n      max_count: 2\n" +
			"CUSTOM_TRAIT_3:\n  actions:\n    - action: attach_port\n      filter: port.vendor != 'vendor_string'\n      max_count: 2\n", nil},
		{"required entry missing", "trait_name:\n  actions:\n  - action: bond_ports\n", []string{"'trait_name' trait is missing 'filter' key"}},
		{"unrecognized entry", "CUSTOM_TRAIT_NAME:\n  actions:\n    - action: bond_ports\n      filter: port.vendor == 'vendor_string'\n      min_count: 2\n      wrong: hi\n",
			[]string{"'CUSTOM_TRAIT_NAME' trait action has unrecognized key 'wrong'"}},
		{"unrecognized action", "CUSTOM_TRAIT_NAME:\n  actions:\n    - action: invalid\n      filter: port.vendor == 'vendor_string'\n      min_count: 2\n",
			[]string{"'CUSTOM_TRAIT_NAME' trait action has unrecognized action 'invalid'"}},
		{"actions not a list", "CUSTOM_TRAIT_NAME:\n  actions:\n    action: bond_ports\n    filter: port.vendor == 'vendor_string'\n    min_count: 2\n",
			[]string{"'CUSTOM_TRAIT_NAME.actions' does not consist of a list of actions"}},
		{"malformed filter", "CUSTOM_TRAIT_NAME:\n  actions:\n    - action: bond_ports\n      filter: port.vendor &= 'vendor_string'\n      min_count: 2\n",
			[]string{"'CUSTOM_TRAIT_NAME' trait action has malformed filter expression: 'port.vendor &= 'vendor_string''"}},
		{"several things wrong", "CUSTOM_TRAIT_NAME:\n  actions:\n    - filter: port.vendor &= 'vendor_string'\n      min_count: 2\n      wrong: oops\n",
			[]string{"'CUSTOM_TRAIT_NAME' trait action has malformed filter expression: 'port.vendor &= 'vendor_string''",
				"'CUSTOM_TRAIT_NAME' trait is missing 'action' key",
				"'CUSTOM_TRAIT_NAME' trait action has unrecognized key 'wrong'"}},
		{"group_and_attach_ports invalid", "CUSTOM_TRAIT_NAME:\n  actions:\n    - action: group_and_attach_ports\n      filter: port.vendor == 'vendor_string'\n      min_count: 0\n",
			[]string{"'CUSTOM_TRAIT_NAME' has an invalid 'group_and_attach_ports': group_and_attach_ports must have a min_count of 2 or greater. Got '0'."}},
		{"no actions key", "CUSTOM_X:\n  order: 2\n", []string{"'CUSTOM_X' trait does not include an 'actions' key "}},
		{"list-shaped trait (the old format)", "CUSTOM_X:\n  - action: attach_port\n    filter: port.is_port\n",
			[]string{"'CUSTOM_X' trait does not include an 'actions' key "}},
		{"not a mapping", "- a\n", []string{"the file is not a mapping of trait names to traits"}},
		{"empty", "", []string{"the file is not a mapping of trait names to traits"}},
		{"count not an integer", "CUSTOM_X:\n  actions:\n    - action: attach_port\n      filter: port.is_port\n      max_count: two\n",
			[]string{"'CUSTOM_X' trait action has a max_count that is not an integer: 'two'"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			traits, reasons := ParseConfig([]byte(c.content))
			sort.Strings(reasons)
			want := append([]string(nil), c.reasons...)
			sort.Strings(want)
			if !reflect.DeepEqual(reasons, want) {
				t.Errorf("reasons\n got %q\nwant %q", reasons, want)
			}
			if (len(c.reasons) == 0) != (traits != nil) {
				t.Errorf("traits %v with reasons %q", traits, reasons)
			}
		})
	}
}

// Upstream's test_parse, and our sample file: traits in file order with
// their actions, filters and counts.
func TestParseConfig(t *testing.T) {
	traits, reasons := ParseConfig([]byte("CUSTOM_TRAIT_NAME:\n  actions:\n    - action: bond_ports\n      filter: port.vendor == 'vendor_string'\n      min_count: 2\n"))
	if len(reasons) != 0 || len(traits) != 1 {
		t.Fatalf("traits %v, reasons %q", traits, reasons)
	}
	a := traits[0].Actions[0]
	if traits[0].Name != "CUSTOM_TRAIT_NAME" || traits[0].Order != 1 || a.TraitName != "CUSTOM_TRAIT_NAME" || a.Action != BondPorts ||
		a.Filter.String() != "port.vendor == 'vendor_string'" || pyInt(a.MinCount) != "2" || a.MaxCount != nil {
		t.Errorf("parsed %+v / %+v", traits[0], a)
	}

	data, err := os.ReadFile(filepath.Join("testdata", "traits.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	traits, reasons = ParseConfig(data)
	if len(reasons) != 0 {
		t.Fatalf("sample invalid: %q", reasons)
	}
	var got []string
	for _, tr := range traits {
		for _, a := range tr.Actions {
			got = append(got, tr.Name+" "+string(rune('0'+tr.Order))+" "+string(a.Action)+" "+a.Filter.String()+" "+pyInt(a.MinCount)+" "+pyInt(a.MaxCount))
		}
	}
	want := []string{
		"CUSTOM_STORAGE_BOND 2 group_and_attach_ports port.vendor == 'acme' && port.category == 'storage' && (network.name =~ 'stor' || network.tags == 'storage') 2 4",
		"CUSTOM_FABRIC_SPLIT 1 attach_port port.physical_network == 'fabric_a' && network.tags == 'a' None None",
		"CUSTOM_FABRIC_SPLIT 1 attach_portgroup port.is_portgroup && port.physical_network != 'fabric_a' 1 1",
		"CUSTOM_LATER 3 bond_ports port.is_port None None",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("sample\n got %q\nwant %q", got, want)
	}
}

// The operators' example in docs/examples is a valid file.
func TestDocumentedExample(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "examples", "trait_based_networking.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	traits, reasons := ParseConfig(data)
	if len(reasons) != 0 || len(traits) != 3 || DefaultTrait(traits) != traits[2] {
		t.Fatalf("traits %v, reasons %q", traits, reasons)
	}
}
