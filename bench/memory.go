package main

import (
	"maps"
	"slices"
	"sync"
	"time"
)

// sampleEvery is how often the tracker reads every server's VmRSS.
const sampleEvery = 250 * time.Millisecond

// tracker follows the memory of a deployment's processes through the
// run: a VmRSS sample every sampleEvery, and the exact peak (VmHWM, which
// the kernel keeps) of each phase, reset at the phase's start.
type tracker struct {
	start time.Time
	res   *BackendRun
	mu    sync.Mutex
	pids  map[string]int
	cur   *Phase
	stop  chan struct{}
	done  chan struct{}
}

func newTracker(res *BackendRun) *tracker {
	t := &tracker{start: time.Now(), res: res, pids: map[string]int{}, stop: make(chan struct{}), done: make(chan struct{})}
	go t.sample()
	return t
}

// watch starts following a process, or its replacement under the same
// name (a restarted conductor).
func (t *tracker) watch(name string, pid int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.pids[name] = pid
}

func (t *tracker) sample() {
	defer close(t.done)
	tick := time.NewTicker(sampleEvery)
	defer tick.Stop()
	for {
		select {
		case <-t.stop:
			return
		case <-tick.C:
		}
		t.mu.Lock()
		at := time.Since(t.start)
		for _, name := range slices.Sorted(maps.Keys(t.pids)) {
			// A process being restarted has no status: no sample.
			if m, err := readStatus(t.pids[name]); err == nil {
				t.res.RSS = append(t.res.RSS, RSSSample{At: at, Process: name, KiB: m.rss})
			}
		}
		t.mu.Unlock()
	}
}

// phase ends the current phase and begins the next.
func (t *tracker) phase(name string, nodes int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.endLocked()
	for _, pid := range t.pids {
		// Best effort: the figure is then the peak since the start.
		_ = resetPeak(pid)
	}
	t.cur = &Phase{Name: name, Nodes: nodes, Start: time.Since(t.start), Peak: map[string]int{}}
}

// end closes the current phase.
func (t *tracker) end() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.endLocked()
}

func (t *tracker) endLocked() {
	if t.cur == nil {
		return
	}
	t.cur.End = time.Since(t.start)
	for name, pid := range t.pids {
		if m, err := readStatus(pid); err == nil {
			t.cur.Peak[name] = m.hwm
		}
	}
	t.res.Phases = append(t.res.Phases, t.cur)
	t.cur = nil
}

// close ends the phase and the sampling.
func (t *tracker) close() {
	t.end()
	close(t.stop)
	<-t.done
}
