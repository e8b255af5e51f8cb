package storage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/openkeel/ironic/internal/cinder"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
)

// The connector types upstream's _generate_connector turns into a
// connector for iSCSI and for Fibre Channel.
var (
	validISCSITypes = []string{"iqn"}
	validFCTypes    = []string{"wwpn", "wwnn"}
)

// Volumes is the part of Cinder's API the cinder interface uses
// (internal/cinder.Client).
type Volumes interface {
	GetVolume(ctx context.Context, id string) (*cinder.Volume, error)
	Reserve(ctx context.Context, id string) error
	InitializeConnection(ctx context.Context, id string, conn cinder.Connector) (*cinder.ConnectionInfo, error)
	Attach(ctx context.Context, id, mountpoint, instance string) error
	BeginDetaching(ctx context.Context, id string) error
	TerminateConnection(ctx context.Context, id string, conn cinder.Connector) error
	Detach(ctx context.Context, id, attachmentID string) error
	SetMetadata(ctx context.Context, id string, md map[string]string) error
}

// Cinder is storage "cinder": the node's volume targets are attached
// through Cinder's volume actions with a connector made of the node's
// volume connectors, and the connection data Cinder gives become the
// targets' properties, which the iPXE boot interface boots from.
type Cinder struct {
	base
	// Volumes is the Cinder client; nil fails every attachment as upstream
	// fails to connect to the block storage service.
	Volumes Volumes
	// ActionRetries and ActionRetryInterval are [cinder]/action_retries
	// and action_retry_interval, which bound the detachment's retries.
	ActionRetries       int
	ActionRetryInterval time.Duration
	// Now stamps the volume metadata (time.Now when nil).
	Now func() time.Time
}

var _ driver.StorageInterface = (*Cinder)(nil)

// storageError is upstream's StorageError with message.
func storageError(format string, a ...any) *errs.Error {
	return errs.NewMessage(errs.ClassStorageError, fmt.Sprintf(format, a...))
}

// failValidation is upstream's _fail_validation.
func failValidation(ctx context.Context, task *driver.Task, class errs.Class, reason string) error {
	msg := fmt.Sprintf("Failed to validate cinder storage interface for node %s. %s", task.Node.UUID, reason)
	task.Logger().ErrorContext(ctx, msg)
	return errs.NewMessage(class, msg)
}

// foundTypes is what _validate_connectors found.
type foundTypes struct{ fc, iscsi bool }

// validateConnectors is upstream's _validate_connectors: iSCSI needs
// iPXE, and Fibre Channel needs as many wwnn as wwpn connectors.
func (c *Cinder) validateConnectors(ctx context.Context, task *driver.Task, conns []*model.VolumeConnector) (foundTypes, error) {
	var iscsiFound []string
	wwpn, wwnn := 0, 0
	ipxe := ipxeEnabled(task)
	for _, vc := range conns {
		typ := str(vc.Type)
		if vc.ConnectorID == nil {
			continue
		}
		if slices.Contains(validISCSITypes, typ) {
			iscsiFound = append(iscsiFound, vc.UUID)
			if !ipxe {
				return foundTypes{}, failValidation(ctx, task, errs.ClassInvalidParameterValue,
					"The [pxe]/ipxe_enabled option must be set to True or the boot interface must be set to ``ipxe`` to support network booting to an iSCSI volume.")
			}
		}
		switch typ {
		case "wwpn":
			wwpn++
		case "wwnn":
			wwnn++
		}
	}
	if len(iscsiFound) > 1 {
		task.Logger().WarnContext(ctx, fmt.Sprintf("Multiple possible iSCSI connectors, %s found, for node %s. Only the first iSCSI connector, %s, will be utilized.",
			pyList(iscsiFound), task.Node.UUID, iscsiFound[0]))
	}
	if wwpn != wwnn {
		return foundTypes{}, failValidation(ctx, task, errs.ClassStorageError, fmt.Sprintf(
			"Cinder requires both wwnn and wwpn entries for FCoE connections. There must be a wwpn entry for every wwnn entry. There are %d wwpn entries and %d wwnn entries.", wwpn, wwnn))
	}
	return foundTypes{fc: wwpn >= 1, iscsi: len(iscsiFound) >= 1}, nil
}

