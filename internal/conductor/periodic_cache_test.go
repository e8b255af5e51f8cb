package conductor_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/driver/fake"
	"github.com/openkeel/ironic/internal/store/sqldb"
)

// cachingBoot is the fake boot interface keeping an image cache.
type cachingBoot struct {
	fake.Boot
	cleanups atomic.Int32
}

func (b *cachingBoot) CleanUpImageCaches(context.Context) { b.cleanups.Add(1) }

// Issue 23: the _clean_up_caches periodic ([conductor]/
// cache_clean_up_interval) asks every enabled implementation that keeps an
// image cache to trim it, once each, as upstream's image_cache.clean_up_all.
func TestCleanUpCaches(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newStoreEnv(t, db, testConfig(t, nil))
		r := stockRegistry(t)
		boot := &cachingBoot{}
		mustRegister(t, r, driver.KindBoot, "caching", boot)
		e.drivers = buildFakeHardware(t, r, map[driver.Kind][]string{driver.KindBoot: {"caching", "fake"}})
		c := e.newConductor(testHost, nil, nil)
		c.CleanUpCaches(context.Background())
		if n := boot.cleanups.Load(); n != 1 {
			t.Errorf("cache clean-ups: %d, want 1", n)
		}
	})
}
