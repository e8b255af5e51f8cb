package allocation

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/google/uuid"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apiutil"
	"github.com/openkeel/ironic/internal/api/apiutil/respond"
	"github.com/openkeel/ironic/internal/api/collection"
	"github.com/openkeel/ironic/internal/api/microversion"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/notify"
	"github.com/openkeel/ironic/internal/store"
)

// The request schemas of ironic/api/schemas/v1/allocation.py, by the
// microversion they start at.
var (
	indexQuery    = apiutil.MustRequestSchema("allocation_index_request_query")
	indexQuery60  = apiutil.MustRequestSchema("allocation_index_request_query_v60")
	showQuery     = apiutil.MustRequestSchema("allocation_show_request_query")
	showQuery60   = apiutil.MustRequestSchema("allocation_show_request_query_v60")
	createBody    = apiutil.MustRequestSchema("allocation_create_request_body")
	createBody58  = apiutil.MustRequestSchema("allocation_create_request_body_v58")
	updateBody    = apiutil.MustRequestSchema("allocation_update_request_body")
	updateBody60  = apiutil.MustRequestSchema("allocation_update_request_body_v60")
	patchedSchema = apiutil.MustSchema("allocation")
)

// invalidSortKeys are the columns upstream refuses to sort on.
var invalidSortKeys = []string{"extra", "candidate_nodes", "traits"}

// patchAllowedFields are the fields a PATCH may touch.
var patchAllowedFields = []string{"name", "extra"}

// queryArgs are a handler's query arguments after args.validate's
// conversions (limit an integer, fields a list), as the query schema
// sees them.
type queryArgs struct {
	q      apiutil.Query
	limit  *int
	fields []string
	kwargs map[string]any
}

func parseQuery(r *http.Request, allowed ...string) (*queryArgs, error) {
	q, err := apiutil.ParseQuery(r, allowed...)
	if err != nil {
		return nil, err
	}
	a := &queryArgs{q: q, kwargs: map[string]any{}}
	if a.limit, err = collection.Integer("limit", q.Get("limit")); err != nil {
		return nil, err
	}
	a.fields = collection.StringList(q.Get("fields"))
	for _, name := range allowed {
		v := q.Get(name)
		if v == nil {
			continue
		}
		switch name {
		case "limit":
			a.kwargs[name] = *a.limit
		case "fields":
			l := make([]any, len(a.fields))
			for i, f := range a.fields {
				l[i] = f
			}
			a.kwargs[name] = l
		default:
			a.kwargs[name] = *v
		}
	}
	return a, nil
}

func (h *handlers) list(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	a, err := parseQuery(r, "node", "resource_class", "state", "marker", "limit", "sort_key", "sort_dir", "fields", "owner")
	if err != nil {
		return err
	}
	v := rc.Version
	if err := pick(v, microversion.Minor60AllocationOwner, indexQuery, indexQuery60).Validate(a.kwargs); err != nil {
		return err
	}
	owner := a.q.Get("owner")
	o := ""
	if owner != nil {
		o = *owner
	}
	requestor, err := h.ListProject(r, o)
	if err != nil {
		return err
	}
	if err := checkAllowedFields(a.fields, v); err != nil {
		return err
	}
	if owner != nil && !microversion.AllowAllocationOwner.Allows(v) {
		return errs.NotAcceptable()
	}
	// Asking for another project's allocations is refused as a version
	// mismatch, as upstream does.
	if owner != nil && requestor != nil && *owner != *requestor {
		return errs.NotAcceptable()
	}
	if requestor != nil {
		owner = requestor
	}
	f := store.AllocationFilter{ResourceClass: a.q.Get("resource_class"), State: a.q.Get("state"), Owner: owner}
	return h.collection(w, r, rc, a, f, a.q.Get("node"), "")
}

