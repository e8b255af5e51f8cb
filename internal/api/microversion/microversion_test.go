package microversion

import (
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/spectest"
)

type comparison struct {
	Op       string `json:"op"`
	Constant string `json:"constant"`
	Minor    int    `json:"minor"`
}

type gatesDoc struct {
	Negotiation struct {
		MinVersion string `json:"min_version"`
		MaxVersion string `json:"max_version"`
		Default    string `json:"default_when_header_absent"`
	} `json:"negotiation"`
	MinorConstants []struct {
		Name  string `json:"name"`
		Minor int    `json:"minor"`
	} `json:"minor_constants"`
	VersionedFields map[string]struct {
		Minor int `json:"minor"`
	} `json:"versioned_fields"`
	AllowFunctions []struct {
		Name         string       `json:"name"`
		Comparisons  []comparison `json:"comparisons"`
		TrueFrom     string       `json:"true_from"`
		TrueBefore   string       `json:"true_before"`
		AlsoTrueAt   []string     `json:"also_true_at"`
		Uses         []string     `json:"uses"`
		AlsoRequires []string     `json:"also_requires"`
	} `json:"allow_functions"`
	OtherChecks []struct {
		Name        string       `json:"name"`
		Comparisons []comparison `json:"comparisons"`
	} `json:"other_version_checks"`
	MinVerbVersions []struct {
		Verb  string `json:"verb"`
		Minor int    `json:"minor"`
	} `json:"min_verb_versions"`
	RootLinks struct {
		Always    []string `json:"always_shown"`
		Versioned []struct {
			Link      string `json:"link"`
			Function  string `json:"function"`
			ShownFrom string `json:"shown_from"`
		} `json:"versioned"`
	} `json:"v1_root_links"`
}

func load(t *testing.T) gatesDoc {
	t.Helper()
	var d gatesDoc
	spectest.LoadJSON(t, "ironic/api/version-gates.json", &d)
	return d
}

func goName(upstream string) string {
	var b strings.Builder
	b.WriteString("Minor")
	for _, p := range strings.Split(upstream, "_")[1:] {
		b.WriteString(p[:1] + strings.ToLower(p[1:]))
	}
	return b.String()
}

func minorOf(t *testing.T, version string) int {
	t.Helper()
	n, err := strconv.Atoi(strings.TrimPrefix(version, "1."))
	if err != nil {
		t.Fatalf("version %q: %v", version, err)
	}
	return n
}

