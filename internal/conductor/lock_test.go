package conductor_test

import (
	"context"
	"sync"
	"testing"

	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store/sqldb"
)

// TestConcurrentProvisioningRequests sends 100 provide requests for one
// node at once: exactly one is accepted, the 99 others get NodeLocked, and
// the node makes one transition (manageable → cleaning, held there by a
// blocking clean step until the test lets it finish).
func TestConcurrentProvisioningRequests(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db, withConf("conductor", "node_locked_retry_attempts", "1"))
		ctx := context.Background()
		n := e.node(states.Manageable, scriptedNode)
		g := gate(e)
		const requests = 100
		var wg sync.WaitGroup
		errsOut := make([]error, requests)
		start := make(chan struct{})
		for i := 0; i < requests; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				<-start
				errsOut[i] = e.api.DoProvisioningAction(ctx, "", n.UUID, "provide")
			}(i)
		}
		close(start)
		wg.Wait()
		accepted, locked := 0, 0
		for _, err := range errsOut {
			switch class(err) {
			case "":
				accepted++
			case "NodeLocked":
				locked++
			default:
				t.Errorf("unexpected answer: %v", err)
			}
		}
		if accepted != 1 || locked != requests-1 {
			t.Fatalf("accepted %d, locked %d", accepted, locked)
		}
		cur := e.get(n)
		if cur.ProvisionState != states.Cleaning || cur.TargetProvisionState != states.Available || deref(cur.Reservation) != testHost {
			t.Fatalf("while cleaning: %q %q %v", cur.ProvisionState, cur.TargetProvisionState, deref(cur.Reservation))
		}
		close(g)
		e.expect(e.waitState(n, states.Available), states.Available, "", "")
		if ran := e.steps.Ran(); len(ran) != 1 {
			t.Fatalf("clean step ran %d times", len(ran))
		}
	})
}
