package main

import (
	"context"
	"fmt"
	"io"

	"github.com/openkeel/ironic/internal/store/migrations"
)

// dbsync is ironic-dbsync: upgrade (also taking over an upstream database
// at an Alembic revision from 2023.1's to the head), version, create_schema
// and online_data_migrations.
func dbsync(ctx context.Context, inv *invocation, stdout, stderr io.Writer) error {
	if len(inv.args) != 1 {
		return fmt.Errorf("%w: dbsync needs one of upgrade, version, create_schema, online_data_migrations", errUsage)
	}
	cfg, log, err := loadConfig(modeDBSync, inv.load, stderr)
	if err != nil {
		return err
	}
	action := inv.args[0]
	switch action {
	case "upgrade", "create_schema", "version", "online_data_migrations":
	default:
		return fmt.Errorf("%w: unknown dbsync command %q", errUsage, action)
	}
	if _, absent := absentDatabase(cfg); absent && action == "version" {
		// Reading creates nothing: no file is an empty database.
		fmt.Fprintf(stdout, "openkeel-ironic schema 0 (Ironic alembic %s)\n", orNone(""))
		return nil
	}
	db, err := openDatabase(ctx, cfg, true)
	if err != nil {
		return err
	}
	defer db.Close()
	switch action {
	case "online_data_migrations":
		if err := checkSchema(ctx, db); err != nil {
			return err
		}
		return onlineDataMigrations(ctx, cfg, db, inv.dbsync, stdout, stderr)
	case "version":
		ours, alembic, err := migrations.Version(ctx, db)
		if err != nil {
			return fmt.Errorf("dbsync version: %w", err)
		}
		fmt.Fprintf(stdout, "openkeel-ironic schema %d (Ironic alembic %s)\n", ours, orNone(alembic))
		return nil
	case "create_schema":
		// Upstream's create_schema refuses a database that already has a
		// schema; so do we, instead of silently upgrading it.
		ours, alembic, err := migrations.Version(ctx, db)
		if err != nil {
			return fmt.Errorf("dbsync create_schema: %w", err)
		}
		if ours != 0 || alembic != "" {
			return fmt.Errorf("dbsync create_schema: the database already has a schema (version %d, alembic %s); use upgrade", ours, orNone(alembic))
		}
	}
	if err := migrations.Upgrade(ctx, db); err != nil {
		return fmt.Errorf("dbsync %s: %w", action, err)
	}
	ours, _, err := migrations.Version(ctx, db)
	if err != nil {
		return fmt.Errorf("dbsync %s: %w", action, err)
	}
	log.Info("database schema up to date", "version", ours)
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "None"
	}
	return s
}