// collection is _get_allocations_collection; parent is the node of the
// sub-resource (then the first allocation is the answer).
func (h *handlers) collection(w http.ResponseWriter, r *http.Request, rc *api.RequestContext, a *queryArgs, f store.AllocationFilter, node *string, parent string) error {
	ctx := r.Context()
	limit, err := collection.ValidateLimit(a.limit, rc.Config.IntOf(config.APIMaxLimit))
	if err != nil {
		return err
	}
	sortDir, err := collection.ValidateSortDir(a.q.Get("sort_dir"))
	if err != nil {
		return err
	}
	sortKey := "id"
	if k := a.q.Get("sort_key"); k != nil {
		sortKey = *k
	}
	if err := collection.ValidateSortKey(sortKey, invalidSortKeys); err != nil {
		return err
	}
	opts := store.ListOptions{Limit: limit, SortKey: sortKey, SortDir: sortDir}
	if m := a.q.Get("marker"); m != nil {
		if _, err := h.Store.GetAllocationByUUID(ctx, *m); err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return errs.New(errs.ClassAllocationNotFound, map[string]any{"allocation": *m})
			}
			return fmt.Errorf("allocation marker %s: %w", *m, err)
		}
		opts.Marker = *m
	}
	// A project scoped caller without list_all sees its own allocations
	// only; the node's allocation is found whoever owns it, the node's
	// own visibility deciding.
	project, system, err := h.scope(r, "baremetal:allocation:list")
	if err != nil {
		return err
	}
	if !system && parent == "" {
		if !h.checkTrue(r, "baremetal:allocation:list_all") {
			f.Owner = &project
		}
	} else if parent != "" {
		node = &parent
	}
	if node != nil {
		n, err := h.nodeFor(r, rc, *node)
		if err != nil {
			return err
		}
		if err := h.authorizeNode(r, "baremetal:node:get", n); err != nil {
			if forbidden(err) {
				return errs.New(errs.ClassNotFound, nil)
			}
			return err
		}
		f.NodeUUID = &n.UUID
	}
	list, err := h.Store.ListAllocations(ctx, f, opts)
	switch {
	case errors.Is(err, store.ErrMarkerNotFound):
		return errs.New(errs.ClassAllocationNotFound, map[string]any{"allocation": opts.Marker})
	case errors.Is(err, store.ErrInvalidParameter):
		return errs.InvalidParameterValue(err.Error())
	case err != nil:
		return fmt.Errorf("list allocations: %w", err)
	}
	items := make([]*apiutil.Dict, 0, len(list))
	for _, al := range list {
		if err := h.authorize(r, "baremetal:allocation:get", al); err != nil {
			return err
		}
		d, err := h.convert(ctx, rc, al, a.fields, true)
		if err != nil {
			return err
		}
		items = append(items, d)
	}
	if parent != "" {
		if len(items) == 0 {
			return errs.NewMessage(errs.ClassAllocationNotFound, fmt.Sprintf("Allocation for node %s was not found", parent))
		}
		return api.WriteJSON(w, http.StatusOK, items[0])
	}
	out := apiutil.NewDict()
	out.Set("allocations", items)
	last := ""
	if len(list) > 0 {
		last = list[len(list)-1].UUID
	}
	if next := collection.Next(rc.PublicURL, "allocations", len(list), limit, last, a.fields,
		collection.Param{Key: "sort_key", Value: sortKey}, collection.Param{Key: "sort_dir", Value: sortDir}); next != "" {
		out.Set("next", next)
	}
	return api.WriteJSON(w, http.StatusOK, out)
}

func (h *handlers) show(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	a, err := parseQuery(r, "fields")
	if err != nil {
		return err
	}
	v := rc.Version
	if err := pick(v, microversion.Minor60AllocationOwner, showQuery, showQuery60).Validate(rc.KeywordArgs(a.kwargs)); err != nil {
		return err
	}
	al, err := h.get(r, "baremetal:allocation:get", rc.Param("allocation_id"))
	if err != nil {
		return err
	}
	if err := checkAllowedFields(a.fields, v); err != nil {
		return err
	}
	return respond.JSON(w, http.StatusOK)(h.convert(r.Context(), rc, al, a.fields, true))
}

func (h *handlers) nodeShow(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	a, err := parseQuery(r, "fields")
	if err != nil {
		return err
	}
	return h.collection(w, r, rc, a, store.AllocationFilter{}, nil, rc.Param("node_ident"))
}

