package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/store/migrations"
	"github.com/openkeel/ironic/internal/store/sqldb"
)

// dbsyncFlags are the options of `dbsync online_data_migrations`.
type dbsyncFlags struct {
	// maxCount is --max-count, nil when not given.
	maxCount *int
	// options are the --option values, <migration>.<key>=<value> each.
	options []string
}

func (d *dbsyncFlags) register(fs *flag.FlagSet) {
	fs.Func("max-count", "online_data_migrations: the most objects to migrate", func(s string) error {
		n, err := strconv.Atoi(s)
		if err != nil {
			return fmt.Errorf("--max-count: %w", err)
		}
		d.maxCount = &n
		return nil
	})
	fs.Func("option", "online_data_migrations: <migration name>.<option>=<value> (repeatable)", func(s string) error {
		d.options = append(d.options, s)
		return nil
	})
}

// onlineBatch is the batch size upstream runs migrations in when no
// --max-count is given.
const onlineBatch = 50

// onlineDataMigrations is ironic-dbsync online_data_migrations: the
// database's object versions are checked (exit 2 when a release too new or
// too old wrote it), then master's migrations run, at most --max-count
// objects (exit 1 if that many were migrated: there may be more; 0 when they
// are done), or without it in batches of 50 until done. A malformed
// --option or a --max-count below 1 exits 127. The lines printed are
// upstream's.
func onlineDataMigrations(ctx context.Context, cfg *config.Config, db *sqldb.DB, f dbsyncFlags, stdout, stderr io.Writer) error {
	bad, err := migrations.IncompatibleVersions(ctx, db)
	if err != nil {
		return fmt.Errorf("dbsync online_data_migrations: %w", err)
	}
	if len(bad) > 0 {
		fmt.Fprintf(stderr, "The database is not compatible with this release of ironic (%s). Please run \"ironic-dbsync online_data_migrations\" using the previous release.\n", version)
		return checkFailed(2)
	}
	opts := map[string]map[string]string{}
	for _, o := range f.options {
		name, kv, ok := strings.Cut(o, ".")
		key, value, ok2 := strings.Cut(kv, "=")
		if !ok || !ok2 {
			fmt.Fprintf(stdout, "Malformed option %s\n", o)
			return checkFailed(127)
		}
		if opts[name] == nil {
			opts[name] = map[string]string{}
		}
		opts[name][key] = value
	}
	ms := migrations.OnlineMigrations(cfg.ListOf(config.DefaultEnabledInspectInterfaces))
	if f.maxCount == nil {
		fmt.Fprintf(stdout, "Running batches of %d until migrations have been completed.\n", onlineBatch)
		for {
			done, err := runOnlineMigrations(ctx, db, ms, onlineBatch, opts, stdout, stderr)
			if err != nil {
				return err
			}
			if done {
				break
			}
		}
		fmt.Fprintln(stdout, "Data migrations have completed.")
		return nil
	}
	if *f.maxCount < 1 {
		fmt.Fprintln(stderr, `"max-count" must be a positive value.`)
		return checkFailed(127)
	}
	done, err := runOnlineMigrations(ctx, db, ms, *f.maxCount, opts, stdout, stderr)
	if err != nil {
		return err
	}
	if !done {
		fmt.Fprintln(stdout, "Data migrations have not completed. Please re-run.")
		return checkFailed(1)
	}
	fmt.Fprintln(stdout, "Data migrations have completed.")
	return nil
}

// runOnlineMigrations is upstream's _run_migration_functions: each
// migration gets what is left of maxCount; once maxCount objects are
// migrated it stops, reporting not done (there may be more, it cannot
// know).
func runOnlineMigrations(ctx context.Context, db *sqldb.DB, ms []migrations.OnlineMigration, maxCount int, opts map[string]map[string]string, stdout, stderr io.Writer) (bool, error) {
	total := 0
	for _, m := range ms {
		todo, done, err := m.Run(ctx, db, maxCount-total, opts[m.Name])
		if err != nil {
			fmt.Fprintf(stderr, "Error while running %s: %v.\n", m.Name, err)
			return false, fmt.Errorf("dbsync online_data_migrations: %s: %w", m.Name, err)
		}
		fmt.Fprintf(stdout, "%s() migrated %d of %d objects.\n", m.Name, done, todo)
		total += done
		if total >= maxCount {
			return false, nil
		}
	}
	return true, nil
}
