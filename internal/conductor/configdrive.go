package conductor

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/openkeel/ironic/internal/conductor/task"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/image/configdrive"
)

// checkAndFixConfigdrive is the check of upstream's do_node_deploy: unless
// [conductor]/disable_configdrive_check, a network interface with the
// "metadata" capability (flat, neutron) has the config drive's network
// metadata checked and, when invalid, regenerated from the VIFs
// (check_and_fix_configdrive). The drive comes back as it was sent when
// it needs no fix or cannot be fixed; an error is one that fails the
// deployment upstream too (Neutron unreachable, malicious ISO content).
func (c *Conductor) checkAndFixConfigdrive(ctx context.Context, t *task.Task, cd any) (any, error) {
	if c.cfg.BoolOf(config.ConductorDisableConfigdriveCheck) {
		return cd, nil
	}
	gen, ok := t.Driver.Network.(driver.InstanceNetworkMetadataGenerator)
	if !ok {
		return cd, nil
	}
	n := t.Node
	instance := ""
	if n.InstanceUUID != nil {
		instance = *n.InstanceUUID
	}
	return configdrive.CheckAndFix(ctx, cd, configdrive.FixOptions{
		NodeUUID:        n.UUID,
		InstanceUUID:    instance,
		DisableMTUCheck: c.cfg.BoolOf(config.ConductorDisableMetadataMtuCheck),
		TempDir:         c.cfg.StringOf(config.DefaultTempdir),
		Generate: func(ctx context.Context) (map[string]any, error) {
			return gen.GenerateInstanceNetworkData(ctx, t.DriverTask())
		},
		Log: t.Log(),
	})
}

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
