package conductor_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/conductor"
	"github.com/openkeel/ironic/internal/store/sqldb"
)

func TestObservePeriodicHearsEachPass(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db, withoutStart(), withConf("conductor", "check_provision_state_interval", "1"))
		var mu sync.Mutex
		seen := map[string]int{}
		done := make(chan struct{})
		c, err := conductor.New(conductor.Options{
			Store: e.st, Drivers: e.drivers, Config: e.cfg, Host: testHost, Clock: e.clock,
			Logger: slog.New(slog.DiscardHandler),
			ObservePeriodic: func(name string, d time.Duration) {
				mu.Lock()
				defer mu.Unlock()
				if d < 0 {
					t.Errorf("%s took %v", name, d)
				}
				seen[name]++
				if seen[name] == 1 && name == "_check_deploy_timeouts" {
					close(done)
				}
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		e.start(c)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("no pass of _check_deploy_timeouts observed")
		}
		if err := c.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		// Only the tasks whose interval is on ran.
		if seen["_sync_power_states"] != 0 || seen["manage_node_history"] != 0 {
			t.Errorf("disabled tasks observed: %v", seen)
		}
	})
}
