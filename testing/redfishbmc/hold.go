package redfishbmc

import (
	"net/http"
	"sync"
)

// Hold keeps the requests matching its Match waiting, unanswered, until
// Release: a BMC that does not answer for as long as the test wants, so a
// test decides when a conductor's call returns instead of timing it. A
// held request whose client gives up ends without an answer.
type Hold struct {
	m        Match
	released chan struct{}
	once     sync.Once

	mu      sync.Mutex
	waiting int
	arrived chan struct{} // closed and replaced at each arrival
}

// Hold starts holding the requests matching m, those already being
// handled excepted, until the returned Hold is released; closing the BMC
// releases it too.
func (b *BMC) Hold(m Match) *Hold {
	h := &Hold{m: m, released: make(chan struct{}), arrived: make(chan struct{})}
	b.mu.Lock()
	b.holds = append(b.holds, h)
	b.mu.Unlock()
	return h
}

// Release lets every held request, and every later one, through.
func (h *Hold) Release() { h.once.Do(func() { close(h.released) }) }

// Waiting returns how many requests the hold keeps waiting now.
func (h *Hold) Waiting() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.waiting
}

// WaitFor blocks until n requests are waiting at once, the hold is
// released or done is closed; it reports whether n were waiting.
func (h *Hold) WaitFor(n int, done <-chan struct{}) bool {
	for {
		h.mu.Lock()
		waiting, arrived := h.waiting, h.arrived
		h.mu.Unlock()
		if waiting >= n {
			return true
		}
		select {
		case <-arrived:
		case <-h.released:
			return false
		case <-done:
			return false
		}
	}
}

// wait keeps r until the hold is released or r's client gives up; it
// reports whether r may be answered.
func (h *Hold) wait(r *http.Request) bool {
	h.mu.Lock()
	h.waiting++
	close(h.arrived)
	h.arrived = make(chan struct{})
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		h.waiting--
		h.mu.Unlock()
	}()
	select {
	case <-h.released:
		return true
	case <-r.Context().Done():
		return false
	}
}

// holdOf returns the unreleased hold matching the request, if any; the
// caller holds b.mu.
func (b *BMC) holdOf(method, path string) *Hold {
	for _, h := range b.holds {
		select {
		case <-h.released:
			continue
		default:
		}
		f := fault{method: h.m.Method, path: h.m.Path}
		if f.matches(method, path) {
			return h
		}
	}
	return nil
}
