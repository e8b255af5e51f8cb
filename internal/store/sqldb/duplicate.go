package sqldb

import (
	"errors"
	"regexp"
	"strings"

	"github.com/go-sql-driver/mysql"
	"modernc.org/sqlite"
)

// DuplicateEntry describes a unique-constraint violation.
type DuplicateEntry struct {
	// Table is known on SQLite, and on MySQL 8 (which qualifies the key).
	Table string
	// Constraint is the violated unique key's name (MySQL/MariaDB only;
	// SQLite reports columns, not names). "PRIMARY" for a primary key.
	Constraint string
	// Columns are the constrained columns. On MySQL they are derived from
	// the key name the way oslo.db does (uniq_<table>0<col>0<col>), which is
	// what Ironic's exception mapping reads; a key named otherwise is given
	// as its own single column.
	Columns []string
	// Value is the duplicated value as MySQL prints it (empty on SQLite).
	Value string
}

// Unique-violation codes: MySQL ER_DUP_ENTRY; SQLite CONSTRAINT_UNIQUE and
// CONSTRAINT_PRIMARYKEY (extended result codes, which modernc enables).
const (
	mysqlDupEntry          = 1062
	sqliteConstraintUnique = 2067
	sqliteConstraintPK     = 1555
)

var (
	mysqlDupRe  = regexp.MustCompile(`^Duplicate entry '(.*)' for key '([^']*)'$`)
	sqliteDupRe = regexp.MustCompile(`(?:UNIQUE|PRIMARY KEY) constraint failed: ([^()]*?)(?: \(|$)`)
)

// IsDuplicate reports whether err is a unique-constraint violation on either
// backend and, if so, what was violated.
func IsDuplicate(err error) (*DuplicateEntry, bool) {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		if me.Number != mysqlDupEntry {
			return nil, false
		}
		d := &DuplicateEntry{}
		if m := mysqlDupRe.FindStringSubmatch(me.Message); m != nil {
			d.Value = m[1]
			d.Constraint = m[2]
			if table, key, ok := strings.Cut(d.Constraint, "."); ok {
				d.Table, d.Constraint = table, key
			}
			d.Columns = columnsFromKey(d.Constraint)
		}
		return d, true
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		if se.Code() != sqliteConstraintUnique && se.Code() != sqliteConstraintPK {
			return nil, false
		}
		d := &DuplicateEntry{}
		if m := sqliteDupRe.FindStringSubmatch(se.Error()); m != nil {
			for _, qc := range strings.Split(m[1], ",") {
				table, col, _ := strings.Cut(strings.TrimSpace(qc), ".")
				d.Table = table
				d.Columns = append(d.Columns, col)
			}
		}
		if se.Code() == sqliteConstraintPK {
			d.Constraint = "PRIMARY"
		}
		return d, true
	}
	return nil, false
}

func columnsFromKey(key string) []string {
	if rest, ok := strings.CutPrefix(key, "uniq_"); ok {
		if _, cols, ok := strings.Cut(rest, "0"); ok && cols != "" {
			return strings.Split(cols, "0")
		}
	}
	return []string{key}
}
