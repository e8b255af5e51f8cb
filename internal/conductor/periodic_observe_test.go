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
		var first conductor.PeriodicRun
		done := make(chan struct{})
		started := time.Now()
		c, err := conductor.New(conductor.Options{
			Store: e.st, Drivers: e.drivers, Config: e.cfg, Host: testHost, Clock: e.clock,
			Logger: slog.New(slog.DiscardHandler),
			ObservePeriodic: func(r conductor.PeriodicRun) {
				mu.Lock()
				defer mu.Unlock()
				if r.Duration < 0 {
					t.Errorf("%s took %v", r.Name, r.Duration)
				}
				seen[r.Name]++
				if seen[r.Name] == 1 && r.Name == "_check_deploy_timeouts" {
					first = r
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
		// The first pass is due one interval after the start and starts
		// then, give or take scheduling.
		if first.Interval != time.Second {
			t.Errorf("interval %v, want [conductor]/check_provision_state_interval (1 s)", first.Interval)
		}
		if first.Due.Before(started.Add(time.Second)) || first.Started.Before(first.Due) || first.Started.Sub(first.Due) >= first.Interval {
			t.Errorf("first pass due %v started %v, want due a second after %v and started then", first.Due, first.Started, started)
		}
		// Only the tasks whose interval is on ran.
		if seen["_sync_power_states"] != 0 || seen["manage_node_history"] != 0 {
			t.Errorf("disabled tasks observed: %v", seen)
		}
	})
}