// validateTargets is upstream's _validate_targets: each target has a
// volume_id, an iscsi or fibre_channel type matched by a connector, and a
// boot volume needs the node's boot capability of its type.
func (c *Cinder) validateTargets(ctx context.Context, task *driver.Task, vts []*model.VolumeTarget, found foundTypes, iscsiBoot, fcBoot bool) error {
	for _, vt := range vts {
		if vt.VolumeID == nil {
			return failValidation(ctx, task, errs.ClassInvalidParameterValue, fmt.Sprintf("volume_id missing from target %s.", vt.UUID))
		}
		boot := vt.BootIndex != nil && *vt.BootIndex == 0
		switch typ := str(vt.VolumeType); typ {
		case "fibre_channel":
			if !fcBoot && boot {
				return failValidation(ctx, task, errs.ClassInvalidParameterValue, fmt.Sprintf("Volume target %s is configured for 'fibre_channel', however the capability 'fibre_channel_boot' is not set on node.", vt.UUID))
			}
			if !found.fc {
				return failValidation(ctx, task, errs.ClassInvalidParameterValue, fmt.Sprintf("Volume target %s is configured for 'fibre_channel', however no Fibre Channel WWPNs are configured for the node volume connectors.", vt.UUID))
			}
		case "iscsi":
			if !iscsiBoot && boot {
				return failValidation(ctx, task, errs.ClassInvalidParameterValue, fmt.Sprintf("Volume target %s is configured for 'iscsi', however the capability 'iscsi_boot' is not set for the node.", vt.UUID))
			}
			if !found.iscsi {
				return failValidation(ctx, task, errs.ClassInvalidParameterValue, fmt.Sprintf("Volume target %s is configured for 'iscsi', however no iSCSI connectors are configured for the node.", vt.UUID))
			}
		default:
			return failValidation(ctx, task, errs.ClassInvalidParameterValue, fmt.Sprintf("Volume target %s is of an unknown type '%s'. Supported types: 'iscsi' or 'fibre_channel'", vt.UUID, typ))
		}
	}
	return nil
}

// Validate is upstream CinderStorage.validate: the connectors, the boot
// capabilities and the targets must fit together before a deployment.
func (c *Cinder) Validate(ctx context.Context, task *driver.Task) error {
	conns, err := connectors(ctx, task)
	if err != nil {
		return err
	}
	vts, err := targets(ctx, task)
	if err != nil {
		return err
	}
	found, err := c.validateConnectors(ctx, task, conns)
	if err != nil {
		return err
	}
	caps := task.Node.Properties["capabilities"]
	iscsiBoot := boolFromString(driver.Capability(caps, "iscsi_boot"))
	fcBoot := boolFromString(driver.Capability(caps, "fibre_channel_boot"))
	if iscsiBoot && !found.iscsi {
		return failValidation(ctx, task, errs.ClassInvalidParameterValue, fmt.Sprintf(
			"In order to enable the 'iscsi_boot' capability for the node, an associated volume_connector type must be valid for iSCSI (%s).", strings.Join(validISCSITypes, ", ")))
	}
	if fcBoot && !found.fc {
		return failValidation(ctx, task, errs.ClassInvalidParameterValue, fmt.Sprintf(
			"In order to enable the 'fibre_channel_boot' capability for the node, an associated volume_connector type must be valid for Fibre Channel (%s).", strings.Join(validFCTypes, ", ")))
	}
	return c.validateTargets(ctx, task, vts, found, iscsiBoot, fcBoot)
}

// ShouldWriteImage is false for a boot volume without an image_source.
func (c *Cinder) ShouldWriteImage(ctx context.Context, task *driver.Task) bool {
	return shouldWriteImage(ctx, task)
}