func (h *handlers) delete(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	al, err := h.get(r, "baremetal:allocation:delete", rc.Param("allocation_id"))
	if err != nil {
		return err
	}
	return h.destroy(w, r, al)
}

func (h *handlers) nodeDelete(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	ident := rc.Param("node_ident")
	n, err := apiutil.GetNode(r.Context(), h.Store, ident, rc.Version)
	if err != nil {
		return err
	}
	if err := h.authorizeNode(r, "baremetal:node:get", n); err != nil {
		if forbidden(err) {
			return errs.NodeNotFound(ident)
		}
		return err
	}
	list, err := h.Store.ListAllocations(r.Context(), store.AllocationFilter{NodeUUID: &n.UUID}, store.ListOptions{})
	if err != nil {
		return fmt.Errorf("allocations of node %s: %w", n.UUID, err)
	}
	if len(list) == 0 {
		return errs.NewMessage(errs.ClassAllocationNotFound, fmt.Sprintf("Allocation for node %s was not found", ident))
	}
	if err := h.authorize(r, "baremetal:allocation:delete", list[0]); err != nil {
		return err
	}
	return h.destroy(w, r, list[0])
}

func (h *handlers) notify() apiutil.Notifications {
	return apiutil.Notifications{Notifier: h.Notifier}
}

func (h *handlers) destroy(w http.ResponseWriter, r *http.Request, al *model.Allocation) error {
	topic, err := h.Topics.GetRandomTopic(r.Context())
	if err != nil {
		return err
	}
	// Upstream names the node in the delete notifications only.
	nodeUUID := ""
	if al.NodeID != nil {
		if n, err := h.Store.GetNodeByID(r.Context(), *al.NodeID); err == nil {
			nodeUUID = n.UUID
		}
	}
	payload := func(n *notify.Notifier) notify.Object { return n.AllocationCRUDPayload(al, nodeUUID) }
	h.notify().Notify(r.Context(), "allocation", "delete", notify.StatusStart, payload)
	err = h.Conductor.DestroyAllocation(r.Context(), topic, al)
	h.notify().NotifyOutcome(r.Context(), "allocation", "delete", err, payload)
	if err != nil {
		return err
	}
	api.WriteEmpty(w, http.StatusNoContent)
	return nil
}

