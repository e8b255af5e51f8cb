package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"
)

// The change stream (issue 24, item 1): streamSubscribers clients follow
// GET /openkeel/v1/changes over HTTP while one writer PATCHes nodes
// through the API, one at a time. Each PATCH writes a value of its own
// into extra/foo; the event's object carries it, which ties every event a
// subscriber receives to the PATCH that made it. Latency is from the
// PATCH's start (the commit is inside it) to the event's arrival.

const (
	streamSubscribers = 100
	streamPath        = "/openkeel/v1/changes?resource=node"
	// streamMarker starts the values the writer writes: unique per PATCH.
	streamMarker = `"stream-`
	// streamDrain bounds the wait for the subscribers to receive the
	// writer's last changes once it has stopped.
	streamDrain = 60 * time.Second
)

// Stream is the change-stream phase's figures.
type Stream struct {
	Subscribers int           `json:"subscribers"`
	Writes      int           `json:"writes"`     // PATCHes answered 200
	WriteErrors int           `json:"write_errs"` // PATCHes that were not
	FirstErr    string        `json:"first_error,omitempty"`
	Delivered   int           `json:"delivered"` // events of those PATCHes received, all subscribers
	Missing     int           `json:"missing"`   // subscribers × writes − delivered
	Elapsed     time.Duration `json:"elapsed"`   // first PATCH to last event
	CPU         time.Duration `json:"cpu"`       // the servers', over Elapsed
	P50         time.Duration `json:"p50"`
	P99         time.Duration `json:"p99"`
	Max         time.Duration `json:"max"`
}

// Rate is events delivered per second, all subscribers together.
func (s *Stream) Rate() float64 { return float64(s.Delivered) / s.Elapsed.Seconds() }

// CPUPerEvent is the servers' CPU per event delivered.
func (s *Stream) CPUPerEvent() time.Duration {
	return s.CPU / time.Duration(max(s.Delivered, 1))
}

// streamWrites is what the writer started when: the start of PATCH i is
// starts[i], published before the PATCH is sent.
type streamWrites struct {
	mu     sync.Mutex
	starts []time.Time
}

func (w *streamWrites) add(t time.Time) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.starts = append(w.starts, t)
	return len(w.starts) - 1
}

func (w *streamWrites) start(i int) (time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if i < 0 || i >= len(w.starts) {
		return time.Time{}, false
	}
	return w.starts[i], true
}

// streamSubscriber is one client's received events: latencies by write.
type streamSubscriber struct {
	mu      sync.Mutex
	got     map[int]time.Duration
	err     error
	arrived chan struct{} // signalled (without blocking) on each event
}

