// Package chassis serves the /v1/chassis routes as upstream's
// ironic/api/controllers/v1/chassis.py does: chassis are written to the
// store directly (no conductor is involved).
package chassis

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/google/uuid"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apiutil"
	"github.com/openkeel/ironic/internal/api/apiutil/respond"
	"github.com/openkeel/ironic/internal/api/collection"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/notify"
	"github.com/openkeel/ironic/internal/store"
)

// Deps is what the chassis handlers need.
type Deps struct {
	Store store.Store
	// Notifier sends the API's chassis notifications; nil sends none.
	Notifier *notify.Notifier
}

// notify sends baremetal.chassis.<action>.<status> with
// ChassisCRUDPayload through the API's notification helper.
func (h *handlers) notify(ctx context.Context, c *model.Chassis, action string, status notify.Status) {
	if c == nil {
		return
	}
	apiutil.Notifications{Notifier: h.Notifier}.Notify(ctx, "chassis", action, status,
		func(n *notify.Notifier) notify.Object { return n.ChassisCRUDPayload(c) })
}

// notifyOutcome sends end with done, or error with sent.
func (h *handlers) notifyOutcome(ctx context.Context, sent, done *model.Chassis, action string, err error) {
	if err != nil {
		h.notify(ctx, sent, action, notify.StatusError)
		return
	}
	h.notify(ctx, done, action, notify.StatusEnd)
}

type handlers struct {
	Deps
}

// Register adds the handlers of the chassis routes to m. The nodes of a
// chassis (GET /v1/chassis/{chassis_id}/nodes[/detail]) are node lists
// and belong to the node package.
func Register(m map[string]api.HandlerFunc, d Deps) {
	h := &handlers{Deps: d}
	m["GET /v1/chassis"] = h.list(false)
	m["GET /v1/chassis/detail"] = h.list(true)
	m["GET /v1/chassis/{chassis_id}"] = h.getOne
	m["POST /v1/chassis"] = h.create
	m["PATCH /v1/chassis/{chassis_id}"] = h.patch
	m["DELETE /v1/chassis/{chassis_id}"] = h.delete
}

// schemaFields are CHASSIS_SCHEMA's properties in upstream's order (the
// fields PATCH may touch).
var schemaFields = []string{"uuid", "extra", "description"}

var defaultListFields = []string{"uuid", "description"}

func chassisNotFound(ident string) error {
	return errs.New(errs.ClassChassisNotFound, map[string]any{"chassis": ident})
}

func (h *handlers) get(ctx context.Context, ident string) (*model.Chassis, error) {
	c, err := h.Store.GetChassisByUUID(ctx, ident)
	if errors.Is(err, store.ErrNotFound) {
		return nil, chassisNotFound(ident)
	}
	if err != nil {
		return nil, fmt.Errorf("get chassis %s: %w", ident, err)
	}
	return c, nil
}

// convert is convert_with_links. Upstream builds "nodes" as a one-element
// tuple holding the link list, so clients see a list of lists.
func convert(rc *api.RequestContext, c *model.Chassis, fields []string, sanitize bool) (*apiutil.Dict, error) {
	d := apiutil.RecordDict(c.UUID, c.CreatedAt, c.UpdatedAt)
	if c.Description == nil {
		d.Set("description", nil)
	} else {
		d.Set("description", *c.Description)
	}
	extra := c.Extra
	if extra == nil {
		extra = map[string]any{}
	}
	d.Set("extra", extra)
	d.Set("links", collection.SelfAndBookmark(rc.PublicURL, "chassis", c.UUID))
	d.Set("nodes", []any{collection.SelfAndBookmark(rc.PublicURL, "chassis", c.UUID+"/nodes")})
	if err := apiutil.CheckFields(d, fields); err != nil {
		return nil, err
	}
	if sanitize {
		d.KeepOnly(fields)
	}
	return d, nil
}

func (h *handlers) list(detailRoute bool) api.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
		allowed := []string{"marker", "limit", "sort_key", "sort_dir"}
		if !detailRoute {
			allowed = append(allowed, "fields", "detail")
		}
		q, err := apiutil.ParseQuery(r, allowed...)
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
		sortKey := "id"
		if s := q.Get("sort_key"); s != nil {
			sortKey = *s
		}
		rawFields, rawDetail := q.Get("fields"), q.Get("detail")
		fields := collection.StringList(rawFields)
		detail, err := collection.Boolean("detail", rawDetail)
		if err != nil {
			return err
		}
		resource := "chassis/detail"
		if !detailRoute {
			resource = "chassis"
			if err := collection.CheckAllowSpecifyFields(fields, rc.Version); err != nil {
				return err
			}
			if fields, err = collection.ReturnFields(fields, rawFields, detail, rawDetail, defaultListFields,
				collection.DetailAllowed(rc.Version), nil); err != nil {
				return err
			}
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
			if _, err := h.get(r.Context(), *marker); err != nil {
				return err
			}
			opts.Marker = *marker
		}
		if err := collection.ValidateSortKey(sortKey, []string{"extra"}); err != nil {
			return err
		}
		list, err := h.Store.ListChassis(r.Context(), opts)
		switch {
		case errors.Is(err, store.ErrInvalidParameter):
			return errs.InvalidParameterValue(err.Error())
		case err != nil:
			return fmt.Errorf("list chassis: %w", err)
		}
		items := make([]*apiutil.Dict, 0, len(list))
		for _, c := range list {
			d, err := convert(rc, c, fields, true)
			if err != nil {
				return err
			}
			items = append(items, d)
		}
		out := apiutil.NewDict()
		out.Set("chassis", items)
		params := []collection.Param{{Key: "sort_key", Value: sortKey}, {Key: "sort_dir", Value: sortDir}}
		if detail != nil {
			params = append(params, collection.Param{Key: "detail", Value: *detail})
		}
		last := ""
		if len(list) > 0 {
			last = list[len(list)-1].UUID
		}
		if next := collection.Next(rc.PublicURL, resource, len(list), limit, last, fields, params...); next != "" {
			out.Set("next", next)
		}
		return api.WriteJSON(w, http.StatusOK, out)
	}
}

