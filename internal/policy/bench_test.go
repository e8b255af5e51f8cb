package policy

import "testing"

// BenchmarkEnforce is the node GET check of a project reader on a node it
// leases: the longest common path through baremetal:node:get (system
// alternatives and rule:service_role fail first).
func BenchmarkEnforce(b *testing.B) {
	e, err := New(Options{EnforceScope: true, EnforceNewDefaults: true})
	if err != nil {
		b.Fatal(err)
	}
	target := &OwnerTarget{Object: "node", Owner: ownerProject, Lessee: lesseeProject}
	creds := personas["lessee_reader"]
	if !e.Enforce("baremetal:node:get", target, creds) {
		b.Fatal("expected allow")
	}
	b.ReportAllocs()
	for b.Loop() {
		if !e.Enforce("baremetal:node:get", target, creds) {
			b.Fatal("expected allow")
		}
	}
}

// BenchmarkEnforceDeprecated is the same check with the deprecated rule
// OR'ed in and a caller refused by both.
func BenchmarkEnforceDeprecated(b *testing.B) {
	e, err := New(Options{EnforceScope: true})
	if err != nil {
		b.Fatal(err)
	}
	target := &OwnerTarget{Object: "node", Owner: ownerProject, Lessee: lesseeProject}
	creds := &Credentials{Roles: []string{"member", "reader"}, ProjectID: otherProject, IsAdminProject: true}
	b.ReportAllocs()
	for b.Loop() {
		if e.Enforce("baremetal:node:get", target, creds) {
			b.Fatal("expected deny")
		}
	}
}
