// Command bench measures the ironic binary against upstream Ironic and
// against the floor of its own database (issues 12 and 29): it starts the
// service (all-in-one on SQLite, then api + conductor on MariaDB), enrols
// fake-hardware nodes through the API and grows the fleet through the
// given sizes by cloning them in SQL; at each size it drives the five
// requests of the comparison with a closed-loop load generator, measures
// the SQL-plus-JSON floor of the list requests, one power-sync pass and
// heartbeats through the API, and follows every server's memory phase by
// phase. When Debian's Ironic is installed it runs it beside ours with the
// same load. It prints a markdown report and can splice it, with SVG
// charts, into BENCHMARKS.md.
//
// Everything it starts listens on 127.0.0.1 and is stopped before it
// returns, also on SIGINT/SIGTERM.
package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// settings is one run's configuration; each has an environment variable
// so that `make bench BENCH_DURATION=10s` works without flags.
type settings struct {
	binary            string
	duration          time.Duration
	sizes             []int
	apiNodes          int
	createConcurrency int
	loadConcurrency   int
	agents            []int
	backends          []string
	mysqlDSN          string
	upstream          string // auto, on, off
	upstreamSizes     []int
	upstreamAPINodes  int
	upstreamDir       string
	upstreamPort      int
	keep              bool
	markdown          string
	chartDir          string
	jsonOut           string
	render            string
	perfDir           string
	command           string
	// secrets runs our services with a key ring, so that node secrets
	// are sealed at rest (issue 25): its cost is this run against one
	// without.
	secrets bool
}

// pageSweepAt is the fleet size of the page-size sweep: 10,000 nodes, or
// the first size above, or the last one.
func (s *settings) pageSweepAt() int {
	for _, n := range s.sizes {
		if n >= 10000 {
			return n
		}
	}
	return s.sizes[len(s.sizes)-1]
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	s, err := parseSettings(args, stderr)
	if err != nil {
		return err
	}
	logf := func(format string, a ...any) {
		fmt.Fprintf(stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, a...)...)
	}
	if s.render != "" {
		r, err := loadRun(s.render)
		if err != nil {
			return err
		}
		return finish(r, s, stdout)
	}
	r := &Run{Started: time.Now(), Machine: machine(), Command: s.command, Commit: headCommit(), Duration: s.duration, Conc: s.loadConcurrency, Agents: slices.Max(s.agents)}
	backends := slices.Clone(s.backends)
	switch {
	case s.upstream == "off":
	case upstreamInstalled():
		backends = append(backends, "upstream")
	case s.upstream == "on":
		return errors.New("BENCH_UPSTREAM=on but Debian's python3-ironic (/usr/bin/ironic) is not installed")
	default:
		r.Backends = append(r.Backends, &BackendRun{Name: "upstream", Skipped: "Debian's python3-ironic is not installed"})
	}
	var firstErr error
	for _, b := range backends {
		r.LoadAvg = append(r.LoadAvg, loadAvg())
		logf("backend %s", b)
		res, err := runBackend(ctx, s, b, logf)
		if res != nil {
			r.Backends = append(r.Backends, res)
		}
		if err != nil {
			err = fmt.Errorf("backend %s: %w", b, err)
			if ctx.Err() != nil {
				return err
			}
			// One backend's failure leaves the others' figures worth
			// reporting; the run still fails.
			logf("%v", err)
			if res != nil {
				res.Skipped = "failed: " + firstLine(err.Error())
			} else {
				r.Backends = append(r.Backends, &BackendRun{Name: b, Skipped: "failed: " + firstLine(err.Error())})
			}
			firstErr = cmp.Or(firstErr, err)
		}
	}
	r.LoadAvg = append(r.LoadAvg, loadAvg())
	r.Finished = time.Now()
	if s.jsonOut != "" {
		if err := r.save(s.jsonOut); err != nil {
			return err
		}
	}
	if err := finish(r, s, stdout); err != nil {
		return err
	}
	return firstErr
}

// finish prints the report and, when asked, splices it into the
// markdown file with its charts.
func finish(r *Run, s *settings, stdout io.Writer) error {
	md := cmp.Or(s.markdown, "BENCHMARKS.md")
	section, _ := report(r, md, s.chartDir)
	fmt.Fprint(stdout, section)
	if s.markdown == "" {
		return nil
	}
	return writeReport(r, s.markdown, s.chartDir)
}

