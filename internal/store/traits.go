package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/openkeel/ironic/internal/model"
)

// MaxTraitsPerNode is upstream's MAX_TRAITS_PER_NODE (Placement's limit).
const MaxTraitsPerNode = 50

// labelTable describes node_traits, node_tags or runbook_traits, which
// share a shape: a parent row's set of strings.
type labelTable struct {
	table, col, kind string
	max              int
	// parent is the owning table, fk the column naming its row and
	// parentKind its Kind.
	parent, fk, parentKind string
	// nodeField is the node's API field the table holds ("traits"): a
	// change of it is a node update on the change stream. Empty for
	// tables the API shows no node field of.
	nodeField string
}

var (
	traitsTable = labelTable{table: "node_traits", col: "trait", kind: KindNodeTrait, max: MaxTraitsPerNode,
		parent: "nodes", fk: "node_id", parentKind: KindNode, nodeField: "traits"}
	tagsTable = labelTable{table: "node_tags", col: "tag", kind: KindNodeTag,
		parent: "nodes", fk: "node_id", parentKind: KindNode}
	runbookTraitsTable = labelTable{table: "runbook_traits", col: "trait", kind: KindRunbookTrait,
		parent: "runbooks", fk: "runbook_id", parentKind: KindRunbook}
)

type labelRow struct {
	ParentID  int64
	Value     string
	Version   string
	CreatedAt time.Time
	UpdatedAt *time.Time
}

func (t labelTable) fields(r *labelRow) []field {
	return rowFields(nil, nil, &r.CreatedAt, &r.UpdatedAt, &r.Version, []field{
		{name: t.fk, ptr: &r.ParentID},
		{name: t.col, ptr: &r.Value},
	})
}

// rowExists is nil when table has a row of that id, else a NotFoundError
// of kind.
func rowExists(ctx context.Context, q querier, table, kind string, id int64) error {
	var one int
	err := q.QueryRowContext(ctx, "SELECT 1 FROM "+table+" WHERE id = ?", id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return &NotFoundError{Kind: kind, Ident: strconv.FormatInt(id, 10)}
	}
	return err
}

func nodeExists(ctx context.Context, q querier, nodeID int64) error {
	return rowExists(ctx, q, "nodes", KindNode, nodeID)
}

func (t labelTable) parentExists(ctx context.Context, q querier, id int64) error {
	return rowExists(ctx, q, t.parent, t.parentKind, id)
}

// notFound is the error for a value missing from the parent's set.
func (t labelTable) notFound(parentID int64, value string) error {
	e := &NotFoundError{Kind: t.kind, Ident: value}
	if t.parent == "nodes" {
		e.Node = strconv.FormatInt(parentID, 10)
	} else {
		e.Runbook = strconv.FormatInt(parentID, 10)
	}
	return e
}

func (t labelTable) tooMany(parentID int64, n int) error {
	if t.max > 0 && n > t.max {
		return &InvalidParameterError{Msg: fmt.Sprintf("Could not modify traits for node %d as it would exceed the maximum number of traits per node (%d vs. %d)", parentID, n, t.max)}
	}
	return nil
}

// labelTx runs fn in a write transaction; for a table holding a node
// field, the transaction records the node's update on the change stream
// when fn reports that it changed something.
func (s *sqlStore) labelTx(ctx context.Context, t labelTable, parentID int64, fn func(*sql.Tx) (changed bool, err error)) error {
	if t.nodeField == "" {
		return s.db.InTx(ctx, func(tx *sql.Tx) error {
			_, err := fn(tx)
			return err
		})
	}
	return s.changeTx(ctx, func(tx *sql.Tx) error {
		changed, err := fn(tx)
		if err != nil || !changed {
			return err
		}
		return s.recordNode(ctx, tx, parentID, ChangeUpdated, []string{t.nodeField})
	})
}

func (s *sqlStore) setLabels(ctx context.Context, t labelTable, parentID int64, values []string, version string) ([]labelRow, error) {
	var rows []labelRow
	err := s.labelTx(ctx, t, parentID, func(tx *sql.Tx) (bool, error) {
		var err error
		rows, err = s.replaceLabels(ctx, tx, t, parentID, values, version)
		return true, err
	})
	if err != nil {
		return nil, wrapUnlessTyped(err, "set "+t.table+" of "+t.parentKind+" "+strconv.FormatInt(parentID, 10))
	}
	return rows, nil
}

