package webconsole

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/openkeel/ironic/internal/store"
	"github.com/openkeel/ironic/internal/store/storetest"
)

// BenchmarkFleetCount10000 is the overview's counts over 10,000 nodes on
// each backend (SQLite; MariaDB with IRONIC_TEST_MYSQL_DSN): what one
// visit to the overview costs the API at the fleet size of issue 24.
func BenchmarkFleetCount10000(b *testing.B) {
	const nodes = 10000
	states := []string{"active", "available", "manageable", "enroll", "deploy failed"}
	for _, be := range storetest.Backends(b) {
		b.Run(be.Name, func(b *testing.B) {
			var stmts []string
			for start := 0; start < nodes; start += 500 {
				var values []string
				for i := start; i < start+500; i++ {
					values = append(values, fmt.Sprintf("('%s', 'node-%d', 'fake-hardware', '%s', 'power on', %d, 'rack-%d')",
						uuid.NewString(), i, states[i%len(states)], i%50/49, i%4))
				}
				stmts = append(stmts, "INSERT INTO nodes (uuid, name, driver, provision_state, power_state, maintenance, conductor_group) VALUES "+
					strings.Join(values, ", "))
			}
			storetest.Exec(b, be.DB, stmts...)
			f := &Fleet{Nodes: store.New(be.DB)}
			b.ResetTimer()
			for b.Loop() {
				v, err := f.Count(context.Background(), nil)
				if err != nil {
					b.Fatal(err)
				}
				if v.Total != nodes || len(v.ConductorGroups) != 4 {
					b.Fatalf("counted %d nodes in %d groups", v.Total, len(v.ConductorGroups))
				}
			}
		})
	}
}
