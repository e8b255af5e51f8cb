package policy

import "testing"

// FuzzParse: the parser never panics, always returns a rule, and its
// rendering parses back to the same tree and rendering.
func FuzzParse(f *testing.F) {
	for _, d := range ironicDefaults {
		f.Add(d.CheckStr)
		if d.Deprecated != nil {
			f.Add(d.Deprecated.CheckStr)
		}
	}
	for _, s := range []string{"", "!", "@", "a:1 or b:2 and c:3", "not (a:1)", "('a:b')", "'q'", "role:%(x", "x:%(a(b)c)s", "((", "))", "1e5:%(n)s"} {
		f.Add(s)
	}
	creds := &Credentials{Roles: []string{"admin"}, ProjectID: "p", SystemScope: "all"}
	target := Fields{"node.owner": "p"}
	f.Fuzz(func(t *testing.T, s string) {
		r, _ := Parse(s)
		if r == nil {
			t.Fatalf("nil rule for %q", s)
		}
		out := r.String()
		again, _ := Parse(out)
		if !again.Equal(r) {
			t.Fatalf("%q: tree changed after round trip through %q: %q", s, out, again.String())
		}
		if again.String() != out {
			t.Fatalf("%q: rendering unstable: %q then %q", s, out, again.String())
		}
		r.Check(target, creds)
	})
}
