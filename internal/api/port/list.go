package port

import (
	"fmt"
	"net/http"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apiutil"
	"github.com/openkeel/ironic/internal/api/apiutil/respond"
	"github.com/openkeel/ironic/internal/api/collection"
	"github.com/openkeel/ironic/internal/api/microversion"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/store"
)

// parent says which collection a list route serves.
type parent int

const (
	parentNone parent = iota
	parentNode
	parentPortgroup
)

// invalidSortKeys are the port columns upstream refuses to sort by.
var invalidSortKeys = []string{"extra", "internal_info", "local_link_connection"}

// defaultListFields are what GET /v1/ports returns without ?fields or
// ?detail.
var defaultListFields = []string{"uuid", "address"}

func errNotAcceptable() error { return errs.NotAcceptable() }

func notAcceptableBelow(minor int) error {
	return errs.NewMessage(errs.ClassNotAcceptable, fmt.Sprintf(
		"Request not acceptable. The minimal required API version should be 1.%d", minor))
}

type listArgs struct {
	node, nodeUUID, address, marker, sortKey, sortDir, portgroup *string
	descriptionContains, rawFields, rawDetail                    *string
	limit                                                        *int
	detail                                                       *bool
	fields, shard, conductorGroups                               []string
}

// parseListArgs is args.validate of get_all (detailRoute false) and
// detail, in upstream's argument order.
func parseListArgs(r *http.Request, detailRoute bool) (*listArgs, error) {
	allowed := []string{"node", "node_uuid", "address", "marker", "limit", "sort_key", "sort_dir",
		"portgroup", "shard", "description_contains", "conductor_groups"}
	if !detailRoute {
		allowed = append(allowed, "fields", "detail")
	}
	q, err := apiutil.ParseQuery(r, allowed...)
	if err != nil {
		return nil, err
	}
	a := &listArgs{sortKey: q.Get("sort_key"), sortDir: q.Get("sort_dir"),
		descriptionContains: q.Get("description_contains")}
	if a.node = q.Get("node"); a.node != nil {
		if err := apiutil.UUIDOrName("node", *a.node); err != nil {
			return nil, err
		}
	}
	if a.nodeUUID, err = collection.UUID("node_uuid", q.Get("node_uuid")); err != nil {
		return nil, err
	}
	if v := q.Get("address"); v != nil {
		mac, err := apiutil.MACAddress("address", *v)
		if err != nil {
			return nil, err
		}
		a.address = &mac
	}
	if a.marker, err = collection.UUID("marker", q.Get("marker")); err != nil {
		return nil, err
	}
	if a.limit, err = collection.Integer("limit", q.Get("limit")); err != nil {
		return nil, err
	}
	a.rawFields = q.Get("fields")
	a.fields = collection.StringList(a.rawFields)
	if a.portgroup = q.Get("portgroup"); a.portgroup != nil {
		if err := apiutil.UUIDOrName("portgroup", *a.portgroup); err != nil {
			return nil, err
		}
	}
	a.rawDetail = q.Get("detail")
	if a.detail, err = collection.Boolean("detail", a.rawDetail); err != nil {
		return nil, err
	}
	a.shard = collection.StringList(q.Get("shard"))
	a.conductorGroups = collection.StringList(q.Get("conductor_groups"))
	return a, nil
}

// listScope is check_port_list_policy: the parent node's visibility, then
// the project the caller is limited to.
func (h *handlers) listScope(r *http.Request, rc *api.RequestContext, from parent) (*string, error) {
	ctx := r.Context()
	switch from {
	case parentPortgroup:
		ident := rc.Param("portgroup_ident")
		pg, err := apiutil.Found(ctx, ident, h.Store.GetPortgroupByUUID, func(string) error { return PortgroupNotFound(ident) }, "portgroup")
		if err != nil {
			return nil, err
		}
		var n *model.Node
		if pg.NodeID != nil {
			n, err = h.Store.GetNodeByID(ctx, *pg.NodeID)
		}
		if err != nil || n == nil {
			return nil, errs.NodeNotFound(fmt.Sprint(model.Deref(pg.NodeID)))
		}
		if err := h.Authorize(r, "baremetal:node:get", n); err != nil {
			return nil, PortgroupNotFound(ident)
		}
	case parentNode:
		// Upstream reports a missing parent node as the (absent) parent
		// portgroup.
		if _, err := h.ParentNode(r, rc.Param("node_ident"), func() error { return PortgroupNotFound(nil) }); err != nil {
			return nil, err
		}
	}
	return h.ListScope(r, "port")
}

