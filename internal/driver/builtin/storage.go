package builtin

import (
	"time"

	"github.com/openkeel/ironic/internal/cinder"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/driver/storage"
)

// cinderStorage is the cinder storage interface with the [cinder] client.
// Volumes are attached with the service's credentials, as upstream's
// conductor attaches them at deployment time without a caller's token.
func cinderStorage(c *config.Config) *storage.Cinder {
	return &storage.Cinder{
		Volumes:             cinder.FromConfig(c, globalRequestID),
		ActionRetries:       c.IntOf(config.CinderActionRetries),
		ActionRetryInterval: time.Duration(c.IntOf(config.CinderActionRetryInterval)) * time.Second,
	}
}
