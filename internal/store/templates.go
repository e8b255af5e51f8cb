package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/secrets"
)

// stepTable describes deploy_template_steps or runbook_steps: ordered
// steps belonging to a parent row through fk.
type stepTable[S any] struct {
	table, fk string
	// parent is the parent's table; secrets is where the steps' secret
	// arguments are, as their additional data names it with the parent's
	// UUID.
	parent, secrets string
	fields          func(*S) []field
	parentOf        func(*S) *int64
	args            func(*S) *map[string]any
	// key identifies a step for upstream's update matching: interface,
	// step, arguments and priority (or order).
	key func(*S) (string, error)
}

func stepKey(iface, step string, args map[string]any, rank int) (string, error) {
	// encoding/json sorts map keys, as upstream's json.dumps(sort_keys=True).
	a, err := json.Marshal(args)
	if err != nil {
		return "", fmt.Errorf("encode step arguments: %w", err)
	}
	return fmt.Sprintf("%q %q %s %d", iface, step, a, rank), nil
}

var (
	deployStepTable = stepTable[model.DeployTemplateStep]{table: "deploy_template_steps", fk: "deploy_template_id",
		parent: "deploy_templates", secrets: secrets.DeployTemplateStepArgs,
		args: func(st *model.DeployTemplateStep) *map[string]any { return &st.Args },
		fields: func(st *model.DeployTemplateStep) []field {
			return rowFields(&st.ID, nil, &st.CreatedAt, &st.UpdatedAt, &st.Version, []field{
				{name: "deploy_template_id", ptr: &st.DeployTemplateID},
				{name: "interface", ptr: &st.Interface},
				{name: "step", ptr: &st.Step},
				{name: "args", ptr: &st.Args},
				{name: "priority", ptr: &st.Priority},
			})
		},
		parentOf: func(st *model.DeployTemplateStep) *int64 { return &st.DeployTemplateID },
		key: func(st *model.DeployTemplateStep) (string, error) {
			return stepKey(st.Interface, st.Step, st.Args, st.Priority)
		}}
	runbookStepTable = stepTable[model.RunbookStep]{table: "runbook_steps", fk: "runbook_id",
		parent: "runbooks", secrets: secrets.RunbookStepArgs,
		args: func(st *model.RunbookStep) *map[string]any { return &st.Args },
		fields: func(st *model.RunbookStep) []field {
			return rowFields(&st.ID, nil, &st.CreatedAt, &st.UpdatedAt, &st.Version, []field{
				{name: "runbook_id", ptr: &st.RunbookID},
				{name: "interface", ptr: &st.Interface},
				{name: "step", ptr: &st.Step},
				{name: "args", ptr: &st.Args},
				{name: "order", ptr: &st.Order},
			})
		},
		parentOf: func(st *model.RunbookStep) *int64 { return &st.RunbookID },
		key: func(st *model.RunbookStep) (string, error) {
			return stepKey(st.Interface, st.Step, st.Args, st.Order)
		}}
)

