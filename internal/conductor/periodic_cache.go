package conductor

import (
	"context"

	"github.com/openkeel/ironic/internal/driver"
)

// CleanUpCaches is upstream's _clean_up_caches ([conductor]/
// cache_clean_up_interval): every enabled interface implementation that
// keeps an image cache drops its expired entries and trims it to its size.
func (c *Conductor) CleanUpCaches(ctx context.Context) {
	seen := map[driver.ImageCacheKeeper]bool{}
	for _, kind := range []driver.Kind{driver.KindBoot, driver.KindDeploy, driver.KindRescue} {
		for _, e := range c.enabledImplementations(kind) {
			k, ok := e.impl.(driver.ImageCacheKeeper)
			if !ok || seen[k] {
				continue
			}
			seen[k] = true
			k.CleanUpImageCaches(ctx)
		}
	}
}
