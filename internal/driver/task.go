package driver

import (
	"context"
	"log/slog"

	"github.com/openkeel/ironic/internal/model"
)

// Task is what an interface method gets to act on: the node, the resolved
// interfaces of the node, whether the node lock is shared or exclusive, and
// a logger. The conductor's task manager fills it under the node lock.
type Task struct {
	Node   *model.Node
	Driver *Interfaces
	// Shared is true when the task holds a shared (read-only) lock.
	Shared bool
	Log    *slog.Logger
	// VolumeTargets are the node's volume targets (upstream's
	// task.volume_targets); nil when the caller has no database.
	VolumeTargets VolumeTargets
}

// VolumeTargets reaches the volume targets and connectors of a task's
// node (upstream's task.volume_targets and task.volume_connectors), which
// interfaces otherwise have no access to.
type VolumeTargets interface {
	// DestroyAll deletes every volume target of the node.
	DestroyAll(ctx context.Context) error
	// List returns the node's volume targets.
	List(ctx context.Context) ([]*model.VolumeTarget, error)
	// Connectors returns the node's volume connectors.
	Connectors(ctx context.Context) ([]*model.VolumeConnector, error)
	// SetProperties stores the storage service's connection data as the
	// properties of every target of volumeID, as upstream saves them on
	// VolumeTarget.list_by_volume_id after an attachment.
	SetProperties(ctx context.Context, volumeID string, properties map[string]any) error
}

// Logger returns the task's logger, or the default one.
func (t *Task) Logger() *slog.Logger {
	if t != nil && t.Log != nil {
		return t.Log
	}
	return slog.Default()
}

// Interfaces is upstream's BareDriver: one implementation per kind for a
// node, plus the hardware type's name.
type Interfaces struct {
	HardwareType string
	Names        map[Kind]string
	BIOS         BIOSInterface
	Boot         BootInterface
	Console      ConsoleInterface
	Deploy       DeployInterface
	Firmware     FirmwareInterface
	Inspect      InspectInterface
	Management   ManagementInterface
	Network      NetworkInterface
	Power        PowerInterface
	RAID         RAIDInterface
	Rescue       RescueInterface
	Storage      StorageInterface
	Vendor       VendorInterface
}

// Get returns the implementation of kind, or nil when none is attached.
func (d *Interfaces) Get(kind Kind) Interface {
	if d == nil {
		return nil
	}
	var impl Interface
	switch kind {
	case KindBIOS:
		impl = nilIfNil(d.BIOS)
	case KindBoot:
		impl = nilIfNil(d.Boot)
	case KindConsole:
		impl = nilIfNil(d.Console)
	case KindDeploy:
		impl = nilIfNil(d.Deploy)
	case KindFirmware:
		impl = nilIfNil(d.Firmware)
	case KindInspect:
		impl = nilIfNil(d.Inspect)
	case KindManagement:
		impl = nilIfNil(d.Management)
	case KindNetwork:
		impl = nilIfNil(d.Network)
	case KindPower:
		impl = nilIfNil(d.Power)
	case KindRAID:
		impl = nilIfNil(d.RAID)
	case KindRescue:
		impl = nilIfNil(d.Rescue)
	case KindStorage:
		impl = nilIfNil(d.Storage)
	case KindVendor:
		impl = nilIfNil(d.Vendor)
	}
	return impl
}

// set attaches impl as the implementation of kind; impl has been checked
// against the kind at registration.
func (d *Interfaces) set(kind Kind, name string, impl Interface) {
	if d.Names == nil {
		d.Names = map[Kind]string{}
	}
	d.Names[kind] = name
	switch kind {
	case KindBIOS:
		d.BIOS = impl.(BIOSInterface)
	case KindBoot:
		d.Boot = impl.(BootInterface)
	case KindConsole:
		d.Console = impl.(ConsoleInterface)
	case KindDeploy:
		d.Deploy = impl.(DeployInterface)
	case KindFirmware:
		d.Firmware = impl.(FirmwareInterface)
	case KindInspect:
		d.Inspect = impl.(InspectInterface)
	case KindManagement:
		d.Management = impl.(ManagementInterface)
	case KindNetwork:
		d.Network = impl.(NetworkInterface)
	case KindPower:
		d.Power = impl.(PowerInterface)
	case KindRAID:
		d.RAID = impl.(RAIDInterface)
	case KindRescue:
		d.Rescue = impl.(RescueInterface)
	case KindStorage:
		d.Storage = impl.(StorageInterface)
	case KindVendor:
		d.Vendor = impl.(VendorInterface)
	}
}

// nilIfNil turns a typed nil interface value into an untyped nil so callers
// can compare Get's result with nil.
func nilIfNil[T Interface](v T) Interface {
	var zero T
	if any(v) == any(zero) {
		return nil
	}
	return v
}
