package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/secrets"
)

// resource binds a table to its model type, so every table with an id
// primary key shares one implementation of get, create, update and list.
type resource[T any] struct {
	table, kind string
	fields      func(*T) []field
	// dupValue gives the value shown for a violated unique column.
	dupValue func(*T, string) string
	// dupFields renames the first column of a violated unique key to the
	// one upstream reports (its exception names the last column).
	dupFields map[string]string
	// load, when set, fills what is not a column of table (steps, traits,
	// the node's UUID) into rows just read, with q.
	load func(ctx context.Context, q querier, rows []*T) error
	// children are the model fields saveChildren writes; naming one of them
	// in an update (or naming none) replaces the child rows.
	children []string
	// saveChildren writes the child rows named by which (a subset of
	// children) of v, whose id is id, inside tx.
	saveChildren func(ctx context.Context, s *sqlStore, tx *sql.Tx, v *T, id int64, which []string) error
	// seal, when set, returns v with its columns' secret values sealed
	// under ring: a copy, so that the caller's v stays plain; v itself
	// when ring is nil. Secrets of child rows are sealed by saveChildren.
	seal func(ring *secrets.KeyRing, v *T) (*T, error)
	// open, when set, opens in place the sealed secret values of a row
	// just read (its children included); a value that does not open is a
	// secrets.UndecryptableError.
	open func(ring *secrets.KeyRing, v *T) error
}

// sealed is v as written: its secrets sealed when r seals.
func (r resource[T]) sealed(s *sqlStore, v *T) (*T, error) {
	if r.seal == nil {
		return v, nil
	}
	out, err := r.seal(s.ring, v)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r.kind, err)
	}
	return out, nil
}

// opened opens the sealed secret values of rows just read. A secret that
// does not open is an Unavailable fault (503), as for nodes: the reader
// gets the error, never the sealed text in the secret's place.
func (r resource[T]) opened(s *sqlStore, rows []*T) error {
	if r.open == nil {
		return nil
	}
	for _, v := range rows {
		if err := r.open(s.ring, v); err != nil {
			return errs.Unavailable(err)
		}
	}
	return nil
}

// duplicate maps a unique violation writing v to a DuplicateError.
func (r resource[T]) duplicate(err error, v *T) *DuplicateError {
	d := duplicate(err, r.kind, func(col string) string { return r.dupValue(v, col) })
	if d != nil {
		if f, ok := r.dupFields[d.Field]; ok {
			d.Field = f
		}
	}
	return d
}

func (r resource[T]) selectSQL() string {
	var zero T
	return "SELECT " + columnList(r.fields(&zero)) + " FROM " + r.table
}

func (r resource[T]) columns() map[string]field {
	var zero T
	return fieldNames(r.fields(&zero))
}

// query reads the rows of r matching the SQL tail (WHERE, ORDER BY…) and
// loads their non-column parts.
func query[T any](ctx context.Context, q querier, r resource[T], tail string, args ...any) ([]*T, error) {
	rows, err := queryAll(ctx, q, r.fields, r.selectSQL()+tail, args...)
	if err != nil {
		return nil, err
	}
	if r.load != nil && len(rows) > 0 {
		if err := r.load(ctx, q, rows); err != nil {
			return nil, err
		}
	}
	return rows, nil
}

func getOne[T any](ctx context.Context, s *sqlStore, r resource[T], col string, val any, ident string) (*T, error) {
	rows, err := query(ctx, s.db, r, " WHERE "+quote(col)+" = ?", val)
	if err != nil {
		return nil, fmt.Errorf("get %s %s: %w", r.kind, ident, err)
	}
	if len(rows) == 0 {
		return nil, &NotFoundError{Kind: r.kind, Ident: ident}
	}
	if err := r.opened(s, rows); err != nil {
		return nil, err
	}
	return rows[0], nil
}

// create inserts v after prepare and stamping created_at; the uuid is
// generated when empty, as upstream. Child rows are written in the same
// transaction.
func create[T any](ctx context.Context, s *sqlStore, r resource[T], in *T, prepare func(*T)) (*T, error) {
	v := *in
	prepare(&v)
	stampNew(r.fields(&v), s.clock())
	written, err := r.sealed(s, &v)
	if err != nil {
		return nil, err
	}
	var id int64
	err = s.changeTx(ctx, func(tx *sql.Tx) error {
		var err error
		id, err = s.insert(ctx, tx, r.table, r.fields(written))
		if err != nil {
			return err
		}
		if r.saveChildren != nil {
			if err := r.saveChildren(ctx, s, tx, &v, id, r.children); err != nil {
				return err
			}
		}
		return s.recordRow(ctx, tx, r.table, id, ChangeCreated, nil)
	})
	if err != nil {
		if d := r.duplicate(err, &v); d != nil {
			return nil, d
		}
		return nil, wrapUnlessTyped(err, "create "+r.kind)
	}
	return getOne(ctx, s, r, "id", id, strconv.FormatInt(id, 10))
}

