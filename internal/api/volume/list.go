package volume

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apiutil"
	"github.com/openkeel/ironic/internal/api/apiutil/respond"
	"github.com/openkeel/ironic/internal/api/collection"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/notify"
	"github.com/openkeel/ironic/internal/rpc"
	"github.com/openkeel/ironic/internal/store"
)

// record is a connector or target as the list and show code sees it.
type record struct {
	uuid   string
	nodeID *int64
	dict   func(rc *api.RequestContext, nodeUUID any, redact bool) *apiutil.Dict
	// payload is the record's CRUD notification payload.
	payload func(n *notify.Notifier, nodeUUID string) notify.Object
}

// payloadFor binds the record's payload to its node for Notify.
func (r *record) payloadFor(nodeUUID string) func(*notify.Notifier) notify.Object {
	return func(n *notify.Notifier) notify.Object { return r.payload(n, nodeUUID) }
}

// kind is what differs between connectors and targets.
type kind struct {
	// item is the collection key and path segment ("connectors").
	item string
	// object names the kind in notifications ("volumeconnector").
	object string
	// param is the path parameter of one record; arg its name in messages.
	param, arg string
	// schema is the request schema of a record; name names the body in
	// its messages ("connector").
	schema, name    string
	invalidSortKeys []string
	defaultFields   []string
	notFound        func(ident string) error
	get             func(h *handlers, r *http.Request, uuid string) (*record, error)
	list            func(h *handlers, r *http.Request, f store.VolumeFilter, o store.ListOptions) ([]*record, error)
	destroy         func(h *handlers, r *http.Request, topic, uuid string) error
	// masked: target properties go through mask_dict_password.
	masked bool
}

var connectors, targets *kind

func init() {
	connectors = connectorKind()
	targets = targetKind()
}

// fetch is one volume object by UUID, the kind's notFound error when
// there is none (what names the object type in other errors).
func fetch[T any](h *handlers, r *http.Request, get func(store.Store, context.Context, string) (T, error),
	notFound func(string) error, what, ident string) (T, error) {
	return apiutil.Found(r.Context(), ident, func(ctx context.Context, ident string) (T, error) { return get(h.Store, ctx, ident) },
		notFound, "volume "+what)
}

// bind fills k's lookups from the store and conductor calls of one
// volume object type.
func bind[T any](k *kind, get func(*handlers, *http.Request, string) (T, error),
	list func(store.Store, context.Context, store.VolumeFilter, store.ListOptions) ([]T, error),
	destroy func(rpc.ConductorAPI, context.Context, string, T) error, toRecord func(T) *record) *kind {
	k.get = func(h *handlers, r *http.Request, ident string) (*record, error) {
		x, err := get(h, r, ident)
		if err != nil {
			return nil, err
		}
		return toRecord(x), nil
	}
	k.list = func(h *handlers, r *http.Request, f store.VolumeFilter, o store.ListOptions) ([]*record, error) {
		xs, err := list(h.Store, r.Context(), f, o)
		out := make([]*record, 0, len(xs))
		for _, x := range xs {
			out = append(out, toRecord(x))
		}
		return out, err
	}
	k.destroy = func(h *handlers, r *http.Request, topic, ident string) error {
		x, err := get(h, r, ident)
		if err != nil {
			return err
		}
		return destroy(h.Conductor, r.Context(), topic, x)
	}
	return k
}

func (h *handlers) redact(r *http.Request, k *kind) bool {
	return k.masked && h.viewTargetProperties != nil && !h.viewTargetProperties(r)
}

// listScope is check_volume_list_policy.
func (h *handlers) listScope(r *http.Request, parentNode string) (*string, error) {
	if parentNode != "" {
		if _, err := h.ParentNode(r, parentNode, func() error { return errs.NodeNotFound(parentNode) }); err != nil {
			return nil, err
		}
	}
	return h.ListScope(r, "volume")
}

// nodeUUIDOf is populate_node_uuid.
func (h *handlers) nodeUUIDOf(r *http.Request, id *int64) (any, error) {
	if id == nil {
		return nil, nil
	}
	n, err := h.Store.GetNodeByID(r.Context(), *id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errs.NodeNotFound(fmt.Sprint(*id))
	}
	if err != nil {
		return nil, fmt.Errorf("get node %d: %w", *id, err)
	}
	return n.UUID, nil
}

// convert is convert_with_links and the sanitizing of one record.
func (h *handlers) convert(r *http.Request, rc *api.RequestContext, k *kind, rec *record, fields []string) (*apiutil.Dict, error) {
	nodeUUID, err := h.nodeUUIDOf(r, rec.nodeID)
	if err != nil {
		return nil, err
	}
	d := rec.dict(rc, nodeUUID, h.redact(r, k))
	if err := apiutil.CheckFields(d, fields); err != nil {
		return nil, err
	}
	d.KeepOnly(fields)
	if k.masked {
		if p, ok := d.Get("properties"); ok && apiutil.Truthy(p) {
			d.Set("properties", apiutil.MaskDict(apiutil.MapOf(p)))
		}
	}
	return d, nil
}

