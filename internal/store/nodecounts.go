package store

import (
	"context"
	"database/sql"
	"fmt"
)

// NodeStateCount is how many nodes share a provision state, a power state
// and a maintenance flag.
type NodeStateCount struct {
	// ProvisionState and PowerState are "" for a node without one (NULL).
	ProvisionState string
	PowerState     string
	Maintenance    bool
	Count          int64
}

// nodeStateCounts counts in the database: the node gauges of every
// /metrics scrape used to list every node (0.1–0.3 CPU-s and tens of MiB
// a scrape at 50,000–100,000 nodes, issue 29).
const nodeStateCounts = "SELECT provision_state, power_state, maintenance, COUNT(*) FROM nodes" +
	" GROUP BY provision_state, power_state, maintenance"

// CountNodesByState counts every node (children included) by provision
// state, power state and maintenance.
func (s *sqlStore) CountNodesByState(ctx context.Context) ([]NodeStateCount, error) {
	var out []NodeStateCount
	err := s.db.InReadTx(ctx, func(tx *sql.Tx) error {
		out = nil
		rows, err := tx.QueryContext(ctx, nodeStateCounts)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var prov, power sql.NullString
			var maint sql.NullBool
			var c NodeStateCount
			if err := rows.Scan(&prov, &power, &maint, &c.Count); err != nil {
				return err
			}
			c.ProvisionState, c.PowerState, c.Maintenance = prov.String, power.String, maint.Bool
			out = append(out, c)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("count nodes by state: %w", err)
	}
	return out, nil
}

// FleetCount is how many nodes share a provision state, a power state, a
// maintenance flag, a fault and a conductor group: the web console's fleet
// overview sums them.
type FleetCount struct {
	NodeStateCount
	// Fault and ConductorGroup are "" for none (NULL or empty).
	Fault          string
	ConductorGroup string
}

// CountFleet counts the nodes f selects (its Project and IncludeChildren;
// the other filters apply too) in the database, grouped for the fleet
// overview: one narrow aggregate instead of a row per node.
func (s *sqlStore) CountFleet(ctx context.Context, f NodeFilter) ([]FleetCount, error) {
	w, err := s.nodeWhere(ctx, f)
	if err != nil {
		return nil, err
	}
	query := "SELECT provision_state, power_state, maintenance, fault, conductor_group, COUNT(*) FROM nodes" + w.sql() +
		" GROUP BY provision_state, power_state, maintenance, fault, conductor_group"
	var out []FleetCount
	err = s.db.InReadTx(ctx, func(tx *sql.Tx) error {
		out = nil
		rows, err := tx.QueryContext(ctx, query, w.args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var prov, power, fault, group sql.NullString
			var maint sql.NullBool
			var c FleetCount
			if err := rows.Scan(&prov, &power, &maint, &fault, &group, &c.Count); err != nil {
				return err
			}
			c.ProvisionState, c.PowerState, c.Maintenance = prov.String, power.String, maint.Bool
			c.Fault, c.ConductorGroup = fault.String, group.String
			out = append(out, c)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("count the fleet's nodes: %w", err)
	}
	return out, nil
}
