package store

import (
	"context"
	"fmt"
)

// NodeSummary is the part of a node that periodic tasks filter on: what
// the hash ring maps (UUID, Driver, ConductorGroup) and what decides
// whether a node needs work. Reading it costs a few columns per node and
// decodes no JSON column; the task then loads the full node, under its
// lock, only for the nodes that need work (upstream's iter_nodes reads a
// handful of columns the same way).
type NodeSummary struct {
	ID                int64
	UUID              string
	Driver            string
	ConductorGroup    string
	ProvisionState    string
	TargetPowerState  string
	Maintenance       bool
	Reservation       *string
	Fault             *string
	ConductorAffinity *int64
}

func summaryFields(n *NodeSummary) []field {
	return []field{
		{name: "id", ptr: &n.ID},
		{name: "uuid", ptr: &n.UUID},
		{name: "driver", ptr: &n.Driver},
		{name: "conductor_group", ptr: &n.ConductorGroup},
		{name: "provision_state", ptr: &n.ProvisionState},
		{name: "target_power_state", ptr: &n.TargetPowerState},
		{name: "maintenance", ptr: &n.Maintenance},
		{name: "reservation", ptr: &n.Reservation},
		{name: "fault", ptr: &n.Fault},
		{name: "conductor_affinity", ptr: &n.ConductorAffinity},
	}
}

var summarySelect = "SELECT " + columnList(summaryFields(&NodeSummary{})) + " FROM nodes"

// ListNodeSummaries returns one page of the nodes matching f (ordered and
// limited as ListNodes) as summaries.
func (s *sqlStore) ListNodeSummaries(ctx context.Context, f NodeFilter, o ListOptions) ([]NodeSummary, error) {
	w, err := s.nodeWhere(ctx, f)
	if err != nil {
		return nil, err
	}
	tail, err := s.paginate(ctx, s.db, "nodes", "", nodeColumnNames, "uuid", w, o)
	if err != nil {
		return nil, wrapUnlessTyped(err, "list node summaries")
	}
	rows, err := s.db.QueryContext(ctx, summarySelect+w.sql()+tail, w.args...)
	if err != nil {
		return nil, fmt.Errorf("list node summaries: %w", err)
	}
	defer rows.Close()
	// One set of scanners fills cur, which each row is copied from: the
	// pointer fields are fresh per row, so the copies share nothing.
	var cur NodeSummary
	dst := scanners(summaryFields(&cur))
	var out []NodeSummary
	if o.Limit > 0 {
		out = make([]NodeSummary, 0, o.Limit)
	}
	for rows.Next() {
		if err := rows.Scan(dst...); err != nil {
			return nil, fmt.Errorf("list node summaries: %w", err)
		}
		out = append(out, cur)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list node summaries: %w", err)
	}
	return out, nil
}
