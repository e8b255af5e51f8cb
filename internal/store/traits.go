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

// labelTable describes node_traits or node_tags, which share a shape.
type labelTable struct {
	table, col, kind string
	max              int
}

var (
	traitsTable = labelTable{table: "node_traits", col: "trait", kind: KindNodeTrait, max: MaxTraitsPerNode}
	tagsTable   = labelTable{table: "node_tags", col: "tag", kind: KindNodeTag}
)

type labelRow struct {
	NodeID    int64
	Value     string
	Version   string
	CreatedAt time.Time
	UpdatedAt *time.Time
}

func (t labelTable) fields(r *labelRow) []field {
	return []field{
		{name: "node_id", ptr: &r.NodeID},
		{name: t.col, ptr: &r.Value},
		{name: "version", ptr: &r.Version, emptyNull: true},
		{name: "created_at", ptr: &r.CreatedAt},
		{name: "updated_at", ptr: &r.UpdatedAt},
	}
}

func nodeExists(ctx context.Context, q querier, nodeID int64) error {
	var one int
	err := q.QueryRowContext(ctx, "SELECT 1 FROM nodes WHERE id = ?", nodeID).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return &NotFoundError{Kind: KindNode, Ident: strconv.FormatInt(nodeID, 10)}
	}
	return err
}

func (t labelTable) tooMany(nodeID int64, n int) error {
	if t.max > 0 && n > t.max {
		return &InvalidParameterError{Msg: fmt.Sprintf("Could not modify traits for node %d as it would exceed the maximum number of traits per node (%d vs. %d)", nodeID, n, t.max)}
	}
	return nil
}

func (s *sqlStore) setLabels(ctx context.Context, t labelTable, nodeID int64, values []string, version string) ([]labelRow, error) {
	uniq := slices.Clone(values)
	slices.Sort(uniq)
	uniq = slices.Compact(uniq)
	if err := t.tooMany(nodeID, len(uniq)); err != nil {
		return nil, err
	}
	now := s.clock()
	rows := make([]labelRow, len(uniq))
	err := s.db.InTx(ctx, func(tx *sql.Tx) error {
		if err := nodeExists(ctx, tx, nodeID); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM "+t.table+" WHERE node_id = ?", nodeID); err != nil {
			return err
		}
		for i, v := range uniq {
			rows[i] = labelRow{NodeID: nodeID, Value: v, Version: version, CreatedAt: now}
			if _, err := s.insert(ctx, tx, t.table, t.fields(&rows[i])); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, wrapUnlessTyped(err, "set "+t.table+" of node "+strconv.FormatInt(nodeID, 10))
	}
	return rows, nil
}

func (s *sqlStore) unsetLabels(ctx context.Context, t labelTable, nodeID int64) error {
	err := s.db.InTx(ctx, func(tx *sql.Tx) error {
		if err := nodeExists(ctx, tx, nodeID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, "DELETE FROM "+t.table+" WHERE node_id = ?", nodeID)
		return err
	})
	return wrapUnlessTyped(err, "unset "+t.table+" of node "+strconv.FormatInt(nodeID, 10))
}

func (s *sqlStore) getLabels(ctx context.Context, t labelTable, nodeID int64) ([]labelRow, error) {
	var rows []*labelRow
	err := s.db.InReadTx(ctx, func(tx *sql.Tx) error {
		if err := nodeExists(ctx, tx, nodeID); err != nil {
			return err
		}
		var err error
		rows, err = queryAll(ctx, tx, t.fields, "SELECT "+columnList(t.fields(&labelRow{}))+" FROM "+t.table+" WHERE node_id = ? ORDER BY "+t.col, nodeID)
		return err
	})
	if err != nil {
		return nil, wrapUnlessTyped(err, "get "+t.table+" of node "+strconv.FormatInt(nodeID, 10))
	}
	out := make([]labelRow, len(rows))
	for i, r := range rows {
		out[i] = *r
	}
	return out, nil
}

// addLabel inserts one value; a value already present is kept (with its
// original timestamps), as upstream ignores the duplicate.
func (s *sqlStore) addLabel(ctx context.Context, t labelTable, nodeID int64, value, version string) (*labelRow, error) {
	row := labelRow{NodeID: nodeID, Value: value, Version: version, CreatedAt: s.clock()}
	err := s.db.InTx(ctx, func(tx *sql.Tx) error {
		if err := nodeExists(ctx, tx, nodeID); err != nil {
			return err
		}
		var one int
		err := tx.QueryRowContext(ctx, "SELECT 1 FROM "+t.table+" WHERE node_id = ? AND "+t.col+" = ?", nodeID, value).Scan(&one)
		if err == nil {
			return nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if t.max > 0 {
			var n int
			if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+t.table+" WHERE node_id = ?", nodeID).Scan(&n); err != nil {
				return err
			}
			if err := t.tooMany(nodeID, n+1); err != nil {
				return err
			}
		}
		_, err = s.insert(ctx, tx, t.table, t.fields(&row))
		return err
	})
	if err != nil {
		return nil, wrapUnlessTyped(err, "add "+t.col+" to node "+strconv.FormatInt(nodeID, 10))
	}
	return &row, nil
}

func (s *sqlStore) deleteLabel(ctx context.Context, t labelTable, nodeID int64, value string) error {
	err := s.db.InTx(ctx, func(tx *sql.Tx) error {
		if err := nodeExists(ctx, tx, nodeID); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, "DELETE FROM "+t.table+" WHERE node_id = ? AND "+t.col+" = ?", nodeID, value)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return &NotFoundError{Kind: t.kind, Ident: value, Node: strconv.FormatInt(nodeID, 10)}
		}
		return nil
	})
	return wrapUnlessTyped(err, "delete "+t.col+" of node "+strconv.FormatInt(nodeID, 10))
}

func (s *sqlStore) labelExists(ctx context.Context, t labelTable, nodeID int64, value string) (bool, error) {
	found := false
	err := s.db.InReadTx(ctx, func(tx *sql.Tx) error {
		if err := nodeExists(ctx, tx, nodeID); err != nil {
			return err
		}
		var one int
		err := tx.QueryRowContext(ctx, "SELECT 1 FROM "+t.table+" WHERE node_id = ? AND "+t.col+" = ?", nodeID, value).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			found = false
			return nil
		}
		found = err == nil
		return err
	})
	return found, wrapUnlessTyped(err, "check "+t.col+" of node "+strconv.FormatInt(nodeID, 10))
}

func toTrait(r labelRow) model.NodeTrait {
	return model.NodeTrait{NodeID: r.NodeID, Trait: r.Value, Version: r.Version, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
}

func toTag(r labelRow) model.NodeTag {
	return model.NodeTag{NodeID: r.NodeID, Tag: r.Value, Version: r.Version, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
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