func update[T any](ctx context.Context, s *sqlStore, r resource[T], v *T, id int64, fields []string) (*T, error) {
	return updateWith(ctx, s, r, v, id, fields, nil)
}

// updateWith is update running also, when not nil, also(tx) after the row
// is written and before the transaction commits.
func updateWith[T any](ctx context.Context, s *sqlStore, r resource[T], v *T, id int64, fields []string, also func(tx *sql.Tx) error) (*T, error) {
	ident := strconv.FormatInt(id, 10)
	if slices.Contains(fields, "uuid") {
		return nil, &InvalidParameterError{Msg: fmt.Sprintf("Cannot overwrite UUID for an existing %s.", r.kind)}
	}
	columns := slices.DeleteFunc(slices.Clone(fields), func(f string) bool { return slices.Contains(r.children, f) })
	which := slices.DeleteFunc(slices.Clone(r.children), func(c string) bool { return len(fields) > 0 && !slices.Contains(fields, c) })
	if len(fields) > 0 && len(columns) == 0 {
		// Only children named: still stamp updated_at on the parent.
		columns = []string{"updated_at"}
	}
	written, err := r.sealed(s, v)
	if err != nil {
		return nil, err
	}
	set, args, err := s.updateSet(r.fields(written), columns, s.clock())
	if err != nil {
		return nil, err
	}
	err = s.changeTx(ctx, func(tx *sql.Tx) error {
		if err := execOne(ctx, tx, &NotFoundError{Kind: r.kind, Ident: ident}, "UPDATE "+r.table+" SET "+set+" WHERE id = ?", append(args, id)...); err != nil {
			return err
		}
		if r.saveChildren != nil && len(which) > 0 {
			if err := r.saveChildren(ctx, s, tx, v, id, which); err != nil {
				return err
			}
		}
		if also != nil {
			if err := also(tx); err != nil {
				return err
			}
		}
		return s.recordRow(ctx, tx, r.table, id, ChangeUpdated, fields)
	})
	if err != nil {
		if d := r.duplicate(err, v); d != nil {
			return nil, d
		}
		return nil, wrapUnlessTyped(err, "update "+r.kind+" "+ident)
	}
	return getOne(ctx, s, r, "id", id, ident)
}

func list[T any](ctx context.Context, s *sqlStore, r resource[T], w *where, o ListOptions) ([]*T, error) {
	tail, err := s.paginate(ctx, s.db, r.table, "", r.columns(), "uuid", w, o)
	if err != nil {
		return nil, err
	}
	rows, err := query(ctx, s.db, r, w.sql()+tail, w.args...)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", r.table, err)
	}
	if err := r.opened(s, rows); err != nil {
		return nil, err
	}
	return rows, nil
}

// deleteByID deletes one row, refusing when membersSQL (if any) counts
// rows still referencing it. childTables are emptied of the row's children
// (their foreign key column is fk) first.
func (s *sqlStore) deleteByID(ctx context.Context, table, kind string, id int64, membersSQL string, children ...childTable) error {
	ident := strconv.FormatInt(id, 10)
	err := s.changeTx(ctx, func(tx *sql.Tx) error {
		if membersSQL != "" {
			var n int
			if err := tx.QueryRowContext(ctx, membersSQL, id).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				return &NotEmptyError{Kind: kind, Ident: ident}
			}
		}
		// Read before the row goes; a missing row is execOne's NotFound.
		subject, streamed, err := rowSubject(ctx, tx, table, id)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		for _, c := range children {
			if _, err := tx.ExecContext(ctx, "DELETE FROM "+c.table+" WHERE "+c.fk+" = ?", id); err != nil {
				return fmt.Errorf("delete %s: %w", c.table, err)
			}
		}
		if err := execOne(ctx, tx, &NotFoundError{Kind: kind, Ident: ident}, "DELETE FROM "+table+" WHERE id = ?", id); err != nil || !streamed {
			return err
		}
		return s.recordChange(ctx, tx, subject, ChangeDeleted, nil)
	})
	return wrapUnlessTyped(err, "delete "+kind+" "+ident)
}

// childTable is a table whose rows belong to a parent row through fk.
type childTable struct{ table, fk string }

// inList is "(?, ?, …)" for n values, with the values as arguments.
func inList[V any](vals []V) (string, []any) {
	args := make([]any, len(vals))
	for i, v := range vals {
		args[i] = v
	}
	return "(" + strings.TrimSuffix(strings.Repeat("?, ", len(vals)), ", ") + ")", args
}

// stampNew prepares fields of a row about to be inserted: a generated uuid
// when empty (as upstream), created_at now and no updated_at.
func stampNew(fs []field, now time.Time) {
	for _, f := range fs {
		switch f.name {
		case "uuid":
			if p := f.ptr.(*string); *p == "" {
				*p = uuid.NewString()
			}
		case "created_at":
			*(f.ptr.(*time.Time)) = now
		case "updated_at":
			*(f.ptr.(**time.Time)) = nil
		}
	}
}