// connector is upstream's _generate_connector: the first iqn as the
// initiator, the first ip, every wwpn and wwnn, the node as host, and
// multipath when several connectors contribute.
func (c *Cinder) connector(ctx context.Context, task *driver.Task, conns []*model.VolumeConnector) (cinder.Connector, error) {
	data := cinder.Connector{}
	valid := false
	for _, vc := range conns {
		typ, id := str(vc.Type), str(vc.ConnectorID)
		_, haveInitiator := data["initiator"]
		_, haveIP := data["ip"]
		switch {
		case strings.Contains(typ, "iqn") && !haveInitiator:
			data["initiator"], valid = id, true
		case strings.Contains(typ, "ip") && !haveIP:
			data["ip"] = id
		case strings.Contains(typ, "wwpn"):
			l, _ := data["wwpns"].([]string)
			data["wwpns"], valid = append(l, id), true
		case strings.Contains(typ, "wwnn"):
			l, _ := data["wwnns"].([]string)
			data["wwnns"], valid = append(l, id), true
		default:
			task.Logger().WarnContext(ctx, fmt.Sprintf("Node %s has a volume_connector (%s) defined with an unsupported type: %s.", task.Node.UUID, vc.UUID, typ))
		}
	}
	if !valid {
		msg := fmt.Sprintf("Insufficient or incompatible volume connection records for node %s. Valid connector types: %s",
			task.Node.UUID, strings.Join(append(slices.Clone(validFCTypes), validISCSITypes...), ", "))
		task.Logger().ErrorContext(ctx, msg)
		return nil, errs.NewMessage(errs.ClassStorageError, msg)
	}
	data["host"] = task.Node.UUID
	if len(conns) > 1 && len(data) > 1 {
		data["multipath"] = true
	}
	return data, nil
}

// connected is one entry of upstream cinder.attach_volumes' answer.
type connected struct {
	volumeID        string
	data            map[string]any
	alreadyAttached bool
}

// instanceUUID is the server the volume is attached to: the instance,
// or the node itself when it has none.
func instanceUUID(n *model.Node) string {
	if n.InstanceUUID != nil && *n.InstanceUUID != "" {
		return *n.InstanceUUID
	}
	return n.UUID
}

// attachedTo is upstream is_volume_attached / _get_attachment_id.
func attachedTo(n *model.Node, v *cinder.Volume) (string, bool) {
	ids := []string{n.UUID}
	if n.InstanceUUID != nil {
		ids = append(ids, *n.InstanceUUID)
	}
	return v.AttachmentFor(ids...)
}

// metadata is upstream _create_metadata_dictionary: one key per node
// holding a JSON document (Cinder's metadata are flat strings), written
// with Python's json.dumps separators.
func (c *Cinder) metadata(n *model.Node, action string) map[string]string {
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	ts := now().UTC().Format("2006-01-02T15:04:05.000000")
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	doc := fmt.Sprintf(`{"instance_uuid": %s, "last_seen": %s, "last_action": %s}`, q(instanceUUID(n)), q(ts), q(action))
	return map[string]string{"ironic_node_" + n.UUID: doc}
}

// attach is upstream cinder.attach_volumes.
func (c *Cinder) attach(ctx context.Context, task *driver.Task, volumeIDs []string, conn cinder.Connector) ([]connected, error) {
	n := task.Node
	log := task.Logger()
	if c.Volumes == nil {
		return nil, storageError("Failed to connect to block storage service : no [cinder] client configured")
	}
	var out []connected
	for _, id := range volumeIDs {
		vol, err := c.Volumes.GetVolume(ctx, id)
		if err != nil {
			return out, logged(ctx, task, storageError("Failed to get volume %s from cinder for node %s: %v", id, n.UUID, err))
		}
		if _, ok := attachedTo(n, vol); ok {
			log.DebugContext(ctx, "volume already attached to the node, skipping attachment", "volume", id, "node", n.UUID)
			out = append(out, connected{volumeID: vol.ID, data: map[string]any{"ironic_volume_uuid": vol.ID, "volume_id": id}, alreadyAttached: true})
			continue
		}
		if err := c.Volumes.Reserve(ctx, id); err != nil {
			return out, logged(ctx, task, storageError("Failed to reserve volume %s for node %s: %v)", id, n.UUID, err))
		}
		info, err := c.Volumes.InitializeConnection(ctx, id, conn)
		if err != nil {
			return out, logged(ctx, task, storageError("Failed to initialize connection for volume %s to node %s: %v", id, n.UUID, err))
		}
		if _, ok := info.Data["volume_id"]; !ok {
			info.Data["volume_id"] = id
		}
		info.Data["ironic_volume_uuid"] = vol.ID
		out = append(out, connected{volumeID: vol.ID, data: info.Data})
		log.InfoContext(ctx, fmt.Sprintf("Successfully initialized volume %s for node %s.", id, n.UUID))
		// Cinder needs a mountpoint to complete an attachment.
		if err := c.Volumes.Attach(ctx, id, "ironic_mountpoint", instanceUUID(n)); err != nil {
			return out, logged(ctx, task, storageError("Failed to inform cinder that the attachment for volume %s for node %s has been completed: %v", id, n.UUID, err))
		}
		if err := c.Volumes.SetMetadata(ctx, id, c.metadata(n, "attached")); err != nil {
			log.WarnContext(ctx, fmt.Sprintf("Failed to update volume metadata for volume %s for node %s: %v", id, n.UUID, err))
		}
	}
	return out, nil
}

