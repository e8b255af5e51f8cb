package main

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"strings"
	"time"
)

// pageLimits are the page sizes of the page-size sweep.
var pageLimits = []int{100, 250, 500, 1000}

// runBackend measures one deployment over the growing fleet: creation
// through the API, then at each size the request windows, the floors,
// the page-size sweep (at one size), a power-sync pass and heartbeats
// (ours only), with the memory of every phase.
func runBackend(ctx context.Context, s *settings, name string, logf func(string, ...any)) (*BackendRun, error) {
	res := &BackendRun{Name: name}
	sizes, apiNodes := s.sizes, s.apiNodes
	var (
		d   *deployment
		err error
	)
	switch name {
	case "upstream":
		sizes, apiNodes = s.upstreamSizes, s.upstreamAPINodes
		res.Version = upstreamVersion()
		d, err = startUpstream(ctx, s)
	default:
		dir, err := os.MkdirTemp("", "ironic-bench-"+name+"-")
		if err != nil {
			return nil, fmt.Errorf("work folder: %w", err)
		}
		if s.keep {
			logf("work folder %s kept", dir)
		} else {
			defer os.RemoveAll(dir)
		}
		if name == "sqlite" {
			d, err = startSQLite(ctx, s, dir)
		} else {
			d, err = startMariaDB(ctx, s, dir, logf)
		}
		if err != nil {
			return nil, err
		}
	}
	if err != nil {
		return nil, err
	}
	defer d.stop()
	tr := newTracker(res)
	defer tr.close()
	for _, p := range d.procs {
		tr.watch(p.name, p.pid())
	}
	d.onStart = func(p *process) { tr.watch(p.name, p.pid()) }

	apiNodes = min(apiNodes, sizes[0])
	logf("%s up at %s; enrolling %d nodes through the API with %d concurrent POSTs", name, d.base, apiNodes, s.createConcurrency)
	tr.phase("creation", apiNodes)
	cpu0, err := d.cpuTotal()
	if err != nil {
		return nil, err
	}
	_, create, err := createNodes(ctx, d.base, apiNodes, s.createConcurrency, logf)
	if err != nil {
		return nil, fmt.Errorf("%w\n%s", err, tails(d))
	}
	cpu1, err := d.cpuTotal()
	if err != nil {
		return nil, err
	}
	tr.end()
	create.CPU = cpu1 - cpu0
	create.Conc = s.createConcurrency
	res.Create = create
	logf("enrolled: %.0f nodes/s, p50 %s ms, p99 %s ms, server CPU %s ms/node", float64(create.Nodes)/create.Elapsed.Seconds(), ms(create.P50), ms(create.P99), ms(create.CPUPerNode()))

	db, err := sql.Open(d.sqlDriver, d.sqlWriteDSN)
	if err != nil {
		return nil, fmt.Errorf("database: %w", err)
	}
	defer db.Close()
	tmpl, err := readTemplates(ctx, d.sqlDriver, db)
	if err != nil {
		return nil, err
	}
	for _, n := range sizes {
		sr := &SizeRun{Nodes: n, Floors: map[string]*Floor{}}
		res.Sizes = append(res.Sizes, sr)
		if err := measureSize(ctx, s, name, d, db, tmpl, tr, sr, logf); err != nil {
			return res, fmt.Errorf("%d nodes: %w\n%s", n, err, tails(d))
		}
	}
	return res, nil
}