// headCommit names the checkout's HEAD; the binary may hold uncommitted
// edits of the working tree besides.
func headCommit() string {
	out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// loadAvg is /proc/loadavg's first three fields.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func parseSettings(args []string, stderr io.Writer) (*settings, error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	s := &settings{}
	var backends, sizes, upstreamSizes, agents string
	fs.StringVar(&s.binary, "binary", envString("IRONIC_BIN", "bin/ironic"), "ironic binary to measure (IRONIC_BIN)")
	fs.DurationVar(&s.duration, "duration", envDuration("BENCH_DURATION", 10*time.Second), "load time per request type (BENCH_DURATION)")
	fs.StringVar(&sizes, "nodes", envString("BENCH_NODES", "2000,10000,50000,100000"), "fleet sizes, comma-separated, ascending: the fleet grows from one to the next (BENCH_NODES)")
	fs.IntVar(&s.apiNodes, "api-nodes", envInt("BENCH_API_NODES", 10000), "nodes enrolled through the API (at most the first size); the rest are cloned in SQL (BENCH_API_NODES)")
	fs.IntVar(&s.createConcurrency, "create-concurrency", envInt("BENCH_CREATE_CONCURRENCY", 4), "concurrent POST /v1/nodes (BENCH_CREATE_CONCURRENCY)")
	fs.IntVar(&s.loadConcurrency, "concurrency", envInt("BENCH_CONCURRENCY", 8), "connections of the load generator, as wrk -c8 (BENCH_CONCURRENCY)")
	fs.StringVar(&agents, "agents", envString("BENCH_AGENTS", "32"), "concurrent fake agents heartbeating, comma-separated counts (BENCH_AGENTS)")
	fs.StringVar(&backends, "backends", envString("BENCH_BACKENDS", "sqlite,mariadb"), "comma-separated: sqlite (all-in-one), mariadb (api + conductor) (BENCH_BACKENDS)")
	fs.StringVar(&s.mysqlDSN, "mysql", envString("BENCH_MYSQL_DSN", "root@tcp(127.0.0.1:3306)/"), "go-sql-driver DSN of the MariaDB server; a throw-away database is created in it (BENCH_MYSQL_DSN)")
	fs.StringVar(&s.upstream, "upstream", envString("BENCH_UPSTREAM", "auto"), "run Debian's Ironic side by side: auto (when installed), on, off (BENCH_UPSTREAM)")
	fs.StringVar(&upstreamSizes, "upstream-nodes", envString("BENCH_UPSTREAM_NODES", "2000,10000"), "upstream's fleet sizes (BENCH_UPSTREAM_NODES)")
	fs.IntVar(&s.upstreamAPINodes, "upstream-api-nodes", envInt("BENCH_UPSTREAM_API_NODES", 500), "nodes enrolled through upstream's API (BENCH_UPSTREAM_API_NODES)")
	fs.StringVar(&s.upstreamDir, "upstream-dir", envString("REFIRONIC_DIR", "/tmp/refironic-bench"), "upstream's state folder, emptied first (REFIRONIC_DIR)")
	fs.IntVar(&s.upstreamPort, "upstream-port", envInt("REFIRONIC_PORT", 0), "upstream's API port; 0 takes a free one (REFIRONIC_PORT)")
	fs.BoolVar(&s.keep, "keep", os.Getenv("BENCH_KEEP") == "1", "keep the work folders and the MariaDB database (BENCH_KEEP=1)")
	fs.StringVar(&s.markdown, "markdown", os.Getenv("BENCH_MARKDOWN"), "splice the report into this markdown file between its bench markers and write the charts (BENCH_MARKDOWN)")
	fs.StringVar(&s.chartDir, "charts", envString("BENCH_CHARTS", "docs/bench"), "folder of the SVG charts (BENCH_CHARTS)")
	fs.StringVar(&s.jsonOut, "json", os.Getenv("BENCH_JSON"), "also write the raw results to this JSON file (BENCH_JSON)")
	fs.StringVar(&s.render, "render", "", "measure nothing: render the report from a results JSON file")
	fs.StringVar(&s.perfDir, "perf", os.Getenv("BENCH_PERF"), "record a perf profile of the server during each request type into this folder (BENCH_PERF)")
	fs.BoolVar(&s.secrets, "secrets", os.Getenv("BENCH_SECRETS") == "1", "run our services with a key ring: node secrets sealed at rest (BENCH_SECRETS=1)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	s.command = commandLine(args)
	// The services run in a work folder of their own: a relative path
	// (make bench passes bin/ironic) must not depend on that.
	abs, err := filepath.Abs(s.binary)
	if err != nil {
		return nil, fmt.Errorf("binary %s: %w", s.binary, err)
	}
	s.binary = abs
	if s.sizes, err = parseSizes("nodes", sizes); err != nil {
		return nil, err
	}
	if s.upstreamSizes, err = parseSizes("upstream-nodes", upstreamSizes); err != nil {
		return nil, err
	}
	if s.agents, err = parseCounts("agents", agents); err != nil {
		return nil, err
	}
	if s.duration < time.Second || s.duration > time.Hour {
		return nil, fmt.Errorf("duration %s: want 1s..1h", s.duration)
	}
	if s.createConcurrency < 1 || s.loadConcurrency < 1 {
		return nil, errors.New("concurrency must be at least 1")
	}
	// Heartbeat nodes are half the templates at most: 2 agents' worth.
	if s.apiNodes < 1000 || s.upstreamAPINodes < 10 {
		return nil, errors.New("api-nodes must be at least 1000, upstream-api-nodes at least 10")
	}
	if s.upstream != "auto" && s.upstream != "on" && s.upstream != "off" {
		return nil, fmt.Errorf("upstream %q: want auto, on or off", s.upstream)
	}
	for b := range strings.SplitSeq(backends, ",") {
		switch b = strings.TrimSpace(b); b {
		case "sqlite", "mariadb":
			s.backends = append(s.backends, b)
		case "":
		default:
			return nil, fmt.Errorf("unknown backend %q (sqlite, mariadb)", b)
		}
	}
	if len(s.backends) == 0 && s.upstream == "off" && s.render == "" {
		return nil, errors.New("no backend chosen")
	}
	return s, nil
}

// parseSizes reads an ascending list of fleet sizes.
func parseSizes(name, v string) ([]int, error) {
	out, err := parseCounts(name, v)
	if err != nil {
		return nil, err
	}
	for i, n := range out {
		if n < 1000 || n > 1_000_000 {
			return nil, fmt.Errorf("%s %d: want 1000..1000000 (the list requests read 1,000 per page)", name, n)
		}
		if i > 0 && n <= out[i-1] {
			return nil, fmt.Errorf("%s %s: want ascending sizes (the fleet grows)", name, v)
		}
	}
	return out, nil
}

func parseCounts(name, v string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(v, ",") {
		f = strings.TrimSpace(strings.ReplaceAll(f, "_", ""))
		if f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%s %q: want positive integers", name, f)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: empty", name)
	}
	return out, nil
}

