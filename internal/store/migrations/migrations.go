// Package migrations creates and upgrades Ironic's database schema from SQL
// files embedded in the binary, one set per dialect.
//
// Two version records live side by side in the database:
//
//   - alembic_version: upstream Ironic's Alembic revision. A fresh database
//     gets upstream's head (AlembicHead), because migration 1 is exactly
//     upstream's schema at that head; an upstream Ironic can still open it.
//   - openkeel_schema_version (VersionTable): ours, one row per applied
//     migration (version, name, applied_at UTC). Our version is the highest
//     row.
//
// Upgrade brings a database to the latest version of ours. It accepts three
// starting points: an empty database (everything is created), a database of
// ours (pending migrations are applied; none pending changes nothing), or a
// database made by upstream Ironic, without our table, at one of upstream's
// Alembic revisions from OldestAlembic (2023.1) to AlembicHead (take-over).
// A take-over first walks upstream's chain of revisions from the database's
// one to the head, one step of ours per upstream revision (alembic/<dialect>/
// <revision>_<name>.sql, recorded in alembic_version as it goes), then does
// the data migrations upstream leaves to online_data_migrations, then
// creates our table and records migration 1 as applied. A database already
// at the head has no row of Ironic's touched. Anything else is refused.
package migrations

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/openkeel/ironic/internal/store/sqldb"
)

// AlembicHead is upstream Ironic's Alembic head revision that migration 1
// reproduces, and the newest revision a take-over accepts.
const AlembicHead = "9fb44677ef15"

// VersionTable records our own migrations.
const VersionTable = "openkeel_schema_version"

// ErrRefused is wrapped by every error that refuses to touch a database
// whose state Upgrade does not recognise.
var ErrRefused = errors.New("refusing to migrate the database")

//go:embed sql
var files embed.FS

type migration struct {
	version int
	name    string
	stmts   []string
}

var fileRe = regexp.MustCompile(`^(\d{4})_([a-z0-9_]+)\.sql$`)

// load reads the migrations of a dialect in version order. The versions must
// run 1, 2, 3… without gaps: a gap would mean a lost file.
func load(d sqldb.Dialect) ([]migration, error) {
	dir := path.Join("sql", string(d))
	entries, err := fs.ReadDir(files, dir)
	if err != nil {
		return nil, fmt.Errorf("read embedded migrations for %s: %w", d, err)
	}
	var ms []migration
	for _, e := range entries {
		m := fileRe.FindStringSubmatch(e.Name())
		if m == nil {
			return nil, fmt.Errorf("embedded migration %s/%s: name is not NNNN_name.sql", dir, e.Name())
		}
		v, _ := strconv.Atoi(m[1])
		b, err := files.ReadFile(path.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("read embedded migration %s: %w", e.Name(), err)
		}
		ms = append(ms, migration{version: v, name: m[2], stmts: splitStatements(string(b))})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	for i, m := range ms {
		if m.version != i+1 {
			return nil, fmt.Errorf("embedded migrations for %s: expected version %d, found %d", d, i+1, m.version)
		}
	}
	return ms, nil
}

// splitStatements cuts a file into statements at semicolons that end a line,
// after dropping whole-line "--" comments. Our files keep no semicolon at a
// line end inside a statement, so nothing smarter is needed.
func splitStatements(src string) []string {
	var stmts []string
	var cur strings.Builder
	for _, line := range strings.Split(src, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "--") {
			continue
		}
		cur.WriteString(line)
		cur.WriteByte('\n')
		if strings.HasSuffix(strings.TrimSpace(line), ";") {
			if s := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(cur.String()), ";")); s != "" {
				stmts = append(stmts, s)
			}
			cur.Reset()
		}
	}
	if s := strings.TrimSpace(cur.String()); s != "" {
		stmts = append(stmts, s)
	}
	return stmts
}

// Latest is the newest version of ours this program knows.
func Latest(d sqldb.Dialect) (int, error) {
	ms, err := load(d)
	if err != nil {
		return 0, err
	}
	return len(ms), nil
}

// querier is what both *sql.Conn and *sql.Tx offer.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// state is what a database holds before Upgrade touches it.
type state struct {
	tables  map[string]bool
	ours    int      // highest version of ours; 0 when VersionTable is absent or empty
	alembic []string // rows of alembic_version; nil when the table is absent
}