func (h *handlers) getOne(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	q, err := apiutil.ParseQuery(r, "fields")
	if err != nil {
		return err
	}
	ident := rc.Param("chassis_id")
	if _, err := collection.UUID("chassis_uuid", &ident); err != nil {
		return err
	}
	fields := collection.StringList(q.Get("fields"))
	if err := collection.CheckAllowSpecifyFields(fields, rc.Version); err != nil {
		return err
	}
	c, err := h.get(r.Context(), ident)
	if err != nil {
		return err
	}
	return respond.JSON(w, http.StatusOK)(convert(rc, c, fields, true))
}

// validate is CHASSIS_VALIDATOR.
func validate(arg string, body any) error {
	if err := apiutil.MustSchema("chassis").ValidateBody(arg, body); err != nil {
		return err
	}
	m, _ := apiutil.Plain(body).(map[string]any)
	return apiutil.BodyUUID("uuid", m["uuid"])
}

func setFields(c *model.Chassis, m map[string]any) {
	c.Extra, _ = m["extra"].(map[string]any)
	c.Description = nil
	if s, ok := m["description"].(string); ok {
		c.Description = &s
	}
}

func (h *handlers) create(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	body, err := apiutil.DecodeBody(r)
	if err != nil {
		return err
	}
	if err := validate("chassis", body); err != nil {
		return err
	}
	m := apiutil.Plain(body).(map[string]any)
	c := &model.Chassis{}
	if u, _ := m["uuid"].(string); u != "" {
		c.UUID = u
	} else {
		c.UUID = uuid.NewString()
	}
	setFields(c, m)
	h.notify(r.Context(), c, "create", notify.StatusStart)
	created, err := h.Store.CreateChassis(r.Context(), c)
	h.notifyOutcome(r.Context(), c, created, "create", err)
	if errors.Is(err, store.ErrDuplicate) {
		return errs.New(errs.ClassChassisAlreadyExists, map[string]any{"uuid": c.UUID})
	}
	if err != nil {
		return fmt.Errorf("create chassis: %w", err)
	}
	rc.SetLocation(w, "chassis", created.UUID)
	return respond.JSON(w, http.StatusCreated)(convert(rc, created, nil, true))
}

func (h *handlers) patch(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	ident := rc.Param("chassis_id")
	ops, err := apiutil.DecodePatchBody(r)
	if err != nil {
		return err
	}
	if _, err := apiutil.ValidateAllowedFields(ops, schemaFields, rc.Version); err != nil {
		return err
	}
	c, err := h.get(r.Context(), ident)
	if err != nil {
		return err
	}
	doc := apiutil.CopyJSON(map[string]any{
		"id": c.ID, "uuid": c.UUID, "created_at": apiutil.ISOTime(c.CreatedAt),
		"updated_at": apiutil.OptISOTime(c.UpdatedAt), "extra": c.Extra, "description": apiutil.OptString(c.Description),
	})
	doc, err = apiutil.ApplyPatch(doc, ops)
	if err != nil {
		return err
	}
	for k := range doc {
		if !slices.Contains(schemaFields, k) {
			delete(doc, k)
		}
	}
	if err := validate("patch", doc); err != nil {
		return err
	}
	if doc["uuid"] != c.UUID {
		return errs.InvalidParameterValue("Cannot overwrite UUID for an existing Chassis.")
	}
	updated := *c
	setFields(&updated, doc)
	h.notify(r.Context(), &updated, "update", notify.StatusStart)
	saved, err := h.Store.UpdateChassis(r.Context(), &updated, "extra", "description")
	h.notifyOutcome(r.Context(), &updated, saved, "update", err)
	if err != nil {
		return fmt.Errorf("update chassis %s: %w", c.UUID, err)
	}
	return respond.JSON(w, http.StatusOK)(convert(rc, saved, nil, true))
}

func (h *handlers) delete(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	ident := rc.Param("chassis_id")
	if _, err := collection.UUID("chassis_uuid", &ident); err != nil {
		return err
	}
	c, err := h.get(r.Context(), ident)
	if err != nil {
		return err
	}
	h.notify(r.Context(), c, "delete", notify.StatusStart)
	err = h.Store.DeleteChassis(r.Context(), c.ID)
	h.notifyOutcome(r.Context(), c, c, "delete", err)
	switch {
	case errors.Is(err, store.ErrNotEmpty):
		return errs.New(errs.ClassChassisNotEmpty, map[string]any{"chassis": c.UUID})
	case errors.Is(err, store.ErrNotFound):
		return chassisNotFound(ident)
	case err != nil:
		return fmt.Errorf("delete chassis %s: %w", c.UUID, err)
	}
	api.WriteEmpty(w, http.StatusNoContent)
	return nil
}
