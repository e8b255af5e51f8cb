package node

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apiutil"
	"github.com/openkeel/ironic/internal/api/collection"
	"github.com/openkeel/ironic/internal/api/microversion"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/pyfmt"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store"
)

// invalidSortKeys are the node columns upstream refuses to sort by.
var invalidSortKeys = []string{"properties", "driver_info", "extra", "instance_info", "driver_internal_info",
	"clean_step", "deploy_step", "raid_config", "target_raid_config", "traits", "network_data", "service_step"}

// validFaults are faults.VALID_FAULTS.
var validFaults = []string{"power failure", "clean failure", "rescue abort failure", "service failure"}

// listArgs are the query arguments of get_all and detail.
type listArgs struct {
	chassisUUID, instanceUUID                                          *string
	associated, maintenance, retired, sharded, includeChildren, detail *bool
	provisionState, marker, sortKey, sortDir, driver, resourceClass    *string
	fault, conductorGroup, conductor, owner, lessee, project           *string
	descriptionContains, parentNode, instanceName                      *string
	limit                                                              *int
	fields, shard                                                      []string
	rawFields, rawDetail                                               *string
}

var listParams = []string{"chassis_uuid", "instance_uuid", "associated", "maintenance", "retired",
	"provision_state", "marker", "limit", "sort_key", "sort_dir", "driver", "fields", "resource_class",
	"fault", "conductor_group", "detail", "conductor", "owner", "description_contains", "lessee",
	"project", "shard", "sharded", "include_children", "parent_node", "instance_name"}

// parseListArgs is args.validate of get_all/detail, in upstream's
// argument order. chassis is the chassis of the path when the list is
// mounted under /v1/chassis (from_chassis): pecan hands it over as the
// positional chassis_uuid, so the query may not name it again.
func parseListArgs(r *http.Request, detailRoute bool, chassis *string) (*listArgs, error) {
	allowed := listParams
	if detailRoute {
		allowed = slices.DeleteFunc(slices.Clone(listParams), func(s string) bool { return s == "fields" || s == "detail" })
		// detail() takes include_children and parent_node without
		// validating them.
	}
	if chassis != nil {
		allowed = slices.DeleteFunc(slices.Clone(allowed), func(s string) bool { return s == "chassis_uuid" })
	}
	q, err := apiutil.ParseQuery(r, allowed...)
	if err != nil {
		return nil, err
	}
	if chassis == nil {
		chassis = q.Get("chassis_uuid")
	}
	a := &listArgs{}
	steps := []func() error{
		func() (err error) {
			a.chassisUUID, err = collection.UUID("chassis_uuid", chassis)
			return
		},
		func() (err error) {
			a.instanceUUID, err = collection.UUID("instance_uuid", q.Get("instance_uuid"))
			return
		},
		func() (err error) { a.associated, err = collection.Boolean("associated", q.Get("associated")); return },
		func() (err error) {
			a.maintenance, err = collection.Boolean("maintenance", q.Get("maintenance"))
			return
		},
		func() (err error) { a.retired, err = collection.Boolean("retired", q.Get("retired")); return },
		func() error { a.provisionState = q.Get("provision_state"); return nil },
		func() (err error) { a.marker, err = collection.UUID("marker", q.Get("marker")); return },
		func() (err error) { a.limit, err = collection.Integer("limit", q.Get("limit")); return },
		func() error { a.sortKey, a.sortDir = q.Get("sort_key"), q.Get("sort_dir"); return nil },
		func() error { a.driver = q.Get("driver"); return nil },
		func() error { a.rawFields = q.Get("fields"); a.fields = collection.StringList(a.rawFields); return nil },
		func() error {
			a.resourceClass, a.fault, a.conductorGroup = q.Get("resource_class"), q.Get("fault"), q.Get("conductor_group")
			return nil
		},
		func() (err error) {
			a.rawDetail = q.Get("detail")
			a.detail, err = collection.Boolean("detail", a.rawDetail)
			return
		},
		func() error {
			a.conductor, a.owner, a.descriptionContains = q.Get("conductor"), q.Get("owner"), q.Get("description_contains")
			a.lessee, a.project = q.Get("lessee"), q.Get("project")
			a.shard = collection.StringList(q.Get("shard"))
			return nil
		},
		func() (err error) { a.sharded, err = collection.Boolean("sharded", q.Get("sharded")); return },
		func() (err error) {
			if detailRoute {
				if v := q.Get("include_children"); v != nil {
					b := *v != ""
					a.includeChildren = &b
				}
				return nil
			}
			a.includeChildren, err = collection.Boolean("include_children", q.Get("include_children"))
			return
		},
		func() error { a.parentNode, a.instanceName = q.Get("parent_node"), q.Get("instance_name"); return nil },
	}
	for _, s := range steps {
		if err := s(); err != nil {
			return nil, err
		}
	}
	return a, nil
}