func logged(ctx context.Context, task *driver.Task, e *errs.Error) error {
	task.Logger().ErrorContext(ctx, e.Message)
	return e
}

func volumeIDs(vts []*model.VolumeTarget) []string {
	ids := make([]string, 0, len(vts))
	for _, vt := range vts {
		ids = append(ids, str(vt.VolumeID))
	}
	return ids
}

// AttachVolumes is upstream CinderStorage.attach_volumes: every target's
// volume is attached; on any failure what was attached is detached again;
// the connection data of each new attachment become the properties of
// the targets of its volume.
func (c *Cinder) AttachVolumes(ctx context.Context, task *driver.Task) error {
	vts, conn, err := c.targetsAndConnector(ctx, task)
	if err != nil || len(vts) == 0 {
		return err
	}
	ids := volumeIDs(vts)
	done, err := c.attach(ctx, task, ids, conn)
	if err != nil {
		task.Logger().ErrorContext(ctx, fmt.Sprintf("Error attaching volumes for node %s: %v", task.Node.UUID, err))
		if derr := c.detach(ctx, task, vts, conn, true); derr != nil {
			task.Logger().ErrorContext(ctx, "detaching after a failed attachment failed too", "node", task.Node.UUID, "error", derr)
		}
		return err
	}
	if len(done) != len(ids) {
		task.Logger().ErrorContext(ctx, fmt.Sprintf("The number of volumes defined for node %s does not match the number of attached volumes. Attempting detach and abort operation.", task.Node.UUID))
		if derr := c.detach(ctx, task, vts, conn, true); derr != nil {
			task.Logger().ErrorContext(ctx, "detaching after a failed attachment failed too", "node", task.Node.UUID, "error", derr)
		}
		return storageError("Mismatch between the number of configured volume targets for node %s and the number of completed attachments.", task.Node.UUID)
	}
	for _, v := range done {
		// Nova keeps the connection data of volumes attached before.
		if v.alreadyAttached {
			continue
		}
		if err := task.VolumeTargets.SetProperties(ctx, v.volumeID, v.data); err != nil {
			return err
		}
	}
	return nil
}

// DetachVolumes is upstream CinderStorage.detach_volumes.
func (c *Cinder) DetachVolumes(ctx context.Context, task *driver.Task) error {
	vts, conn, err := c.targetsAndConnector(ctx, task)
	if err != nil || len(vts) == 0 {
		return err
	}
	return c.detach(ctx, task, vts, conn, false)
}

// targetsAndConnector reads the node's volume targets and, when it has
// any, the connector Cinder is given for them; without targets there is
// nothing to attach or detach and the connectors are not read.
func (c *Cinder) targetsAndConnector(ctx context.Context, task *driver.Task) ([]*model.VolumeTarget, cinder.Connector, error) {
	vts, err := targets(ctx, task)
	if err != nil || len(vts) == 0 {
		return nil, nil, err
	}
	conns, err := connectors(ctx, task)
	if err != nil {
		return nil, nil, err
	}
	conn, err := c.connector(ctx, task, conns)
	if err != nil {
		return nil, nil, err
	}
	return vts, conn, nil
}

