package node

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apiutil"
	"github.com/openkeel/ironic/internal/api/collection"
	"github.com/openkeel/ironic/internal/api/microversion"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/store"
)

// historyDetailFields and historyStandardFields are
// NodeHistoryController's field lists.
var (
	historyDetailFields = []string{"uuid", "created_at", "severity", "event_type", "event", "conductor", "user",
		"project", "state", "target_provision_state", "duration_seconds"}
	historyStandardFields = []string{"uuid", "created_at", "severity", "event"}
)

func optInt(v *int) any {
	if v == nil {
		return nil
	}
	return *v
}

func historyValue(e *model.NodeHistory, f string) any {
	switch f {
	case "uuid":
		return e.UUID
	case "created_at":
		return apiutil.ISOTime(e.CreatedAt)
	case "severity":
		return apiutil.OptString(e.Severity)
	case "event_type":
		return apiutil.OptString(e.EventType)
	case "event":
		return apiutil.OptString(e.Event)
	case "conductor":
		return apiutil.OptString(e.Conductor)
	case "user":
		return apiutil.OptString(e.User)
	case "project":
		return apiutil.OptString(e.Project)
	case "state":
		return apiutil.OptString(e.State)
	case "target_provision_state":
		return apiutil.OptString(e.TargetProvisionState)
	case "duration_seconds":
		return optInt(e.DurationSeconds)
	}
	return nil
}

// historyEvent is _history_event_convert_with_links: the event's fields
// for the version, the event text cut at 255 characters outside detail,
// and a single self link.
func historyEvent(rc *api.RequestContext, nodeUUID string, e *model.NodeHistory, detail bool) *apiutil.Dict {
	fields := historyStandardFields
	if detail {
		fields = historyDetailFields
	}
	d := apiutil.NewDict()
	for _, f := range fields {
		d.Set(f, historyValue(e, f))
	}
	v := rc.Version
	if detail && !microversion.AllowNodeHistoryProject.Allows(v) {
		d.Delete("project")
	}
	if detail && !microversion.AllowNodeHistoryFields.Allows(v) {
		d.Delete("state")
		d.Delete("target_provision_state")
		d.Delete("duration_seconds")
	}
	if !detail && e.Event != nil {
		if ev := []rune(*e.Event); len(ev) > 255 {
			d.Set("event", string(ev[:251])+"...")
		}
	}
	d.Set("links", []collection.Link{collection.MakeLink("self", rc.PublicURL, "nodes", nodeUUID+"/history/"+e.UUID, false)})
	return d
}

func (h *handlers) listHistory(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	q, err := apiutil.ParseQuery(r, "detail", "marker", "limit", "sort_key", "sort_dir")
	if err != nil {
		return err
	}
	detail, err := collection.Boolean("detail", q.Get("detail"))
	if err != nil {
		return err
	}
	marker, err := collection.UUID("marker", q.Get("marker"))
	if err != nil {
		return err
	}
	limitArg, err := collection.Integer("limit", q.Get("limit"))
	if err != nil {
		return err
	}
	sortKey := "created_at"
	if s := q.Get("sort_key"); s != nil {
		sortKey = *s
	}
	ident := rc.Param("node_ident")
	n, err := h.node(r, rc, "baremetal:node:history:get", ident)
	if err != nil {
		return err
	}
	isDetail := detail != nil && *detail
	fields := historyStandardFields
	if isDetail {
		fields = historyDetailFields
	}
	var markerParam any
	if marker != nil {
		if _, err := h.Store.GetNodeHistoryByUUID(r.Context(), *marker); err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return errs.New(errs.ClassNodeHistoryNotFound, map[string]any{"history": *marker})
			}
			return fmt.Errorf("history record %s: %w", *marker, err)
		}
		markerParam = *marker
	}
	limit, err := collection.ValidateLimit(limitArg, rc.Config.IntOf(config.APIMaxLimit))
	if err != nil {
		return err
	}
	sortDir, err := collection.ValidateSortDir(q.Get("sort_dir"))
	if err != nil {
		return err
	}
	opts := store.ListOptions{Limit: limit, SortKey: sortKey, SortDir: sortDir}
	if marker != nil {
		opts.Marker = *marker
	}
	events, err := h.Store.ListNodeHistory(r.Context(), n.ID, opts)
	if errors.Is(err, store.ErrInvalidParameter) {
		return errs.InvalidParameterValue(err.Error())
	}
	if err != nil {
		return fmt.Errorf("history of node %s: %w", n.UUID, err)
	}
	items := make([]*apiutil.Dict, 0, len(events))
	for _, e := range events {
		items = append(items, historyEvent(rc, n.UUID, e, isDetail))
	}
	out := apiutil.NewDict()
	out.Set("history", items)
	last := ""
	if len(events) > 0 {
		last = events[len(events)-1].UUID
	}
	// Upstream passes the marker object itself into the next link; its
	// UUID is what a client can use.
	if next := collection.Next(rc.PublicURL, "nodes/"+ident+"/history", len(events), limit, last, fields,
		collection.Param{Key: "marker", Value: markerParam}, collection.Param{Key: "sort_key", Value: sortKey},
		collection.Param{Key: "sort_dir", Value: sortDir}); next != "" {
		out.Set("next", next)
	}
	return api.WriteJSON(w, http.StatusOK, out)
}

func (h *handlers) getHistory(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	if _, err := apiutil.ParseQuery(r); err != nil {
		return err
	}
	event := rc.Param("history_event_uuid")
	if err := apiutil.UUIDOrName("event", event); err != nil {
		return err
	}
	n, err := h.node(r, rc, "baremetal:node:history:get", rc.Param("node_ident"))
	if err != nil {
		return err
	}
	e, err := h.Store.GetNodeHistoryByUUID(r.Context(), event)
	if errors.Is(err, store.ErrNotFound) {
		return errs.New(errs.ClassNodeHistoryNotFound, map[string]any{"history": event})
	}
	if err != nil {
		return fmt.Errorf("history record %s: %w", event, err)
	}
	return api.WriteJSON(w, http.StatusOK, historyEvent(rc, n.UUID, e, true))
}