func notAcceptableBelow(minor int) error {
	return errs.NewMessage(errs.ClassNotAcceptable, fmt.Sprintf(
		"Request not acceptable. The minimal required API version should be 1.%d", minor))
}

// checkFilters are the version and value checks get_all and detail share.
func checkFilters(a *listArgs, v microversion.Version) error {
	if a.provisionState != nil {
		if v.Minor < microversion.Minor9ProvisionStateFilter {
			return errs.NotAcceptable()
		}
		if !states.Provision().HasState(*a.provisionState) {
			return errs.InvalidParameterValue(fmt.Sprintf("Provision state \"%s\" is not valid", *a.provisionState))
		}
	}
	if a.driver != nil && v.Minor < microversion.Minor16DriverFilter {
		return notAcceptableBelow(microversion.Minor16DriverFilter)
	}
	if a.resourceClass != nil && v.Minor < microversion.Minor21ResourceClass {
		return notAcceptableBelow(microversion.Minor21ResourceClass)
	}
	if a.fault != nil {
		if v.Minor < microversion.Minor42Fault {
			return notAcceptableBelow(microversion.Minor42Fault)
		}
		if !slices.Contains(validFaults, *a.fault) {
			// faults.VALID_FAULTS is a tuple: Python prints it in
			// parentheses (observed from upstream 21.4; master adds
			// 'service failure').
			return errs.ClientSideError(fmt.Sprintf("Unrecognized fault \"%s\" is specified, allowed faults are %s",
				*a.fault, pyfmt.Tuple(validFaults)), http.StatusBadRequest, "")
		}
	}
	if a.conductorGroup != nil && v.Minor < microversion.Minor46NodeConductorGroup {
		return notAcceptableBelow(microversion.Minor46NodeConductorGroup)
	}
	return nil
}

func (h *handlers) list(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	return h.listFrom(w, r, rc, nil)
}

func (h *handlers) detail(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	return h.detailFrom(w, r, rc, nil)
}

// chassisList and chassisDetail are get_all and detail of the
// NodesController upstream mounts under a chassis (from_chassis).
func (h *handlers) chassisList(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	id := rc.Param("chassis_id")
	return h.listFrom(w, r, rc, &id)
}

func (h *handlers) chassisDetail(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	id := rc.Param("chassis_id")
	return h.detailFrom(w, r, rc, &id)
}

// listFrom is get_all; chassis is the chassis of the path, nil under
// /v1/nodes.
func (h *handlers) listFrom(w http.ResponseWriter, r *http.Request, rc *api.RequestContext, chassis *string) error {
	a, err := parseListArgs(r, false, chassis)
	if err != nil {
		return err
	}
	v := rc.Version
	if err := collection.CheckAllowSpecifyFields(a.fields, v); err != nil {
		return err
	}
	if err := collection.CheckAllowedFields(a.fields, v); err != nil {
		return err
	}
	sortKey := "id"
	if a.sortKey != nil {
		sortKey = *a.sortKey
	}
	if err := collection.CheckAllowedFields([]string{sortKey}, v); err != nil {
		return err
	}
	if err := checkFilters(a, v); err != nil {
		return err
	}
	for _, c := range []struct {
		set   bool
		minor int
	}{
		{a.conductor != nil, microversion.Minor49Conductors},
		{a.owner != nil, microversion.Minor50NodeOwner},
		{a.lessee != nil, microversion.Minor65NodeLessee},
		{a.shard != nil, microversion.Minor82NodeShard},
		{a.sharded != nil, microversion.Minor82NodeShard},
	} {
		if c.set && v.Minor < c.minor {
			return notAcceptableBelow(c.minor)
		}
	}
	if a.instanceName != nil && v.Minor < microversion.Minor104NodeInstanceName {
		return errs.NewMessage(errs.ClassNotAcceptable, "instance_name is not acceptable in this API version")
	}
	if (a.includeChildren != nil || a.parentNode != nil) && v.Minor < microversion.Minor83ParentChildNodes {
		return notAcceptableBelow(microversion.Minor83ParentChildNodes)
	}
	fields, err := collection.ReturnFields(a.fields, a.rawFields, a.detail, a.rawDetail, defaultListFields,
		collection.DetailAllowed(v), nil)
	if err != nil {
		return err
	}
	// Upstream passes resource_url "nodes" from a chassis too, so the
	// next link of a chassis's nodes leads to /v1/nodes.
	return h.collection(w, r, rc, a, sortKey, fields, "nodes")
}

