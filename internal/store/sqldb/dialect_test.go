package sqldb_test

import (
	"context"
	"testing"

	"github.com/openkeel/ironic/internal/store/storetest"
)

func TestUpsertAndQuote(t *testing.T) {
	ctx := context.Background()
	for _, b := range storetest.EmptyBackends(t) {
		t.Run(b.Name, func(t *testing.T) {
			db := b.DB
			storetest.Exec(t, db, "CREATE TABLE "+db.Quote("order")+" ("+db.Quote("default")+" VARCHAR(20) NOT NULL, "+
				db.Quote("user")+" VARCHAR(20), n INTEGER, CONSTRAINT uniq_order0default UNIQUE ("+db.Quote("default")+"))")
			cols := []string{"default", "user", "n"}
			upsert := db.Upsert("order", cols, []string{"default"}, []string{"user", "n"})
			ignore := db.Upsert("order", cols, []string{"default"}, nil)
			steps := []struct {
				stmt string
				args []any
			}{
				{upsert, []any{"a", "alice", 1}},
				{upsert, []any{"a", "bob", 2}},   // updates
				{ignore, []any{"a", "carol", 3}}, // left alone
				{ignore, []any{"b", "dave", 4}},  // inserted
			}
			for _, s := range steps {
				if _, err := db.ExecContext(ctx, s.stmt, s.args...); err != nil {
					t.Fatalf("%s %v: %v", s.stmt, s.args, err)
				}
			}
			rows, err := db.QueryContext(ctx, "SELECT "+db.Quote("default")+", "+db.Quote("user")+", n FROM "+db.Quote("order")+" ORDER BY 1"+db.ForUpdate())
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			var got []string
			for rows.Next() {
				var k, u string
				var n int
				if err := rows.Scan(&k, &u, &n); err != nil {
					t.Fatal(err)
				}
				got = append(got, k+"/"+u+"/"+string(rune('0'+n)))
			}
			want := []string{"a/bob/2", "b/dave/4"}
			if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
				t.Errorf("rows %v, want %v", got, want)
			}
		})
	}
}
