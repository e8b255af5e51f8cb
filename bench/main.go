// Command bench measures the ironic binary against the figures upstream
// Ironic reaches on the same machine kind (issue 12): it starts the
// service (all-in-one on SQLite, then api + conductor on MariaDB), enrols
// fake-hardware nodes, drives the five requests of the comparison with a
// closed-loop load generator, reads the server's memory, measures the
// SQL-plus-JSON floor of the list requests and prints a markdown table.
//
// Everything it starts listens on 127.0.0.1 and is stopped before it
// returns, also on SIGINT/SIGTERM.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
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
	nodes             int
	createConcurrency int
	loadConcurrency   int
	backends          []string
	mysqlDSN          string
	keep              bool
	out               string
	perfDir           string
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
	var results []*backendResult
	for _, b := range s.backends {
		logf("backend %s: %d nodes, %s per request type", b, s.nodes, s.duration)
		r, err := runBackend(ctx, s, b, logf)
		if err != nil {
			return fmt.Errorf("backend %s: %w", b, err)
		}
		results = append(results, r)
	}
	report := renderReport(s, results)
	fmt.Fprint(stdout, report)
	if s.out != "" {
		if err := os.WriteFile(s.out, []byte(report), 0o644); err != nil {
			return fmt.Errorf("write %s: %w", s.out, err)
		}
	}
	return nil
}

func parseSettings(args []string, stderr io.Writer) (*settings, error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	s := &settings{}
	var backends string
	fs.StringVar(&s.binary, "binary", envString("IRONIC_BIN", "bin/ironic"), "ironic binary to measure (IRONIC_BIN)")
	fs.DurationVar(&s.duration, "duration", envDuration("BENCH_DURATION", 30*time.Second), "load time per request type (BENCH_DURATION)")
	fs.IntVar(&s.nodes, "nodes", envInt("BENCH_NODES", 10000), "nodes to enrol (BENCH_NODES)")
	fs.IntVar(&s.createConcurrency, "create-concurrency", envInt("BENCH_CREATE_CONCURRENCY", 4), "concurrent POST /v1/nodes (BENCH_CREATE_CONCURRENCY)")
	fs.IntVar(&s.loadConcurrency, "concurrency", envInt("BENCH_CONCURRENCY", 8), "connections of the load generator, as wrk -c8 (BENCH_CONCURRENCY)")
	fs.StringVar(&backends, "backends", envString("BENCH_BACKENDS", "sqlite,mariadb"), "comma-separated: sqlite (all-in-one), mariadb (api + conductor) (BENCH_BACKENDS)")
	fs.StringVar(&s.mysqlDSN, "mysql", envString("BENCH_MYSQL_DSN", "root@tcp(127.0.0.1:3306)/"), "go-sql-driver DSN of the MariaDB server; a throw-away database is created in it (BENCH_MYSQL_DSN)")
	fs.BoolVar(&s.keep, "keep", os.Getenv("BENCH_KEEP") == "1", "keep the work folder and the MariaDB database (BENCH_KEEP=1)")
	fs.StringVar(&s.out, "out", os.Getenv("BENCH_OUT"), "also write the report to this file (BENCH_OUT)")
	fs.StringVar(&s.perfDir, "perf", os.Getenv("BENCH_PERF"), "record a perf profile of the server during each request type into this folder (BENCH_PERF)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	// The services run in a work folder of their own: a relative path
	// (make bench passes bin/ironic) must not depend on that.
	abs, err := filepath.Abs(s.binary)
	if err != nil {
		return nil, fmt.Errorf("binary %s: %w", s.binary, err)
	}
	s.binary = abs
	if s.nodes < 1000 || s.nodes > 1_000_000 {
		return nil, fmt.Errorf("nodes %d: want 1000..1000000 (the list requests read 1,000 per page)", s.nodes)
	}
	if s.duration < time.Second || s.duration > time.Hour {
		return nil, fmt.Errorf("duration %s: want 1s..1h", s.duration)
	}
	if s.createConcurrency < 1 || s.loadConcurrency < 1 {
		return nil, errors.New("concurrency must be at least 1")
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
	if len(s.backends) == 0 {
		return nil, errors.New("no backend chosen")
	}
	return s, nil
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
