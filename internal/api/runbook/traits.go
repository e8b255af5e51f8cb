package runbook

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/google/uuid"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apiutil"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/store"
)

func newUUID() string { return uuid.NewString() }

// exclusiveTraits is upstream's answer to PUT with both or neither of a
// trait and a trait list.
const exclusiveTraits = "A single runbook trait may be added via PUT /v1/runbooks/<runbook identifier>/traits/<trait> with no body, or all runbook traits may be replaced via PUT /v1/runbooks/<runbook identifier>/traits with the list of traits specified in the request body."

func (h *handlers) listTraits(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	rb, err := h.get(r, rc.Param("runbook_id"), "baremetal:runbook:get")
	if err != nil {
		return err
	}
	out := apiutil.NewDict()
	out.Set("traits", traitNames(rb))
	return api.WriteJSON(w, http.StatusOK, out)
}

func (h *handlers) putTraits(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	ident, trait := rc.Param("runbook_id"), rc.Param("trait")
	var body any
	if r.ContentLength != 0 {
		b, err := apiutil.DecodeBody(r)
		if err != nil {
			return err
		}
		body = apiutil.Plain(b)
	}
	if trait != "" {
		if err := traitSchema.Validate("trait", trait); err != nil {
			return err
		}
	}
	if err := traitsBody.Validate("body", body); err != nil {
		return err
	}
	rb, err := h.get(r, ident, "baremetal:runbook:update")
	if err != nil {
		return err
	}
	var traits []string
	hasList := false
	if m, ok := body.(map[string]any); ok {
		if l, ok := m["traits"].([]any); ok {
			hasList = true
			for _, t := range l {
				traits = append(traits, t.(string))
			}
		}
	}
	if (trait != "") == hasList {
		return errs.NewMessage(errs.ClassInvalid, exclusiveTraits)
	}
	ctx := r.Context()
	if trait != "" {
		if apiutil.Truthy(body) {
			return errs.NewMessage(errs.ClassInvalid, "No body should be provided when adding a trait")
		}
		if _, err := h.Store.AddRunbookTrait(ctx, rb.ID, trait, ""); err != nil {
			return traitErr(err, rb.UUID)
		}
		rc.SetLocation(w, "runbooks", ident+"/traits/"+trait)
	} else if _, err := h.Store.SetRunbookTraits(ctx, rb.ID, traits, ""); err != nil {
		return traitErr(err, rb.UUID)
	}
	api.WriteEmpty(w, http.StatusNoContent)
	return nil
}

func traitErr(err error, runbook string) error {
	if errors.Is(err, store.ErrNotFound) {
		return errs.New(errs.ClassRunbookNotFound, map[string]any{"runbook": runbook})
	}
	return fmt.Errorf("runbook %s traits: %w", runbook, err)
}

func (h *handlers) deleteTraits(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	rb, err := h.get(r, rc.Param("runbook_id"), "baremetal:runbook:update")
	if err != nil {
		return err
	}
	ctx := r.Context()
	if trait := rc.Param("trait"); trait != "" {
		// A trait the runbook does not have is no error, as upstream.
		if err := h.Store.DeleteRunbookTrait(ctx, rb.ID, trait); err != nil {
			var nf *store.NotFoundError
			if !errors.As(err, &nf) || nf.Runbook == "" {
				return traitErr(err, rb.UUID)
			}
		}
	} else if err := h.Store.UnsetRunbookTraits(ctx, rb.ID); err != nil {
		return traitErr(err, rb.UUID)
	}
	api.WriteEmpty(w, http.StatusNoContent)
	return nil
}