func (h *handlers) create(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	body, err := apiutil.DecodeBody(r)
	if err != nil {
		return err
	}
	v := rc.Version
	if err := pick(v, microversion.Minor58AllocationBackfill, createBody, createBody58).Validate(body); err != nil {
		return err
	}
	m := apiutil.Plain(body).(map[string]any)
	if err := h.authorizeCreate(r, rc, m); err != nil {
		return err
	}
	al := &model.Allocation{State: "allocating"}
	if s, _ := m["name"].(string); s != "" {
		if !apiutil.IsValidLogicalName(s) {
			return errs.NewMessage(errs.ClassInvalid, fmt.Sprintf("Cannot create allocation with invalid name '%s'", s))
		}
		al.Name = &s
	}
	project, system, err := h.scope(r, "baremetal:allocation:create")
	if err != nil {
		return err
	}
	if rc.Config.BoolOf(config.OsloPolicyEnforceNewDefaults) && !system {
		if owner, _ := m["owner"].(string); owner != "" {
			if owner != project && !h.checkTrue(r, "baremetal:allocation:create_restricted") {
				return errs.NewMessage(errs.ClassNotAuthorized, fmt.Sprintf("Cannot create allocation with an owner "+
					"Project ID value %s not matching the requestor Project ID %s. Policy "+
					"baremetal:allocation:create_restricted is required for this capability.", owner, project))
			}
		} else {
			m["owner"] = nullable(project)
		}
	}
	var node *model.Node
	if s, _ := m["node"].(string); s != "" {
		if !microversion.AllowAllocationBackfill.Allows(v) {
			return errs.NewMessage(errs.ClassInvalid, "Cannot set node when creating an allocation in this API version")
		}
		if node, err = h.nodeFor(r, rc, s); err != nil {
			return err
		}
		// A node the caller may not see is one that does not exist.
		if err := h.authorizeNode(r, "baremetal:node:get", node); err != nil {
			if forbidden(err) {
				return errs.NewMessageKw(errs.ClassNodeNotFound, errs.NodeNotFound(s).Message, map[string]any{"code": http.StatusBadRequest})
			}
			return err
		}
	}
	if s, _ := m["resource_class"].(string); s != "" {
		al.ResourceClass = &s
	} else if node != nil {
		al.ResourceClass = node.ResourceClass
	} else {
		return errs.NewMessage(errs.ClassInvalid, "The resource_class field is mandatory when not backfilling")
	}
	if s, ok := m["owner"].(string); ok {
		al.Owner = &s
	}
	if x, ok := m["extra"].(map[string]any); ok {
		al.Extra = x
	}
	for _, t := range list(m["traits"]) {
		al.Traits = append(al.Traits, t)
	}
	if cands := list(m["candidate_nodes"]); len(cands) > 0 {
		// Candidates are looked up among the caller's nodes unless it may
		// allocate from any project's.
		scope := ""
		if !h.checkTrue(r, "baremetal:allocation:create_restricted") {
			scope = project
		}
		converted, err := h.Store.CheckNodeList(r.Context(), cands, scope)
		if err != nil {
			var nf *store.NotFoundError
			if errors.As(err, &nf) {
				return errs.NewMessageKw(errs.ClassNodeNotFound, "Nodes cannot be found: "+nf.Ident, map[string]any{"code": http.StatusBadRequest})
			}
			return fmt.Errorf("check candidate nodes: %w", err)
		}
		for _, c := range cands {
			al.CandidateNodes = append(al.CandidateNodes, converted[c])
		}
	}
	switch s, _ := m["uuid"].(string); {
	case s != "":
		// Upstream's current schema lets any string through to the
		// database, where it could never be looked up as a UUID; the
		// answer is the one its earlier validator gave.
		if !collection.IsUUIDLike(s) {
			return errs.InvalidParameterValue("Expected UUID for uuid: " + s)
		}
		al.UUID = s
	case node != nil && node.InstanceUUID != nil && *node.InstanceUUID != "":
		// Backfilling without a UUID: the instance's is the natural one.
		al.UUID = *node.InstanceUUID
	default:
		al.UUID = uuid.NewString()
	}
	var topic string
	if node != nil {
		id := node.ID
		al.NodeID = &id
		topic, err = h.Topics.GetTopicFor(r.Context(), node)
	} else {
		topic, err = h.Topics.GetRandomTopic(r.Context())
	}
	if err != nil {
		return err
	}
	h.notify().Notify(r.Context(), "allocation", "create", notify.StatusStart,
		func(n *notify.Notifier) notify.Object { return n.AllocationCRUDPayload(al, "") })
	created, err := h.Conductor.CreateAllocation(r.Context(), topic, al)
	h.notify().NotifyOutcome(r.Context(), "allocation", "create", err, func(n *notify.Notifier) notify.Object {
		if created == nil {
			return n.AllocationCRUDPayload(al, "")
		}
		return n.AllocationCRUDPayload(created, "")
	})
	if err != nil {
		return err
	}
	rc.SetLocation(w, "allocations", created.UUID)
	return respond.JSON(w, http.StatusCreated)(h.convert(r.Context(), rc, created, nil, true))
}

// authorizeCreate is _authorize_create_allocation: the create rule, or
// for a caller refused it, create_restricted with the allocation owned by
// the caller's project. It checks the body's fields against the version
// as well and may set m["owner"].
func (h *handlers) authorizeCreate(r *http.Request, rc *api.RequestContext, m map[string]any) error {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	newDefaults := rc.Config.BoolOf(config.OsloPolicyEnforceNewDefaults)
	owner, _ := m["owner"].(string)
	err := h.check(r, "baremetal:allocation:create")
	if err == nil {
		if err := checkAllowedFields(keys, rc.Version); err != nil {
			return err
		}
		if newDefaults || owner != "" {
			return nil
		}
		err = h.check(r, "baremetal:allocation:create_pre_rbac")
	}
	if err == nil || !errs.Is(err, errs.ClassHTTPForbidden) {
		return err
	}
	project, _, serr := h.scope(r, "baremetal:allocation:create")
	if serr != nil {
		return serr
	}
	if project != "" && owner != "" && project != owner {
		return err
	}
	if owner != "" && !newDefaults {
		if err := h.check(r, "baremetal:allocation:create_pre_rbac"); err != nil {
			return err
		}
	}
	if err := h.check(r, "baremetal:allocation:create_restricted"); err != nil {
		return err
	}
	if err := checkAllowedFields(keys, rc.Version); err != nil {
		return err
	}
	m["owner"] = nullable(project)
	return nil
}

