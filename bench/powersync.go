package main

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The power sync is off while the requests are measured (it would
// contaminate their CPU figures); one pass is measured on its own at the
// end: the process running the conductor is stopped, the enrolled nodes
// made manageable, and the process restarted with the sync on and
// followed through its /metrics until the first pass ends.

// powerSyncEvery is the sync interval of the restarted conductor, in
// seconds: the first pass starts that long after it is up.
const powerSyncEvery = 1

// powerSyncTask is the power sync's label in the periodic task metrics.
const powerSyncTask = `task="_sync_power_states"`

// metricsPoll is how often the pass is looked for in /metrics. Each scrape
// makes the conductor list every node for the node-state gauges (0.1–0.3
// CPU-s at 50,000–100,000 nodes while the pass runs), which the pass's CPU
// figure takes in: a quarter of the process's CPU in perf profiles of the
// pass, with the scrapes back to back at 200 ms and still at one a second.
const metricsPoll = time.Second

// restartConductor stops the process running the conductor, runs prep
// on the database while no conductor runs, and starts it again with the
// power sync every syncInterval seconds (0: off).
func restartConductor(ctx context.Context, s *settings, d *deployment, syncInterval int, prep func(*sql.DB) error) (*process, error) {
	old := d.procs[d.conductor]
	old.stop()
	if prep != nil {
		db, err := sql.Open(d.sqlDriver, d.sqlWriteDSN)
		if err != nil {
			return nil, fmt.Errorf("database: %w", err)
		}
		err = prep(db)
		db.Close()
		if err != nil {
			return nil, err
		}
	}
	if err := d.writeConf(syncInterval); err != nil {
		return nil, err
	}
	p, err := startProcess(old.name, d.dir, s.binary, d.conductorArgs...)
	if err != nil {
		return nil, err
	}
	d.procs[d.conductor] = p
	if d.onStart != nil {
		d.onStart(p)
	}
	if err := waitHTTP(ctx, d.conductorMetrics, p); err != nil {
		return nil, err
	}
	if err := waitHTTP(ctx, d.base+"/v1/", d.procs...); err != nil {
		return nil, err
	}
	return p, nil
}

// measurePowerSync restarts the conductor with the sync on, after prep
// (moving the enrolled nodes to manageable), and follows it until its
// first pass ends.
func measurePowerSync(ctx context.Context, s *settings, d *deployment, prep func(*sql.DB) error) (*Sync, error) {
	p, err := restartConductor(ctx, s, d, powerSyncEvery, prep)
	if err != nil {
		return nil, err
	}
	cpu0, err := treeCPU(p.pid())
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(30 * time.Minute)
	for {
		runs, seconds, err := powerSyncMetrics(ctx, d.conductorMetrics)
		if err != nil {
			return nil, err
		}
		if runs >= 1 {
			cpu1, err := treeCPU(p.pid())
			if err != nil {
				return nil, err
			}
			return &Sync{Pass: time.Duration(seconds * float64(time.Second)), CPU: cpu1 - cpu0}, nil
		}
		if p.exited() {
			return nil, fmt.Errorf("%s exited: %v\n%s", p.name, p.err, p.logTail())
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("no power-sync pass ended within 30 minutes")
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(metricsPoll):
		}
	}
}

// manageEnrolled moves the enrolled nodes to manageable, as `manage`
// would, in the database while no conductor runs: the sync skips nodes in
// enroll, and the pass is to read every node's power state.
func manageEnrolled(ctx context.Context, db *sql.DB) error {
	if _, err := db.ExecContext(ctx, "UPDATE nodes SET provision_state = 'manageable' WHERE provision_state = 'enroll'"); err != nil {
		return fmt.Errorf("manage nodes: %w", err)
	}
	return nil
}

// powerSyncMetrics reads the power sync's pass count and total duration
// (seconds) from a Prometheus text page.
func powerSyncMetrics(ctx context.Context, url string) (runs, seconds float64, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, 0, fmt.Errorf("metrics: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, 0, fmt.Errorf("metrics: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, 0, fmt.Errorf("metrics: %s", resp.Status)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.Contains(line, powerSyncTask) {
			continue
		}
		name, _, _ := strings.Cut(line, "{")
		_, val, _ := strings.Cut(line, "} ")
		v, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if err != nil {
			continue
		}
		switch name {
		case "ironic_conductor_periodic_runs_total":
			runs = v
		case "ironic_conductor_periodic_duration_seconds_sum":
			seconds = v
		}
	}
	if err := sc.Err(); err != nil {
		return 0, 0, fmt.Errorf("metrics: %w", err)
	}
	return runs, seconds, nil
}