// replaceLabels is setLabels inside the caller's transaction.
func (s *sqlStore) replaceLabels(ctx context.Context, tx *sql.Tx, t labelTable, parentID int64, values []string, version string) ([]labelRow, error) {
	uniq := slices.Clone(values)
	slices.Sort(uniq)
	uniq = slices.Compact(uniq)
	if err := t.tooMany(parentID, len(uniq)); err != nil {
		return nil, err
	}
	if err := t.parentExists(ctx, tx, parentID); err != nil {
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, "DELETE FROM "+t.table+" WHERE "+t.fk+" = ?", parentID); err != nil {
		return nil, err
	}
	now := s.clock()
	rows := make([]labelRow, len(uniq))
	for i, v := range uniq {
		rows[i] = labelRow{ParentID: parentID, Value: v, Version: version, CreatedAt: now}
		if _, err := s.insert(ctx, tx, t.table, t.fields(&rows[i])); err != nil {
			return nil, err
		}
	}
	return rows, nil
}

func (s *sqlStore) unsetLabels(ctx context.Context, t labelTable, parentID int64) error {
	err := s.labelTx(ctx, t, parentID, func(tx *sql.Tx) (bool, error) {
		if err := t.parentExists(ctx, tx, parentID); err != nil {
			return false, err
		}
		res, err := tx.ExecContext(ctx, "DELETE FROM "+t.table+" WHERE "+t.fk+" = ?", parentID)
		if err != nil {
			return false, err
		}
		n, err := res.RowsAffected()
		return n > 0, err
	})
	return wrapUnlessTyped(err, "unset "+t.table+" of node "+strconv.FormatInt(parentID, 10))
}

func (s *sqlStore) getLabels(ctx context.Context, t labelTable, parentID int64) ([]labelRow, error) {
	var rows []*labelRow
	err := s.db.InReadTx(ctx, func(tx *sql.Tx) error {
		if err := t.parentExists(ctx, tx, parentID); err != nil {
			return err
		}
		var err error
		rows, err = queryAll(ctx, tx, t.fields, "SELECT "+columnList(t.fields(&labelRow{}))+" FROM "+t.table+" WHERE "+t.fk+" = ? ORDER BY "+t.col, parentID)
		return err
	})
	if err != nil {
		return nil, wrapUnlessTyped(err, "get "+t.table+" of node "+strconv.FormatInt(parentID, 10))
	}
	out := make([]labelRow, len(rows))
	for i, r := range rows {
		out[i] = *r
	}
	return out, nil
}

// addLabel inserts one value; a value already present is kept (with its
// original timestamps), as upstream ignores the duplicate.
func (s *sqlStore) addLabel(ctx context.Context, t labelTable, parentID int64, value, version string) (*labelRow, error) {
	row := labelRow{ParentID: parentID, Value: value, Version: version, CreatedAt: s.clock()}
	err := s.labelTx(ctx, t, parentID, func(tx *sql.Tx) (bool, error) {
		if err := t.parentExists(ctx, tx, parentID); err != nil {
			return false, err
		}
		var one int
		err := tx.QueryRowContext(ctx, "SELECT 1 FROM "+t.table+" WHERE "+t.fk+" = ? AND "+t.col+" = ?", parentID, value).Scan(&one)
		if err == nil {
			return false, nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return false, err
		}
		if t.max > 0 {
			var n int
			if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+t.table+" WHERE "+t.fk+" = ?", parentID).Scan(&n); err != nil {
				return false, err
			}
			if err := t.tooMany(parentID, n+1); err != nil {
				return false, err
			}
		}
		_, err = s.insert(ctx, tx, t.table, t.fields(&row))
		return err == nil, err
	})
	if err != nil {
		return nil, wrapUnlessTyped(err, "add "+t.col+" to node "+strconv.FormatInt(parentID, 10))
	}
	return &row, nil
}

func (s *sqlStore) deleteLabel(ctx context.Context, t labelTable, parentID int64, value string) error {
	err := s.labelTx(ctx, t, parentID, func(tx *sql.Tx) (bool, error) {
		if err := t.parentExists(ctx, tx, parentID); err != nil {
			return false, err
		}
		err := execOne(ctx, tx, t.notFound(parentID, value), "DELETE FROM "+t.table+" WHERE "+t.fk+" = ? AND "+t.col+" = ?", parentID, value)
		return err == nil, err
	})
	return wrapUnlessTyped(err, "delete "+t.col+" of node "+strconv.FormatInt(parentID, 10))
}

