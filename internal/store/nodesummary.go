package store

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/openkeel/ironic/internal/model"
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

// NodeReadBatch is the most nodes ReadNodesForPowerSync reads at once:
// its query is prepared once for exactly that many ids, a shorter batch
// repeating its last id, so that no read parses SQL.
const NodeReadBatch = 16

// powerSyncSkipped are the node columns the power sync never reads under
// its shared lock: user data, the steps of a running flow, RAID and
// network configuration. Neither the sync nor the power and management
// interfaces' status reads it calls (power state, boot mode, secure boot,
// vendor, health) look at them, and anything the sync writes is written
// under the exclusive lock, whose reserve-and-read loads the node whole.
// Leaving them out saves decoding seven JSON documents per node
// (issue 29: the decoding was a quarter of a pass).
var powerSyncSkipped = map[string]bool{
	"extra": true, "clean_step": true, "deploy_step": true, "service_step": true,
	"raid_config": true, "target_raid_config": true, "network_data": true, "description": true,
}

func powerSyncFields(n *model.Node) []field {
	return slices.DeleteFunc(nodeFields(n), func(f field) bool { return powerSyncSkipped[f.name] })
}

var nodesForPowerSyncQuery = "SELECT " + columnList(powerSyncFields(&model.Node{})) + " FROM nodes WHERE id IN " +
	placeholders(NodeReadBatch) + " ORDER BY id"

func placeholders(n int) string {
	return "(" + strings.TrimSuffix(strings.Repeat("?, ", n), ", ") + ")"
}

// ReadNodesForPowerSync returns the nodes with these ids (at most
// NodeReadBatch) in id order, ids no longer present left out, with every
// column but powerSyncSkipped's and without traits and tags: the nodes
// the power sync takes its shared locks on, read a batch at a time
// instead of one read each.
func (s *sqlStore) ReadNodesForPowerSync(ctx context.Context, ids []int64) ([]*model.Node, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	if len(ids) > NodeReadBatch {
		return nil, &InvalidParameterError{Msg: fmt.Sprintf("cannot read %d nodes at once, at most %d", len(ids), NodeReadBatch)}
	}
	args := make([]any, NodeReadBatch)
	for i := range args {
		args[i] = ids[min(i, len(ids)-1)]
	}
	// One statement, through the prepared statement cache: its rows are
	// one moment without a read transaction.
	ns, err := queryAll(ctx, s.db.Cached(), powerSyncFields, nodesForPowerSyncQuery, args...)
	if err != nil {
		return nil, wrapUnlessTyped(err, "read nodes for the power sync")
	}
	if err := s.openNodes(ns); err != nil {
		return nil, err
	}
	return ns, nil
}
