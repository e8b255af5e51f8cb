// Package inspectionrule serves /v1/inspection_rules (1.96+) as
// upstream's ironic/api/controllers/v1/inspection_rule.py: rules are
// written by the API itself after the condition and action arguments are
// checked against the operators and actions of upstream's rule engine; a
// sensitive rule never shows its conditions and actions.
package inspectionrule

import (
	"context"
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
	"github.com/openkeel/ironic/internal/store"
)

// Deps is what the inspection rule handlers need.
type Deps struct {
	Store store.Store
}

type handlers struct {
	Deps
}

// Register adds the inspection rule handlers to m. DELETE
// /v1/inspection_rules, which upstream's API reference lists but its
// controller does not serve, is answered by the router as the missing
// identifier it is.
func Register(m map[string]api.HandlerFunc, d Deps) {
	h := &handlers{Deps: d}
	m["GET /v1/inspection_rules"] = h.list
	m["GET /v1/inspection_rules/{rule_id}"] = h.show
	m["POST /v1/inspection_rules"] = h.create
	m["PATCH /v1/inspection_rules/{rule_id}"] = h.patch
	m["DELETE /v1/inspection_rules/{rule_id}"] = h.delete
}

var (
	indexQuery = apiutil.MustRequestSchema("inspection_rule_index_request_query")
	showQuery  = apiutil.MustRequestSchema("inspection_rule_show_request_query")
	identParam = apiutil.MustRequestSchema("inspection_rule_request_parameter")
	createBody = apiutil.MustRequestSchema("inspection_rule_create_request_body")
	updateBody = apiutil.MustRequestSchema("inspection_rule_update_request_body")
	// patchedSchema is the creation schema applied, upstream's older way,
	// to a patched rule.
	patchedSchema = apiutil.MustSchema("inspection_rule_create_request_body")
)

var (
	defaultFields   = []string{"uuid", "priority", "phase", "description"}
	invalidSortKeys = []string{"actions", "conditions"}
)

// linkResource is the resource upstream builds rule links with: not the
// collection's path.
const linkResource = "inspection"

func (h *handlers) get(r *http.Request, id string) (*model.InspectionRule, error) {
	return apiutil.Found(r.Context(), id, h.Store.GetInspectionRuleByUUID, ruleNotFound, "inspection rule")
}

func ruleNotFound(id string) error {
	return errs.New(errs.ClassInspectionRuleNotFound, map[string]any{"rule": id})
}

// convertOps is convert_actions/convert_conditions: op and args, the
// loop when set (with multiple, default "any", for conditions).
func convertOps(ops []map[string]any, conditions bool) []*apiutil.Dict {
	out := make([]*apiutil.Dict, 0, len(ops))
	for _, o := range ops {
		d := apiutil.NewDict()
		d.Set("op", o["op"])
		d.Set("args", o["args"])
		if apiutil.Truthy(o["loop"]) {
			d.Set("loop", o["loop"])
			if conditions {
				m, ok := o["multiple"]
				if !ok {
					m = "any"
				}
				d.Set("multiple", m)
			}
		}
		out = append(out, d)
	}
	return out
}

// convert is convert_with_links followed by rules_sanitize.
func convert(rc *api.RequestContext, rule *model.InspectionRule, fields []string) (*apiutil.Dict, error) {
	d := apiutil.RecordDict(rule.UUID, rule.CreatedAt, rule.UpdatedAt)
	d.Set("description", apiutil.OptString(rule.Description))
	d.Set("priority", rule.Priority)
	d.Set("sensitive", rule.Sensitive)
	d.Set("phase", apiutil.OptString(rule.Phase))
	d.Set("conditions", convertOps(rule.Conditions, true))
	d.Set("actions", convertOps(rule.Actions, false))
	d.Set("links", collection.SelfAndBookmark(rc.PublicURL, linkResource, rule.UUID))
	if err := apiutil.CheckFields(d, fields); err != nil {
		return nil, err
	}
	if rule.Sensitive {
		d.Set("conditions", nil)
		d.Set("actions", nil)
	}
	d.KeepOnly(fields)
	return d, nil
}