func (h *handlers) list(from parent, detailRoute bool) api.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
		if from == parentNode {
			if err := apiutil.UUIDOrName("node", rc.Param("node_ident")); err != nil {
				return errs.HTTPStatus(http.StatusBadRequest, err.Error())
			}
		}
		a, err := parseListArgs(r, detailRoute)
		if err != nil {
			return err
		}
		project, err := h.listScope(r, rc, from)
		if err != nil {
			return err
		}
		switch from {
		case parentNode:
			a.node = ptr(rc.Param("node_ident"))
		case parentPortgroup:
			a.portgroup = ptr(rc.Param("portgroup_ident"))
		}
		v := rc.Version
		sortKey := "id"
		if a.sortKey != nil {
			sortKey = *a.sortKey
		}
		var fields []string
		if !detailRoute {
			if err := collection.CheckAllowSpecifyFields(a.fields, v); err != nil {
				return err
			}
			if err := checkAllowedFields(a.fields, v); err != nil {
				return err
			}
		}
		if err := checkAllowedFields([]string{sortKey}, v); err != nil {
			return err
		}
		if a.portgroup != nil && !microversion.AllowPortgroupsSubcontrollers.Allows(v) {
			return errNotAcceptable()
		}
		if a.shard != nil && v.Minor < microversion.Minor82NodeShard {
			return notAcceptableBelow(microversion.Minor82NodeShard)
		}
		if !detailRoute {
			fields, err = collection.ReturnFields(a.fields, a.rawFields, a.detail, a.rawDetail, defaultListFields,
				collection.DetailAllowed(v), nil)
			if err != nil {
				return err
			}
		}
		if a.nodeUUID == nil && a.node != nil && !microversion.AllowNodeLogicalNames.Allows(v) && !collection.IsUUIDLike(*a.node) {
			return errNotAcceptable()
		}
		resource := "ports"
		if detailRoute {
			resource = "ports/detail"
		}
		nodeIdent := a.nodeUUID
		if nodeIdent == nil {
			nodeIdent = a.node
		}
		return h.collection(w, r, rc, a, nodeIdent, sortKey, fields, resource, project)
	}
}

func ptr(s string) *string { return &s }

// collection is _get_ports_collection.
func (h *handlers) collection(w http.ResponseWriter, r *http.Request, rc *api.RequestContext, a *listArgs,
	nodeIdent *string, sortKey string, fields []string, resource string, project *string) error {
	ctx := r.Context()
	la, err := apiutil.Paging(a.limit, rc.Config.IntOf(config.APIMaxLimit), sortKey, a.sortDir, fields, a.detail)
	if err != nil {
		return err
	}
	opts, err := apiutil.MarkerOptions(ctx, la, a.marker, h.Store.GetPortByUUID, portNotFound, "port")
	if err != nil {
		return err
	}
	if err := collection.ValidateSortKey(sortKey, invalidSortKeys); err != nil {
		return err
	}
	n := 0
	for _, set := range []bool{nodeIdent != nil, a.portgroup != nil, a.shard != nil && len(a.shard) > 0} {
		if set {
			n++
		}
	}
	if n > 1 {
		return errs.New(errs.ClassOperationNotPermitted, nil)
	}
	if len(a.conductorGroups) > 0 && (nodeIdent != nil || a.portgroup != nil || a.address != nil) {
		return errs.NewMessage(errs.ClassInvalid, "Filtering by conductor_groups cannot be combined with node_ident, portgroup_ident, or node address filters.")
	}
	f := store.PortFilter{Project: project, DescriptionContains: nonEmpty(a.descriptionContains)}
	var ports []*model.Port
	switch {
	case a.portgroup != nil:
		pg, err := GetPortgroup(ctx, h.Store, *a.portgroup)
		if err != nil {
			return err
		}
		f.PortgroupID = &pg.ID
	case nodeIdent != nil:
		node, err := apiutil.GetNode(ctx, h.Store, *nodeIdent, rc.Version)
		if err != nil {
			return err
		}
		f.NodeID = &node.ID
	case a.address != nil:
		opts = store.ListOptions{}
		f = store.PortFilter{Address: a.address, Project: project}
	case len(a.shard) > 0:
		f.ShardIn = a.shard
	default:
		f.ConductorGroups = a.conductorGroups
	}
	ports, err = h.Store.ListPorts(ctx, f, opts)
	if err != nil {
		return apiutil.ListedErr(err, opts.Marker, portNotFound, "ports")
	}
	out, err := apiutil.Page(la, rc.PublicURL, "ports", resource, ports, func(p *model.Port) (*apiutil.Dict, error) {
		if p.NodeUUID == "" {
			// The node went away after the ports were read.
			return nil, nil
		}
		d, err := h.toDict(ctx, rc, p)
		if err != nil {
			return nil, err
		}
		return apiutil.Checked(d, fields, func(d *apiutil.Dict) { sanitize(d, fields, rc.Version) })
	}, func(p *model.Port) string { return p.UUID })
	if err != nil {
		return err
	}
	return api.WriteJSON(w, http.StatusOK, out)
}

func nonEmpty(s *string) *string {
	if s == nil || *s == "" {
		return nil
	}
	return s
}

func (h *handlers) getOne(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	q, err := apiutil.ParseQuery(r, "fields")
	if err != nil {
		return err
	}
	ident := rc.Param("port_id")
	if err := apiutil.UUIDOrName("port_ident", ident); err != nil {
		return err
	}
	fields := collection.StringList(q.Get("fields"))
	p, _, err := h.portAndNode(r, "baremetal:port:get", ident)
	if err != nil {
		return err
	}
	if err := collection.CheckAllowSpecifyFields(fields, rc.Version); err != nil {
		return err
	}
	if err := checkAllowedFields(fields, rc.Version); err != nil {
		return err
	}
	return respond.JSON(w, http.StatusOK)(h.convert(r.Context(), rc, p, fields))
}

func collectionUUID(name, value string) (*string, error) { return collection.UUID(name, &value) }
