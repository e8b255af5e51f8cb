package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"
)

// upstream is Debian's Ironic 21.4 on the same machine kind (issue 12):
// wrk -t2 -c8 -d30s, 10,000 nodes, all-in-one on SQLite.
var upstream = map[string]struct {
	rate     float64
	p50, p99 float64 // ms
	target   float64 // required multiple of upstream's req/s
}{
	"list":   {3.6, 2090, 3930, 30},
	"detail": {1.46, 4060, 15340, 30},
	"nova":   {2.43, 2820, 6390, 30},
	"show":   {106, 67, 205, 50},
	"patch":  {9.8, 771, 1360, 50},
}

const (
	upstreamCreateRate = 41.0
	upstreamRSSMiB     = 243.0
	targetCreate       = 20.0
	targetRSSMiB       = 48.0
)

// rowKey names a request in the upstream table.
func rowKey(r request) string {
	switch {
	case r.floor != "":
		return r.floor
	case strings.HasPrefix(r.name, "`PATCH"):
		return "patch"
	default:
		return "show"
	}
}

type memory struct {
	name     string
	rss, hwm int // KiB
}

// backendResult is everything measured on one deployment.
type backendResult struct {
	backend string
	create  *createResult
	loads   []*loadResult
	mem     []memory
	floors  map[string]*floorResult
	sync    *powerSyncResult
}