// measureStream runs the phase for d: subscribers connect, the writer
// PATCHes nodes (in turn, so that a node is written again only after
// every other one) for dur, then the subscribers get up to streamDrain to
// receive the rest.
func measureStream(ctx context.Context, d *deployment, uuids []string, subscribers int, dur time.Duration) (*Stream, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	writes := &streamWrites{}
	subs := make([]*streamSubscriber, subscribers)
	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: subscribers + 1, DisableCompression: true}}
	defer client.CloseIdleConnections()
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	connected := make(chan error, subscribers)
	for i := range subs {
		s := &streamSubscriber{got: map[int]time.Duration{}, arrived: make(chan struct{}, 1)}
		subs[i] = s
		wg.Go(func() { s.follow(ctx, client, d.base, writes, connected) })
	}
	for range subs {
		if err := <-connected; err != nil {
			return nil, fmt.Errorf("subscribe: %w", err)
		}
	}
	res := &Stream{Subscribers: subscribers}
	cpu0, err := d.cpuTotal()
	if err != nil {
		return nil, err
	}
	begin := time.Now()
	res.Writes, res.WriteErrors, res.FirstErr = streamWriter(ctx, d.base, uuids, writes, dur)
	expect := len(writes.starts)
	drain, stopDrain := context.WithTimeout(ctx, streamDrain)
	defer stopDrain()
	last := begin
	for _, s := range subs {
		for drain.Err() == nil {
			s.mu.Lock()
			n, serr := len(s.got), s.err
			s.mu.Unlock()
			if n >= expect || serr != nil {
				break
			}
			select {
			case <-s.arrived:
			case <-drain.Done():
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cpu1, err := d.cpuTotal()
	if err != nil {
		return nil, err
	}
	cancel()
	wg.Wait()
	var lat []time.Duration
	for _, s := range subs {
		if s.err != nil && !errors.Is(s.err, context.Canceled) {
			return nil, fmt.Errorf("subscriber: %w", s.err)
		}
		for i, l := range s.got {
			if i < expect {
				lat = append(lat, l)
				if at := writes.starts[i].Add(l); at.After(last) {
					last = at
				}
			}
		}
	}
	res.Delivered = len(lat)
	res.Missing = subscribers*expect - res.Delivered
	res.Elapsed = last.Sub(begin)
	res.CPU = cpu1 - cpu0
	l := summarize(slices.Clip(lat))
	res.P50, res.P99, res.Max = l.p50, l.p99, l.max
	return res, nil
}

// streamWriter PATCHes extra/foo of the nodes in turn, one at a time,
// for dur or until every node has been written once (an event's object is
// the node as it is when delivered: a node written twice could show a
// later write's value); it returns the PATCHes answered 200, the others and the first
// error.
func streamWriter(ctx context.Context, base string, uuids []string, writes *streamWrites, dur time.Duration) (ok, failed int, firstErr string) {
	client := newClient(1)
	defer client.CloseIdleConnections()
	deadline := time.Now().Add(dur)
	for k := 0; k < len(uuids) && time.Now().Before(deadline) && ctx.Err() == nil; k++ {
		i := writes.add(time.Now())
		body := fmt.Appendf(nil, `[{"op": "replace", "path": "/extra/foo", "value": "stream-%d"}]`, i)
		status, data, err := call(ctx, client, http.MethodPatch, base+"/v1/nodes/"+uuids[k], "1.78", body)
		if err == nil && status == http.StatusOK {
			ok++
			continue
		}
		if err == nil {
			err = fmt.Errorf("PATCH: %d %s", status, truncate(data))
		}
		if failed == 0 {
			firstErr = err.Error()
		}
		failed++
	}
	return ok, failed, firstErr
}

// follow opens the stream, says so on connected (or why not), and records
// each event of the writer's until ctx ends.
func (s *streamSubscriber) follow(ctx context.Context, client *http.Client, base string, writes *streamWrites, connected chan<- error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+streamPath, nil)
	if err != nil {
		connected <- err
		return
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := client.Do(req)
	if err != nil {
		connected <- err
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 1000))
		connected <- fmt.Errorf("GET %s: %d %s", streamPath, resp.StatusCode, truncate(data))
		return
	}
	connected <- nil
	err = readEvents(resp.Body, func(data []byte) {
		i, ok := streamWriteOf(data)
		if !ok {
			return
		}
		t0, ok := writes.start(i)
		if !ok {
			return
		}
		lat := time.Since(t0)
		s.mu.Lock()
		if _, seen := s.got[i]; !seen {
			s.got[i] = lat
		}
		s.mu.Unlock()
		select {
		case s.arrived <- struct{}{}:
		default:
		}
	})
	if ctx.Err() != nil {
		err = ctx.Err()
	}
	s.mu.Lock()
	s.err = err
	s.mu.Unlock()
	select {
	case s.arrived <- struct{}{}:
	default:
	}
}

// readEvents calls fn with the data of each Server-Sent Event of r (its
// data lines joined by newlines) until r ends.
func readEvents(r io.Reader, fn func(data []byte)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var data []byte
	lines := 0
	for sc.Scan() {
		line := sc.Bytes()
		switch {
		case len(line) == 0:
			if lines > 0 {
				fn(data)
			}
			data, lines = data[:0], 0
		case bytes.HasPrefix(line, []byte("data:")):
			if lines > 0 {
				data = append(data, '\n')
			}
			data = append(data, bytes.TrimPrefix(line[len("data:"):], []byte(" "))...)
			lines++
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read stream: %w", err)
	}
	return io.ErrUnexpectedEOF
}

// streamWriteOf finds the writer's number in an event's data: the value
// it wrote into extra/foo, which the event's object carries.
func streamWriteOf(data []byte) (int, bool) {
	at := bytes.Index(data, []byte(streamMarker))
	if at < 0 {
		return 0, false
	}
	rest := data[at+len(streamMarker):]
	end := bytes.IndexByte(rest, '"')
	if end < 0 {
		return 0, false
	}
	i, err := strconv.Atoi(string(rest[:end]))
	return i, err == nil
}
