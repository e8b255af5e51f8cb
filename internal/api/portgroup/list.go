package portgroup

import (
	"fmt"
	"net/http"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apiutil"
	"github.com/openkeel/ironic/internal/api/apiutil/respond"
	"github.com/openkeel/ironic/internal/api/collection"
	"github.com/openkeel/ironic/internal/api/microversion"
	"github.com/openkeel/ironic/internal/api/port"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/store"
)

// invalidSortKeys are the portgroup columns upstream refuses to sort by.
var invalidSortKeys = []string{"extra", "internal_info", "properties"}

// defaultListFields are what GET /v1/portgroups returns without ?fields
// or ?detail.
var defaultListFields = []string{"uuid", "address", "name"}

type listArgs struct {
	node, address, marker, sortKey, sortDir, rawFields, rawDetail *string
	limit                                                         *int
	detail                                                        *bool
	fields, shard, conductorGroups                                []string
}

// parseListArgs is args.validate of get_all (detailRoute false) and
// detail.
func parseListArgs(r *http.Request, detailRoute bool) (*listArgs, error) {
	allowed := []string{"node", "address", "marker", "limit", "sort_key", "sort_dir", "shard", "conductor_groups"}
	if !detailRoute {
		allowed = append(allowed, "fields", "detail")
	}
	q, err := apiutil.ParseQuery(r, allowed...)
	if err != nil {
		return nil, err
	}
	a := &listArgs{node: q.Get("node"), address: q.Get("address"), marker: q.Get("marker"),
		sortKey: q.Get("sort_key"), sortDir: q.Get("sort_dir")}
	if a.limit, err = collection.Integer("limit", q.Get("limit")); err != nil {
		return nil, err
	}
	a.rawFields = q.Get("fields")
	a.fields = collection.StringList(a.rawFields)
	a.rawDetail = q.Get("detail")
	if a.detail, err = collection.Boolean("detail", a.rawDetail); err != nil {
		return nil, err
	}
	a.shard = collection.StringList(q.Get("shard"))
	a.conductorGroups = collection.StringList(q.Get("conductor_groups"))
	return a, nil
}

// listScope is check_port_list_policy(portgroup=True): the parent node's
// visibility, then the project the caller is limited to.
func (h *handlers) listScope(r *http.Request, parentNode string) (*string, error) {
	if parentNode != "" {
		// Upstream reports a missing parent node as the (absent) parent
		// portgroup.
		if _, err := h.ParentNode(r, parentNode, func() error { return port.PortgroupNotFound(nil) }); err != nil {
			return nil, err
		}
	}
	return h.ListScope(r, "portgroup")
}

func (h *handlers) list(underNode, detailRoute bool) api.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
		a, err := parseListArgs(r, detailRoute)
		if err != nil {
			return err
		}
		parent := ""
		if underNode {
			parent = rc.Param("node_ident")
			a.node = &parent
		}
		project, err := h.listScope(r, parent)
		if err != nil {
			return err
		}
		v := rc.Version
		if a.shard != nil && v.Minor < microversion.Minor106PortgroupShard {
			return errs.NewMessage(errs.ClassNotAcceptable, fmt.Sprintf(
				"Request not acceptable. The minimal required API version should be 1.%d", microversion.Minor106PortgroupShard))
		}
		sortKey := "id"
		if a.sortKey != nil {
			sortKey = *a.sortKey
		}
		var fields []string
		resource := "portgroups/detail"
		if !detailRoute {
			resource = "portgroups"
			if err := checkAllowedFields(a.fields, v); err != nil {
				return err
			}
		}
		if err := checkAllowedFields([]string{sortKey}, v); err != nil {
			return err
		}
		if !detailRoute {
			fields, err = collection.ReturnFields(a.fields, a.rawFields, a.detail, a.rawDetail, defaultListFields,
				collection.DetailAllowed(v), nil)
			if err != nil {
				return err
			}
		}
		return h.collection(w, r, rc, a, sortKey, fields, resource, project)
	}
}

func pgNotFound(ident string) error { return port.PortgroupNotFound(ident) }

// collection is _get_portgroups_collection.
func (h *handlers) collection(w http.ResponseWriter, r *http.Request, rc *api.RequestContext, a *listArgs,
	sortKey string, fields []string, resource string, project *string) error {
	ctx := r.Context()
	la, err := apiutil.Paging(a.limit, rc.Config.IntOf(config.APIMaxLimit), sortKey, a.sortDir, fields, a.detail)
	if err != nil {
		return err
	}
	marker := a.marker
	if marker != nil && *marker == "" {
		marker = nil
	}
	opts, err := apiutil.MarkerOptions(ctx, la, marker, h.Store.GetPortgroupByUUID, pgNotFound, "portgroup")
	if err != nil {
		return err
	}
	if err := collection.ValidateSortKey(sortKey, invalidSortKeys); err != nil {
		return err
	}
	n := 0
	for _, set := range []bool{a.node != nil && *a.node != "", a.address != nil && *a.address != "",
		len(a.shard) > 0, len(a.conductorGroups) > 0} {
		if set {
			n++
		}
		if n > 1 {
			return errs.NewMessage(errs.ClassInvalid, "Filtering by node, address, or shard simultaneously is not supported.")
		}
	}
	f := store.PortgroupFilter{Project: project}
	var pgs []*model.Portgroup
	switch {
	case a.node != nil && *a.node != "":
		node, err := apiutil.GetNode(ctx, h.Store, *a.node, rc.Version)
		if err != nil {
			return err
		}
		f.NodeID = &node.ID
	case a.address != nil && *a.address != "":
		// Upstream answers at most the one portgroup with that address,
		// without paging.
		opts = store.ListOptions{}
		f.Address = a.address
	case len(a.shard) > 0:
		f.ShardIn = a.shard
	default:
		f.ConductorGroups = a.conductorGroups
	}
	pgs, err = h.Store.ListPortgroups(ctx, f, opts)
	if err != nil {
		return apiutil.ListedErr(err, opts.Marker, pgNotFound, "portgroups")
	}
	out, err := apiutil.Page(la, rc.PublicURL, "portgroups", resource, pgs, func(pg *model.Portgroup) (*apiutil.Dict, error) {
		d := toDict(rc, pg)
		return apiutil.Checked(d, fields, func(d *apiutil.Dict) { sanitizeListed(d, fields, rc.Version) })
	}, func(pg *model.Portgroup) string { return pg.UUID })
	if err != nil {
		return err
	}
	return api.WriteJSON(w, http.StatusOK, out)
}

func (h *handlers) getOne(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	q, err := apiutil.ParseQuery(r, "fields")
	if err != nil {
		return err
	}
	ident := rc.Param("portgroup_ident")
	if !identOK(w, r, ident) {
		return nil
	}
	fields := collection.StringList(q.Get("fields"))
	pg, _, err := h.portgroupAndNode(r, "baremetal:portgroup:get", ident)
	if err != nil {
		return err
	}
	if err := checkAllowedFields(fields, rc.Version); err != nil {
		return err
	}
	return respond.JSON(w, http.StatusOK)(convert(rc, pg, fields))
}
