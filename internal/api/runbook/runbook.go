// Package runbook serves /v1/runbooks (1.92+) and their traits (1.112+)
// as upstream's ironic/api/controllers/v1/runbook.py: runbooks are
// written by the API itself, with ordered steps whose arguments are
// masked on output, an owner or public visibility, and (from 1.112) a
// free name, a description and traits.
package runbook

import (
	"context"
	"net/http"
	"slices"
	"strings"

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

// Deps is what the runbook handlers need.
type Deps struct {
	Store store.Store
	// Authorize checks a per-runbook rule ("baremetal:runbook:get",
	// ":update", ":update:owner", ":update:public", ":delete") against
	// the runbook once it is known; nil refuses every rule. The owner
	// rules of creation for project-scoped callers are Scope's.
	Authorize func(r *http.Request, rule string, rb *model.Runbook) error
	// Scope is the caller's project and whether it is system scoped; nil
	// refuses creations, whose owner rules depend on it.
	Scope func(r *http.Request) (project string, system bool)
}

type handlers struct {
	Deps
}

// Register adds the runbook handlers to m.
func Register(m map[string]api.HandlerFunc, d Deps) {
	if d.Authorize == nil {
		d.Authorize = apiutil.RefuseAll[*model.Runbook]
	}
	h := &handlers{Deps: d}
	m["GET /v1/runbooks"] = h.list
	m["GET /v1/runbooks/{runbook_id}"] = h.show
	m["POST /v1/runbooks"] = h.create
	m["PATCH /v1/runbooks/{runbook_id}"] = h.patch
	m["DELETE /v1/runbooks/{runbook_id}"] = h.delete
	m["GET /v1/runbooks/{runbook_id}/traits"] = h.listTraits
	m["PUT /v1/runbooks/{runbook_id}/traits"] = h.putTraits
	m["PUT /v1/runbooks/{runbook_id}/traits/{trait}"] = h.putTraits
	m["DELETE /v1/runbooks/{runbook_id}/traits"] = h.deleteTraits
	m["DELETE /v1/runbooks/{runbook_id}/traits/{trait}"] = h.deleteTraits
}

var (
	runbookSchema  = apiutil.MustSchema("runbook")
	mutationSchema = apiutil.MustSchema("runbook_mutation_v112")
	stepSchema     = apiutil.MustSchema("runbook_step")
	traitSchema    = apiutil.MustSchema("trait")
	traitsBody     = apiutil.MustSchema("runbook_traits")
)

var (
	defaultFields   = []string{"uuid", "name"}
	invalidSortKeys = []string{"extra", "steps", "traits"}
	patchAllowed    = []string{"disable_ramdisk", "extra", "name", "owner", "public", "steps"}
)

const identArg = "runbook_ident"

func traitsAllowed(v microversion.Version) bool { return v.AtLeast(microversion.Minor112RunbookTraits) }

func (h *handlers) authorize(r *http.Request, rule string, rb *model.Runbook) error {
	return h.Authorize(r, rule, rb)
}

// get is check_runbook_policy_and_retrieve for each of rules.
func (h *handlers) get(r *http.Request, ident string, rules ...string) (*model.Runbook, error) {
	rb, err := apiutil.ByUUIDOrName(r.Context(), ident, h.Store.GetRunbookByUUID, h.Store.GetRunbookByName, runbookNotFound, "runbook")
	if err != nil {
		return nil, err
	}
	for _, rule := range rules {
		if err := h.authorize(r, rule, rb); err != nil {
			return nil, err
		}
	}
	return rb, nil
}

func runbookNotFound(ident string) error {
	return errs.New(errs.ClassRunbookNotFound, map[string]any{"runbook": ident})
}

func traitNames(rb *model.Runbook) []string {
	out := make([]string, 0, len(rb.Traits))
	for _, t := range rb.Traits {
		out = append(out, t.Trait)
	}
	return out
}

// convert is convert_with_links followed by runbook_sanitize.
func convert(rc *api.RequestContext, rb *model.Runbook, fields []string) (*apiutil.Dict, error) {
	v := rc.Version
	d := apiutil.RecordDict(rb.UUID, rb.CreatedAt, rb.UpdatedAt)
	d.Set("name", rb.Name)
	d.Set("extra", apiutil.EmptyMap(rb.Extra))
	d.Set("public", rb.Public)
	d.Set("owner", apiutil.OptString(rb.Owner))
	d.Set("disable_ramdisk", rb.DisableRamdisk)
	if traitsAllowed(v) {
		d.Set("description", apiutil.OptString(rb.Description))
	}
	d.Set("links", collection.SelfAndBookmark(rc.PublicURL, "runbooks", rb.UUID))
	steps := make([]*apiutil.Dict, 0, len(rb.Steps))
	for _, s := range rb.Steps {
		sd := apiutil.NewDict()
		sd.Set("interface", s.Interface)
		sd.Set("step", s.Step)
		sd.Set("args", apiutil.EmptyMap(s.Args))
		sd.Set("order", s.Order)
		steps = append(steps, sd)
	}
	d.Set("steps", steps)
	if traitsAllowed(v) {
		d.Set("traits", traitNames(rb))
	}
	return apiutil.Checked(d, fields, apiutil.KeepMaskingSteps(fields))
}

func modelSteps(v any) []model.RunbookStep {
	var out []model.RunbookStep
	for _, st := range apiutil.StepDocs(v, "order") {
		out = append(out, model.RunbookStep{Interface: st.Interface, Step: st.Step, Args: st.Args, Order: st.N})
	}
	return out
}

func storeErr(err error, rb *model.Runbook, what string) error {
	return apiutil.WriteErrors{
		DuplicateName: func() error { return errs.New(errs.ClassRunbookDuplicateName, map[string]any{"name": rb.Name}) },
		Duplicate:     func() error { return errs.New(errs.ClassRunbookAlreadyExists, map[string]any{"uuid": rb.UUID}) },
		Gone:          func() error { return runbookNotFound(rb.UUID) },
	}.Map(err, what+" runbook "+rb.UUID)
}

func (h *handlers) list(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	l := apiutil.Listing[*model.Runbook]{
		ListSpec: apiutil.ListSpec{
			Extra: []string{"project"},
			CheckMarker: func(marker *string) error {
				if marker != nil && !apiutil.IsValidLogicalName(*marker) {
					return errs.InvalidParameterValue("Expected name for marker: " + *marker)
				}
				return nil
			},
			Check: func(q apiutil.Query, _ []string, _ microversion.Version) error {
				_, err := collection.Boolean("project", q.Get("project"))
				return err
			},
			DefaultFields:   defaultFields,
			InvalidSortKeys: invalidSortKeys,
		},
		Key: "runbooks", Resource: "runbooks",
		What: "runbook", Get: h.Store.GetRunbookByUUID, NotFound: runbookNotFound,
		List: func(ctx context.Context, opts store.ListOptions) ([]*model.Runbook, error) {
			return h.Store.ListRunbooks(ctx, store.RunbookFilter{}, opts)
		},
		MarkerOf: func(rb *model.Runbook) string { return rb.UUID },
	}
	return respond.JSON(w, http.StatusOK)(l.Page(r, rc.Version, rc.Config.IntOf(config.APIMaxLimit), rc.PublicURL,
		func(rb *model.Runbook, fields []string) (*apiutil.Dict, error) { return convert(rc, rb, fields) }))
}

func (h *handlers) show(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	q, err := apiutil.ParseQuery(r, "fields")
	if err != nil {
		return err
	}
	ident := rc.Param("runbook_id")
	if err := apiutil.UUIDOrName(identArg, ident); err != nil {
		return err
	}
	fields := collection.StringList(q.Get("fields"))
	rb, err := h.get(r, ident, "baremetal:runbook:get")
	if err != nil {
		return err
	}
	if err := collection.CheckAllowedFields(fields, rc.Version); err != nil {
		return err
	}
	return respond.JSON(w, http.StatusOK)(convert(rc, rb, fields))
}

func (h *handlers) create(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	body, err := apiutil.DecodeBody(r)
	if err != nil {
		return err
	}
	plain := apiutil.Plain(body)
	schema := runbookSchema
	if traitsAllowed(rc.Version) {
		schema = mutationSchema
	}
	if err := schema.ValidateBody("runbook", plain); err != nil {
		return err
	}
	m := plain.(map[string]any)
	if err := apiutil.ValidateStepDoc(schema, "runbook", m); err != nil {
		return err
	}
	if err := h.checkCreateOwner(r, m); err != nil {
		return err
	}
	rb := &model.Runbook{Name: m["name"].(string), Steps: modelSteps(m["steps"])}
	rb.UUID, _ = m["uuid"].(string)
	if rb.UUID == "" {
		rb.UUID = newUUID()
	}
	if x, ok := m["extra"].(map[string]any); ok {
		rb.Extra = x
	}
	if b, ok := m["public"].(bool); ok {
		rb.Public = b
	}
	if b, ok := m["disable_ramdisk"].(bool); ok {
		rb.DisableRamdisk = b
	}
	if s, ok := m["owner"].(string); ok {
		rb.Owner = &s
	}
	if s, ok := m["description"].(string); ok {
		rb.Description = &s
	}
	created, err := h.Store.CreateRunbook(r.Context(), rb)
	if err != nil {
		return storeErr(err, rb, "create")
	}
	rc.SetLocation(w, "runbooks", created.UUID)
	d, err := convert(rc, created, nil)
	if err == nil {
		apiutil.EchoStepNumbers(d, m, "order")
	}
	return respond.JSON(w, http.StatusCreated)(d, err)
}

// checkCreateOwner holds a project scoped creator to runbooks of its own
// project, never public ones, and makes its project the owner.
func (h *handlers) checkCreateOwner(r *http.Request, m map[string]any) error {
	if h.Scope == nil {
		return apiutil.PolicyRefused("baremetal:runbook:create")
	}
	project, system := h.Scope(r)
	if system {
		return nil
	}
	if owner, _ := m["owner"].(string); owner != "" && owner != project {
		return errs.NewMessage(errs.ClassInvalid, "Cannot create a runbook as a project scoped admin with an owner other than your own project.")
	}
	if public, _ := m["public"].(bool); project != "" && public {
		return errs.NewMessage(errs.ClassInvalid, "Cannot create a public runbook as a project scoped admin.")
	}
	delete(m, "owner")
	if project != "" {
		m["owner"] = project
	}
	return nil
}

// asDict is the runbook's as_dict(), which a patch applies to.
func asDict(rb *model.Runbook) map[string]any {
	st := make([]any, 0, len(rb.Steps))
	for _, s := range rb.Steps {
		st = append(st, map[string]any{"interface": s.Interface, "step": s.Step, "args": apiutil.CopyJSON(apiutil.EmptyMap(s.Args)), "order": s.Order})
	}
	var extra any
	if rb.Extra != nil {
		extra = apiutil.CopyJSON(rb.Extra)
	}
	tr := make([]any, 0, len(rb.Traits))
	for _, t := range traitNames(rb) {
		tr = append(tr, t)
	}
	return map[string]any{
		"id": rb.ID, "uuid": rb.UUID, "name": rb.Name, "steps": st, "extra": extra,
		"public": rb.Public, "owner": apiutil.OptString(rb.Owner), "disable_ramdisk": rb.DisableRamdisk,
		"description": apiutil.OptString(rb.Description), "traits": tr,
		"created_at": apiutil.ISOTime(rb.CreatedAt), "updated_at": apiutil.OptISOTime(rb.UpdatedAt),
	}
}

// patchRules are the policies a patch needs: the owner and public rules
// for those paths, the generic update rule for anything else.
func patchRules(ops []apiutil.PatchOp) []string {
	var rules []string
	generic := false
	for _, op := range ops {
		switch {
		case strings.HasPrefix(op.Path, "/owner"):
			rules = append(rules, "baremetal:runbook:update:owner")
		case strings.HasPrefix(op.Path, "/public"):
			rules = append(rules, "baremetal:runbook:update:public")
		default:
			generic = true
		}
	}
	if generic || len(rules) == 0 {
		rules = append(rules, "baremetal:runbook:update")
	}
	return rules
}

func (h *handlers) patch(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	ident := rc.Param("runbook_id")
	if err := apiutil.UUIDOrName(identArg, ident); err != nil {
		return err
	}
	ops, err := apiutil.DecodePatchBody(r)
	if err != nil {
		return err
	}
	allowed := patchAllowed
	if traitsAllowed(rc.Version) {
		allowed = append(slices.Clone(patchAllowed), "description")
	}
	if _, err := apiutil.ValidateAllowedFields(ops, allowed, rc.Version); err != nil {
		return err
	}
	rb, err := h.get(r, ident, patchRules(ops)...)
	if err != nil {
		return err
	}
	doc := asDict(rb)
	owner := apiutil.PatchValues(ops, "/owner")
	public := apiutil.PatchValues(ops, "/public")
	if len(owner) > 0 {
		publicValue := len(public) > 0 && apiutil.Truthy(public[0])
		if (rb.Public && len(public) == 0) || publicValue {
			return apiutil.PatchRefused(ops, "There cannot be an owner for a public runbook")
		}
	}
	if len(public) > 0 {
		doc["owner"] = nil
	}
	doc, err = apiutil.ApplyPatch(doc, ops)
	if err != nil {
		return err
	}
	// Upstream validates a patched runbook with the 1.112 schema at
	// every version.
	if err := apiutil.ValidatePatchedStepDoc(doc, mutationSchema, stepSchema); err != nil {
		return err
	}
	before := asDict(rb)
	var changed []string
	for _, f := range []string{"name", "extra", "public", "owner", "disable_ramdisk", "description", "steps"} {
		if apiutil.JSONEqual(doc[f], before[f]) {
			continue
		}
		changed = append(changed, f)
		switch f {
		case "name":
			rb.Name = doc[f].(string)
		case "extra":
			rb.Extra, _ = doc[f].(map[string]any)
		case "public":
			rb.Public, _ = doc[f].(bool)
		case "disable_ramdisk":
			rb.DisableRamdisk, _ = doc[f].(bool)
		case "owner":
			rb.Owner = apiutil.StringOf(doc[f])
		case "description":
			rb.Description = apiutil.StringOf(doc[f])
		case "steps":
			rb.Steps = modelSteps(doc[f])
		}
	}
	rb, err = apiutil.SaveChanged(r.Context(), rb, changed, h.Store.UpdateRunbook,
		func(err error) error { return storeErr(err, rb, "update") })
	if err != nil {
		return err
	}
	return respond.JSON(w, http.StatusOK)(convert(rc, rb, nil))
}

func (h *handlers) delete(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	ident := rc.Param("runbook_id")
	if err := apiutil.UUIDOrName(identArg, ident); err != nil {
		return err
	}
	rb, err := h.get(r, ident, "baremetal:runbook:delete")
	if err != nil {
		return err
	}
	if err := h.Store.DeleteRunbook(r.Context(), rb.ID); err != nil {
		return storeErr(err, rb, "delete")
	}
	api.WriteEmpty(w, http.StatusNoContent)
	return nil
}