// sync makes the parent's steps equal to steps as upstream's
// _update_*_steps: steps matching an existing one (same key) are kept with
// their id and timestamps, the others created, and leftovers deleted.
// Steps are matched on their plain arguments (the stored ones opened) and
// created with their secret arguments sealed under the parent's UUID
// (parentUUID; read when empty and needed).
func (t stepTable[S]) sync(ctx context.Context, s *sqlStore, tx *sql.Tx, parentID int64, parentUUID string, steps []S) error {
	var zero S
	current, err := queryAll(ctx, tx, t.fields, "SELECT "+columnList(t.fields(&zero))+" FROM "+t.table+" WHERE "+quote(t.fk)+" = ? ORDER BY id", parentID)
	if err != nil {
		return fmt.Errorf("read %s: %w", t.table, err)
	}
	if parentUUID == "" && (s.ring != nil || len(current) > 0) {
		if err := tx.QueryRowContext(ctx, "SELECT uuid FROM "+t.parent+" WHERE id = ?", parentID).Scan(&parentUUID); err != nil {
			return fmt.Errorf("read %s %d: %w", t.parent, parentID, err)
		}
	}
	for _, c := range current {
		if err := t.open(s.ring, parentUUID, c); err != nil {
			return errs.Unavailable(err)
		}
	}
	unmatched := map[string][]int64{}
	for _, c := range current {
		k, err := t.key(c)
		if err != nil {
			return err
		}
		unmatched[k] = append(unmatched[k], idOf(t.fields(c)))
	}
	now := s.clock()
	for _, st := range steps {
		k, err := t.key(&st)
		if err != nil {
			return err
		}
		if ids := unmatched[k]; len(ids) > 0 {
			unmatched[k] = ids[1:]
			continue
		}
		*t.parentOf(&st) = parentID
		if s.ring != nil {
			p := t.args(&st)
			if *p, err = s.ring.Seal(parentUUID, t.secrets, *p); err != nil {
				return fmt.Errorf("%s of %s: %w", t.table, parentUUID, err)
			}
		}
		fs := t.fields(&st)
		stampNew(fs, now)
		if _, err := s.insert(ctx, tx, t.table, fs); err != nil {
			return fmt.Errorf("insert %s: %w", t.table, err)
		}
	}
	var stale []int64
	for _, ids := range unmatched {
		stale = append(stale, ids...)
	}
	if len(stale) > 0 {
		marks, args := inList(stale)
		if _, err := tx.ExecContext(ctx, "DELETE FROM "+t.table+" WHERE id IN "+marks, args...); err != nil {
			return fmt.Errorf("delete %s: %w", t.table, err)
		}
	}
	return nil
}

// load returns the steps of the given parents by parent id, in id order.
func (t stepTable[S]) load(ctx context.Context, q querier, parentIDs []int64) (map[int64][]S, error) {
	var zero S
	marks, args := inList(parentIDs)
	rows, err := queryAll(ctx, q, t.fields, "SELECT "+columnList(t.fields(&zero))+" FROM "+t.table+" WHERE "+quote(t.fk)+" IN "+marks+" ORDER BY id", args...)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", t.table, err)
	}
	out := map[int64][]S{}
	for _, r := range rows {
		p := *t.parentOf(r)
		out[p] = append(out[p], *r)
	}
	return out, nil
}

// open opens in place the sealed secret arguments of a step of the
// parent whose UUID is parentUUID.
func (t stepTable[S]) open(ring *secrets.KeyRing, parentUUID string, st *S) error {
	p := t.args(st)
	opened, err := secrets.Open(ring, parentUUID, t.secrets, *p)
	if err != nil {
		return err
	}
	*p = opened
	return nil
}

// openSteps is a parent resource's open: its steps' arguments opened.
func openSteps[S any](t stepTable[S], steps []S, parentUUID string, ring *secrets.KeyRing) error {
	for i := range steps {
		if err := t.open(ring, parentUUID, &steps[i]); err != nil {
			return err
		}
	}
	return nil
}

func idOf(fs []field) int64 {
	for _, f := range fs {
		if f.name == "id" {
			return *(f.ptr.(*int64))
		}
	}
	return 0
}

func deployTemplateFields(d *model.DeployTemplate) []field {
	return rowFields(&d.ID, &d.UUID, &d.CreatedAt, &d.UpdatedAt, &d.Version, []field{
		{name: "name", ptr: &d.Name},
		{name: "extra", ptr: &d.Extra},
	})
}

func runbookFields(r *model.Runbook) []field {
	return rowFields(&r.ID, &r.UUID, &r.CreatedAt, &r.UpdatedAt, &r.Version, []field{
		{name: "name", ptr: &r.Name},
		{name: "description", ptr: &r.Description},
		{name: "public", ptr: &r.Public},
		{name: "owner", ptr: &r.Owner},
		{name: "disable_ramdisk", ptr: &r.DisableRamdisk},
		{name: "extra", ptr: &r.Extra},
	})
}