// detailFrom is detail; chassis as for listFrom.
func (h *handlers) detailFrom(w http.ResponseWriter, r *http.Request, rc *api.RequestContext, chassis *string) error {
	a, err := parseListArgs(r, true, chassis)
	if err != nil {
		return err
	}
	v := rc.Version
	if err := checkFilters(a, v); err != nil {
		return err
	}
	if a.owner != nil && v.Minor < microversion.Minor50NodeOwner {
		return notAcceptableBelow(microversion.Minor50NodeOwner)
	}
	if a.lessee != nil && v.Minor < microversion.Minor65NodeLessee {
		return notAcceptableBelow(microversion.Minor65NodeLessee)
	}
	sortKey := "id"
	if a.sortKey != nil {
		sortKey = *a.sortKey
	}
	if err := collection.CheckAllowedFields([]string{sortKey}, v); err != nil {
		return err
	}
	for _, c := range []struct {
		set   bool
		minor int
	}{
		{a.conductor != nil, microversion.Minor49Conductors},
		{a.shard != nil, microversion.Minor82NodeShard},
		{a.sharded != nil, microversion.Minor82NodeShard},
	} {
		if c.set && v.Minor < c.minor {
			return notAcceptableBelow(c.minor)
		}
	}
	if a.instanceName != nil && v.Minor < microversion.Minor104NodeInstanceName {
		return errs.NewMessage(errs.ClassNotAcceptable, "instance_name is not acceptable in this API version")
	}
	return h.collection(w, r, rc, a, sortKey, nil, "nodes/detail")
}

// collection is _get_nodes_collection.
func (h *handlers) collection(w http.ResponseWriter, r *http.Request, rc *api.RequestContext, a *listArgs, sortKey string, fields []string, resource string) error {
	ctx := r.Context()
	limit, err := collection.ValidateLimit(a.limit, rc.Config.IntOf(config.APIMaxLimit))
	if err != nil {
		return err
	}
	sortDir, err := collection.ValidateSortDir(a.sortDir)
	if err != nil {
		return err
	}
	if err := collection.ValidateSortKey(sortKey, invalidSortKeys); err != nil {
		return err
	}
	f := store.NodeFilter{
		Maintenance: a.maintenance, ChassisUUID: a.chassisUUID, Associated: a.associated,
		ProvisionState: a.provisionState, Driver: a.driver, ResourceClass: a.resourceClass,
		Fault: a.fault, ConductorGroup: a.conductorGroup, Owner: a.owner, Lessee: a.lessee,
		ShardIn: a.shard, Project: a.project, DescriptionContains: a.descriptionContains,
		Retired: a.retired, InstanceName: a.instanceName, InstanceUUID: a.instanceUUID,
		Sharded: a.sharded, ParentNode: a.parentNode,
	}
	if a.includeChildren != nil {
		f.IncludeChildren = *a.includeChildren
	}
	// check_list_policy('node', project): a caller limited to its project
	// lists the nodes it owns or leases, whatever project it asked for.
	if h.Project != nil {
		if p := h.Project(r); p != nil {
			f.Project = p
		}
	}
	opts := store.ListOptions{Limit: limit, SortKey: sortKey, SortDir: sortDir}
	if a.marker != nil {
		opts.Marker = *a.marker
	}
	// Every column when a field is unknown: the page then answers it
	// exactly as with full rows.
	cols, ok := listColumns(fields, a.conductor != nil)
	if !ok {
		cols = nil
	}
	rows, err := h.Store.ListNodeRows(ctx, f, opts, cols)
	switch {
	case errors.Is(err, store.ErrMarkerNotFound):
		return errs.NodeNotFound(opts.Marker)
	case errors.Is(err, store.ErrNotFound) && a.chassisUUID != nil:
		return errs.New(errs.ClassChassisNotFound, map[string]any{"chassis": *a.chassisUUID})
	case errors.Is(err, store.ErrInvalidParameter):
		return errs.InvalidParameterValue(err.Error())
	case err != nil:
		return fmt.Errorf("list nodes: %w", err)
	}
	if a.conductor != nil {
		rows = h.filterByConductor(r, rows, *a.conductor)
	}
	params := []collection.Param{{Key: "sort_key", Value: sortKey}, {Key: "sort_dir", Value: sortDir}}
	for _, p := range []struct {
		key string
		val *bool
	}{{"associated", a.associated}, {"maintenance", a.maintenance}, {"retired", a.retired}} {
		if p.val != nil && *p.val {
			params = append(params, collection.Param{Key: p.key, Value: *p.val})
		}
	}
	if a.detail != nil {
		params = append(params, collection.Param{Key: "detail", Value: *a.detail})
	}
	if a.instanceUUID != nil {
		limit = 0
	}
	last := ""
	if len(rows) > 0 {
		last = rows[len(rows)-1].UUID
	}
	next := collection.Next(rc.PublicURL, resource, len(rows), limit, last, fields, params...)
	return h.writePage(ctx, w, rc, h.view(r), rows, fields, next)
}

