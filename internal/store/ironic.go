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
			return errs.New(errs.ClassPortgroupNotEmpty, map[string]any{"portgroup": empty.Ident})
		case KindChassis:
			return errs.New(errs.ClassChassisNotEmpty, map[string]any{"chassis": empty.Ident})
		}
	case errors.As(err, &assoc):
		return errs.NewMessage(errs.ClassNodeAssociated, assoc.Error())
	}
	return err
}

func duplicateClass(d *DuplicateError, rec any) error {
	kw := func(k string, v any) map[string]any { return map[string]any{k: v} }
	switch r := rec.(type) {
	case *model.VolumeConnector:
		if d.Field == "type" || d.Field == "connector_id" {
			return errs.New(errs.ClassVolumeConnectorTypeAndIdAlreadyExists, map[string]any{
				"type": model.Deref(r.Type), "connector_id": model.Deref(r.ConnectorID)})
		}
		return errs.New(errs.ClassVolumeConnectorAlreadyExists, kw("uuid", r.UUID))
	case *model.VolumeTarget:
		if d.Field == "boot_index" || d.Field == "node_id" {
			return errs.New(errs.ClassVolumeTargetBootIndexAlreadyExists, kw("boot_index", model.Deref(r.BootIndex)))
		}
		return errs.New(errs.ClassVolumeTargetAlreadyExists, kw("uuid", r.UUID))
	}
	switch d.Kind + "/" + d.Field {
	case KindNode + "/uuid":
		return errs.New(errs.ClassNodeAlreadyExists, kw("uuid", d.Value))
	case KindNode + "/name":
		return errs.New(errs.ClassDuplicateName, kw("name", d.Value))
	case KindNode + "/instance_uuid":
		return errs.New(errs.ClassInstanceAssociated, map[string]any{"instance_uuid": d.Value, "node": d.Node})
	case KindPort + "/address":
		return errs.New(errs.ClassMACAlreadyExists, kw("mac", d.Value))
	case KindPort + "/name":
		return errs.New(errs.ClassPortDuplicateName, kw("name", d.Value))
	case KindPort + "/uuid":
		return errs.New(errs.ClassPortAlreadyExists, kw("uuid", d.Value))
	case KindPortgroup + "/address":
		return errs.New(errs.ClassPortgroupMACAlreadyExists, kw("mac", d.Value))
	case KindPortgroup + "/name":
		return errs.New(errs.ClassPortgroupDuplicateName, kw("name", d.Value))
	case KindPortgroup + "/uuid":
		return errs.New(errs.ClassPortgroupAlreadyExists, kw("uuid", d.Value))
	case KindChassis + "/uuid":
		return errs.New(errs.ClassChassisAlreadyExists, kw("uuid", d.Value))
	case KindAllocation + "/name":
		return errs.New(errs.ClassAllocationDuplicateName, kw("name", d.Value))
	case KindAllocation + "/uuid":
		return errs.New(errs.ClassAllocationAlreadyExists, kw("uuid", d.Value))
	case KindDeployTemplate + "/name":
		return errs.New(errs.ClassDeployTemplateDuplicateName, kw("name", d.Value))
	case KindDeployTemplate + "/uuid":
		return errs.New(errs.ClassDeployTemplateAlreadyExists, kw("uuid", d.Value))
	case KindRunbook + "/name":
		return errs.New(errs.ClassRunbookDuplicateName, kw("name", d.Value))
	case KindRunbook + "/uuid":
		return errs.New(errs.ClassRunbookAlreadyExists, kw("uuid", d.Value))
	}
	return errs.NewMessage(errs.ClassConflict, d.Error())
}