func nameOrUUID(name, u string) func(string) string {
	return func(col string) string {
		if col == "name" {
			return name
		}
		return u
	}
}

var (
	deployTemplateResource = resource[model.DeployTemplate]{table: "deploy_templates", kind: KindDeployTemplate,
		fields:   deployTemplateFields,
		dupValue: func(d *model.DeployTemplate, col string) string { return nameOrUUID(d.Name, d.UUID)(col) },
		load: func(ctx context.Context, q querier, ds []*model.DeployTemplate) error {
			steps, err := deployStepTable.load(ctx, q, idsOf(ds, func(d *model.DeployTemplate) int64 { return d.ID }))
			for _, d := range ds {
				d.Steps = nonNil(steps[d.ID])
			}
			return err
		},
		children: []string{"steps"},
		saveChildren: func(ctx context.Context, s *sqlStore, tx *sql.Tx, d *model.DeployTemplate, id int64, _ []string) error {
			return deployStepTable.sync(ctx, s, tx, id, d.UUID, d.Steps)
		},
		open: func(ring *secrets.KeyRing, d *model.DeployTemplate) error {
			return openSteps(deployStepTable, d.Steps, d.UUID, ring)
		}}
	runbookResource = resource[model.Runbook]{table: "runbooks", kind: KindRunbook,
		fields:   runbookFields,
		dupValue: func(r *model.Runbook, col string) string { return nameOrUUID(r.Name, r.UUID)(col) },
		load:     loadRunbookChildren,
		open: func(ring *secrets.KeyRing, r *model.Runbook) error {
			return openSteps(runbookStepTable, r.Steps, r.UUID, ring)
		},
		children: []string{"steps", "traits"},
		saveChildren: func(ctx context.Context, s *sqlStore, tx *sql.Tx, r *model.Runbook, id int64, which []string) error {
			if slices.Contains(which, "steps") {
				if err := runbookStepTable.sync(ctx, s, tx, id, r.UUID, r.Steps); err != nil {
					return err
				}
			}
			if slices.Contains(which, "traits") {
				traits := make([]string, len(r.Traits))
				for i, t := range r.Traits {
					traits[i] = t.Trait
				}
				_, err := s.replaceLabels(ctx, tx, runbookTraitsTable, id, traits, r.Version)
				return err
			}
			return nil
		}}
)

func idsOf[T any](rows []*T, id func(*T) int64) []int64 {
	out := make([]int64, len(rows))
	for i, r := range rows {
		out[i] = id(r)
	}
	return out
}

func nonNil[S any](v []S) []S {
	if v == nil {
		return []S{}
	}
	return v
}

func loadRunbookChildren(ctx context.Context, q querier, rs []*model.Runbook) error {
	ids := idsOf(rs, func(r *model.Runbook) int64 { return r.ID })
	steps, err := runbookStepTable.load(ctx, q, ids)
	if err != nil {
		return err
	}
	marks, args := inList(ids)
	t := runbookTraitsTable
	traits, err := queryAll(ctx, q, t.fields, "SELECT "+columnList(t.fields(&labelRow{}))+" FROM "+t.table+" WHERE "+t.fk+" IN "+marks+" ORDER BY "+t.col, args...)
	if err != nil {
		return fmt.Errorf("load runbook traits: %w", err)
	}
	byID := map[int64]*model.Runbook{}
	for _, r := range rs {
		r.Steps = nonNil(steps[r.ID])
		r.Traits = []model.RunbookTrait{}
		byID[r.ID] = r
	}
	for _, tr := range traits {
		byID[tr.ParentID].Traits = append(byID[tr.ParentID].Traits, toRunbookTrait(*tr))
	}
	return nil
}