// listColumns are the node columns a page and the conductor filter read
// for a field list, so a list of a few fields does not read every JSON
// column. ok is false when every column is needed (detail) or a field is
// unknown.
func listColumns(fields []string, byConductor bool) (cols []string, ok bool) {
	if fields == nil {
		return nil, false
	}
	qf, err := queryFields(fields)
	if err != nil {
		return nil, false
	}
	cols = append([]string{"uuid"}, qf...)
	for _, f := range fields {
		switch f {
		case "created_at", "updated_at":
			cols = append(cols, f)
		case "chassis_uuid":
			cols = append(cols, "chassis_id")
		case "allocation_uuid":
			cols = append(cols, "allocation_id")
		case "conductor":
			byConductor = true
		}
	}
	// GetConductorFor hashes the node onto the ring of its driver and
	// conductor group.
	if byConductor {
		cols = append(cols, "driver", "conductor_group")
	}
	return cols, true
}

// filterByConductor keeps the rows of nodes that conductor manages.
func (h *handlers) filterByConductor(r *http.Request, rows []store.NodeRow, conductor string) []store.NodeRow {
	kept := rows[:0]
	for i := range rows {
		if host, err := h.Topics.GetConductorFor(r.Context(), &rows[i].Node); err == nil && host == conductor {
			kept = append(kept, rows[i])
		}
	}
	return kept
}

func (h *handlers) getOne(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	q, err := apiutil.ParseQuery(r, "fields")
	if err != nil {
		return err
	}
	ident := rc.Param("node_ident")
	if err := apiutil.UUIDOrName("node_ident", ident); err != nil {
		return err
	}
	fields := collection.StringList(q.Get("fields"))
	if collection.IsUUIDLike(ident) {
		if found, err := h.getOneRow(w, r, rc, ident, fields); found || err != nil {
			return err
		}
	}
	n, err := h.nodeWithSuffix(r, rc, "baremetal:node:get", ident)
	if err != nil {
		return err
	}
	if err := collection.CheckAllowSpecifyFields(fields, rc.Version); err != nil {
		return err
	}
	if err := collection.CheckAllowedFields(fields, rc.Version); err != nil {
		return err
	}
	d, err := h.convert(r.Context(), rc, h.view(r), n, fields)
	if err != nil {
		return err
	}
	return api.WriteJSON(w, http.StatusOK, d)
}

// getOneRow answers GET /v1/nodes/{uuid} from the node's stored row,
// written as a list page writes each of its nodes (the same bytes as
// convert and api.WriteJSON, without decoding and re-encoding the JSON
// columns; with fields, only the columns they need and the owner and
// lessee the policy looks at). The checks are getOne's, in its order.
// found is false when no node has that UUID: getOne's model path then
// answers (the node named uuid.json, or the 404) as before (issue 29).
func (h *handlers) getOneRow(w http.ResponseWriter, r *http.Request, rc *api.RequestContext, uuid string, fields []string) (found bool, err error) {
	ctx := r.Context()
	cols, ok := listColumns(fields, false)
	if ok {
		cols = append(cols, "owner", "lessee")
	} else {
		cols = nil
	}
	row, err := h.Store.GetNodeRow(ctx, uuid, cols)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return false, nil
	case err != nil:
		// The store's error already names the node.
		return true, err
	}
	if err := h.Authorize(r, "baremetal:node:get", &row.Node); err != nil {
		if errs.Status(err) == http.StatusForbidden {
			return true, errs.NodeNotFound(uuid)
		}
		return true, err
	}
	if err := collection.CheckAllowSpecifyFields(fields, rc.Version); err != nil {
		return true, err
	}
	if err := collection.CheckAllowedFields(fields, rc.Version); err != nil {
		return true, err
	}
	plan, err := h.planPage(rc, h.view(r), fields)
	if err != nil {
		return true, err
	}
	pb := h.getPage(plan, 1)
	defer func() { h.putPage(plan, pb, 1) }()
	pb.b, err = h.appendNode(ctx, pb.b[:0], &pb.cw, plan, row)
	if err != nil {
		return true, err
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(pb.b)))
	w.WriteHeader(http.StatusOK)
	if _, err := w.Write(pb.b); err != nil && !errors.Is(err, http.ErrBodyNotAllowed) {
		return true, fmt.Errorf("write answer: %w", err)
	}
	return true, nil
}
