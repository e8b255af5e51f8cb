package tbn

import (
	"errors"
	"testing"

	"github.com/openkeel/ironic/internal/errs"
)

func str(s string) *string { return &s }

// fauxPort is upstream's FauxPortLikeObject: every attribute set.
func fauxPort(mod func(*PortLike)) PortLike {
	p := PortLike{ID: 1, UUID: "fake_uuid", Address: str("test"), Category: str("cat"),
		PhysicalNetwork: str("test_physnet"), Vendor: str("fake_vendor"), AvailableForDynamicPortgroup: true}
	if mod != nil {
		mod(&p)
	}
	return p
}

func fauxNet(name string, tags ...string) Network {
	return Network{ID: "fake_net_id", Name: str(name), Tags: tags}
}

func mustFilter(t *testing.T, s string) *Filter {
	t.Helper()
	f, err := ParseFilter(s)
	if err != nil {
		t.Fatalf("ParseFilter(%q): %v", s, err)
	}
	return f
}

// Upstream's test_parser: each expression parses, renders back to its
// text and evaluates per port.
func TestParseFilterUpstreamCases(t *testing.T) {
	cases := []struct {
		name  string
		expr  string
		ports []PortLike
		want  []bool
	}{
		{"basic single expression", "port.vendor == 'vendor_string'",
			[]PortLike{fauxPort(func(p *PortLike) { p.Vendor = str("vendor_string") })}, []bool{true}},
		{"compound expressions with parenthesis",
			"port.vendor == 'green' && port.category == 'storage' && (port.physical_network =~ 'storage' || port.address == '192.168.1.1')",
			[]PortLike{
				fauxPort(func(p *PortLike) {
					p.Vendor, p.Address, p.PhysicalNetwork, p.Category = str("green"), str("192.168.1.1"), str("storagenet"), str("storage")
				}),
				fauxPort(func(p *PortLike) {
					p.Vendor, p.Address, p.PhysicalNetwork, p.Category = str("green"), str("192.168.1.1"), str("othernet"), str("storage")
				}),
				fauxPort(func(p *PortLike) {
					p.Vendor, p.Address, p.PhysicalNetwork, p.Category = str("brown"), str("192.168.1.1"), str("storagenet"), str("storage_alpha")
				}),
			}, []bool{true, true, false}},
		{"parens respected, part 1", "(port.vendor == 'green' && port.category == 'test') || port.address == '192.168.1.1'",
			[]PortLike{fauxPort(func(p *PortLike) { p.Vendor, p.Address, p.Category = str("brown"), str("192.168.1.1"), str("prod") })}, []bool{true}},
		{"parens respected, part 2", "port.vendor == 'green' && (port.category == 'test' || port.address == '192.168.1.1')",
			[]PortLike{fauxPort(func(p *PortLike) { p.Vendor, p.Address, p.Category = str("brown"), str("192.168.1.1"), str("prod") })}, []bool{false}},
		{"functions", "port.is_port || port.is_portgroup", []PortLike{fauxPort(nil)}, []bool{true}},
		{"literal may be empty", "port.vendor != ''", []PortLike{fauxPort(nil)}, []bool{true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := mustFilter(t, c.expr)
			if f.String() != c.expr {
				t.Errorf("renders %q", f.String())
			}
			for i, p := range c.ports {
				got, err := f.Matches(p, Network{ID: "test_net_id", Name: str("test_network")})
				if err != nil || got != c.want[i] {
					t.Errorf("port %d: got %v, %v; want %v", i, got, err, c.want[i])
				}
			}
		})
	}
}

func TestParseFilterRejects(t *testing.T) {
	for _, expr := range []string{
		"", "port.vendor", "port.foo == 'x'", `port.vendor == "x"`, "port.vendor == 'a b'",
		"Port.vendor == 'x'", "port.vendor &= 'vendor_string'", "(port.is_port", "port.is_port port.is_port",
		"network.name", "port.is_port &&",
	} {
		if f, err := ParseFilter(expr); err == nil {
			t.Errorf("ParseFilter(%q) = %s, want an error", expr, f)
		}
	}
}

func TestParseFilterSpacing(t *testing.T) {
	f := mustFilter(t, "( network.name =~ 'storage' ||\tnetwork.tags=~'storage' )")
	if got, want := f.String(), "(network.name =~ 'storage' || network.tags =~ 'storage')"; got != want {
		t.Errorf("renders %q, want %q", got, want)
	}
}

// And binds tighter than Or; see ParseFilter.
func TestParseFilterPrecedence(t *testing.T) {
	f := mustFilter(t, "port.vendor == 'a' && port.vendor == 'b' || port.vendor == 'c'")
	p := fauxPort(func(p *PortLike) { p.Vendor = str("c") })
	if ok, err := f.Matches(p, fauxNet("n")); err != nil || !ok {
		t.Errorf("got %v, %v; want true", ok, err)
	}
}

