package node

import (
	"fmt"
	"net/http"
	"slices"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apiutil"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
)

const traitsUsage = "A single node trait may be added via PUT /v1/nodes/<node identifier>/traits/<trait> with no body, " +
	"or all node traits may be replaced via PUT /v1/nodes/<node identifier>/traits with the list of traits " +
	"specified in the request body."

// listTraits is NodeTraitsController.get_all.
func (h *handlers) listTraits(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	if _, err := apiutil.ParseQuery(r); err != nil {
		return err
	}
	n, err := h.node(r, rc, "baremetal:node:traits:list", rc.Param("node_ident"))
	if err != nil {
		return err
	}
	traits, err := h.Store.GetNodeTraits(r.Context(), n.ID)
	if err != nil {
		return fmt.Errorf("traits of node %s: %w", n.UUID, err)
	}
	names := make([]string, 0, len(traits))
	for _, t := range traits {
		names = append(names, t.Trait)
	}
	d := apiutil.NewDict()
	d.Set("traits", names)
	return api.WriteJSON(w, http.StatusOK, d)
}

// putTraits is NodeTraitsController.put: one trait from the path (no
// body), or every trait from the body.
func (h *handlers) putTraits(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	trait := rc.Param("trait")
	if trait != "" {
		if err := apiutil.MustSchema("trait").Validate("trait", trait); err != nil {
			return err
		}
	}
	var body any
	if rc.SurplusBody != nil {
		// PUT .../traits/T/B: pecan passed B as the body.
		body = *rc.SurplusBody
	} else {
		var err error
		if body, err = apiutil.DecodeBody(r); err != nil {
			return err
		}
	}
	if err := apiutil.MustSchema("node_traits").Validate("body", body); err != nil {
		return err
	}
	n, err := h.node(r, rc, "baremetal:node:traits:set", rc.Param("node_ident"))
	if err != nil {
		return err
	}
	var traits []string
	given := false
	if d, ok := body.(*apiutil.Dict); ok {
		if v, ok := d.Get("traits"); ok {
			given = true
			for _, t := range v.([]any) {
				traits = append(traits, t.(string))
			}
		}
	}
	if (trait != "" && given) || (trait == "" && !given) {
		return errs.NewMessage(errs.ClassInvalid, traitsUsage)
	}
	replace := true
	if trait != "" {
		// Upstream refuses a body only when its JSON is truthy, so null
		// and {} add the trait as no body does.
		if apiutil.Truthy(apiutil.Plain(body)) {
			return errs.NewMessage(errs.ClassInvalid, "No body should be provided when adding a trait")
		}
		traits, replace = []string{trait}, false
	}
	if traits == nil {
		traits = []string{}
	}
	topic, err := h.Topics.GetTopicFor(r.Context(), n)
	if err != nil {
		return err
	}
	if err := h.Conductor.AddNodeTraits(r.Context(), topic, n.UUID, traits, replace); err != nil {
		return err
	}
	if !replace {
		rc.SetLocation(w, "nodes", rc.Param("node_ident")+"/traits/"+trait)
	}
	api.WriteEmpty(w, http.StatusNoContent)
	return nil
}

// deleteTraits is NodeTraitsController.delete: one trait, or all.
func (h *handlers) deleteTraits(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	if _, err := apiutil.ParseQuery(r); err != nil {
		return err
	}
	n, err := h.node(r, rc, "baremetal:node:traits:delete", rc.Param("node_ident"))
	if err != nil {
		return err
	}
	// Upstream finds a missing trait in the conductor, so an unreachable
	// conductor answers first.
	topic, err := h.Topics.GetTopicFor(r.Context(), n)
	if err != nil {
		return err
	}
	var traits []string
	trait := rc.Param("trait")
	if trait != "" {
		traits = []string{trait}
		// The conductor names the node by its internal id; upstream's API
		// answers with the UUID instead, so the absence is found here.
		have, err := h.Store.GetNodeTraits(r.Context(), n.ID)
		if err != nil {
			return fmt.Errorf("traits of node %s: %w", n.UUID, err)
		}
		if !slices.ContainsFunc(have, func(t model.NodeTrait) bool { return t.Trait == trait }) {
			return errs.New(errs.ClassNodeTraitNotFound, map[string]any{"node_id": n.UUID, "trait": trait})
		}
	}
	if err := h.Conductor.RemoveNodeTraits(r.Context(), topic, n.UUID, traits); err != nil {
		if errs.Is(err, errs.ClassNodeTraitNotFound) {
			return errs.New(errs.ClassNodeTraitNotFound, map[string]any{"node_id": n.UUID, "trait": trait})
		}
		return err
	}
	api.WriteEmpty(w, http.StatusNoContent)
	return nil
}
