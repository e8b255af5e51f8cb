// Package deploytemplate serves /v1/deploy_templates (1.55+) as
// upstream's ironic/api/controllers/v1/deploy_template.py: templates are
// written by the API itself (no conductor call), named by a trait, with
// deploy steps whose arguments are masked on output.
package deploytemplate

import (
	"fmt"
	"net/http"

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

// Deps is what the deploy template handlers need.
type Deps struct {
	Store store.Store
	// Notifier sends the deploy template notifications; nil sends none.
	Notifier *notify.Notifier
}

type handlers struct {
	Deps
}

func (h *handlers) notify() apiutil.Notifications { return apiutil.Notifications{Notifier: h.Notifier} }

// Register adds the deploy template handlers to m.
func Register(m map[string]api.HandlerFunc, d Deps) {
	h := &handlers{Deps: d}
	m["GET /v1/deploy_templates"] = h.list
	m["GET /v1/deploy_templates/{deploy_template_id}"] = h.show
	m["POST /v1/deploy_templates"] = h.create
	m["PATCH /v1/deploy_templates/{deploy_template_id}"] = h.patch
	m["DELETE /v1/deploy_templates/{deploy_template_id}"] = h.delete
}

var (
	templateSchema = apiutil.MustSchema("deploy_template")
	stepSchema     = apiutil.MustSchema("deploy_step")
	indexQuery     = apiutil.MustRequestSchema("deploy_template_index_request_query")
	showQuery      = apiutil.MustRequestSchema("deploy_template_show_request_query")
)

var (
	defaultFields      = []string{"uuid", "name"}
	invalidSortKeys    = []string{"extra", "steps"}
	patchAllowedFields = []string{"extra", "name", "steps", "description"}
	templateIdentArg   = "template_ident"
)

func (h *handlers) get(r *http.Request, ident string) (*model.DeployTemplate, error) {
	return apiutil.ByUUIDOrName(r.Context(), ident, h.Store.GetDeployTemplateByUUID, h.Store.GetDeployTemplateByName,
		templateNotFound, "deploy template")
}

func templateNotFound(ident string) error {
	return errs.New(errs.ClassDeployTemplateNotFound, map[string]any{"template": ident})
}

// steps is convert_steps.
func steps(ts []model.DeployTemplateStep) []*apiutil.Dict {
	out := make([]*apiutil.Dict, 0, len(ts))
	for _, s := range ts {
		d := apiutil.NewDict()
		d.Set("interface", s.Interface)
		d.Set("step", s.Step)
		d.Set("args", apiutil.EmptyMap(s.Args))
		d.Set("priority", s.Priority)
		out = append(out, d)
	}
	return out
}

// convert is convert_with_links followed by template_sanitize.
func convert(rc *api.RequestContext, t *model.DeployTemplate, fields []string) (*apiutil.Dict, error) {
	d := apiutil.RecordDict(t.UUID, t.CreatedAt, t.UpdatedAt)
	d.Set("name", t.Name)
	d.Set("extra", apiutil.EmptyMap(t.Extra))
	d.Set("links", collection.SelfAndBookmark(rc.PublicURL, "deploy_templates", t.UUID))
	d.Set("steps", steps(t.Steps))
	return apiutil.Checked(d, fields, apiutil.KeepMaskingSteps(fields))
}

// modelSteps converts validated step documents.
func modelSteps(v any) []model.DeployTemplateStep {
	var out []model.DeployTemplateStep
	for _, st := range apiutil.StepDocs(v, "priority") {
		out = append(out, model.DeployTemplateStep{Interface: st.Interface, Step: st.Step, Args: st.Args, Priority: st.N})
	}
	return out
}

// storeErr maps the store's refusals to upstream's errors.
func storeErr(err error, t *model.DeployTemplate, what string) error {
	return apiutil.WriteErrors{
		DuplicateName: func() error {
			return errs.New(errs.ClassDeployTemplateDuplicateName, map[string]any{"name": t.Name})
		},
		Duplicate: func() error { return errs.New(errs.ClassDeployTemplateAlreadyExists, map[string]any{"uuid": t.UUID}) },
		Gone:      func() error { return templateNotFound(t.UUID) },
	}.Map(err, what+" deploy template "+t.UUID)
}

func (h *handlers) list(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	l := apiutil.Listing[*model.DeployTemplate]{
		ListSpec: apiutil.ListSpec{
			CheckMarker: func(marker *string) error {
				if marker != nil && !apiutil.IsValidLogicalName(*marker) {
					return errs.InvalidParameterValue(fmt.Sprintf("Expected name for marker: %s", *marker))
				}
				return nil
			},
			Schema:          indexQuery,
			DefaultFields:   defaultFields,
			InvalidSortKeys: invalidSortKeys,
		},
		Key: "deploy_templates", Resource: "deploy_templates",
		// The marker is checked as a name but looked up as a UUID, as
		// upstream does.
		What: "deploy template", Get: h.Store.GetDeployTemplateByUUID, NotFound: templateNotFound,
		List:     h.Store.ListDeployTemplates,
		MarkerOf: func(t *model.DeployTemplate) string { return t.UUID },
	}
	return respond.JSON(w, http.StatusOK)(l.Page(r, rc.Version, rc.Config.IntOf(config.APIMaxLimit), rc.PublicURL,
		func(t *model.DeployTemplate, fields []string) (*apiutil.Dict, error) { return convert(rc, t, fields) }))
}

func (h *handlers) show(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	q, err := apiutil.ParseQuery(r, "fields")
	if err != nil {
		return err
	}
	ident := rc.Param("deploy_template_id")
	if err := apiutil.UUIDOrName(templateIdentArg, ident); err != nil {
		return err
	}
	rawFields := q.Get("fields")
	fields := collection.StringList(rawFields)
	if err := showQuery.Validate(rc.KeywordArgs(apiutil.FieldsArgs(rawFields, fields))); err != nil {
		return err
	}
	if err := collection.CheckAllowedFields(fields, rc.Version); err != nil {
		return err
	}
	t, err := h.get(r, ident)
	if err != nil {
		return err
	}
	return respond.JSON(w, http.StatusOK)(convert(rc, t, fields))
}

func (h *handlers) create(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	body, err := apiutil.DecodeBody(r)
	if err != nil {
		return err
	}
	plain := apiutil.Plain(body)
	if err := templateSchema.ValidateBody("template", plain); err != nil {
		return err
	}
	m := plain.(map[string]any)
	if err := apiutil.ValidateStepDoc(templateSchema, "template", m); err != nil {
		return err
	}
	// description passes validation but deploy templates have no such
	// field: upstream drops it, and so do we.
	t := &model.DeployTemplate{Name: m["name"].(string), Steps: modelSteps(m["steps"])}
	if x, ok := m["extra"].(map[string]any); ok {
		t.Extra = x
	}
	t.UUID, _ = m["uuid"].(string)
	if t.UUID == "" {
		t.UUID = uuid.NewString()
	}
	payload := func(t *model.DeployTemplate) func(*notify.Notifier) notify.Object {
		return func(n *notify.Notifier) notify.Object { return n.DeployTemplateCRUDPayload(t) }
	}
	h.notify().Notify(r.Context(), "deploytemplate", "create", notify.StatusStart, payload(t))
	created, err := h.Store.CreateDeployTemplate(r.Context(), t)
	if err != nil {
		h.notify().NotifyOutcome(r.Context(), "deploytemplate", "create", err, payload(t))
	} else {
		h.notify().NotifyOutcome(r.Context(), "deploytemplate", "create", nil, payload(created))
	}
	if err != nil {
		return storeErr(err, t, "create")
	}
	rc.SetLocation(w, "deploy_templates", created.UUID)
	d, err := convert(rc, created, nil)
	if err == nil {
		apiutil.EchoStepNumbers(d, m, "priority")
	}
	return respond.JSON(w, http.StatusCreated)(d, err)
}

// asDict is the template's as_dict(), which a patch applies to.
func asDict(t *model.DeployTemplate) map[string]any {
	st := make([]any, 0, len(t.Steps))
	for _, s := range t.Steps {
		st = append(st, map[string]any{"interface": s.Interface, "step": s.Step, "args": apiutil.CopyJSON(apiutil.EmptyMap(s.Args)), "priority": s.Priority})
	}
	var extra any
	if t.Extra != nil {
		extra = apiutil.CopyJSON(t.Extra)
	}
	return map[string]any{
		"id": t.ID, "uuid": t.UUID, "name": t.Name, "steps": st, "extra": extra,
		"created_at": apiutil.ISOTime(t.CreatedAt), "updated_at": apiutil.OptISOTime(t.UpdatedAt),
	}
}

func (h *handlers) patch(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	ident := rc.Param("deploy_template_id")
	if err := apiutil.UUIDOrName(templateIdentArg, ident); err != nil {
		return err
	}
	ops, err := apiutil.DecodePatchBody(r)
	if err != nil {
		return err
	}
	if _, err := apiutil.ValidateAllowedFields(ops, patchAllowedFields, rc.Version); err != nil {
		return err
	}
	t, err := h.get(r, ident)
	if err != nil {
		return err
	}
	doc, err := apiutil.ApplyPatch(asDict(t), ops)
	if err != nil {
		return err
	}
	if err := apiutil.ValidatePatchedStepDoc(doc, templateSchema, stepSchema); err != nil {
		return err
	}
	var changed []string
	if doc["name"] != t.Name {
		t.Name = doc["name"].(string)
		changed = append(changed, "name")
	}
	if !apiutil.JSONEqual(doc["extra"], asDict(t)["extra"]) {
		t.Extra, _ = doc["extra"].(map[string]any)
		changed = append(changed, "extra")
	}
	if !apiutil.JSONEqual(doc["steps"], asDict(t)["steps"]) {
		t.Steps = modelSteps(doc["steps"])
		changed = append(changed, "steps")
	}
	before := t
	h.notify().Notify(r.Context(), "deploytemplate", "update", notify.StatusStart,
		func(n *notify.Notifier) notify.Object { return n.DeployTemplateCRUDPayload(before) })
	t, err = apiutil.SaveChanged(r.Context(), t, changed, h.Store.UpdateDeployTemplate,
		func(err error) error { return storeErr(err, t, "update") })
	h.notify().NotifyOutcome(r.Context(), "deploytemplate", "update", err,
		func(n *notify.Notifier) notify.Object { return n.DeployTemplateCRUDPayload(t) })
	if err != nil {
		return err
	}
	return respond.JSON(w, http.StatusOK)(convert(rc, t, nil))
}

func (h *handlers) delete(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	ident := rc.Param("deploy_template_id")
	if err := apiutil.UUIDOrName(templateIdentArg, ident); err != nil {
		return err
	}
	t, err := h.get(r, ident)
	if err != nil {
		return err
	}
	payload := func(n *notify.Notifier) notify.Object { return n.DeployTemplateCRUDPayload(t) }
	h.notify().Notify(r.Context(), "deploytemplate", "delete", notify.StatusStart, payload)
	err = h.Store.DeleteDeployTemplate(r.Context(), t.ID)
	h.notify().NotifyOutcome(r.Context(), "deploytemplate", "delete", err, payload)
	if err != nil {
		return storeErr(err, t, "delete")
	}
	api.WriteEmpty(w, http.StatusNoContent)
	return nil
}