func (h *handlers) list(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	l := apiutil.Listing[*model.InspectionRule]{
		ListSpec: apiutil.ListSpec{
			Extra:           []string{"phase"},
			Schema:          indexQuery,
			DefaultFields:   defaultFields,
			InvalidSortKeys: invalidSortKeys,
		},
		Key: "inspection_rules", Resource: linkResource,
		What: "inspection rule", Get: h.Store.GetInspectionRuleByUUID, NotFound: ruleNotFound,
		List: func(ctx context.Context, opts store.ListOptions) ([]*model.InspectionRule, error) {
			return h.Store.ListInspectionRules(ctx, store.InspectionRuleFilter{}, opts)
		},
		MarkerOf: func(rule *model.InspectionRule) string { return rule.UUID },
		// Upstream hands the phase filter to the next link only, never to
		// the query: every phase is listed.
		Lead: func(a *apiutil.ListArgs) []collection.Param {
			filters := map[string]any{}
			if p := a.Query.Get("phase"); p != nil && *p != "" {
				filters["phase"] = *p
			}
			return []collection.Param{{Key: "filters", Value: apiutil.PyRepr(filters)}}
		},
	}
	return respond.JSON(w, http.StatusOK)(l.Page(r, rc.Version, rc.Config.IntOf(config.APIMaxLimit), rc.PublicURL,
		func(rule *model.InspectionRule, fields []string) (*apiutil.Dict, error) {
			return convert(rc, rule, fields)
		}))
}

func (h *handlers) show(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	q, err := apiutil.ParseQuery(r, "fields")
	if err != nil {
		return err
	}
	id := rc.Param("rule_id")
	rawFields := q.Get("fields")
	fields := collection.StringList(rawFields)
	if err := identParam.Validate(map[string]any{"inspection_rule_uuid": id}); err != nil {
		return err
	}
	if err := showQuery.Validate(apiutil.FieldsArgs(rawFields, fields)); err != nil {
		return err
	}
	rule, err := h.get(r, id)
	if err != nil {
		return err
	}
	if err := collection.CheckAllowedFields(fields, rc.Version); err != nil {
		return err
	}
	return respond.JSON(w, http.StatusOK)(convert(rc, rule, fields))
}

// fromDoc sets the rule's writable fields from a validated document.
func fromDoc(rule *model.InspectionRule, m map[string]any) {
	rule.Description = apiutil.StringOf(m["description"])
	rule.Priority = 0
	if n, ok := toInt(m["priority"]); ok {
		rule.Priority = int(n)
	}
	rule.Sensitive, _ = m["sensitive"].(bool)
	main := "main"
	rule.Phase = &main
	if _, ok := m["phase"]; ok {
		rule.Phase = apiutil.StringOf(m["phase"])
	}
	rule.Conditions = maps(m["conditions"])
	rule.Actions = maps(m["actions"])
}

