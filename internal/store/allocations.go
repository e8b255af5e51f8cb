package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
)

func allocationFields(a *model.Allocation) []field {
	return rowFields(&a.ID, &a.UUID, &a.CreatedAt, &a.UpdatedAt, &a.Version, []field{
		{name: "name", ptr: &a.Name},
		{name: "node_id", ptr: &a.NodeID},
		{name: "state", ptr: &a.State},
		{name: "owner", ptr: &a.Owner},
		{name: "last_error", ptr: &a.LastError},
		{name: "resource_class", ptr: &a.ResourceClass},
		{name: "traits", ptr: &a.Traits},
		{name: "candidate_nodes", ptr: &a.CandidateNodes},
		{name: "extra", ptr: &a.Extra},
		{name: "conductor_affinity", ptr: &a.ConductorAffinity},
	})
}

var allocationResource = resource[model.Allocation]{table: "allocations", kind: KindAllocation, fields: allocationFields,
	dupValue: func(a *model.Allocation, col string) string {
		if col == "name" {
			return model.Deref(a.Name)
		}
		return a.UUID
	}}

// CreateAllocation inserts an allocation, in state allocating unless
// given; a taken name is a DuplicateError on "name"
// (AllocationDuplicateName), a taken UUID one on "uuid".
func (s *sqlStore) CreateAllocation(ctx context.Context, a *model.Allocation) (*model.Allocation, error) {
	return create(ctx, s, allocationResource, a, func(a *model.Allocation) {
		if a.State == "" {
			a.State = states.Allocating
		}
	})
}

// GetAllocationByID returns the allocation with that primary key.
func (s *sqlStore) GetAllocationByID(ctx context.Context, id int64) (*model.Allocation, error) {
	return getOne(ctx, s, allocationResource, "id", id, strconv.FormatInt(id, 10))
}

// GetAllocationByUUID returns the allocation with that UUID.
func (s *sqlStore) GetAllocationByUUID(ctx context.Context, u string) (*model.Allocation, error) {
	return getOne(ctx, s, allocationResource, "uuid", u, u)
}

// GetAllocationByName returns the allocation with that name.
func (s *sqlStore) GetAllocationByName(ctx context.Context, name string) (*model.Allocation, error) {
	return getOne(ctx, s, allocationResource, "name", name, name)
}

// AllocationFilter selects allocations as upstream's get_allocation_list
// filters do; nil fields do not filter.
type AllocationFilter struct {
	State         *string
	ResourceClass *string
	Owner         *string
	NodeID        *int64
	// NodeUUID: allocations of the node with this UUID.
	NodeUUID *string
	// ConductorAffinity: allocations handled by the conductor of this id.
	ConductorAffinity *int64
	// ConductorHostname: allocations handled by the conductor of this name.
	ConductorHostname *string
}

// ListAllocations returns one page of allocations matching f.
func (s *sqlStore) ListAllocations(ctx context.Context, f AllocationFilter, o ListOptions) ([]*model.Allocation, error) {
	w := &where{}
	for _, c := range []struct {
		col string
		v   *string
	}{{"state", f.State}, {"resource_class", f.ResourceClass}, {"owner", f.Owner}} {
		if c.v != nil {
			w.add(c.col+" = ?", *c.v)
		}
	}
	if f.NodeID != nil {
		w.add("node_id = ?", *f.NodeID)
	}
	if f.NodeUUID != nil {
		w.add("node_id IN (SELECT id FROM nodes WHERE uuid = ?)", *f.NodeUUID)
	}
	if f.ConductorAffinity != nil {
		w.add("conductor_affinity = ?", *f.ConductorAffinity)
	}
	if f.ConductorHostname != nil {
		w.add("conductor_affinity IN (SELECT id FROM conductors WHERE hostname = ?)", *f.ConductorHostname)
	}
	return list(ctx, s, allocationResource, w, o)
}

// UpdateAllocation writes the named columns of a (all when none are
// named). When node_id is written and not empty, the node is bound to the
// allocation in the same transaction, as upstream's update_allocation:
// its allocation_id and instance_uuid (the allocation's UUID) are set and
// instance_info.traits becomes the allocation's traits. A node running
// another instance is a NodeAssociatedError; an instance_uuid already used
// by another node a DuplicateError on "instance_uuid" (InstanceAssociated).
// A missing node is a NotFoundError of KindNode (upstream reports the
// allocation as not found then).
func (s *sqlStore) UpdateAllocation(ctx context.Context, a *model.Allocation, fields ...string) (*model.Allocation, error) {
	bind := a.NodeID != nil && *a.NodeID != 0 && (len(fields) == 0 || slices.Contains(fields, "node_id"))
	var also func(tx *sql.Tx) error
	if bind {
		also = func(tx *sql.Tx) error { return s.bindAllocationNode(ctx, tx, a.ID, *a.NodeID) }
	}
	return updateWith(ctx, s, allocationResource, a, a.ID, fields, also)
}