// CreateDeployTemplate inserts a deploy template with its steps; a taken
// name is a DuplicateError on "name" (DeployTemplateDuplicateName).
func (s *sqlStore) CreateDeployTemplate(ctx context.Context, d *model.DeployTemplate) (*model.DeployTemplate, error) {
	return create(ctx, s, deployTemplateResource, d, func(*model.DeployTemplate) {})
}

// GetDeployTemplateByID returns the template with its steps.
func (s *sqlStore) GetDeployTemplateByID(ctx context.Context, id int64) (*model.DeployTemplate, error) {
	return getOne(ctx, s, deployTemplateResource, "id", id, strconv.FormatInt(id, 10))
}

// GetDeployTemplateByUUID returns the template with that UUID.
func (s *sqlStore) GetDeployTemplateByUUID(ctx context.Context, u string) (*model.DeployTemplate, error) {
	return getOne(ctx, s, deployTemplateResource, "uuid", u, u)
}

// GetDeployTemplateByName returns the template with that name.
func (s *sqlStore) GetDeployTemplateByName(ctx context.Context, name string) (*model.DeployTemplate, error) {
	return getOne(ctx, s, deployTemplateResource, "name", name, name)
}

// ListDeployTemplates returns one page of templates with their steps.
func (s *sqlStore) ListDeployTemplates(ctx context.Context, o ListOptions) ([]*model.DeployTemplate, error) {
	return list(ctx, s, deployTemplateResource, &where{}, o)
}

// GetDeployTemplatesByNames returns the templates whose names are among
// names (the traits of an instance), in id order; unknown names are
// skipped.
func (s *sqlStore) GetDeployTemplatesByNames(ctx context.Context, names []string) ([]*model.DeployTemplate, error) {
	w := &where{}
	w.in("name", names)
	return list(ctx, s, deployTemplateResource, w, ListOptions{})
}

// UpdateDeployTemplate writes the named fields of d (all when none are
// named); naming "steps" makes the template's steps equal to d.Steps.
func (s *sqlStore) UpdateDeployTemplate(ctx context.Context, d *model.DeployTemplate, fields ...string) (*model.DeployTemplate, error) {
	return update(ctx, s, deployTemplateResource, d, d.ID, fields)
}

// DeleteDeployTemplate removes the template and its steps.
func (s *sqlStore) DeleteDeployTemplate(ctx context.Context, id int64) error {
	return s.deleteByID(ctx, "deploy_templates", KindDeployTemplate, id, "", childTable{"deploy_template_steps", "deploy_template_id"})
}

// CreateRunbook inserts a runbook with its steps and traits (duplicates
// collapse); a taken name is a DuplicateError on "name".
func (s *sqlStore) CreateRunbook(ctx context.Context, r *model.Runbook) (*model.Runbook, error) {
	return create(ctx, s, runbookResource, r, func(*model.Runbook) {})
}

// GetRunbookByID returns the runbook with its steps and traits.
func (s *sqlStore) GetRunbookByID(ctx context.Context, id int64) (*model.Runbook, error) {
	return getOne(ctx, s, runbookResource, "id", id, strconv.FormatInt(id, 10))
}

// GetRunbookByUUID returns the runbook with that UUID.
func (s *sqlStore) GetRunbookByUUID(ctx context.Context, u string) (*model.Runbook, error) {
	return getOne(ctx, s, runbookResource, "uuid", u, u)
}

// GetRunbookByName returns the runbook with that name.
func (s *sqlStore) GetRunbookByName(ctx context.Context, name string) (*model.Runbook, error) {
	return getOne(ctx, s, runbookResource, "name", name, name)
}

// RunbookFilter selects runbooks as upstream's get_runbook_list filters;
// nil fields do not filter, a non-nil empty slice matches nothing.
type RunbookFilter struct {
	Public         *bool
	Owner          *string
	DisableRamdisk *bool
	UUIDIn         []string
	NameIn         []string
	// Project: runbooks owned by this project or public.
	Project *string
}