func (s *sqlStore) labelExists(ctx context.Context, t labelTable, parentID int64, value string) (bool, error) {
	found := false
	err := s.db.InReadTx(ctx, func(tx *sql.Tx) error {
		if err := t.parentExists(ctx, tx, parentID); err != nil {
			return err
		}
		var one int
		err := tx.QueryRowContext(ctx, "SELECT 1 FROM "+t.table+" WHERE "+t.fk+" = ? AND "+t.col+" = ?", parentID, value).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			found = false
			return nil
		}
		found = err == nil
		return err
	})
	return found, wrapUnlessTyped(err, "check "+t.col+" of node "+strconv.FormatInt(parentID, 10))
}

func toTrait(r labelRow) model.NodeTrait {
	return model.NodeTrait{NodeID: r.ParentID, Trait: r.Value, Version: r.Version, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
}

func toTag(r labelRow) model.NodeTag {
	return model.NodeTag{NodeID: r.ParentID, Tag: r.Value, Version: r.Version, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
}

func mapRows[T any](rows []labelRow, err error, conv func(labelRow) T) ([]T, error) {
	if err != nil {
		return nil, err
	}
	out := make([]T, len(rows))
	for i, r := range rows {
		out[i] = conv(r)
	}
	return out, nil
}

// SetNodeTraits replaces the node's traits (duplicates collapse); more than
// MaxTraitsPerNode is an InvalidParameterError.
func (s *sqlStore) SetNodeTraits(ctx context.Context, nodeID int64, traits []string, version string) ([]model.NodeTrait, error) {
	rows, err := s.setLabels(ctx, traitsTable, nodeID, traits, version)
	return mapRows(rows, err, toTrait)
}

// UnsetNodeTraits removes all of the node's traits.
func (s *sqlStore) UnsetNodeTraits(ctx context.Context, nodeID int64) error {
	return s.unsetLabels(ctx, traitsTable, nodeID)
}

// GetNodeTraits lists the node's traits, sorted.
func (s *sqlStore) GetNodeTraits(ctx context.Context, nodeID int64) ([]model.NodeTrait, error) {
	rows, err := s.getLabels(ctx, traitsTable, nodeID)
	return mapRows(rows, err, toTrait)
}

// AddNodeTrait adds one trait; adding one already present is not an error.
func (s *sqlStore) AddNodeTrait(ctx context.Context, nodeID int64, trait, version string) (*model.NodeTrait, error) {
	r, err := s.addLabel(ctx, traitsTable, nodeID, trait, version)
	if err != nil {
		return nil, err
	}
	t := toTrait(*r)
	return &t, nil
}

// DeleteNodeTrait removes one trait; a missing one is a NotFoundError of
// KindNodeTrait (upstream NodeTraitNotFound).
func (s *sqlStore) DeleteNodeTrait(ctx context.Context, nodeID int64, trait string) error {
	return s.deleteLabel(ctx, traitsTable, nodeID, trait)
}

// NodeTraitExists reports whether the node has the trait.
func (s *sqlStore) NodeTraitExists(ctx context.Context, nodeID int64, trait string) (bool, error) {
	return s.labelExists(ctx, traitsTable, nodeID, trait)
}

// SetNodeTags replaces the node's tags (duplicates collapse).
func (s *sqlStore) SetNodeTags(ctx context.Context, nodeID int64, tags []string) ([]model.NodeTag, error) {
	rows, err := s.setLabels(ctx, tagsTable, nodeID, tags, "")
	return mapRows(rows, err, toTag)
}

// UnsetNodeTags removes all of the node's tags.
func (s *sqlStore) UnsetNodeTags(ctx context.Context, nodeID int64) error {
	return s.unsetLabels(ctx, tagsTable, nodeID)
}

// GetNodeTags lists the node's tags, sorted.
func (s *sqlStore) GetNodeTags(ctx context.Context, nodeID int64) ([]model.NodeTag, error) {
	rows, err := s.getLabels(ctx, tagsTable, nodeID)
	return mapRows(rows, err, toTag)
}

// AddNodeTag adds one tag; adding one already present is not an error.
func (s *sqlStore) AddNodeTag(ctx context.Context, nodeID int64, tag string) (*model.NodeTag, error) {
	r, err := s.addLabel(ctx, tagsTable, nodeID, tag, "")
	if err != nil {
		return nil, err
	}
	t := toTag(*r)
	return &t, nil
}

// DeleteNodeTag removes one tag; a missing one is a NotFoundError of
// KindNodeTag (upstream NodeTagNotFound).
func (s *sqlStore) DeleteNodeTag(ctx context.Context, nodeID int64, tag string) error {
	return s.deleteLabel(ctx, tagsTable, nodeID, tag)
}

// NodeTagExists reports whether the node has the tag.
func (s *sqlStore) NodeTagExists(ctx context.Context, nodeID int64, tag string) (bool, error) {
	return s.labelExists(ctx, tagsTable, nodeID, tag)
}
