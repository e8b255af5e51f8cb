package store

import (
	"context"
	"database/sql"
	"fmt"
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

// NodeReadBatch is the most nodes ReadNodes reads at once: its queries
// are prepared once for exactly that many ids, a shorter batch repeating
// its last id, so that no read parses SQL.
const NodeReadBatch = 16

var (
	nodesByIDQuery  = nodeSelect + " WHERE id IN " + placeholders(NodeReadBatch) + " ORDER BY id"
	traitsOfBatch   = labelQuery("node_traits", "trait", NodeReadBatch)
	tagsOfBatch     = labelQuery("node_tags", "tag", NodeReadBatch)
	nodeBatchCached = []string{nodesByIDQuery, traitsOfBatch, tagsOfBatch}
)

func placeholders(n int) string {
	return "(" + strings.TrimSuffix(strings.Repeat("?, ", n), ", ") + ")"
}

// ReadNodes returns the nodes with these ids (at most NodeReadBatch),
// traits and tags loaded, read in one read transaction, in id order;
// ids no longer present are left out. Periodic tasks read the nodes they
// work on a batch at a time with it, instead of one read each.
func (s *sqlStore) ReadNodes(ctx context.Context, ids []int64) ([]*model.Node, error) {
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
	cached := s.db.Cached()
	if err := cached.Prepare(ctx, nodeBatchCached...); err != nil {
		return nil, fmt.Errorf("read nodes: %w", err)
	}
	var ns []*model.Node
	err := s.db.InReadTx(ctx, func(tx *sql.Tx) error {
		q := cached.InTx(tx)
		var err error
		if ns, err = queryAll(ctx, q, nodeFields, nodesByIDQuery, args...); err != nil {
			return err
		}
		if err := s.openNodes(ns); err != nil {
			return err
		}
		return s.loadLabelsOfBatch(ctx, q, ns, args)
	})
	if err != nil {
		return nil, wrapUnlessTyped(err, "read nodes")
	}
	return ns, nil
}

// loadLabelsOfBatch is loadTraitsAndTags with ReadNodes' padded ids.
func (s *sqlStore) loadLabelsOfBatch(ctx context.Context, q querier, ns []*model.Node, args []any) error {
	byID := make(map[int64]*model.Node, len(ns))
	for _, n := range ns {
		n.Traits, n.Tags = []string{}, []string{}
		byID[n.ID] = n
	}
	for _, query := range []string{traitsOfBatch, tagsOfBatch} {
		rows, err := q.QueryContext(ctx, query, args...)
		if err != nil {
			return fmt.Errorf("load node labels: %w", err)
		}
		for rows.Next() {
			var id int64
			var v string
			if err := rows.Scan(&id, &v); err != nil {
				rows.Close()
				return fmt.Errorf("load node labels: %w", err)
			}
			n, ok := byID[id]
			switch {
			case !ok:
			case query == traitsOfBatch:
				n.Traits = append(n.Traits, v)
			default:
				n.Tags = append(n.Tags, v)
			}
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return fmt.Errorf("load node labels: %w", err)
		}
	}
	return nil
}
