package volume

import (
	"net/http"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apiutil"
	"github.com/openkeel/ironic/internal/api/collection"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/notify"
	"github.com/openkeel/ironic/internal/rpc"
	"github.com/openkeel/ironic/internal/store"
)

// connectorPatchAllowed are volume_connector.PATCH_ALLOWED_FIELDS.
var connectorPatchAllowed = []string{"connector_id", "extra", "node_uuid", "type"}

func connectorRecord(c *model.VolumeConnector) *record {
	return &record{uuid: c.UUID, nodeID: c.NodeID, payload: func(n *notify.Notifier, nodeUUID string) notify.Object {
		return n.VolumeConnectorCRUDPayload(c, nodeUUID)
	}, dict: func(rc *api.RequestContext, nodeUUID any, _ bool) *apiutil.Dict {
		d := apiutil.RecordDict(c.UUID, c.CreatedAt, c.UpdatedAt)
		d.Set("connector_id", apiutil.OptString(c.ConnectorID))
		d.Set("extra", apiutil.CopyEmptyMap(c.Extra))
		d.Set("type", apiutil.OptString(c.Type))
		d.Set("links", collection.SelfAndBookmark(rc.PublicURL, "volume/connectors", c.UUID))
		d.Set("node_uuid", nodeUUID)
		return d
	}}
}

func getConnector(h *handlers, r *http.Request, ident string) (*model.VolumeConnector, error) {
	return fetch(h, r, store.Store.GetVolumeConnectorByUUID, connectorNotFound, "connector", ident)
}

func connectorNotFound(ident string) error {
	return errs.New(errs.ClassVolumeConnectorNotFound, map[string]any{"connector": ident})
}

func connectorKind() *kind {
	return bind(&kind{
		item: "connectors", object: "volumeconnector", param: "volume_connector_id", arg: "connector_uuid",
		schema: "volume_connector", name: "connector",
		invalidSortKeys: []string{"extra"},
		defaultFields:   []string{"uuid", "node_uuid", "type", "connector_id"},
		notFound:        connectorNotFound,
	}, getConnector, store.Store.ListVolumeConnectors, rpc.ConductorAPI.DestroyVolumeConnector, connectorRecord)
}

func setConnectorFields(c *model.VolumeConnector, m map[string]any) {
	for k, v := range m {
		switch k {
		case "uuid":
			if s := apiutil.StringOf(v); s != nil {
				c.UUID = *s
			}
		case "type":
			c.Type = apiutil.StringOf(v)
		case "connector_id":
			c.ConnectorID = apiutil.StringOf(v)
		case "extra":
			c.Extra = apiutil.MapOf(v)
		}
	}
}

func (h *handlers) createConnector(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	m, node, err := h.createBody(r, connectors)
	if err != nil {
		return err
	}
	c := &model.VolumeConnector{NodeID: &node.ID}
	setConnectorFields(c, m)
	h.Notify(r.Context(), "volumeconnector", "create", notify.StatusStart, connectorRecord(c).payloadFor(node.UUID))
	created, err := h.Store.CreateVolumeConnector(r.Context(), c)
	if err != nil {
		h.NotifyOutcome(r.Context(), "volumeconnector", "create", err, connectorRecord(c).payloadFor(node.UUID))
	} else {
		h.NotifyOutcome(r.Context(), "volumeconnector", "create", nil, connectorRecord(created).payloadFor(node.UUID))
	}
	if err != nil {
		return apiutil.CreateErr(err, "volume connector "+c.UUID, c)
	}
	rc.SetLocation(w, "volume/connectors", created.UUID)
	return h.writeRecord(w, r, rc, http.StatusCreated, connectors, connectorRecord(created))
}

func (h *handlers) patchConnector(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	ident, ops, err := patchRequest(r, rc, connectors)
	if err != nil {
		return err
	}
	c, err := getConnector(h, r, ident)
	if err != nil {
		return err
	}
	node, err := h.patchNode(r, rc, connectors, ident, c.NodeID, connectorPatchAllowed, ops)
	if err != nil {
		return err
	}
	doc, err := patchedDoc(connectors, map[string]any{
		"id": c.ID, "uuid": c.UUID, "created_at": apiutil.ISOTime(c.CreatedAt), "updated_at": apiutil.OptISOTime(c.UpdatedAt),
		"type": apiutil.OptString(c.Type), "connector_id": apiutil.OptString(c.ConnectorID), "extra": apiutil.CopyEmptyMap(c.Extra),
		"node_uuid": nil,
	}, ops, node)
	if err != nil {
		return err
	}
	updated := *c
	updated.NodeID = &node.ID
	setConnectorFields(&updated, map[string]any{"type": doc["type"], "connector_id": doc["connector_id"], "extra": doc["extra"]})
	topic, err := h.Topic(r.Context(), node)
	if err != nil {
		return err
	}
	h.Notify(r.Context(), "volumeconnector", "update", notify.StatusStart, connectorRecord(&updated).payloadFor(node.UUID))
	saved, err := h.Conductor.UpdateVolumeConnector(r.Context(), topic, &updated)
	if err != nil {
		h.NotifyOutcome(r.Context(), "volumeconnector", "update", err, connectorRecord(&updated).payloadFor(node.UUID))
	} else {
		h.NotifyOutcome(r.Context(), "volumeconnector", "update", nil, connectorRecord(saved).payloadFor(node.UUID))
	}
	if err != nil {
		return err
	}
	return h.writeRecord(w, r, rc, http.StatusOK, connectors, connectorRecord(saved))
}