func inspect(ctx context.Context, d sqldb.Dialect, q querier) (*state, error) {
	list := `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\_%' ESCAPE '\'`
	if d == sqldb.MySQL {
		list = `SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE() AND table_type = 'BASE TABLE'`
	}
	rows, err := q.QueryContext(ctx, list)
	if err != nil {
		return nil, fmt.Errorf("list tables: %w", err)
	}
	st := &state{tables: map[string]bool{}}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return nil, fmt.Errorf("list tables: %w", err)
		}
		st.tables[name] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list tables: %w", err)
	}
	if st.tables[VersionTable] {
		var v sql.NullInt64
		if err := q.QueryRowContext(ctx, `SELECT MAX(version) FROM `+VersionTable).Scan(&v); err != nil {
			return nil, fmt.Errorf("read %s: %w", VersionTable, err)
		}
		st.ours = int(v.Int64)
	}
	if st.tables["alembic_version"] {
		st.alembic = []string{}
		rows, err := q.QueryContext(ctx, `SELECT version_num FROM alembic_version ORDER BY version_num`)
		if err != nil {
			return nil, fmt.Errorf("read alembic_version: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var rev string
			if err := rows.Scan(&rev); err != nil {
				return nil, fmt.Errorf("read alembic_version: %w", err)
			}
			st.alembic = append(st.alembic, rev)
		}
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("read alembic_version: %w", err)
		}
	}
	return st, nil
}

// Version reports our schema version (0 when the database has none of ours)
// and upstream's Alembic revision ("" when there is none; several heads are
// joined with commas). It changes nothing; `ironic dbsync version` prints it.
func Version(ctx context.Context, db *sqldb.DB) (int, string, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return 0, "", fmt.Errorf("schema version: %w", err)
	}
	defer conn.Close()
	st, err := inspect(ctx, db.Dialect(), conn)
	if err != nil {
		return 0, "", fmt.Errorf("schema version: %w", err)
	}
	return st.ours, strings.Join(st.alembic, ","), nil
}

// Upgrade brings the database to the latest schema of ours (see the package
// comment for what it accepts). Running it again changes nothing. Concurrent
// Upgrades of one database are serialised (see exclusively); on MySQL each
// migration is recorded right after its statements succeed.
func Upgrade(ctx context.Context, db *sqldb.DB) error {
	ms, err := load(db.Dialect())
	if err != nil {
		return err
	}
	return exclusively(ctx, db, func(q querier) error { return upgrade(ctx, db, q, ms) })
}

// UpgradeUpstream brings a database of upstream's, at a revision of the
// chain a take-over accepts (AlembicRevisions), to the later revision to
// along that chain, as upstream's `ironic-dbsync upgrade --revision` would.
// It does not take the database over: no data is migrated and no table of
// ours is made. It makes a database at any revision of the chain, to show
// that a take-over starts from each.
func UpgradeUpstream(ctx context.Context, db *sqldb.DB, to string) error {
	return exclusively(ctx, db, func(q querier) error {
		st, err := inspect(ctx, db.Dialect(), q)
		if err != nil {
			return fmt.Errorf("upgrade schema: %w", err)
		}
		if st.tables[VersionTable] {
			return fmt.Errorf("%w: the database is ours already (schema %d)", ErrRefused, st.ours)
		}
		from, err := takeOverStart(st.alembic)
		if err != nil {
			return err
		}
		return walkChain(ctx, db.Dialect(), q, from, to)
	})
}

// exclusively runs fn on one connection, serialised against every other
// Upgrade of the database: on SQLite by running everything in one
// immediate transaction (SQLite DDL is transactional), on MySQL by a named
// server lock (MySQL DDL commits implicitly, so each step must record its
// own progress).
func exclusively(ctx context.Context, db *sqldb.DB, fn func(q querier) error) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("upgrade schema: %w", err)
	}
	defer conn.Close()
	if db.Dialect() == sqldb.SQLite {
		tx, err := conn.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("upgrade schema: begin: %w", err)
		}
		if err := fn(tx); err != nil {
			_ = tx.Rollback()
			return err
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("upgrade schema: commit: %w", err)
		}
		return nil
	}
	release, err := lockMySQL(ctx, conn)
	if err != nil {
		return err
	}
	defer release()
	return fn(conn)
}

// migrationLockWait bounds how long an Upgrade waits for another one.
const migrationLockWait = 5 * time.Minute