func (h *handlers) list(k *kind, underNode bool) api.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
		q, err := apiutil.ParseQuery(r, "node", "marker", "limit", "sort_key", "sort_dir", "fields", "detail")
		if err != nil {
			return err
		}
		node := q.Get("node")
		if node != nil {
			if err := apiutil.UUIDOrName("node", *node); err != nil {
				return err
			}
		}
		marker, err := collection.UUID("marker", q.Get("marker"))
		if err != nil {
			return err
		}
		limitArg, err := collection.Integer("limit", q.Get("limit"))
		if err != nil {
			return err
		}
		fields := collection.StringList(q.Get("fields"))
		detail, err := collection.Boolean("detail", q.Get("detail"))
		if err != nil {
			return err
		}
		parent := ""
		if underNode {
			parent = rc.Param("node_ident")
		}
		project, err := h.listScope(r, parent)
		if err != nil {
			return err
		}
		isDetail := detail != nil && *detail
		if fields == nil && !isDetail {
			fields = k.defaultFields
		}
		if len(fields) > 0 && isDetail {
			return errs.InvalidParameterValue("Can't fetch a subset of fields with 'detail' set")
		}
		limit, err := collection.ValidateLimit(limitArg, rc.Config.IntOf(config.APIMaxLimit))
		if err != nil {
			return err
		}
		sortDir, err := collection.ValidateSortDir(q.Get("sort_dir"))
		if err != nil {
			return err
		}
		sortKey := "id"
		if s := q.Get("sort_key"); s != nil {
			sortKey = *s
		}
		opts := store.ListOptions{Limit: limit, SortKey: sortKey, SortDir: sortDir}
		if marker != nil {
			if _, err := k.get(h, r, *marker); err != nil {
				return err
			}
			opts.Marker = *marker
		}
		if err := collection.ValidateSortKey(sortKey, k.invalidSortKeys); err != nil {
			return err
		}
		f := store.VolumeFilter{Project: project}
		if parent != "" {
			node = &parent
		}
		if node != nil {
			n, err := apiutil.GetNode(r.Context(), h.Store, *node, rc.Version)
			if err != nil {
				return err
			}
			f.NodeID = &n.ID
		}
		recs, err := k.list(h, r, f, opts)
		switch {
		case errors.Is(err, store.ErrMarkerNotFound):
			return k.notFound(opts.Marker)
		case errors.Is(err, store.ErrInvalidParameter):
			return errs.InvalidParameterValue(err.Error())
		case err != nil:
			return fmt.Errorf("list volume %s: %w", k.item, err)
		}
		items := make([]*apiutil.Dict, 0, len(recs))
		for _, rec := range recs {
			d, err := h.convert(r, rc, k, rec, fields)
			if err != nil {
				return err
			}
			items = append(items, d)
		}
		out := apiutil.NewDict()
		out.Set(k.item, items)
		params := []collection.Param{{Key: "sort_key", Value: sortKey}, {Key: "sort_dir", Value: sortDir}}
		if isDetail {
			params = append(params, collection.Param{Key: "detail", Value: true})
		}
		last := ""
		if len(recs) > 0 {
			last = recs[len(recs)-1].uuid
		}
		if next := collection.Next(rc.PublicURL, "volume/"+k.item, len(items), limit, last, fields, params...); next != "" {
			out.Set("next", next)
		}
		return api.WriteJSON(w, http.StatusOK, out)
	}
}

// lookup is the record ident names and its node, once rule allows it
// (check_volume_policy_and_retrieve).
func (h *handlers) lookup(r *http.Request, k *kind, ident, rule string) (*record, *model.Node, error) {
	rec, err := k.get(h, r, ident)
	if err != nil {
		return nil, nil, err
	}
	node, err := h.Retrieve(r, rule, rec.nodeID, func() error { return k.notFound(ident) })
	if err != nil {
		return nil, nil, err
	}
	return rec, node, nil
}

func (h *handlers) getOne(k *kind) api.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
		q, err := apiutil.ParseQuery(r, "fields")
		if err != nil {
			return err
		}
		ident, err := recordIdent(rc, k)
		if err != nil {
			return err
		}
		rec, _, err := h.lookup(r, k, ident, "baremetal:volume:get")
		if err != nil {
			return err
		}
		return respond.JSON(w, http.StatusOK)(h.convert(r, rc, k, rec, collection.StringList(q.Get("fields"))))
	}
}

func (h *handlers) delete(k *kind) api.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
		ident, err := recordIdent(rc, k)
		if err != nil {
			return err
		}
		rec, node, err := h.lookup(r, k, ident, "baremetal:volume:delete")
		if err != nil {
			return err
		}
		nodeUUID := ""
		if node != nil {
			nodeUUID = node.UUID
		}
		payload := rec.payloadFor(nodeUUID)
		h.Notify(r.Context(), k.object, "delete", notify.StatusStart, payload)
		err = h.OnNode(r.Context(), node, rec.nodeID, func(topic string) error {
			return k.destroy(h, r, topic, ident)
		})
		h.NotifyOutcome(r.Context(), k.object, "delete", err, payload)
		return respond.NoContent(w, err)
	}
}
