package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/openkeel/ironic/internal/store/sqldb"
)

// field ties an upstream column to the Go field holding it. One list of
// fields per table drives SELECT, INSERT and UPDATE, so a column cannot be
// read and written under different names.
type field struct {
	name string
	ptr  any
	// emptyNull stores "" as NULL and reads NULL as "" (states, driver and
	// interface names, version: upstream never stores "" there).
	emptyNull bool
}

// quote makes reserved words (default, order, unique, user) safe as column
// names; SQLite accepts MySQL's backticks.
func quote(name string) string { return "`" + name + "`" }

func columnList(fs []field) string {
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = quote(f.name)
	}
	return strings.Join(names, ", ")
}

func fieldNames(fs []field) map[string]field {
	m := make(map[string]field, len(fs))
	for _, f := range fs {
		m[f.name] = f
	}
	return m
}

// bind converts a field's Go value to the argument stored for it.
func bind(db *sqldb.DB, f field) (any, error) {
	switch p := f.ptr.(type) {
	case *string:
		if f.emptyNull && *p == "" {
			return nil, nil
		}
		return *p, nil
	case **string:
		if *p == nil {
			return nil, nil
		}
		return **p, nil
	case *int64:
		return *p, nil
	case **int64:
		if *p == nil {
			return nil, nil
		}
		return **p, nil
	case *int:
		return int64(*p), nil
	case **int:
		if *p == nil {
			return nil, nil
		}
		return int64(**p), nil
	case *bool:
		return *p, nil
	case **bool:
		if *p == nil {
			return nil, nil
		}
		return **p, nil
	case *time.Time:
		return db.Time(*p), nil
	case **time.Time:
		return db.TimePtr(*p), nil
	case *map[string]any:
		if *p == nil {
			return "{}", nil
		}
		return encodeJSON(*p)
	case *[]string:
		if *p == nil {
			return "[]", nil
		}
		return encodeJSON(*p)
	case *[]map[string]any:
		if *p == nil {
			return "[]", nil
		}
		return encodeJSON(*p)
	}
	return nil, fmt.Errorf("column %s: unsupported Go type %T", f.name, f.ptr)
}

// encodeJSON writes what oslo.db's JsonEncodedType writes: JSON text, which
// Python Ironic sharing the database reads back unchanged.
func encodeJSON(v any) (string, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", fmt.Errorf("encode JSON column: %w", err)
	}
	return strings.TrimSuffix(buf.String(), "\n"), nil
}

func bindAll(db *sqldb.DB, fs []field) ([]any, error) {
	args := make([]any, len(fs))
	for i, f := range fs {
		v, err := bind(db, f)
		if err != nil {
			return nil, err
		}
		args[i] = v
	}
	return args, nil
}

// scanner reads one column into its field, accepting what either driver
// returns: MySQL gives []byte for text-protocol results, SQLite gives
// strings for DATETIME columns it could not parse. Values of nullable
// columns go to cells (nil: one allocation each).
type scanner struct {
	f     field
	cells *cells
}

func scanners(fs []field) []any { return scannersWith(fs, nil) }

// scannersWith is scanners whose nullable values share c. The scanners
// are made once per query: each Scan rewrites its whole field, so the
// same scanners read every row into the same fields.
func scannersWith(fs []field, c *cells) []any {
	sc := make([]scanner, len(fs))
	out := make([]any, len(fs))
	for i, f := range fs {
		sc[i] = scanner{f: f, cells: c}
		out[i] = &sc[i]
	}
	return out
}

func (s *scanner) Scan(src any) error {
	if err := s.scan(src); err != nil {
		return fmt.Errorf("column %s: %w", s.f.name, err)
	}
	return nil
}

