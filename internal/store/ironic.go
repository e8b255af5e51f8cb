package store

import (
	"errors"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
)

// Ironic turns the store's refusals into the exception classes upstream's
// database layer raises, so that the conductor and the API answer alike.
// rec is the record the failed operation wrote (for the values the
// messages quote); other errors come back unchanged.
func Ironic(err error, rec any) error {
	var dup *DuplicateError
	var empty *NotEmptyError
	var assoc *NodeAssociatedError
	switch {
	case errors.As(err, &dup):
		return duplicateClass(dup, rec)
	case errors.As(err, &empty):
		switch empty.Kind {
		case KindPortgroup:
			return errs.New("PortgroupNotEmpty", map[string]any{"portgroup": empty.Ident})
		case KindChassis:
			return errs.New("ChassisNotEmpty", map[string]any{"chassis": empty.Ident})
		}
	case errors.As(err, &assoc):
		return errs.NewMessage("NodeAssociated", assoc.Error())
	}
	return err
}

func duplicateClass(d *DuplicateError, rec any) error {
	kw := func(k string, v any) map[string]any { return map[string]any{k: v} }
	switch r := rec.(type) {
	case *model.VolumeConnector:
		if d.Field == "type" || d.Field == "connector_id" {
			return errs.New("VolumeConnectorTypeAndIdAlreadyExists", map[string]any{
				"type": model.Deref(r.Type), "connector_id": model.Deref(r.ConnectorID)})
		}
		return errs.New("VolumeConnectorAlreadyExists", kw("uuid", r.UUID))
	case *model.VolumeTarget:
		if d.Field == "boot_index" || d.Field == "node_id" {
			return errs.New("VolumeTargetBootIndexAlreadyExists", kw("boot_index", model.Deref(r.BootIndex)))
		}
		return errs.New("VolumeTargetAlreadyExists", kw("uuid", r.UUID))
	}
	switch d.Kind + "/" + d.Field {
	case KindNode + "/uuid":
		return errs.New("NodeAlreadyExists", kw("uuid", d.Value))
	case KindNode + "/name":
		return errs.New("DuplicateName", kw("name", d.Value))
	case KindNode + "/instance_uuid":
		return errs.New("InstanceAssociated", map[string]any{"instance_uuid": d.Value, "node": d.Node})
	case KindPort + "/address":
		return errs.New("MACAlreadyExists", kw("mac", d.Value))
	case KindPort + "/name":
		return errs.New("PortDuplicateName", kw("name", d.Value))
	case KindPort + "/uuid":
		return errs.New("PortAlreadyExists", kw("uuid", d.Value))
	case KindPortgroup + "/address":
		return errs.New("PortgroupMACAlreadyExists", kw("mac", d.Value))
	case KindPortgroup + "/name":
		return errs.New("PortgroupDuplicateName", kw("name", d.Value))
	case KindPortgroup + "/uuid":
		return errs.New("PortgroupAlreadyExists", kw("uuid", d.Value))
	case KindChassis + "/uuid":
		return errs.New("ChassisAlreadyExists", kw("uuid", d.Value))
	case KindAllocation + "/name":
		return errs.New("AllocationDuplicateName", kw("name", d.Value))
	case KindAllocation + "/uuid":
		return errs.New("AllocationAlreadyExists", kw("uuid", d.Value))
	case KindDeployTemplate + "/name":
		return errs.New("DeployTemplateDuplicateName", kw("name", d.Value))
	case KindDeployTemplate + "/uuid":
		return errs.New("DeployTemplateAlreadyExists", kw("uuid", d.Value))
	case KindRunbook + "/name":
		return errs.New("RunbookDuplicateName", kw("name", d.Value))
	case KindRunbook + "/uuid":
		return errs.New("RunbookAlreadyExists", kw("uuid", d.Value))
	}
	return errs.NewMessage("Conflict", d.Error())
}