// ListRunbooks returns one page of runbooks matching f.
func (s *sqlStore) ListRunbooks(ctx context.Context, f RunbookFilter, o ListOptions) ([]*model.Runbook, error) {
	w := &where{}
	if f.Public != nil {
		w.add("public = ?", *f.Public)
	}
	if f.Owner != nil {
		w.add("owner = ?", *f.Owner)
	}
	if f.DisableRamdisk != nil {
		w.add("disable_ramdisk = ?", *f.DisableRamdisk)
	}
	if f.UUIDIn != nil {
		w.in("uuid", f.UUIDIn)
	}
	if f.NameIn != nil {
		w.in("name", f.NameIn)
	}
	if f.Project != nil {
		w.add("(owner = ? OR public = ?)", *f.Project, true)
	}
	return list(ctx, s, runbookResource, w, o)
}

// GetRunbooksByNames returns the runbooks whose names are among names.
func (s *sqlStore) GetRunbooksByNames(ctx context.Context, names []string) ([]*model.Runbook, error) {
	return s.ListRunbooks(ctx, RunbookFilter{NameIn: names}, ListOptions{})
}

// UpdateRunbook writes the named fields of r (all when none are named);
// naming "steps" makes the steps equal to r.Steps, naming "traits"
// replaces the traits with r.Traits.
func (s *sqlStore) UpdateRunbook(ctx context.Context, r *model.Runbook, fields ...string) (*model.Runbook, error) {
	return update(ctx, s, runbookResource, r, r.ID, fields)
}

// DeleteRunbook removes the runbook, its steps and its traits.
func (s *sqlStore) DeleteRunbook(ctx context.Context, id int64) error {
	return s.deleteByID(ctx, "runbooks", KindRunbook, id, "",
		childTable{"runbook_steps", "runbook_id"}, childTable{"runbook_traits", "runbook_id"})
}

func toRunbookTrait(r labelRow) model.RunbookTrait {
	return model.RunbookTrait{RunbookID: r.ParentID, Trait: r.Value, Version: r.Version, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
}

// SetRunbookTraits replaces the runbook's traits (duplicates collapse).
func (s *sqlStore) SetRunbookTraits(ctx context.Context, runbookID int64, traits []string, version string) ([]model.RunbookTrait, error) {
	rows, err := s.setLabels(ctx, runbookTraitsTable, runbookID, traits, version)
	return mapRows(rows, err, toRunbookTrait)
}

// UnsetRunbookTraits removes all of the runbook's traits.
func (s *sqlStore) UnsetRunbookTraits(ctx context.Context, runbookID int64) error {
	return s.unsetLabels(ctx, runbookTraitsTable, runbookID)
}

// GetRunbookTraits lists the runbook's traits, sorted.
func (s *sqlStore) GetRunbookTraits(ctx context.Context, runbookID int64) ([]model.RunbookTrait, error) {
	rows, err := s.getLabels(ctx, runbookTraitsTable, runbookID)
	return mapRows(rows, err, toRunbookTrait)
}

// AddRunbookTrait adds one trait; one already present is not an error.
func (s *sqlStore) AddRunbookTrait(ctx context.Context, runbookID int64, trait, version string) (*model.RunbookTrait, error) {
	r, err := s.addLabel(ctx, runbookTraitsTable, runbookID, trait, version)
	if err != nil {
		return nil, err
	}
	t := toRunbookTrait(*r)
	return &t, nil
}

// DeleteRunbookTrait removes one trait; a missing one is a NotFoundError
// of KindRunbookTrait (RunbookTraitNotFound).
func (s *sqlStore) DeleteRunbookTrait(ctx context.Context, runbookID int64, trait string) error {
	return s.deleteLabel(ctx, runbookTraitsTable, runbookID, trait)
}

// RunbookTraitExists reports whether the runbook has the trait.
func (s *sqlStore) RunbookTraitExists(ctx context.Context, runbookID int64, trait string) (bool, error) {
	return s.labelExists(ctx, runbookTraitsTable, runbookID, trait)
}