func maps(v any) []map[string]any {
	l, _ := v.([]any)
	out := make([]map[string]any, 0, len(l))
	for _, x := range l {
		if m, ok := x.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

func storeErr(err error, rule *model.InspectionRule, what string) error {
	return apiutil.WriteErrors{
		Duplicate: func() error {
			return errs.NewMessage(errs.ClassConflict, fmt.Sprintf("An inspection rule with UUID %s already exists.", rule.UUID))
		},
		Gone: func() error { return ruleNotFound(rule.UUID) },
	}.Map(err, what+" inspection rule "+rule.UUID)
}

func (h *handlers) create(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	body, err := apiutil.DecodeBody(r)
	if err != nil {
		return err
	}
	if err := createBody.Validate(body); err != nil {
		return err
	}
	m := apiutil.Plain(body).(map[string]any)
	if err := validateRule(m); err != nil {
		return err
	}
	rule := &model.InspectionRule{}
	fromDoc(rule, m)
	switch u, _ := m["uuid"].(string); {
	case u == "":
		rule.UUID = uuid.NewString()
	case !collection.IsUUIDLike(u):
		// Upstream's schema lets any string through to the database,
		// where it could never be read back; refused as its patch
		// validator refuses it.
		return errs.InvalidParameterValue("Expected UUID for uuid: " + u)
	default:
		rule.UUID = u
	}
	created, err := h.Store.CreateInspectionRule(r.Context(), rule)
	if err != nil {
		return storeErr(err, rule, "create")
	}
	rc.SetLocation(w, "inspection_rules", created.UUID)
	return respond.JSON(w, http.StatusCreated)(convert(rc, created, nil))
}

// asDict is the rule's as_dict(), which a patch applies to.
func asDict(rule *model.InspectionRule) map[string]any {
	ops := func(l []map[string]any) []any {
		out := make([]any, 0, len(l))
		for _, m := range l {
			out = append(out, apiutil.CopyJSON(m))
		}
		return out
	}
	return map[string]any{
		"id": rule.ID, "uuid": rule.UUID, "priority": rule.Priority,
		"description": apiutil.OptString(rule.Description), "sensitive": rule.Sensitive,
		"phase": apiutil.OptString(rule.Phase), "scope": apiutil.OptString(rule.Scope),
		"conditions": ops(rule.Conditions), "actions": ops(rule.Actions),
		"created_at": apiutil.ISOTime(rule.CreatedAt), "updated_at": apiutil.OptISOTime(rule.UpdatedAt),
	}
}

func (h *handlers) patch(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	id := rc.Param("rule_id")
	if !collection.IsUUIDLike(id) {
		return errs.InvalidParameterValue("Expected UUID for inspection_rule_uuid: " + id)
	}
	body, err := apiutil.DecodeBody(r)
	if err != nil {
		return err
	}
	ops, err := apiutil.DecodePatch(body)
	if err != nil {
		return err
	}
	if err := updateBody.Validate(body); err != nil {
		return err
	}
	rule, err := h.get(r, id)
	if err != nil {
		return err
	}
	if vals := apiutil.PatchValues(ops, "/sensitive"); len(vals) > 0 && vals[0] != nil && !apiutil.Truthy(vals[0]) && rule.Sensitive {
		return apiutil.PatchRefused(ops, "Inspection rules cannot have the sensitive flag unset.")
	}
	doc, err := apiutil.ApplyPatch(asDict(rule), ops)
	if err != nil {
		return err
	}
	for k := range doc {
		if !slices.Contains(patchedSchema.Properties(), k) {
			delete(doc, k)
		}
	}
	if err := patchedSchema.Validate("patch", doc); err != nil {
		return err
	}
	if u, ok := doc["uuid"].(string); ok && !collection.IsUUIDLike(u) {
		return errs.InvalidParameterValue("Expected UUID for uuid: " + u)
	}
	if err := validateRule(doc); err != nil {
		return err
	}
	before := asDict(rule)
	var changed []string
	for _, f := range []string{"description", "priority", "sensitive", "phase", "conditions", "actions"} {
		if !apiutil.JSONEqual(doc[f], before[f]) {
			changed = append(changed, f)
		}
	}
	if len(changed) > 0 {
		if _, ok := doc["phase"]; !ok {
			doc["phase"] = nil
		}
		fromDoc(rule, doc)
	}
	rule, err = apiutil.SaveChanged(r.Context(), rule, changed, h.Store.UpdateInspectionRule,
		func(err error) error { return storeErr(err, rule, "update") })
	if err != nil {
		return err
	}
	return respond.JSON(w, http.StatusOK)(convert(rc, rule, nil))
}

func (h *handlers) delete(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	id := rc.Param("rule_id")
	if err := identParam.Validate(map[string]any{"inspection_rule_uuid": id}); err != nil {
		return err
	}
	rule, err := h.get(r, id)
	if err != nil {
		return err
	}
	if err := h.Store.DeleteInspectionRule(r.Context(), rule.ID); err != nil {
		return storeErr(err, rule, "delete")
	}
	api.WriteEmpty(w, http.StatusNoContent)
	return nil
}