func (s *sqlStore) bindAllocationNode(ctx context.Context, tx *sql.Tx, allocationID, nodeID int64) error {
	allocs, err := query(ctx, tx, allocationResource, " WHERE id = ?", allocationID)
	if err != nil {
		return err
	}
	if len(allocs) == 0 {
		return &NotFoundError{Kind: KindAllocation, Ident: strconv.FormatInt(allocationID, 10)}
	}
	alloc := allocs[0]
	nodes, err := queryAll(ctx, tx, nodeFields, nodeSelect+" WHERE id = ?"+forUpdate(s.db), nodeID)
	if err != nil {
		return err
	}
	if len(nodes) == 0 {
		return &NotFoundError{Kind: KindNode, Ident: strconv.FormatInt(nodeID, 10)}
	}
	if err := s.openNodes(nodes); err != nil {
		return err
	}
	n := nodes[0]
	if inst := model.Deref(n.InstanceUUID); inst != "" && inst != alloc.UUID {
		return &NodeAssociatedError{Node: n.UUID, Instance: inst}
	}
	info := make(map[string]any, len(n.InstanceInfo)+1)
	for k, v := range n.InstanceInfo {
		info[k] = v
	}
	traits := alloc.Traits
	if traits == nil {
		traits = []string{}
	}
	info["traits"] = traits
	n.InstanceInfo = info
	n.AllocationID = &alloc.ID
	n.InstanceUUID = &alloc.UUID
	names := []string{"allocation_id", "instance_uuid", "instance_info"}
	fs, err := s.sealedFields(n, names)
	if err != nil {
		return err
	}
	set, args, err := s.updateSet(fs, names, s.clock())
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, "UPDATE nodes SET "+set+" WHERE id = ?", append(args, nodeID)...); err != nil {
		if d := duplicate(err, KindNode, func(string) string { return alloc.UUID }); d != nil {
			d.Node = n.UUID
			return d
		}
		return err
	}
	return nil
}

// DeleteAllocation removes the allocation and, as upstream's
// destroy_allocation, clears allocation_id and instance_uuid of the node
// it held.
func (s *sqlStore) DeleteAllocation(ctx context.Context, id int64) error {
	ident := strconv.FormatInt(id, 10)
	err := s.changeTx(ctx, func(tx *sql.Tx) error {
		var one int
		err := tx.QueryRowContext(ctx, "SELECT 1 FROM allocations WHERE id = ?"+forUpdate(s.db), id).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return &NotFoundError{Kind: KindAllocation, Ident: ident}
		}
		if err != nil {
			return err
		}
		subject, _, err := rowSubject(ctx, tx, "allocations", id)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "UPDATE nodes SET allocation_id = NULL, instance_uuid = NULL, updated_at = ? WHERE allocation_id = ?",
			s.db.Time(s.clock()), id); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM allocations WHERE id = ?", id); err != nil {
			return err
		}
		return s.recordChange(ctx, tx, subject, ChangeDeleted, nil)
	})
	return wrapUnlessTyped(err, "delete allocation "+ident)
}

// TakeOverAllocation moves the allocation to conductor newConductorID only
// if oldConductorID still handles it, as upstream's take_over_allocation;
// false means another conductor won the race.
func (s *sqlStore) TakeOverAllocation(ctx context.Context, id, oldConductorID, newConductorID int64) (bool, error) {
	ident := strconv.FormatInt(id, 10)
	taken := false
	err := s.db.InTx(ctx, func(tx *sql.Tx) error {
		var cur sql.NullInt64
		err := tx.QueryRowContext(ctx, "SELECT conductor_affinity FROM allocations WHERE id = ?"+forUpdate(s.db), id).Scan(&cur)
		if errors.Is(err, sql.ErrNoRows) {
			return &NotFoundError{Kind: KindAllocation, Ident: ident}
		}
		if err != nil || !cur.Valid || cur.Int64 != oldConductorID {
			return err
		}
		_, err = tx.ExecContext(ctx, "UPDATE allocations SET conductor_affinity = ?, updated_at = ? WHERE id = ?",
			newConductorID, s.db.Time(s.clock()), id)
		taken = err == nil
		return err
	})
	return taken, wrapUnlessTyped(err, "take over allocation "+ident)
}

// TakeOverAllocations moves every allocation still being allocated by
// conductor fromConductorID (gone offline) to toConductorID, which then
// resumes them, and returns them as updated. It is upstream's
// _check_orphan_allocations pass done in one transaction with the rows
// locked, so of two conductors taking over at once each allocation goes
// to exactly one.
func (s *sqlStore) TakeOverAllocations(ctx context.Context, fromConductorID, toConductorID int64) ([]*model.Allocation, error) {
	var ids []int64
	err := s.db.InTx(ctx, func(tx *sql.Tx) error {
		rows, err := queryAll(ctx, tx, func(id *int64) []field { return []field{{name: "id", ptr: id}} },
			"SELECT id FROM allocations WHERE conductor_affinity = ? AND state = ? ORDER BY id"+forUpdate(s.db), fromConductorID, states.Allocating)
		if err != nil || len(rows) == 0 {
			return err
		}
		ids = derefAll(rows)
		marks, args := inList(ids)
		_, err = tx.ExecContext(ctx, "UPDATE allocations SET conductor_affinity = ?, updated_at = ? WHERE id IN "+marks,
			append([]any{toConductorID, s.db.Time(s.clock())}, args...)...)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("take over allocations of conductor %d: %w", fromConductorID, err)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	marks, args := inList(ids)
	out, err := query(ctx, s.db, allocationResource, " WHERE id IN "+marks+" ORDER BY id", args...)
	if err != nil {
		return nil, fmt.Errorf("read allocations taken over: %w", err)
	}
	return out, nil
}
