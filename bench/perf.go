package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// profiler is a `perf record` of the server processes during one
// request type: Go keeps frame pointers, so perf's call graphs need no
// change to the binary (which serves no pprof endpoint).
type profiler struct {
	cmd    *exec.Cmd
	data   string
	report string
}

func startPerf(ctx context.Context, s *settings, backend string, req request, d *deployment) (*profiler, error) {
	if err := os.MkdirAll(s.perfDir, 0o755); err != nil {
		return nil, fmt.Errorf("perf folder: %w", err)
	}
	pids := make([]string, len(d.procs))
	for i, p := range d.procs {
		pids[i] = strconv.Itoa(p.cmd.Process.Pid)
	}
	name := backend + "-" + req.key
	p := &profiler{
		data:   filepath.Join(s.perfDir, name+".perf.data"),
		report: filepath.Join(s.perfDir, name+".perf.txt"),
	}
	secs := strconv.Itoa(int(s.duration / time.Second))
	p.cmd = exec.CommandContext(ctx, "perf", "record", "-q", "-F", "499", "--call-graph", "fp",
		"-p", strings.Join(pids, ","), "-o", p.data, "--", "sleep", secs)
	if out, err := os.Create(p.report + ".log"); err == nil {
		p.cmd.Stdout, p.cmd.Stderr = out, out
		defer out.Close()
	}
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("perf record (install linux-perf or unset BENCH_PERF): %w", err)
	}
	return p, nil
}

// finish waits for the recording and writes the self-time and the
// inclusive-time tables next to it.
func (p *profiler) finish(logf func(string, ...any)) error {
	if err := p.cmd.Wait(); err != nil {
		return fmt.Errorf("perf record: %w", err)
	}
	var report []byte
	for _, mode := range []string{"--no-children", "--children"} {
		out, err := exec.Command("perf", "report", "-i", p.data, "--stdio", mode, "-g", "none",
			"--percent-limit", "1.5", "--sort", "symbol").Output()
		if err != nil {
			return fmt.Errorf("perf report: %w", err)
		}
		report = append(report, fmt.Sprintf("### perf report %s\n", mode)...)
		report = append(report, out...)
	}
	if err := os.WriteFile(p.report, report, 0o644); err != nil {
		return fmt.Errorf("perf report: %w", err)
	}
	logf("  profile: %s", p.report)
	return nil
}