// commandLine is how the run was asked for: the BENCH_ settings of the
// environment and the arguments.
func commandLine(args []string) string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "BENCH_") || strings.HasPrefix(kv, "REFIRONIC_") {
			env = append(env, kv)
		}
	}
	slices.Sort(env)
	return strings.TrimSpace(strings.Join(env, " ") + " bin/ironic-bench " + strings.Join(args, " "))
}

func envString(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return v
	}
	return def
}

// envDuration accepts Go durations and, like wrk's -d, plain seconds.
func envDuration(name string, def time.Duration) time.Duration {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	if n, err := strconv.Atoi(v); err == nil {
		return time.Duration(n) * time.Second
	}
	if d, err := time.ParseDuration(v); err == nil {
		return d
	}
	return def
}

// machine describes where the figures were taken.
func machine() string {
	mem := "unknown"
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for line := range strings.SplitSeq(string(b), "\n") {
			if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				if kb, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB")); err == nil {
					mem = fmt.Sprintf("%.1f GiB", float64(kb)/(1<<20))
				}
			}
		}
	}
	model := ""
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.SplitSeq(string(b), "\n") {
			if rest, ok := strings.CutPrefix(line, "model name"); ok {
				model = ", " + strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(rest), ":"))
				break
			}
		}
	}
	return fmt.Sprintf("nproc %d%s, memory %s, %s/%s, %s", runtime.NumCPU(), model, mem, runtime.GOOS, runtime.GOARCH, runtime.Version())
}