// The constants are read from minor.go's syntax so that each upstream name
// is checked against the Go name a reader would search for.
func TestMinorConstants(t *testing.T) {
	d := load(t)
	f, err := parser.ParseFile(token.NewFileSet(), "minor.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	consts := map[string]string{}
	ast.Inspect(f, func(n ast.Node) bool {
		if vs, ok := n.(*ast.ValueSpec); ok {
			for i, name := range vs.Names {
				if lit, ok := vs.Values[i].(*ast.BasicLit); ok {
					consts[name.Name] = lit.Value
				}
			}
		}
		return true
	})
	if len(consts) != len(d.MinorConstants) || len(consts) != 117 {
		t.Errorf("minor.go has %d constants, spec %d", len(consts), len(d.MinorConstants))
	}
	for _, c := range d.MinorConstants {
		if got, ok := consts[goName(c.Name)]; !ok || got != strconv.Itoa(c.Minor) {
			t.Errorf("%s: %s = %q, want %d", c.Name, goName(c.Name), got, c.Minor)
		}
	}
	if MAX.String() != d.Negotiation.MaxVersion || MIN.String() != d.Negotiation.MinVersion {
		t.Errorf("range [%s, %s], spec [%s, %s]", MIN, MAX, d.Negotiation.MinVersion, d.Negotiation.MaxVersion)
	}
}

// Each gate must agree with upstream's parsed comparisons at every minor.
func TestGatesMatchSpec(t *testing.T) {
	d := load(t)
	helpers := map[string][]comparison{}
	for _, o := range d.OtherChecks {
		helpers[o.Name] = o.Comparisons
	}
	seen := map[string]bool{}
	for _, a := range d.AllowFunctions {
		if a.Name == "allow_field" {
			continue
		}
		seen[a.Name] = true
		g, ok := GateByName(a.Name)
		if !ok {
			t.Errorf("%s: no gate", a.Name)
			continue
		}
		// A function that only compares for equality extends the helper
		// functions it calls (allow_continue_inspection_endpoint).
		var and, or []comparison
		for _, c := range a.Comparisons {
			if c.Op == "==" {
				or = append(or, c)
			} else {
				and = append(and, c)
			}
		}
		if len(and) == 0 {
			for _, u := range a.Uses {
				and = append(and, helpers[u]...)
			}
		}
		for minor := 0; minor <= MinorMaxVersion+5; minor++ {
			want := len(and) > 0
			for _, c := range and {
				switch c.Op {
				case ">=":
					want = want && minor >= c.Minor
				case "<":
					want = want && minor < c.Minor
				default:
					t.Fatalf("%s: unexpected op %s", a.Name, c.Op)
				}
			}
			for _, c := range or {
				want = want || minor == c.Minor
			}
			if got := g.Allows(Version{1, minor}); got != want {
				t.Errorf("%s at 1.%d: %t, want %t", a.Name, minor, got, want)
			}
		}
		if a.TrueFrom != "" && !g.Allows(Version{1, minorOf(t, a.TrueFrom)}) {
			t.Errorf("%s: false at true_from %s", a.Name, a.TrueFrom)
		}
		if a.TrueBefore != "" && g.Allows(Version{1, minorOf(t, a.TrueBefore)}) {
			t.Errorf("%s: true at %s", a.Name, a.TrueBefore)
		}
		for _, v := range a.AlsoTrueAt {
			if !g.Allows(Version{1, minorOf(t, v)}) {
				t.Errorf("%s: false at %s", a.Name, v)
			}
		}
		if want := strings.Join(a.AlsoRequires, ","); g.RequiresObject != want {
			t.Errorf("%s: requires %q, want %q", a.Name, g.RequiresObject, want)
		}
		if g.RequiresObject != "" && g.AllowsWith(MAX, false) {
			t.Errorf("%s: allowed without object support", a.Name)
		}
	}
	if len(Gates) != len(seen) || len(seen) != 70 {
		t.Errorf("%d gates, spec has %d allow_* (besides allow_field)", len(Gates), len(seen))
	}
	for _, g := range Gates {
		if !seen[g.Name] {
			t.Errorf("gate %s not in spec", g.Name)
		}
	}
}

func TestVersionedFields(t *testing.T) {
	d := load(t)
	if len(VersionedFields) != len(d.VersionedFields) || len(d.VersionedFields) != 45 {
		t.Errorf("%d fields, spec %d", len(VersionedFields), len(d.VersionedFields))
	}
	for f, s := range d.VersionedFields {
		if VersionedFields[f] != s.Minor {
			t.Errorf("%s: %d, want %d", f, VersionedFields[f], s.Minor)
		}
		if FieldAllowed(f, Version{1, s.Minor - 1}) || !FieldAllowed(f, Version{1, s.Minor}) {
			t.Errorf("%s: FieldAllowed boundary wrong at 1.%d", f, s.Minor)
		}
	}
	if !FieldAllowed("uuid", MIN) {
		t.Error("unversioned field hidden")
	}
	for minor := 0; minor <= MinorMaxVersion; minor++ {
		var want []string
		for f, s := range d.VersionedFields {
			if s.Minor > minor {
				want = append(want, f)
			}
		}
		sort.Strings(want)
		if got := DisallowedFields(Version{1, minor}); strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("DisallowedFields(1.%d) = %v, want %v", minor, got, want)
		}
	}
	if len(DisallowedFields(MAX)) != 0 || len(DisallowedFields(MIN)) != 45 {
		t.Error("DisallowedFields at the range ends")
	}
}

func TestMinVerbVersions(t *testing.T) {
	d := load(t)
	if len(MinVerbVersions) != len(d.MinVerbVersions) {
		t.Errorf("%d verbs, spec %d", len(MinVerbVersions), len(d.MinVerbVersions))
	}
	for _, s := range d.MinVerbVersions {
		if m, ok := MinVerbVersions[s.Verb]; !ok || m != s.Minor {
			t.Errorf("%s: %d, want %d", s.Verb, m, s.Minor)
		}
		if VerbAllowed(s.Verb, Version{1, s.Minor - 1}) || !VerbAllowed(s.Verb, Version{1, s.Minor}) {
			t.Errorf("%s: boundary", s.Verb)
		}
	}
	if !VerbAllowed("unhold", MIN) {
		t.Error("verbs without an entry are not version-checked here")
	}
}

func TestRootLinks(t *testing.T) {
	d := load(t)
	if strings.Join(AlwaysLinks, ",") != strings.Join(d.RootLinks.Always, ",") {
		t.Errorf("always %v, spec %v", AlwaysLinks, d.RootLinks.Always)
	}
	if len(VersionedLinks) != len(d.RootLinks.Versioned) {
		t.Fatalf("%d links, spec %d", len(VersionedLinks), len(d.RootLinks.Versioned))
	}
	for i, s := range d.RootLinks.Versioned {
		l := VersionedLinks[i]
		from := minorOf(t, s.ShownFrom)
		if l.Name != s.Link || l.Gate.Name != s.Function || l.Gate.Allows(Version{1, from - 1}) || !l.Gate.Allows(Version{1, from}) {
			t.Errorf("link %d: %+v, spec %+v", i, l, s)
		}
	}
	if got := strings.Join(RootLinks(Version{1, 23}), ","); got != "chassis,nodes,ports,drivers,portgroups,lookup,heartbeat" {
		t.Errorf("RootLinks(1.23) = %s", got)
	}
}