// Upstream's test_base: comparators, collections, operators and their
// errors.
func TestFilterEval(t *testing.T) {
	withCategory := func(c string) PortLike { return fauxPort(func(p *PortLike) { p.Category = str(c) }) }
	withVendor := func(v string) PortLike { return fauxPort(func(p *PortLike) { p.Vendor = str(v) }) }
	portgroup := fauxPort(func(p *PortLike) { p.IsPortgroup = true })
	cases := []struct {
		name string
		expr string
		port PortLike
		net  Network
		want bool
		err  errs.Class
	}{
		{"equality", "port.address == 'test'", fauxPort(nil), fauxNet("n"), true, ""},
		{"equality false", "port.address == 'test'", fauxPort(func(p *PortLike) { p.Address = str("bad") }), fauxNet("n"), false, ""},
		{"inequality", "port.address != 'test'", fauxPort(nil), fauxNet("n"), false, ""},
		{"inequality true", "port.address != 'test'", fauxPort(func(p *PortLike) { p.Address = str("bad") }), fauxNet("n"), true, ""},
		{">= greater", "port.category >= 'test'", withCategory("test2"), fauxNet("n"), true, ""},
		{">= equal", "port.category >= 'test'", withCategory("test"), fauxNet("n"), true, ""},
		{">= less", "port.category >= 'test'", withCategory("abcd"), fauxNet("n"), false, ""},
		{"> greater", "port.category > 'test'", withCategory("test2"), fauxNet("n"), true, ""},
		{"> equal", "port.category > 'test'", withCategory("test"), fauxNet("n"), false, ""},
		{"> less", "port.category > 'test'", withCategory("abcd"), fauxNet("n"), false, ""},
		{"<= greater", "network.name <= 'test'", fauxPort(nil), fauxNet("test2"), false, ""},
		{"<= equal", "network.name <= 'test'", fauxPort(nil), fauxNet("test"), true, ""},
		{"<= less", "network.name <= 'test'", fauxPort(nil), fauxNet("abcd"), true, ""},
		{"< greater", "network.name < 'test'", fauxPort(nil), fauxNet("test2"), false, ""},
		{"< equal", "network.name < 'test'", fauxPort(nil), fauxNet("test"), false, ""},
		{"< less", "network.name < 'test'", fauxPort(nil), fauxNet("abcd"), true, ""},
		{"prefix", "port.vendor =~ 'some'", withVendor("some_vendor"), fauxNet("n"), true, ""},
		{"prefix false", "port.vendor =~ 'some'", withVendor("another_vendor"), fauxNet("n"), false, ""},
		{"prefix of a function", "port.is_port =~ 'some'", fauxPort(nil), fauxNet("n"), false, errs.ClassTBNComparatorPrefixMatchTypeMismatch},
		{"tags member", "network.tags == 'storage'", fauxPort(nil), fauxNet("test", "storage", "other"), true, ""},
		{"tags not member", "network.tags == 'storage'", fauxPort(nil), fauxNet("test", "other"), false, ""},
		{"tags inequality", "network.tags != 'storage'", fauxPort(nil), fauxNet("test", "storage"), false, ""},
		{"tags inequality true", "network.tags != 'storage'", fauxPort(nil), fauxNet("test", "other"), true, ""},
		{"tags prefix", "network.tags =~ 'stor'", fauxPort(nil), fauxNet("test", "storage"), true, ""},
		{"tags prefix false", "network.tags =~ 'stor'", fauxPort(nil), fauxNet("test", "other"), false, ""},
		{"tags ordering", "network.tags > 'storage'", fauxPort(nil), fauxNet("test", "storage"), false, errs.ClassTBNComparatorCollectionTypeMismatch},
		{"absent attribute", "port.vendor == 'x'", fauxPort(func(p *PortLike) { p.Vendor = nil }), fauxNet("n"), false, errs.ClassTBNAttributeRetrievalException},
		{"absent network name", "network.name == 'x'", fauxPort(nil), Network{ID: "i"}, false, errs.ClassTBNAttributeRetrievalException},
		{"and of functions, port", "port.is_port && port.is_port", fauxPort(nil), fauxNet("n"), true, ""},
		{"and of functions, portgroup", "port.is_port && port.is_port", portgroup, fauxNet("n"), false, ""},
		{"or of functions, portgroup", "port.is_port || port.is_port", portgroup, fauxNet("n"), false, ""},
		{"is_port or is_portgroup", "port.is_port || port.is_portgroup", portgroup, fauxNet("n"), true, ""},
		{"or short-circuits", "port.category == 'cat' || port.is_port =~ 'some'", fauxPort(nil), fauxNet("n"), true, ""},
		{"and short-circuits", "port.category == 'nope' && port.is_port =~ 'some'", fauxPort(nil), fauxNet("n"), false, ""},
		{"universal network", "network.name == 'x' && port.vendor == 'fake_vendor'", fauxPort(nil), Network{universal: true}, true, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := mustFilter(t, c.expr).Matches(c.port, c.net)
			if c.err != "" {
				var e *errs.Error
				if !errors.As(err, &e) || e.Class != c.err {
					t.Fatalf("error %v, want %s", err, c.err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Errorf("got %v, %v; want %v", got, err, c.want)
			}
		})
	}
}

func TestAttributeErrorMessage(t *testing.T) {
	_, err := mustFilter(t, "port.vendor == 'x'").Matches(PortLike{}, Network{})
	if err == nil || err.Error() != "Could not retrieve attribute vendor from passed object" {
		t.Errorf("got %v", err)
	}
}

func TestNetworkFromVIFInfo(t *testing.T) {
	n := NetworkFromVIFInfo(map[string]any{"id": "fake_id"})
	if n.ID != "fake_id" || n.Name != nil || len(n.Tags) != 0 {
		t.Errorf("got %+v", n)
	}
	n = NetworkFromVIFInfo(map[string]any{"id": "i", "name": "storage", "tags": []any{"a", "b"}})
	if n.Name == nil || *n.Name != "storage" || len(n.Tags) != 2 {
		t.Errorf("got %+v", n)
	}
}
