package allocation

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/openkeel/ironic/internal/api/apiutil"
	"github.com/openkeel/ironic/internal/model"
)

// asDict is the allocation's as_dict(), the document a JSON patch
// applies to (the object fields; node is not one of them).
func asDict(a *model.Allocation) (map[string]any, error) {
	doc := map[string]any{
		"id": a.ID, "uuid": a.UUID, "name": apiutil.OptString(a.Name), "state": a.State,
		"owner": apiutil.OptString(a.Owner), "last_error": apiutil.OptString(a.LastError),
		"resource_class": apiutil.OptString(a.ResourceClass), "traits": apiutil.EmptyList(a.Traits),
		"candidate_nodes": apiutil.EmptyList(a.CandidateNodes), "extra": apiutil.EmptyMap(a.Extra),
		"created_at": apiutil.ISOTime(a.CreatedAt), "updated_at": apiutil.OptISOTime(a.UpdatedAt),
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("allocation %s as a document: %w", a.UUID, err)
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("allocation %s as a document: %w", a.UUID, err)
	}
	return out, nil
}

func contains(list []string, s string) bool { return slices.Contains(list, s) }