func measureSize(ctx context.Context, s *settings, name string, d *deployment, db *sql.DB, tmpl *templates, tr *tracker, sr *SizeRun, logf func(string, ...any)) error {
	n := sr.Nodes
	t0 := time.Now()
	tr.phase("bulk load", n)
	if err := growFleet(ctx, d.sqlDriver, db, tmpl, n); err != nil {
		return err
	}
	tr.end()
	sr.BulkLoad = time.Since(t0)
	uuids, err := allUUIDs(ctx, db)
	if err != nil {
		return err
	}
	if len(uuids) != n {
		return fmt.Errorf("fleet holds %d nodes, want %d", len(uuids), n)
	}
	logf("%s: %d nodes (bulk load %.1f s)", name, n, sr.BulkLoad.Seconds())
	for _, req := range requests() {
		if _, err := check(ctx, d.base, req, uuids); err != nil {
			return err
		}
		var prof *profiler
		if s.perfDir != "" && name != "upstream" {
			if prof, err = startPerf(ctx, s, fmt.Sprintf("%s-%d", name, n), req, d); err != nil {
				return err
			}
		}
		tr.phase(req.key, n)
		l, err := measured(d, func() *Load { return drive(ctx, d.base, req, uuids, s.loadConcurrency, s.duration) })
		tr.end()
		if err != nil {
			return err
		}
		if prof != nil {
			if err := prof.finish(logf); err != nil {
				return err
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		logf("  %s: %.1f req/s, p50 %s ms, p99 %s ms, server CPU %s ms/request, %d errors", shortName(req.name), l.Rate(), ms(l.P50), ms(l.P99), ms(l.CPUPerRequest()), l.Errors)
		if l.Errors > 0 {
			logf("    first error: %s", l.FirstErr)
		}
		sr.Loads = append(sr.Loads, l)
	}
	if name == "upstream" {
		return nil
	}
	floorTime := min(max(s.duration/2, 4*time.Second), 20*time.Second)
	// The floors run in the bench process: the servers idle.
	tr.phase("floors", n)
	for _, kind := range []string{"list", "detail", "nova"} {
		f, err := measureFloor(ctx, d.sqlDriver, d.sqlDSN, kind, d.base, floorTime)
		if err != nil {
			return err
		}
		logf("  floor %s: CPU %s ms, p50 %s ms; %.1f/s on all CPUs; %d bytes", kind, ms(f.CPU), ms(f.P50), f.Rate, f.Bytes)
		sr.Floors[kind] = f
	}
	if n == s.pageSweepAt() {
		tr.phase("page sizes", n)
		err := pageSweep(ctx, s, d, sr, logf)
		tr.end()
		if err != nil {
			return err
		}
	}

	if n == s.sizes[0] {
		// The change stream (issue 24) once per backend: it reads the
		// change table and renders the written node, not the fleet.
		tr.phase("change stream", n)
		st, err := measureStream(ctx, d, uuids, streamSubscribers, s.duration)
		tr.end()
		if err != nil {
			return fmt.Errorf("change stream: %w", err)
		}
		sr.Stream = st
		logf("  change stream: %d subscribers, %d PATCHes (%d failed), %.0f events/s delivered, p50 %s ms, p99 %s ms, server CPU %s ms/event, %d missing",
			st.Subscribers, st.Writes, st.WriteErrors, st.Rate(), ms(st.P50), ms(st.P99), ms(st.CPUPerEvent()), st.Missing)
		if st.WriteErrors > 0 {
			logf("    first error: %s", st.FirstErr)
		}
	}

	logf("  power sync: restarting %s with the sync on for one pass", d.procs[d.conductor].name)
	tr.phase("power sync", n)
	sync, err := measurePowerSync(ctx, s, d, func(db *sql.DB) error {
		if err := manageEnrolled(ctx, db); err != nil {
			return err
		}
		_, err := prepareBeatNodes(ctx, db, tmpl)
		return err
	})
	tr.end()
	if err != nil {
		return fmt.Errorf("power sync: %w", err)
	}
	sync.Nodes = n - beatNodes(tmpl)
	sr.Sync = sync
	logf("  power sync: one pass over %d nodes took %.1f s, conductor CPU %.2f s", sync.Nodes, sync.Pass.Seconds(), sync.CPU.Seconds())

	if _, err := restartConductor(ctx, s, d, 0, nil); err != nil {
		return fmt.Errorf("restart with the sync off: %w", err)
	}
	beatUUIDs, err := prepareBeatNodes(ctx, db, tmpl)
	if err != nil {
		return err
	}
	for _, agents := range s.agents {
		tr.phase(fmt.Sprintf("heartbeats (%d agents)", agents), n)
		var b *Beats
		cpu, err := cpuDuring(d, func() { b = driveHeartbeats(ctx, d.base, beatUUIDs, agents, s.duration) })
		tr.end()
		if err != nil {
			return err
		}
		b.CPU = cpu
		logf("  heartbeats, %d agents over %d nodes: %.0f/s accepted, p50 %s ms, p99 %s ms, CPU %s ms each, %d busy (503), %d errors",
			agents, b.Nodes, b.Rate(), ms(b.P50), ms(b.P99), ms(b.CPU/time.Duration(max(b.Accepted, 1))), b.Busy, b.Errors)
		if b.Errors > 0 {
			logf("    first error: %s", b.FirstErr)
		}
		sr.Beats = append(sr.Beats, b)
	}
	return nil
}

// cpuDuring is the deployment's CPU while fn runs.
func cpuDuring(d *deployment, fn func()) (time.Duration, error) {
	cpu0, err := d.cpuTotal()
	if err != nil {
		return 0, err
	}
	fn()
	cpu1, err := d.cpuTotal()
	if err != nil {
		return 0, err
	}
	return cpu1 - cpu0, nil
}

// measured runs a load and records the deployment's CPU during it.
func measured(d *deployment, fn func() *Load) (*Load, error) {
	var l *Load
	cpu, err := cpuDuring(d, func() { l = fn() })
	if err != nil {
		return nil, err
	}
	l.CPU = cpu
	return l, nil
}

// pageSweep drives each list request at each page size briefly: CPU per
// request against page size.
func pageSweep(ctx context.Context, s *settings, d *deployment, sr *SizeRun, logf func(string, ...any)) error {
	// Long enough for a few detail pages at 1,000 per page.
	window := max(s.duration/3, 3*time.Second)
	for _, req := range requests() {
		if req.floor == "" {
			continue
		}
		for _, limit := range pageLimits {
			r := req
			path := withLimit(req.listPath, limit)
			r.build = func(*rand.Rand, []string) (string, string, []byte) { return http.MethodGet, path, nil }
			l, err := measured(d, func() *Load { return drive(ctx, d.base, r, nil, s.loadConcurrency, window) })
			if err != nil {
				return err
			}
			if l.Errors > 0 {
				return fmt.Errorf("page sweep %s: %s", path, l.FirstErr)
			}
			sr.Pages = append(sr.Pages, &PagePoint{Key: req.key, Limit: limit, CPU: l.CPUPerRequest()})
			logf("  %s limit %d: CPU %s ms/request", req.key, limit, ms(l.CPUPerRequest()))
		}
	}
	return nil
}

// withLimit adds a limit query parameter to a path.
func withLimit(path string, limit int) string {
	if strings.Contains(path, "?") {
		return fmt.Sprintf("%s&limit=%d", path, limit)
	}
	return fmt.Sprintf("%s?limit=%d", path, limit)
}

func tails(d *deployment) string {
	var b strings.Builder
	for _, p := range d.procs {
		fmt.Fprintf(&b, "--- %s log (end) ---\n%s\n", p.name, p.logTail())
	}
	return b.String()
}
