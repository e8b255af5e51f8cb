package conductor

import (
	"context"
	"slices"

	"github.com/openkeel/ironic/internal/conductor/task"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
)

// biosSettingVersion is upstream's BIOSSetting object version, written in
// the rows' version column.
const biosSettingVersion = "1.1"

// biosSettingsReader is a BIOS interface that reads the settings (redfish)
// and leaves writing bios_settings to the conductor, as the driver layer
// has no store.
type biosSettingsReader interface {
	BIOSSettings(ctx context.Context, task *driver.Task) ([]model.BIOSSetting, error)
}

// biosStepSettings is a BIOS interface whose steps stand for writes of
// bios_settings (upstream's FakeBIOS writes the rows in its steps): it
// tells which rows a successful step leaves, and the conductor writes
// them.
type biosStepSettings interface {
	SettingsAfterStep(step string, args map[string]any) (settings []model.BIOSSetting, ok bool, err error)
}

// biosCachingSteps are the steps upstream decorates with
// @cache_bios_settings: the settings are cached again after each call.
var biosCachingSteps = []string{"apply_configuration", "factory_reset"}

// cacheBIOSSettings is the interface's cache_bios_settings; for a reader
// the rows are synced here.
func (c *Conductor) cacheBIOSSettings(ctx context.Context, t *task.Task) error {
	b := t.Driver.BIOS
	if b == nil {
		return nil
	}
	r, ok := b.(biosSettingsReader)
	if !ok {
		return b.CacheBIOSSettings(ctx, t.DriverTask())
	}
	settings, err := r.BIOSSettings(ctx, t.DriverTask())
	if err != nil {
		return err
	}
	return c.syncBIOSSettings(ctx, t.Node.ID, settings)
}

// nodeCacheBIOSSettings is upstream node_cache_bios_settings: caching
// never fails the caller; an interface without BIOS support is a warning.
func (c *Conductor) nodeCacheBIOSSettings(ctx context.Context, t *task.Task) {
	err := c.cacheBIOSSettings(ctx, t)
	switch {
	case err == nil:
	case errs.Is(err, errs.ClassUnsupportedDriverExtension):
		t.Log().WarnContext(ctx, "BIOS settings are not supported for node, skipping")
	default:
		t.Log().ErrorContext(ctx, "caching of bios settings failed", "error", err)
	}
}

// afterBIOSStep writes the rows a step of a biosStepSettings interface
// leaves, then caches the BIOS settings after a successful call of a
// reader's caching step, as upstream's decorator does (whatever state the
// step returned); a failure of either fails the step.
func (c *Conductor) afterBIOSStep(ctx context.Context, t *task.Task, step driver.Step, result string, err error) (string, error) {
	if err != nil || step.Interface != driver.KindBIOS {
		return result, err
	}
	if w, ok := t.Driver.BIOS.(biosStepSettings); ok {
		settings, written, err := w.SettingsAfterStep(step.Name, step.Args)
		if err != nil {
			return "", err
		}
		if written {
			if err := c.syncBIOSSettings(ctx, t.Node.ID, settings); err != nil {
				return "", err
			}
		}
	}
	if !slices.Contains(biosCachingSteps, step.Name) {
		return result, nil
	}
	// Other interfaces cache inside their steps.
	if _, ok := t.Driver.BIOS.(biosSettingsReader); !ok {
		return result, nil
	}
	if err := c.cacheBIOSSettings(ctx, t); err != nil {
		return "", err
	}
	return result, nil
}

// syncBIOSSettings is upstream BIOSSettingList.sync_node_setting and the
// writes after it: settings not stored are created, those whose value
// changed are updated (with their registry fields), those no longer
// reported are deleted; unchanged rows are left alone.
func (c *Conductor) syncBIOSSettings(ctx context.Context, nodeID int64, settings []model.BIOSSetting) error {
	current, err := c.store.ListBIOSSettings(ctx, nodeID)
	if err != nil {
		return storeErr(err, "list BIOS settings")
	}
	stored := make(map[string]*string, len(current))
	for _, s := range current {
		stored[s.Name] = s.Value
	}
	var create, update []model.BIOSSetting
	given := make(map[string]bool, len(settings))
	for _, s := range settings {
		s.NodeID = nodeID
		given[s.Name] = true
		old, ok := stored[s.Name]
		switch {
		case !ok:
			create = append(create, s)
		case !sameValue(old, s.Value):
			update = append(update, s)
		}
	}
	var remove []string
	for _, s := range current {
		if !given[s.Name] {
			remove = append(remove, s.Name)
		}
	}
	if len(create) > 0 {
		if _, err := c.store.CreateBIOSSettings(ctx, nodeID, create, biosSettingVersion); err != nil {
			return storeErr(err, "create BIOS settings")
		}
	}
	if len(update) > 0 {
		if _, err := c.store.UpdateBIOSSettings(ctx, nodeID, update, biosSettingVersion); err != nil {
			return storeErr(err, "update BIOS settings")
		}
	}
	if len(remove) > 0 {
		if err := c.store.DeleteBIOSSettings(ctx, nodeID, remove); err != nil {
			return storeErr(err, "delete BIOS settings")
		}
	}
	return nil
}

func sameValue(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}