func runBackend(ctx context.Context, s *settings, backend string, logf func(string, ...any)) (*backendResult, error) {
	dir, err := os.MkdirTemp("", "ironic-bench-"+backend+"-")
	if err != nil {
		return nil, fmt.Errorf("work folder: %w", err)
	}
	if s.keep {
		logf("work folder %s kept", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	var d *deployment
	if backend == "sqlite" {
		d, err = startSQLite(ctx, s, dir)
	} else {
		d, err = startMariaDB(ctx, s, dir, logf)
	}
	if err != nil {
		return nil, err
	}
	defer d.stop()
	logf("service up at %s; enrolling %d nodes with %d concurrent POSTs", d.base, s.nodes, s.createConcurrency)

	res := &backendResult{backend: backend, floors: map[string]*floorResult{}}
	uuids, create, err := createNodes(ctx, d.base, s.nodes, s.createConcurrency, logf)
	if err != nil {
		return nil, fmt.Errorf("%w\n%s", err, tails(d))
	}
	res.create = create
	logf("enrolled: %.0f nodes/s, p50 %s ms, p99 %s ms", float64(create.nodes)/create.elapsed.Seconds(), ms(create.lat.p50), ms(create.lat.p99))

	for _, req := range requests() {
		if _, err := check(ctx, d.base, req, uuids); err != nil {
			return nil, fmt.Errorf("%w\n%s", err, tails(d))
		}
		var prof *profiler
		if s.perfDir != "" {
			prof, err = startPerf(ctx, s, backend, req, d)
			if err != nil {
				return nil, err
			}
		}
		cpu0, err := d.cpuTotal()
		if err != nil {
			return nil, err
		}
		l := drive(ctx, d.base, req, uuids, s.loadConcurrency, s.duration)
		cpu1, err := d.cpuTotal()
		if err != nil {
			return nil, err
		}
		l.cpu = cpu1 - cpu0
		if prof != nil {
			if err := prof.finish(logf); err != nil {
				return nil, err
			}
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		logf("%s: %.1f req/s, p50 %s ms, p99 %s ms, server CPU %s ms/request, %d errors", shortName(req.name), l.rate(), ms(l.lat.p50), ms(l.lat.p99), ms(l.cpuPerRequest()), l.errors)
		if l.errors > 0 {
			logf("  first error: %s", l.firstErr)
		}
		res.loads = append(res.loads, l)
	}
	for _, p := range d.procs {
		rss, hwm, err := p.memory()
		if err != nil {
			return nil, err
		}
		res.mem = append(res.mem, memory{name: p.name, rss: rss, hwm: hwm})
		logf("%s: RSS %.1f MiB, peak %.1f MiB", p.name, float64(rss)/1024, float64(hwm)/1024)
	}
	floorTime := min(max(s.duration/2, 4*time.Second), 20*time.Second)
	for _, kind := range []string{"list", "detail", "nova"} {
		f, err := measureFloor(ctx, d.sqlDriver, d.sqlDSN, kind, d.base, floorTime)
		if err != nil {
			return nil, err
		}
		logf("floor %s: one at a time p50 %s ms, CPU %s ms; %.1f/s on all CPUs; %d bytes", kind, ms(f.single.p50), ms(f.cpu), f.rate, f.bytes)
		res.floors[kind] = f
	}
	logf("power sync: restarting %s with the sync on for one pass", d.procs[d.conductor].name)
	if res.sync, err = measurePowerSync(ctx, s, d); err != nil {
		return nil, fmt.Errorf("power sync: %w\n%s", err, tails(d))
	}
	logf("power sync: one pass over %d nodes took %.1f s, conductor CPU %.1f s, RSS %.1f MiB, peak %.1f MiB",
		s.nodes, res.sync.pass.Seconds(), res.sync.cpu.Seconds(), float64(res.sync.rss)/1024, float64(res.sync.hwm)/1024)
	return res, nil
}

func tails(d *deployment) string {
	var b strings.Builder
	for _, p := range d.procs {
		fmt.Fprintf(&b, "--- %s log (end) ---\n%s\n", p.name, p.logTail())
	}
	return b.String()
}

func renderReport(s *settings, results []*backendResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## Run of %s\n\n", time.Now().UTC().Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(&b, "- machine: %s\n", machine())
	fmt.Fprintf(&b, "- nodes: %d; load: %d connections closed loop, %s per request type, load generator on the same machine (bench/)\n", s.nodes, s.loadConcurrency, s.duration)
	fmt.Fprintf(&b, "- upstream: Debian's Ironic 21.4, all-in-one on SQLite, wrk -t2 -c8 -d30s, 10,000 nodes, same machine kind\n\n")
	for _, r := range results {
		title := "all-in-one on SQLite"
		if r.backend == "mariadb" {
			title = "api + conductor (JSON-RPC) on MariaDB"
		}
		fmt.Fprintf(&b, "### %s\n\n", title)
		b.WriteString("| request | microversion | req/s | p50 ms | p99 ms | server CPU ms/req | upstream req/s | upstream p50 ms | upstream p99 ms | × upstream req/s | upstream p99 ÷ ours | floor CPU ms/op (req/s) | ours ÷ floor, CPU | target |\n")
		b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
		for _, l := range r.loads {
			u := upstream[rowKey(l.req)]
			speed := l.rate() / u.rate
			p99x := u.p99 / (float64(l.lat.p99) / float64(time.Millisecond))
			floorCol, ratioCol := "—", "—"
			met := speed >= u.target
			goal := fmt.Sprintf("≥ %.0f×", u.target)
			if f := r.floors[l.req.floor]; f != nil {
				floorCol = fmt.Sprintf("%s (%.0f)", ms(f.cpu), f.rate)
				ratio := float64(l.cpuPerRequest()) / float64(f.cpu)
				ratioCol = fmt.Sprintf("%.1f", ratio)
				met = met && p99x >= u.target && ratio <= 2
				goal += ", p99 ≤ 1/30, ≤ 2× floor"
			}
			errs := ""
			if l.errors > 0 {
				errs = fmt.Sprintf(" (%d errors)", l.errors)
			}
			fmt.Fprintf(&b, "| %s | %s | %.1f%s | %s | %s | %s | %g | %g | %g | %.1f× | %.1f× | %s | %s | %s %s |\n",
				l.req.name, l.req.version, l.rate(), errs, ms(l.lat.p50), ms(l.lat.p99), ms(l.cpuPerRequest()), u.rate, u.p50, u.p99,
				speed, p99x, floorCol, ratioCol, goal, verdict(met))
		}
		rate := float64(r.create.nodes) / r.create.elapsed.Seconds()
		fmt.Fprintf(&b, "| `POST /v1/nodes` (concurrency %d, %d nodes) | 1.78 | %.1f | %s | %s | | %g | | | %.1f× | | — | — | ≥ %.0f× %s |\n",
			s.createConcurrency, r.create.nodes, rate, ms(r.create.lat.p50), ms(r.create.lat.p99), upstreamCreateRate,
			rate/upstreamCreateRate, targetCreate, verdict(rate/upstreamCreateRate >= targetCreate))
		b.WriteString("\n| process | RSS after the load MiB | peak (VmHWM) MiB | upstream RSS MiB | target |\n|---|---|---|---|---|\n")
		total := 0
		for _, m := range r.mem {
			total += m.rss
			fmt.Fprintf(&b, "| %s | %.1f | %.1f | %g | |\n", m.name, float64(m.rss)/1024, float64(m.hwm)/1024, upstreamRSSMiB)
		}
		fmt.Fprintf(&b, "| total | %.1f | | %g | ≤ %g MiB %s |\n\n", float64(total)/1024, upstreamRSSMiB, targetRSSMiB, verdict(float64(total)/1024 <= targetRSSMiB))
		if y := r.sync; y != nil {
			perNode := y.cpu.Seconds() / float64(s.nodes)
			fmt.Fprintf(&b, "- power sync (off during the request windows): one pass over %d nodes took %.1f s with conductor CPU %.2f s (%.0f µs/node, %.1f s pro rata at 50,000 nodes: goal ≤ 5 s %s); the conductor's RSS after it %.1f MiB, peak %.1f MiB since its restart\n",
				s.nodes, y.pass.Seconds(), y.cpu.Seconds(), perNode*1e6, perNode*50000, verdict(perNode*50000 <= 5), float64(y.rss)/1024, float64(y.hwm)/1024)
		}
		for _, kind := range []string{"list", "detail", "nova"} {
			if f := r.floors[kind]; f != nil {
				fmt.Fprintf(&b, "- floor %s: `%s` + JSON encoding, %d bytes; one at a time p50 %s ms, p99 %s ms, CPU %s ms; %.0f/s with %d goroutines\n", kind, floorQueries[kind], f.bytes, ms(f.single.p50), ms(f.single.p99), ms(f.cpu), f.rate, runtime.GOMAXPROCS(0))
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

func verdict(met bool) string {
	if met {
		return "met"
	}
	return "**missed**"
}