// detach retries the detachment [cinder]/action_retries times more,
// [cinder]/action_retry_interval apart. An active node (powered off to
// detach) and the retries of an aborted attachment tolerate failures,
// which are then only logged.
func (c *Cinder) detach(ctx context.Context, task *driver.Task, vts []*model.VolumeTarget, conn cinder.Connector, aborting bool) error {
	ids := volumeIDs(vts)
	for attempt := 0; ; attempt++ {
		allowErrors := task.Node.ProvisionState == states.Active || (aborting && attempt > 0)
		err := c.detachOnce(ctx, task, ids, conn, allowErrors)
		if err == nil {
			return nil
		}
		var e *errs.Error
		if !errors.As(err, &e) || e.Class != errs.ClassStorageError {
			return err
		}
		format := "Error detaching volume for node %s: %v."
		if aborting {
			format = "Error on aborting volume detach for node %s: %v."
		}
		msg := fmt.Sprintf(format, task.Node.UUID, err)
		if attempt >= c.ActionRetries {
			task.Logger().ErrorContext(ctx, msg)
			return err
		}
		task.Logger().WarnContext(ctx, msg+" Re-attempting detachment.")
		if err := sleep(ctx, c.ActionRetryInterval); err != nil {
			return fmt.Errorf("wait to retry the detachment of node %s's volumes: %w", task.Node.UUID, err)
		}
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// detachOnce is upstream cinder.detach_volumes.
func (c *Cinder) detachOnce(ctx context.Context, task *driver.Task, ids []string, conn cinder.Connector, allowErrors bool) error {
	n := task.Node
	log := task.Logger()
	if c.Volumes == nil {
		return storageError("Failed to connect to block storage service : no [cinder] client configured")
	}
	handle := func(msg string) error {
		if allowErrors {
			log.WarnContext(ctx, msg)
			return nil
		}
		log.ErrorContext(ctx, msg)
		return storageError("%s", msg)
	}
	for _, id := range ids {
		vol, err := c.Volumes.GetVolume(ctx, id)
		if err != nil {
			// The volume may be gone already; with errors allowed the
			// others are still detached.
			if err := handle(fmt.Sprintf("Failed to get volume %s from cinder for node %s: %v", id, n.UUID, err)); err != nil {
				return err
			}
			continue
		}
		attachment, ok := attachedTo(n, vol)
		if !ok {
			log.DebugContext(ctx, "volume not attached to the node, skipping detachment", "volume", id, "node", n.UUID)
			continue
		}
		if err := c.Volumes.BeginDetaching(ctx, id); err != nil {
			// This only moves the volume's status; the detachment goes on
			// when errors are allowed.
			if err := handle(fmt.Sprintf("Failed to request detach for volume %s from cinder for node %s: %v", id, n.UUID, err)); err != nil {
				return err
			}
		}
		if err := c.Volumes.TerminateConnection(ctx, id, conn); err != nil {
			if err := handle(fmt.Sprintf("Failed to detach volume %s from node %s: %v", id, n.UUID, err)); err != nil {
				return err
			}
			continue
		}
		if err := c.Volumes.Detach(ctx, id, attachment); err != nil {
			if err := handle(fmt.Sprintf("Failed to inform cinder that the detachment for volume %s from node %s has been completed: %v", id, n.UUID, err)); err != nil {
				return err
			}
		}
		if err := c.Volumes.SetMetadata(ctx, id, c.metadata(n, "detached")); err != nil {
			log.WarnContext(ctx, fmt.Sprintf("Failed to update volume %s metadata for node %s: %v", id, n.UUID, err))
		}
	}
	return nil
}

// pyList renders ids as Python's repr of a list of strings.
func pyList(ids []string) string {
	q := make([]string, len(ids))
	for i, id := range ids {
		q[i] = "'" + id + "'"
	}
	return "[" + strings.Join(q, ", ") + "]"
}
