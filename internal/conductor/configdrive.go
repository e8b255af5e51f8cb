package conductor

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/openkeel/ironic/internal/conductor/task"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/image/configdrive"
)

// storeConfigdrive is upstream's _store_configdrive: the configdrive the
// deployment was asked for, or with [deploy]/configdrive_use_object_store
// a temporary URL of it uploaded to Swift (a dict built into the ISO
// first, since the source is not meant for Swift), which the agent
// downloads. Swift expires the object when the URL does.
func (c *Conductor) storeConfigdrive(ctx context.Context, t *task.Task, cd any) (any, error) {
	if !c.cfg.BoolOf(config.DeployConfigdriveUseObjectStore) {
		return cd, nil
	}
	n := t.Node
	var data string
	switch v := cd.(type) {
	case map[string]any:
		name := ""
		if n.Name != nil {
			name = *n.Name
		}
		built, err := configdrive.Build(ctx, n.UUID, name, v)
		if err != nil {
			return nil, err
		}
		data = built
	case string:
		data = v
	default:
		return nil, fmt.Errorf("configdrive of type %T cannot be uploaded", cd)
	}
	timeout := c.configdriveTempURLDuration()
	container := c.cfg.StringOf(config.ConductorConfigdriveSwiftContainer)
	obj := "configdrive-" + n.UUID
	sw := c.objectStore()
	expire := map[string]string{"X-Delete-After": strconv.Itoa(int(timeout / time.Second))}
	if err := sw.CreateObject(ctx, container, obj, []byte(data), expire); err != nil {
		return nil, err
	}
	return sw.TempURL(ctx, container, obj, timeout)
}

// configdriveTempURLDuration is configdrive_swift_temp_url_duration, else
// as long as the deployment may wait for the agent (plus two minutes),
// else upstream's documented 1800 s.
func (c *Conductor) configdriveTempURLDuration() time.Duration {
	if d := c.cfg.IntOf(config.ConductorConfigdriveSwiftTempURLDuration); d > 0 {
		return time.Duration(d) * time.Second
	}
	if d := c.cfg.IntOf(config.ConductorDeployCallbackTimeout); d > 0 {
		return time.Duration(d+120) * time.Second
	}
	return 1800 * time.Second
}
