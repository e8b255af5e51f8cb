package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// The results of a run are plain data, written as JSON (BENCH_JSON) so
// that the report and the charts can be rendered again from a finished
// run (-render) without measuring anything.

// Run is one invocation of the bench.
type Run struct {
	Started  time.Time     `json:"started"`
	Finished time.Time     `json:"finished"`
	Machine  string        `json:"machine"`
	Command  string        `json:"command"`
	Commit   string        `json:"commit"`   // of the tree the bench ran in
	LoadAvg  []string      `json:"load_avg"` // at the start of each backend and at the end
	Duration time.Duration `json:"duration"`
	Conc     int           `json:"concurrency"`
	Agents   int           `json:"agents"`
	Backends []*BackendRun `json:"backends"`
}

// BackendRun is one deployment measured over a growing fleet: sqlite
// (all-in-one), mariadb (api + conductor) or upstream (Debian's Ironic).
type BackendRun struct {
	Name    string     `json:"name"`
	Version string     `json:"version,omitempty"`
	Create  *Create    `json:"create,omitempty"`
	Sizes   []*SizeRun `json:"sizes"`
	Phases  []*Phase   `json:"phases"`
	// RSS samples every process's VmRSS through the run.
	RSS []RSSSample `json:"rss"`
	// Skipped says why the backend did not run.
	Skipped string `json:"skipped,omitempty"`
}

// Create is the enrolment through the API.
type Create struct {
	Nodes   int           `json:"nodes"`
	Conc    int           `json:"concurrency"`
	Elapsed time.Duration `json:"elapsed"`
	CPU     time.Duration `json:"cpu"`
	P50     time.Duration `json:"p50"`
	P99     time.Duration `json:"p99"`
}

// CPUPerNode is the server CPU one POST /v1/nodes costs.
func (c *Create) CPUPerNode() time.Duration { return c.CPU / time.Duration(max(c.Nodes, 1)) }

// SizeRun is everything measured at one fleet size.
type SizeRun struct {
	Nodes    int               `json:"nodes"`
	BulkLoad time.Duration     `json:"bulk_load"`
	Loads    []*Load           `json:"loads"`
	Floors   map[string]*Floor `json:"floors,omitempty"`
	Pages    []*PagePoint      `json:"pages,omitempty"`
	Sync     *Sync             `json:"sync,omitempty"`
	Stream   *Stream           `json:"stream,omitempty"`
	Beats    []*Beats          `json:"heartbeats,omitempty"`
}

// Load is one request type driven by the closed-loop clients.
type Load struct {
	Key      string        `json:"key"` // list, detail, nova, show, patch
	Name     string        `json:"name"`
	Version  string        `json:"version"`
	Requests int           `json:"requests"`
	Errors   int           `json:"errors"`
	FirstErr string        `json:"first_error,omitempty"`
	Elapsed  time.Duration `json:"elapsed"`
	CPU      time.Duration `json:"cpu"`
	P50      time.Duration `json:"p50"`
	P99      time.Duration `json:"p99"`
	Bytes    int64         `json:"bytes"`
}

// CPUPerRequest is the server's CPU cost of one answer, which other load
// on the machine does not inflate the way it inflates latency.
func (l *Load) CPUPerRequest() time.Duration {
	if l.Requests == 0 {
		return 0
	}
	return l.CPU / time.Duration(l.Requests)
}

// Rate is answers per second.
func (l *Load) Rate() float64 { return float64(l.Requests) / l.Elapsed.Seconds() }

// Floor is the SQL-plus-JSON floor of a list request.
type Floor struct {
	Query string        `json:"query"`
	CPU   time.Duration `json:"cpu"` // per operation, one at a time
	P50   time.Duration `json:"p50"`
	P99   time.Duration `json:"p99"`
	Rate  float64       `json:"rate"` // GOMAXPROCS at once, per second
	Bytes int           `json:"bytes"`
}

// PagePoint is the CPU of one list request at one page size.
type PagePoint struct {
	Key   string        `json:"key"`
	Limit int           `json:"limit"`
	CPU   time.Duration `json:"cpu"` // per request
}

// Sync is one power-sync pass measured on its own.
type Sync struct {
	Nodes int           `json:"nodes"` // nodes the pass looks at (not in deploy wait)
	Pass  time.Duration `json:"pass"`  // as the conductor measured it
	CPU   time.Duration `json:"cpu"`   // the conductor's, from its start to the pass's end
}

// Beats is heartbeats through POST /v1/heartbeat/{node} from concurrent
// fake agents.
type Beats struct {
	Agents   int           `json:"agents"`
	Nodes    int           `json:"nodes"`
	Accepted int           `json:"accepted"`
	Busy     int           `json:"busy"` // 503: no free conductor worker
	Errors   int           `json:"errors"`
	FirstErr string        `json:"first_error,omitempty"`
	Elapsed  time.Duration `json:"elapsed"`
	CPU      time.Duration `json:"cpu"`
	P50      time.Duration `json:"p50"`
	P99      time.Duration `json:"p99"`
}

// Rate is accepted heartbeats per second.
func (b *Beats) Rate() float64 { return float64(b.Accepted) / b.Elapsed.Seconds() }

// Phase is a stretch of the run with the peak RSS (VmHWM, reset at its
// start) of each server process during it.
type Phase struct {
	Name  string         `json:"name"`
	Nodes int            `json:"nodes"`
	Start time.Duration  `json:"start"` // since the backend started
	End   time.Duration  `json:"end"`
	Peak  map[string]int `json:"peak_kib"`
}

// RSSSample is one reading of a process's VmRSS.
type RSSSample struct {
	At      time.Duration `json:"at"` // since the backend started
	Process string        `json:"process"`
	KiB     int           `json:"kib"`
}

func (r *Run) save(path string) error {
	// Compact: the RSS timeline is most of it.
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("results: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("results: %w", err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("results: %w", err)
	}
	return nil
}

func loadRun(path string) (*Run, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	var r Run
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("results %s: %w", path, err)
	}
	return &r, nil
}

// backend finds a backend's results by name.
func (r *Run) backend(name string) *BackendRun {
	for _, b := range r.Backends {
		if b.Name == name && b.Skipped == "" {
			return b
		}
	}
	return nil
}

// size finds the results at n nodes.
func (b *BackendRun) size(n int) *SizeRun {
	if b == nil {
		return nil
	}
	for _, s := range b.Sizes {
		if s.Nodes == n {
			return s
		}
	}
	return nil
}

// load finds a request type's results.
func (s *SizeRun) load(key string) *Load {
	if s == nil {
		return nil
	}
	for _, l := range s.Loads {
		if l.Key == key {
			return l
		}
	}
	return nil
}
