package redfishbmc

import (
	"strings"
	"time"
)

// fault is an injected misbehaviour applied to the next matching requests.
type fault struct {
	method    string // "" matches any method
	path      string // substring of the path; "" matches any
	remaining int
	status    int
	messageID string
	drop      bool
	delay     time.Duration
}

func (f *fault) matches(method, path string) bool {
	return (f.method == "" || f.method == method) && strings.Contains(path, f.path)
}

// Match narrows a fault to requests of a method ("" any) whose path
// contains path.
type Match struct {
	Method string
	Path   string
}

func (b *BMC) addFault(f fault) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.faults = append(b.faults, f)
}

// FailNext answers the next n requests with status (and a Redfish error
// body). Authentication is not checked for them.
func (b *BMC) FailNext(n, status int) { b.addFault(fault{remaining: n, status: status}) }

// FailNextMatching answers the next n requests matching m with status; a
// non-empty messageID goes into the error body (e.g.
// "Base.1.8.ActionParameterValueConflict").
func (b *BMC) FailNextMatching(m Match, n, status int, messageID string) {
	b.addFault(fault{method: m.Method, path: m.Path, remaining: n, status: status, messageID: messageID})
}

// DropNext closes the connection of the next n requests without answering.
func (b *BMC) DropNext(n int) { b.addFault(fault{remaining: n, drop: true}) }

// SlowNext delays the next n requests by d before handling them normally.
func (b *BMC) SlowNext(n int, d time.Duration) { b.addFault(fault{remaining: n, delay: d}) }

// ExpireSessions forgets every session token, so the next request that uses
// one gets a 401 and the client has to log in again.
func (b *BMC) ExpireSessions() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.sessions = map[string]string{}
}

// takeFault returns the first pending fault matching the request and counts
// it down.
func (b *BMC) takeFault(method, path string) (fault, bool) {
	for i := range b.faults {
		f := &b.faults[i]
		if f.remaining > 0 && f.matches(method, path) {
			f.remaining--
			out := *f
			if f.remaining == 0 {
				b.faults = append(b.faults[:i], b.faults[i+1:]...)
			}
			return out, true
		}
	}
	return fault{}, false
}

// Count returns how many requests of method ("" any) for exactly path were
// received.
func (b *BMC) Count(method, path string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if method != "" {
		return b.counts[method+" "+path]
	}
	n := 0
	for k, v := range b.counts {
		if _, p, _ := strings.Cut(k, " "); p == path {
			n += v
		}
	}
	return n
}

// Requests returns the total number of requests received.
func (b *BMC) Requests() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.total
}

// SessionsCreated returns how many sessions were created.
func (b *BMC) SessionsCreated() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.created
}

// ActiveSessions returns how many sessions exist.
func (b *BMC) ActiveSessions() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.sessions)
}

// ClearFaults drops every pending injected fault: the BMC answers
// normally again.
func (b *BMC) ClearFaults() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.faults = nil
}