// nullable is a project ID as the body holds it: none is JSON null.
func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// list returns the strings of a JSON array value.
func list(v any) []string {
	arr, _ := v.([]any)
	out := make([]string, 0, len(arr))
	for _, x := range arr {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func (h *handlers) patch(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	body, err := apiutil.DecodeBody(r)
	if err != nil {
		return err
	}
	v := rc.Version
	if err := pick(v, microversion.Minor60AllocationOwner, updateBody, updateBody60).Validate(body); err != nil {
		return err
	}
	ops, err := apiutil.DecodePatch(body)
	if err != nil {
		return err
	}
	al, err := h.get(r, "baremetal:allocation:update", rc.Param("allocation_id"))
	if err != nil {
		return err
	}
	fields, err := apiutil.ValidateAllowedFields(ops, patchAllowedFields, v)
	if err != nil {
		return err
	}
	if err := checkAllowedFields(fields, v); err != nil {
		return err
	}
	for _, name := range apiutil.PatchValues(ops, "/name") {
		if s, _ := name.(string); s != "" && !apiutil.IsValidLogicalName(s) {
			return errs.NewMessage(errs.ClassInvalid, fmt.Sprintf("Cannot update allocation with invalid name '%s'", s))
		}
	}
	doc, err := asDict(al)
	if err != nil {
		return err
	}
	patched, err := apiutil.ApplyPatch(doc, ops)
	if err != nil {
		return err
	}
	for k := range patched {
		if !contains(patchedSchema.Properties(), k) {
			delete(patched, k)
		}
	}
	if err := patchedSchema.Validate("patch", patched); err != nil {
		return err
	}
	var changed []string
	if name := apiutil.OptString(al.Name); !apiutil.JSONEqual(name, patched["name"]) {
		al.Name = nil
		if s, ok := patched["name"].(string); ok {
			al.Name = &s
		}
		changed = append(changed, "name")
	}
	if !apiutil.JSONEqual(apiutil.EmptyMap(al.Extra), patched["extra"]) {
		al.Extra, _ = patched["extra"].(map[string]any)
		changed = append(changed, "extra")
	}
	h.notify().Notify(r.Context(), "allocation", "update", notify.StatusStart,
		func(n *notify.Notifier) notify.Object { return n.AllocationCRUDPayload(al, "") })
	if len(changed) > 0 {
		updated, err := h.Store.UpdateAllocation(r.Context(), al, changed...)
		h.notify().NotifyOutcome(r.Context(), "allocation", "update", err, func(n *notify.Notifier) notify.Object {
			if updated == nil {
				return n.AllocationCRUDPayload(al, "")
			}
			return n.AllocationCRUDPayload(updated, "")
		})
		var dup *store.DuplicateError
		switch {
		case errors.As(err, &dup):
			return errs.New(errs.ClassAllocationDuplicateName, map[string]any{"name": dup.Value})
		case errors.Is(err, store.ErrNotFound):
			return errs.New(errs.ClassAllocationNotFound, map[string]any{"allocation": al.UUID})
		case err != nil:
			return fmt.Errorf("update allocation %s: %w", al.UUID, err)
		}
		al = updated
	} else {
		h.notify().NotifyOutcome(r.Context(), "allocation", "update", nil,
			func(n *notify.Notifier) notify.Object { return n.AllocationCRUDPayload(al, "") })
	}
	return respond.JSON(w, http.StatusOK)(h.convert(r.Context(), rc, al, nil, true))
}
