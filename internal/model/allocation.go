package model

import "time"

// Allocation is a row of the allocations table: a request to pick a node
// matching a resource class and traits.
type Allocation struct {
	ID        int64      `json:"id"`
	UUID      string     `json:"uuid"`
	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt *time.Time `json:"updated_at"`
	Version   string     `json:"version,omitempty"`

	// Name is an optional unique name.
	Name *string `json:"name"`
	// NodeID references the node picked (no foreign key upstream).
	NodeID *int64 `json:"node_id"`
	// State is allocating, active or error.
	State string `json:"state"`
	// Owner is the project owning the allocation.
	Owner *string `json:"owner"`
	// LastError says why the allocation failed.
	LastError *string `json:"last_error"`
	// ResourceClass is the resource class a node must have.
	ResourceClass *string `json:"resource_class"`
	// Traits are the traits a node must have.
	Traits []string `json:"traits"`
	// CandidateNodes restricts the choice to these node UUIDs.
	CandidateNodes []string `json:"candidate_nodes"`
	// Extra is free-form user metadata.
	Extra map[string]any `json:"extra"`
	// ConductorAffinity is the id of the conductor processing it.
	ConductorAffinity *int64 `json:"conductor_affinity"`
}
