package migrations

import (
	"io/fs"
	"path"
	"testing"

	"github.com/openkeel/ironic/internal/store/sqldb"
)

// The chain runs from OldestAlembic to AlembicHead, each revision once, and
// every revision after the first has its step on each dialect, with no
// step file that is not one of them.
func TestAlembicChainHasAStepPerRevision(t *testing.T) {
	chain := alembicChain()
	if chain[0].id != OldestAlembic || chain[len(chain)-1].id != AlembicHead {
		t.Fatalf("chain runs from %s to %s, want %s to %s", chain[0].id, chain[len(chain)-1].id, OldestAlembic, AlembicHead)
	}
	want := map[string]bool{}
	for i, r := range chain {
		if chainIndex(chain, r.id) != i {
			t.Errorf("revision %s is in the chain twice", r.id)
		}
		if i > 0 {
			want[r.id+"_"+r.name+".sql"] = true
		}
	}
	for _, d := range []sqldb.Dialect{sqldb.SQLite, sqldb.MySQL} {
		entries, err := fs.ReadDir(alembicFiles, path.Join("alembic", string(d)))
		if err != nil {
			t.Fatal(err)
		}
		have := map[string]bool{}
		for _, e := range entries {
			have[e.Name()] = true
			if !want[e.Name()] {
				t.Errorf("%s: step %s is no revision of the chain", d, e.Name())
			}
		}
		for name := range want {
			if !have[name] {
				t.Errorf("%s: no step %s", d, name)
			}
		}
	}
	if ids := AlembicRevisions(); len(ids) != len(chain) || ids[0] != OldestAlembic || ids[len(ids)-1] != AlembicHead {
		t.Errorf("AlembicRevisions() = %v", ids)
	}
}