func TestParse(t *testing.T) {
	// The messages were recorded from upstream for the range [1.1, 1.82].
	r := Range{MIN, Version{1, 82}}
	outOfRange := func(v string) string {
		return "Version " + v + " was requested but the minor version is not supported by this service. The supported version range is: [1.1, 1.82]."
	}
	const invalid = "Invalid value for X-OpenStack-Ironic-API-Version header"
	cases := []struct {
		in, want, msg string
		headers       bool
	}{
		{"", "1.1", "", false},
		{"1.5", "1.5", "", false},
		{" 1.5 ", "1.5", "", false},
		{"1.05", "1.5", "", false},
		{"+1.+5", "1.5", "", false},
		{"LATEST", "1.82", "", false},
		{"latest", "1.82", "", false},
		{"1.1_0", "1.10", "", false},
		{"1.٥", "1.5", "", false},
		{"abc", "", invalid, false},
		{"1.x", "", invalid, false},
		{"1", "", invalid, false},
		{"1.5.1", "", invalid, false},
		{"1._5", "", invalid, false},
		{"1.5_", "", invalid, false},
		{"1.", "", invalid, false},
		{"1.200", "", outOfRange("1.200"), true},
		{"1.-1", "", outOfRange("1.-1"), true},
		{"1.0", "", outOfRange("1.0"), true},
		{"1.99999999999999999999", "", outOfRange("1.99999999999999999999"), true},
		{"2.1", "", "Mutually exclusive versions requested. Version 2.1 requested but not supported by this service. The supported version range is: [1.1, 1.82].", true},
		{"1_0.5", "", "Mutually exclusive versions requested. Version 10.5 requested but not supported by this service. The supported version range is: [1.1, 1.82].", true},
	}
	for _, c := range cases {
		v, err := r.Parse(c.in)
		if c.msg == "" {
			if err != nil || v.String() != c.want {
				t.Errorf("Parse(%q) = %v, %v; want %s", c.in, v, err, c.want)
			}
			continue
		}
		e, ok := errs.As(err)
		if !ok || e.Code != 406 || e.Message != c.msg || !errs.Is(e, errs.ClassWebobHTTPNotAcceptable) {
			t.Errorf("Parse(%q) error = %v; want 406 %q", c.in, err, c.msg)
			continue
		}
		if got := e.Headers[HeaderMaximum] == "1.82" && e.Headers[HeaderMinimum] == "1.1"; got != c.headers {
			t.Errorf("Parse(%q) headers %v, want range headers %t", c.in, e.Headers, c.headers)
		}
	}
	if v, err := Parse("latest"); err != nil || v != MAX {
		t.Errorf("default range latest = %v %v", v, err)
	}
}

func TestFromHeaders(t *testing.T) {
	cases := []struct {
		name    string
		headers map[string][]string
		want    string
	}{
		{"none", nil, "1.1"},
		{"legacy", map[string][]string{HeaderLegacy: {"1.7"}}, "1.7"},
		{"legacy last of list", map[string][]string{HeaderLegacy: {"1.5, 1.6"}}, "1.6"},
		{"legacy repeated", map[string][]string{HeaderLegacy: {"1.5", "1.9"}}, "1.9"},
		{"legacy empty", map[string][]string{HeaderLegacy: {""}}, "1.1"},
		{"standard wins", map[string][]string{HeaderStandard: {"baremetal 1.5"}, HeaderLegacy: {"1.7"}}, "1.5"},
		{"standard case-insensitive service", map[string][]string{HeaderStandard: {"BareMetal  latest"}}, "1.115"},
		{"standard other service", map[string][]string{HeaderStandard: {"compute 2.1"}, HeaderLegacy: {"1.7"}}, "1.7"},
		{"standard last baremetal", map[string][]string{HeaderStandard: {"baremetal 1.3, compute 2.1, baremetal 1.4, bogus"}}, "1.4"},
	}
	for _, c := range cases {
		h := http.Header{}
		for k, vs := range c.headers {
			for _, v := range vs {
				h.Add(k, v)
			}
		}
		v, err := FromHeaders(h)
		if err != nil || v.String() != c.want {
			t.Errorf("%s: %v %v, want %s", c.name, v, err, c.want)
		}
	}
	h := http.Header{}
	h.Set(HeaderStandard, "baremetal 1.x")
	h.Set(HeaderLegacy, "1.7")
	if _, err := FromHeaders(h); !errs.Is(err, errs.ClassWebobHTTPNotAcceptable) {
		t.Errorf("bad standard header must not fall back: %v", err)
	}
}

// The 406 renders byte for byte as upstream's routing error.
func TestParseErrorEnvelope(t *testing.T) {
	_, err := Range{MIN, Version{1, 82}}.Parse("1.200")
	_, body := errs.FaultBody(err, errs.FaultOptions{Routing: true})
	want := `{"error_message": "{\"code\": 406, \"title\": \"Not Acceptable\", \"description\": \"Version 1.200 was requested but the minor version is not supported by this service. The supported version range is: [1.1, 1.82].\"}"}`
	if string(body) != want {
		t.Errorf("got %s", body)
	}
}

func BenchmarkParse(b *testing.B) {
	h := http.Header{}
	h.Set(HeaderLegacy, "1.89")
	for b.Loop() {
		if _, err := FromHeaders(h); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseString(b *testing.B) {
	for b.Loop() {
		if _, err := Parse("1.89"); err != nil {
			b.Fatal(err)
		}
	}
}
