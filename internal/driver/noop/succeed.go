package noop

import (
	"context"
	"strings"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
)

// accept validates any node.
type accept struct{}

func (accept) Validate(context.Context, *driver.Task) error { return nil }

// NoDeploy is deploy "noop": its deploy step succeeds at once and tear
// down answers "deleted", like fake deploy but usable with any hardware type.
type NoDeploy struct{ accept }

var (
	_ driver.DeployInterface = NoDeploy{}
	_ driver.StepRunner      = NoDeploy{}
)

// Properties is empty.
func (NoDeploy) Properties() map[string]string { return map[string]string{} }

// Steps declares deploy.deploy (priority 100).
func (NoDeploy) Steps() []driver.StepSpec {
	return []driver.StepSpec{driver.DeployStep("deploy", 100)}
}

// StepHandlers maps the deploy step.
func (n NoDeploy) StepHandlers() map[string]driver.StepFunc {
	return map[string]driver.StepFunc{
		"deploy": func(ctx context.Context, t *driver.Task, _ map[string]any) (string, error) {
			return n.Deploy(ctx, t)
		},
	}
}

// Deploy succeeds synchronously.
func (NoDeploy) Deploy(context.Context, *driver.Task) (string, error) { return "", nil }

// TearDown answers "deleted".
func (NoDeploy) TearDown(context.Context, *driver.Task) (string, error) { return states.Deleted, nil }

// Prepare does nothing.
func (NoDeploy) Prepare(context.Context, *driver.Task) error { return nil }

// CleanUp does nothing.
func (NoDeploy) CleanUp(context.Context, *driver.Task) error { return nil }

// TakeOver does nothing.
func (NoDeploy) TakeOver(context.Context, *driver.Task) error { return nil }

// Management is management "noop": the boot order is assumed to be set up
// by hand (PXE first, then disk), so setting a supported boot device only
// logs.
type Management struct {
	base
	accept
}

var _ driver.ManagementInterface = Management{}

var noopBootDevices = []string{"pxe", "disk"}

// GetSupportedBootDevices answers PXE and disk.
func (Management) GetSupportedBootDevices(context.Context, *driver.Task) ([]string, error) {
	return append([]string(nil), noopBootDevices...), nil
}

// SetBootDevice accepts a supported device and does nothing.
func (Management) SetBootDevice(_ context.Context, t *driver.Task, device string, _ bool) error {
	for _, d := range noopBootDevices {
		if d == device {
			t.Logger().Debug("boot device requested with noop management; assuming the boot order is configured",
				"node", t.Node.UUID, "target", device)
			return nil
		}
	}
	return driver.InvalidParameterValue("Invalid boot device %s specified, supported are %s.",
		device, strings.Join(noopBootDevices, ", "))
}

// GetBootDevice answers PXE, persistent.
func (Management) GetBootDevice(context.Context, *driver.Task) (driver.BootDevice, error) {
	persistent := true
	return driver.BootDevice{BootDevice: "pxe", Persistent: &persistent}, nil
}

// GetSensorsData is not implemented, as upstream.
func (Management) GetSensorsData(context.Context, *driver.Task) (map[string]any, error) {
	return nil, driver.ErrNotImplemented
}

// Network is network "noop": no network changes at all.
type Network struct {
	base
	accept
}

var (
	_ driver.NetworkInterface    = Network{}
	_ driver.InspectionValidator = Network{}
	_ driver.RescuingNetworker   = Network{}
	_ driver.InspectionNetworker = Network{}
	_ driver.ServicingNetworker  = Network{}
)

// PortChanged does nothing.
func (Network) PortChanged(context.Context, *driver.Task, *model.Port) error { return nil }

// PortgroupChanged does nothing.
func (Network) PortgroupChanged(context.Context, *driver.Task, *model.Portgroup) error { return nil }

// VifAttach does nothing.
func (Network) VifAttach(context.Context, *driver.Task, map[string]any) error { return nil }

// VifDetach does nothing.
func (Network) VifDetach(context.Context, *driver.Task, string) error { return nil }

// VifList answers no VIFs.
func (Network) VifList(context.Context, *driver.Task) ([]map[string]any, error) {
	return []map[string]any{}, nil
}

// GetCurrentVif answers none.
func (Network) GetCurrentVif(context.Context, *driver.Task, map[string]any) (string, error) {
	return "", nil
}

// AddProvisioningNetwork does nothing.
func (Network) AddProvisioningNetwork(context.Context, *driver.Task) error { return nil }

// RemoveProvisioningNetwork does nothing.
func (Network) RemoveProvisioningNetwork(context.Context, *driver.Task) error { return nil }

// ConfigureTenantNetworks does nothing.
func (Network) ConfigureTenantNetworks(context.Context, *driver.Task) error { return nil }

// UnconfigureTenantNetworks does nothing.
func (Network) UnconfigureTenantNetworks(context.Context, *driver.Task) error { return nil }

// AddCleaningNetwork does nothing.
func (Network) AddCleaningNetwork(context.Context, *driver.Task) error { return nil }

// RemoveCleaningNetwork does nothing.
func (Network) RemoveCleaningNetwork(context.Context, *driver.Task) error { return nil }

// ValidateInspection accepts (upstream's base raises; noop overrides it).
func (Network) ValidateInspection(context.Context, *driver.Task) error { return nil }

// ValidateRescue accepts.
func (Network) ValidateRescue(context.Context, *driver.Task) error { return nil }

// AddRescuingNetwork does nothing.
func (Network) AddRescuingNetwork(context.Context, *driver.Task) error { return nil }

// RemoveRescuingNetwork does nothing.
func (Network) RemoveRescuingNetwork(context.Context, *driver.Task) error { return nil }

// AddInspectionNetwork does nothing.
func (Network) AddInspectionNetwork(context.Context, *driver.Task) error { return nil }

// RemoveInspectionNetwork does nothing.
func (Network) RemoveInspectionNetwork(context.Context, *driver.Task) error { return nil }

// AddServicingNetwork does nothing.
func (Network) AddServicingNetwork(context.Context, *driver.Task) error { return nil }

// RemoveServicingNetwork does nothing.
func (Network) RemoveServicingNetwork(context.Context, *driver.Task) error { return nil }

// Storage is storage "noop": no volumes, and the image is written to disk.
type Storage struct {
	base
	accept
}

var _ driver.StorageInterface = Storage{}

// AttachVolumes does nothing.
func (Storage) AttachVolumes(context.Context, *driver.Task) error { return nil }

// DetachVolumes does nothing.
func (Storage) DetachVolumes(context.Context, *driver.Task) error { return nil }

// ShouldWriteImage answers true.
func (Storage) ShouldWriteImage(context.Context, *driver.Task) bool { return true }
