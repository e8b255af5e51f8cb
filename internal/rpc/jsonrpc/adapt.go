package jsonrpc

import (
	"context"
	"errors"
	"fmt"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/rpc/ovo"
)

// The adapters of the methods whose kwargs differ from upstream's (the
// adapt= of their annotation in rpc/api.go), and the stored rows the
// client compares an updated object with.

// StoredObjects reads the rows the client needs to speak to a conductor
// of a pinned release as upstream's API does: the node an update_node
// edits and the objects whose changed fields an update_* names. The API's
// store implements it.
type StoredObjects interface {
	GetNodeByUUID(ctx context.Context, uuid string) (*model.Node, error)
	GetPortByID(ctx context.Context, id int64) (*model.Port, error)
	GetPortgroupByID(ctx context.Context, id int64) (*model.Portgroup, error)
	GetVolumeConnectorByID(ctx context.Context, id int64) (*model.VolumeConnector, error)
	GetVolumeTargetByID(ctx context.Context, id int64) (*model.VolumeTarget, error)
}

// adapt turns upstream's update_node(node_obj, reset_interfaces) into
// ours: the node's UUID and unconditional edits of the fields the object
// says changed.
func (p *updateNodeParams) adapt() error {
	if isNull(p.NodeObj) {
		if p.NodeID == "" || p.NodeUpdate == nil {
			return &protocolError{CodeInvalidParams, "Params are invalid for update_node: missing required argument: 'node_obj'"}
		}
		return nil
	}
	var obj ovo.Obj[model.Node]
	if err := obj.UnmarshalJSON(p.NodeObj); err != nil || obj.V == nil {
		return &protocolError{CodeInvalidParams, fmt.Sprintf("Params node_obj are invalid for update_node: %v", err)}
	}
	upd, err := ovo.NodeUpdateFromObject(obj.V, obj.Changes)
	if err != nil {
		return fmt.Errorf("update_node: %w", err)
	}
	p.NodeID, p.NodeUpdate = obj.V.UUID, upd
	return nil
}

// adaptUpdateNode sends update_node as upstream's API does: the node as
// stored with upd applied, naming the fields upd changes. The conductor
// (upstream's or ours) writes those fields under the node's lock.
func (c *Client) adaptUpdateNode(ctx context.Context, topic, nodeID string, upd *model.NodeUpdate, resetInterfaces bool) (*model.Node, error) {
	if c.opts.Store == nil {
		return nil, errors.New("json-rpc update_node: a pinned client needs the stored node to send it, and has no store")
	}
	stored, err := c.opts.Store.GetNodeByUUID(ctx, nodeID)
	if err != nil {
		return nil, fmt.Errorf("json-rpc update_node: read node %s: %w", nodeID, err)
	}
	n, changes, err := ovo.NodeObjectForUpdate(stored, upd)
	if err != nil {
		var changed *model.NodeChangedError
		if errors.As(err, &changed) {
			return nil, errs.NodeChanged(nodeID, changed.Path)
		}
		return nil, errs.InvalidParameterValue(err.Error())
	}
	kwargs := struct {
		NodeObj         ovo.Obj[model.Node] `json:"node_obj"`
		ResetInterfaces bool                `json:"reset_interfaces"`
	}{ovo.Wrap(c.codec, n, changes...), resetInterfaces}
	var out ovo.Obj[model.Node]
	err = c.call(ctx, topic, "update_node", "1.1", kwargs, &out)
	return out.V, err
}

// changesOf names the fields of v (an object being updated) that differ
// from its stored row, which an upstream conductor's save() writes. Ours
// writes the object whole and needs no list: the client names them only
// under a pinned release.
func (c *Client) changesOf(ctx context.Context, v any) ([]string, error) {
	if !c.codec.Pinned() {
		return nil, nil
	}
	if c.opts.Store == nil {
		return nil, fmt.Errorf("json-rpc: a pinned client needs the stored %T to name its changes, and has no store", v)
	}
	var (
		old any
		err error
	)
	switch o := v.(type) {
	case *model.Port:
		old, err = c.opts.Store.GetPortByID(ctx, o.ID)
	case *model.Portgroup:
		old, err = c.opts.Store.GetPortgroupByID(ctx, o.ID)
	case *model.VolumeConnector:
		old, err = c.opts.Store.GetVolumeConnectorByID(ctx, o.ID)
	case *model.VolumeTarget:
		old, err = c.opts.Store.GetVolumeTargetByID(ctx, o.ID)
	default:
		return nil, fmt.Errorf("json-rpc: no stored row to compare a %T with", v)
	}
	if err != nil {
		return nil, fmt.Errorf("json-rpc: read the stored %T: %w", v, err)
	}
	return ovo.Changes(old, v)
}