// lockMySQL takes a server-wide named lock for this database. The name is
// hashed because GET_LOCK names are limited to 64 characters.
func lockMySQL(ctx context.Context, conn *sql.Conn) (func(), error) {
	const name = `CONCAT('openkeel-migrate-', SHA1(DATABASE()))`
	var got sql.NullInt64
	err := conn.QueryRowContext(ctx, `SELECT GET_LOCK(`+name+`, ?)`, int(migrationLockWait.Seconds())).Scan(&got)
	if err != nil {
		return nil, fmt.Errorf("upgrade schema: take migration lock: %w", err)
	}
	if !got.Valid || got.Int64 != 1 {
		return nil, fmt.Errorf("upgrade schema: another upgrade of this database held the migration lock for %s", migrationLockWait)
	}
	return func() {
		// A fresh context: the lock must be released even when ctx ended.
		_, _ = conn.ExecContext(context.Background(), `DO RELEASE_LOCK(`+name+`)`)
	}, nil
}

func upgrade(ctx context.Context, db *sqldb.DB, q querier, ms []migration) error {
	st, err := inspect(ctx, db.Dialect(), q)
	if err != nil {
		return fmt.Errorf("upgrade schema: %w", err)
	}
	switch {
	case st.tables[VersionTable]:
		if st.ours > len(ms) {
			return fmt.Errorf("%w: its schema version %d is newer than this program knows (%d): run a newer openkeel-ironic", ErrRefused, st.ours, len(ms))
		}
	case len(st.tables) == 0:
		if err := createVersionTable(ctx, db.Dialect(), q); err != nil {
			return err
		}
	case st.alembic != nil:
		from, err := takeOverStart(st.alembic)
		if err != nil {
			return err
		}
		if from != AlembicHead {
			if err := walkChain(ctx, db.Dialect(), q, from, AlembicHead); err != nil {
				return err
			}
			if err := migrateData(ctx, db, q); err != nil {
				return err
			}
		}
		if err := createVersionTable(ctx, db.Dialect(), q); err != nil {
			return err
		}
		// Upstream's head is exactly our migration 1: record it.
		if err := record(ctx, db, q, ms[0], "taken over from Ironic alembic "+from); err != nil {
			return err
		}
		st.ours = 1
	default:
		names := make([]string, 0, len(st.tables))
		for n := range st.tables {
			names = append(names, n)
		}
		sort.Strings(names)
		return fmt.Errorf("%w: it has tables (%s) but neither Ironic's alembic_version nor our %s: it is not an Ironic database, or an incomplete one", ErrRefused, strings.Join(names, ", "), VersionTable)
	}
	for _, m := range ms[st.ours:] {
		for i, stmt := range m.stmts {
			if _, err := q.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("upgrade schema: migration %04d_%s, statement %d: %w", m.version, m.name, i+1, err)
			}
		}
		if err := record(ctx, db, q, m, ""); err != nil {
			return err
		}
	}
	return nil
}

// takeOverStart is the revision an upstream database is taken over from,
// or a refusal naming the revisions accepted.
func takeOverStart(alembic []string) (string, error) {
	if len(alembic) == 1 && chainIndex(alembicChain(), alembic[0]) >= 0 {
		return alembic[0], nil
	}
	found := "no revision"
	if len(alembic) > 0 {
		found = "revision " + strings.Join(alembic, ",")
	}
	return "", fmt.Errorf("%w: database is at Ironic alembic %s; openkeel-ironic takes over a database at an Ironic alembic revision from %s: upgrade it with ironic-dbsync of Ironic 2023.1 or newer first",
		ErrRefused, found, acceptedRange())
}

func createVersionTable(ctx context.Context, d sqldb.Dialect, q querier) error {
	ddl := `CREATE TABLE ` + VersionTable + ` (
  version INTEGER NOT NULL,
  name VARCHAR(255) NOT NULL,
  applied_at DATETIME NOT NULL,
  PRIMARY KEY (version)
)`
	if d == sqldb.MySQL {
		ddl += ` ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`
	}
	if _, err := q.ExecContext(ctx, ddl); err != nil {
		return fmt.Errorf("upgrade schema: create %s: %w", VersionTable, err)
	}
	return nil
}

func record(ctx context.Context, db *sqldb.DB, q querier, m migration, note string) error {
	name := m.name
	if note != "" {
		name += " (" + note + ")"
	}
	_, err := q.ExecContext(ctx, `INSERT INTO `+VersionTable+` (version, name, applied_at) VALUES (?, ?, ?)`,
		m.version, name, db.Time(db.Now()))
	if err != nil {
		return fmt.Errorf("upgrade schema: record migration %d: %w", m.version, err)
	}
	return nil
}