func (s *scanner) scan(src any) error {
	if b, ok := src.([]byte); ok {
		src = string(b)
	}
	switch p := s.f.ptr.(type) {
	case *string:
		*p = ""
		if src != nil {
			*p = asString(src)
		}
	case **string:
		*p = nil
		if src != nil {
			*p = s.cells.str(asString(src))
		}
	case *int64:
		v, err := asInt(src)
		*p = v
		return err
	case **int64:
		*p = nil
		if src != nil {
			v, err := asInt(src)
			*p = s.cells.int(v)
			return err
		}
	case *int:
		v, err := asInt(src)
		*p = int(v)
		return err
	case **int:
		*p = nil
		if src != nil {
			v, err := asInt(src)
			i := int(v)
			*p = &i
			return err
		}
	case *bool:
		v, err := asBool(src)
		*p = v
		return err
	case **bool:
		*p = nil
		if src != nil {
			v, err := asBool(src)
			*p = s.cells.bool(v)
			return err
		}
	case *time.Time:
		*p = time.Time{}
		if src != nil {
			v, err := asTime(src)
			*p = v
			return err
		}
	case **time.Time:
		*p = nil
		if src != nil {
			v, err := asTime(src)
			*p = s.cells.time(v)
			return err
		}
	case *map[string]any:
		*p = nil
		return decodeJSON(src, p)
	case *[]string:
		*p = nil
		return decodeJSON(src, p)
	case *[]map[string]any:
		*p = nil
		return decodeJSON(src, p)
	default:
		return fmt.Errorf("unsupported Go type %T", s.f.ptr)
	}
	return nil
}

func asString(src any) string {
	switch v := src.(type) {
	case string:
		return v
	case time.Time:
		return v.UTC().Format(time.RFC3339Nano)
	}
	return fmt.Sprint(src)
}

func asInt(src any) (int64, error) {
	switch v := src.(type) {
	case nil:
		return 0, nil
	case int64:
		return v, nil
	case int32:
		return int64(v), nil
	case bool:
		if v {
			return 1, nil
		}
		return 0, nil
	case string:
		return strconv.ParseInt(v, 10, 64)
	}
	return 0, fmt.Errorf("cannot read %T as an integer", src)
}

func asBool(src any) (bool, error) {
	switch v := src.(type) {
	case nil:
		return false, nil
	case bool:
		return v, nil
	case int64:
		return v != 0, nil
	case string:
		n, err := strconv.ParseInt(v, 10, 64)
		return n != 0, err
	}
	return false, fmt.Errorf("cannot read %T as a boolean", src)
}

// timeLayouts are the forms DATETIME text takes: SQLAlchemy's (with or
// without the fraction) and what a driver may render.
var timeLayouts = []string{
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999-07:00",
	time.RFC3339Nano,
}

func asTime(src any) (time.Time, error) {
	switch v := src.(type) {
	case time.Time:
		return v.UTC(), nil
	case string:
		for _, l := range timeLayouts {
			if t, err := time.Parse(l, v); err == nil {
				return t.UTC(), nil
			}
		}
		return time.Time{}, fmt.Errorf("cannot parse time %q", v)
	}
	return time.Time{}, fmt.Errorf("cannot read %T as a time", src)
}

func decodeJSON(src any, dst any) error {
	if src == nil {
		return nil
	}
	s, ok := src.(string)
	if !ok {
		return fmt.Errorf("cannot read %T as JSON", src)
	}
	if s == "" || s == "null" {
		return nil
	}
	if err := json.Unmarshal([]byte(s), dst); err != nil {
		return fmt.Errorf("decode JSON: %w", err)
	}
	return nil
}

// normalizeArg makes a value read with a generic scan (pagination markers)
// comparable again with what is stored.
func normalizeArg(db *sqldb.DB, v any) any {
	switch x := v.(type) {
	case []byte:
		return string(x)
	case time.Time:
		return db.Time(x)
	}
	return v
}

// querier is what both *sql.DB and *sql.Tx offer.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// rowFields lists a table's columns: its id and uuid (when not nil), the
// columns every upstream table has from its base model (oslo.db's
// created_at and updated_at, and the object version), then own.
func rowFields(id *int64, uuid *string, created *time.Time, updated **time.Time, version *string, own []field) []field {
	fs := make([]field, 0, 5+len(own))
	if id != nil {
		fs = append(fs, field{name: "id", ptr: id})
	}
	if uuid != nil {
		fs = append(fs, field{name: "uuid", ptr: uuid, emptyNull: true})
	}
	fs = append(fs,
		field{name: "created_at", ptr: created},
		field{name: "updated_at", ptr: updated},
		field{name: "version", ptr: version, emptyNull: true})
	return append(fs, own...)
}

// execOne runs a statement that must touch a row: when it touches none
// (the row is missing), it returns missing.
func execOne(ctx context.Context, q querier, missing error, query string, args ...any) error {
	res, err := q.ExecContext(ctx, query, args...)
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return missing
	}
	return nil
}
