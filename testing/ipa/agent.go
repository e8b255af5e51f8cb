// Package ipa is a fake ironic-python-agent for tests: an httptest server
// on 127.0.0.1 that answers the conductor's requests as IPA's REST API
// does (GET /, /v1/, /v1/status, /v1/commands/ list and run,
// /v1/commands/<id>), with IPA's result shapes and statuses, configured by
// a fluent builder and able to inject faults:
//
//	agent := ipa.New(t).WithToken("tok").WithTLS()
//	agent.Handle("clean.execute_clean_step", ipa.Async(2, map[string]any{...}))
//	agent.BusyNext(1)
//	url := agent.URL()
//
// Like IPA, the agent powers its machine off some time after
// standby.power_off (PowerOffDelay, on the fixture's clock): it syncs and
// flushes the disks first. PoweredOff tells a power interface or BMC
// fixture whether the machine is off yet; once it is, the API stops
// answering.
//
// The server starts on the first call of URL (so TLS and the token can be
// chosen first) and stops when the test ends. Every request is logged to
// the test with the agent token left out; counters let tests assert what
// the client sent. ironic.go holds the other direction: lookups and
// heartbeats sent to an Ironic API as IPA sends them.
package ipa

import (
	"crypto/subtle"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/openkeel/ironic/internal/clock"
)

// Command statuses as IPA reports them.
const (
	Running         = "RUNNING"
	Succeeded       = "SUCCEEDED"
	Failed          = "FAILED"
	VersionMismatch = "CLEAN_VERSION_MISMATCH"
)

// Version is the agent version the fixture reports.
const Version = "10.2.0"

// DefaultPowerOffDelay is how long the machine stays on after
// standby.power_off unless WithPowerOffDelay says otherwise. IPA syncs
// and flushes the disks before powering off (39 s measured in a VM); a
// few seconds are enough for a conductor that powers off out of band at
// once to be seen doing it, and short enough for tests on the real clock.
const DefaultPowerOffDelay = 2 * time.Second

// Outcome is what a command handler decides.
type Outcome struct {
	// Result becomes command_result on success. A string is wrapped as
	// IPA wraps it ({"result": ...}, prefixed with the command name for
	// asynchronous commands).
	Result any
	// Error, when not nil, makes the command FAILED with this
	// command_error (a string, or an error object from CommandError).
	Error any
	// Status overrides the final status (VersionMismatch).
	Status string
	// Async marks an asynchronous command: it answers RUNNING and ends
	// after Polls status reads (or at once when the conductor waits).
	Async bool
	Polls int
	// Fault, when not nil, is returned as an HTTP error instead of a
	// command result (IPA's InvalidContentError and friends).
	Fault *Fault
	// PowersOff makes the machine power off the agent's PowerOffDelay
	// after the command was accepted (standby.power_off).
	PowersOff bool
}

// Fault is an HTTP error answer in IPA's (WSME-like) shape.
type Fault struct {
	Status      int
	Faultstring string
}

// Handler runs a command; params are the request's params.
type Handler func(params map[string]any) Outcome

// Sync is a synchronous command that succeeds with result.
func Sync(result any) Handler {
	return func(map[string]any) Outcome { return Outcome{Result: result} }
}

// Async is an asynchronous command that stays RUNNING for polls status
// reads, then succeeds with result.
func Async(polls int, result any) Handler {
	return func(map[string]any) Outcome { return Outcome{Async: true, Polls: polls, Result: result} }
}

// PowerOff is IPA's standby.power_off: an asynchronous command after which
// the machine powers off, once the disks are flushed.
func PowerOff() Handler {
	return func(map[string]any) Outcome { return Outcome{Async: true, PowersOff: true} }
}

// AsyncFail is an asynchronous command that fails with err after polls
// status reads.
func AsyncFail(polls int, err any) Handler {
	return func(map[string]any) Outcome { return Outcome{Async: true, Polls: polls, Error: err} }
}

// CommandError is IPA's serialized RESTError, e.g.
// CommandError("CleaningError", "Clean step failed", "disk on fire", 500).
func CommandError(typ, message, details string, code int) map[string]any {
	return map[string]any{"type": typ, "message": message, "details": details, "code": code}
}

// Command is one command as the agent records it.
type Command struct {
	ID     string         `json:"id"`
	Name   string         `json:"command_name"`
	Status string         `json:"command_status"`
	Error  any            `json:"command_error"`
	Result any            `json:"command_result"`
	Params map[string]any `json:"-"`
	// Method is the full "<extension>.<command>" name that was sent.
	Method string `json:"-"`

	pending   Outcome
	pollsLeft int
}

// Agent is one fake IPA.
type Agent struct {
	t TB

	mu        sync.Mutex
	srv       *httptest.Server
	useTLS    bool
	token     string
	startedAt float64

	handlers map[string]Handler
	// commands is every command of every ramdisk session; the running
	// agent knows those from session on.
	commands []*Command
	session  int

	busy        int
	dropPOST    int
	loseAnswers int
	dropStatus  int
	delay       time.Duration
	delayN      int
	down        bool

	// clk dates the power off; powerOffDelay < 0 never powers off;
	// powerOffAt is when the current session's machine goes off (zero:
	// not asked to).
	clk           clock.Clock
	powerOffDelay time.Duration
	powerOffAt    time.Time

	counts map[string]int
}

// TB is what the agent needs of its test: testing.TB has it, and the
// fixture's process (cmd/fake-ipa) has its own.
type TB interface {
	Helper()
	Cleanup(func())
	Fatalf(format string, args ...any)
	Log(args ...any)
	Logf(format string, args ...any)
}

// New returns an agent with IPA's default command handlers, no token
// (every command call is refused, as IPA does before lookup) and plain
// HTTP. It is not listening until URL is called.
func New(t TB) *Agent {
	t.Helper()
	a := &Agent{
		t:             t,
		startedAt:     float64(time.Now().UnixNano()) / 1e9,
		handlers:      defaultHandlers(),
		counts:        map[string]int{},
		clk:           clock.Real{},
		powerOffDelay: DefaultPowerOffDelay,
	}
	t.Cleanup(a.close)
	return a
}

// WithToken sets the agent token the agent learnt at lookup.
func (a *Agent) WithToken(token string) *Agent {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.token = token
	return a
}

// WithClock replaces the real clock that times the power off, so that a
// test can share a virtual clock with the conductor code that waits for it.
func (a *Agent) WithClock(c clock.Clock) *Agent {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.clk = c
	return a
}

// WithPowerOffDelay sets how long the machine stays on after
// standby.power_off (DefaultPowerOffDelay).
func (a *Agent) WithPowerOffDelay(d time.Duration) *Agent {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.powerOffDelay = max(d, 0)
	return a
}

// NeverPowerOff makes a machine whose shutdown hangs: standby.power_off is
// accepted, the agent keeps answering and the machine stays on.
func (a *Agent) NeverPowerOff() *Agent {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.powerOffDelay = -1
	return a
}

// PoweredOff reports whether the machine has powered off after
// standby.power_off, by the fixture's clock; what a BMC would read.
func (a *Agent) PoweredOff() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.poweredOff()
}

// poweredOff runs with a.mu held.
func (a *Agent) poweredOff() bool {
	return !a.powerOffAt.IsZero() && !a.clk.Now().Before(a.powerOffAt)
}

// WithTLS serves HTTPS with httptest's self-signed certificate (valid for
// 127.0.0.1), as IPA's auto-TLS does; CAPEM gives the certificate to trust.
func (a *Agent) WithTLS() *Agent {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.srv != nil {
		a.t.Fatalf("ipa: WithTLS after the server started")
	}
	a.useTLS = true
	return a
}

// Handle replaces the handler of method ("clean.execute_clean_step").
func (a *Agent) Handle(method string, h Handler) *Agent {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.handlers[method] = h
	return a
}

// URL starts the server if needed and returns its base URL, the agent's
// callback_url.
func (a *Agent) URL() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.srv == nil {
		a.srv = httptest.NewUnstartedServer(http.HandlerFunc(a.serve))
		a.srv.Config.ErrorLog = log.New(testWriter{a.t}, "ipa: ", 0)
		if a.useTLS {
			a.srv.StartTLS()
		} else {
			a.srv.Start()
		}
	}
	return a.srv.URL
}

// CAPEM is the PEM certificate a client must trust to reach a TLS agent
// (what IPA sends as agent_verify_ca); empty without TLS.
func (a *Agent) CAPEM() string {
	a.URL()
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.useTLS {
		return ""
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: a.srv.Certificate().Raw}))
}

type testWriter struct{ t TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func (a *Agent) close() {
	a.mu.Lock()
	srv := a.srv
	a.mu.Unlock()
	if srv != nil {
		srv.CloseClientConnections()
		srv.Close()
	}
}

// BusyNext answers the next n command POSTs with IPA's 409 "Agent is
// busy" whatever the agent is doing.
func (a *Agent) BusyNext(n int) { a.mu.Lock(); a.busy += n; a.mu.Unlock() }

// DropNext closes the connection of the next n command POSTs before the
// command runs.
func (a *Agent) DropNext(n int) { a.mu.Lock(); a.dropPOST += n; a.mu.Unlock() }

// LoseAnswerNext runs the next n posted commands but closes the connection
// instead of answering: the lost-answer case the client recovers from by
// reading the command status.
func (a *Agent) LoseAnswerNext(n int) { a.mu.Lock(); a.loseAnswers += n; a.mu.Unlock() }

// DropStatusNext closes the connection of the next n status reads
// (GET /v1/commands/).
func (a *Agent) DropStatusNext(n int) { a.mu.Lock(); a.dropStatus += n; a.mu.Unlock() }

// SlowNext delays the next n requests by d.
func (a *Agent) SlowNext(n int, d time.Duration) {
	a.mu.Lock()
	a.delayN, a.delay = n, d
	a.mu.Unlock()
}

// Down makes every request fail at the connection, as a powered-off or
// locked-down ramdisk.
func (a *Agent) Down() { a.mu.Lock(); a.down = true; a.mu.Unlock() }

// Up starts the agent after Down or its power off as a machine booting
// the ramdisk again does: a new IPA process on the same address, with a
// new started_at and an empty command list (the conductor tells a fresh
// boot from one whose step is still running by that list). Commands keeps
// the history of every session.
func (a *Agent) Up() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.down && !a.poweredOff() {
		return
	}
	a.down = false
	a.powerOffAt = time.Time{}
	a.session = len(a.commands)
	a.startedAt = float64(time.Now().UnixNano()) / 1e9
}

// running is the command list of the current ramdisk session.
func (a *Agent) running() []*Command { return a.commands[a.session:] }

// Count returns how many requests of a kind arrived: a full command name
// ("clean.get_clean_steps"), "status" (list), "get" (one command),
// "unauthorized", "busy" or "dropped".
func (a *Agent) Count(kind string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.counts[kind]
}

// Commands returns a copy of the commands run so far, oldest first.
func (a *Agent) Commands() []Command {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]Command, len(a.commands))
	for i, c := range a.commands {
		out[i] = *c
	}
	return out
}

// LastParams returns the params of the last run of method, nil if none.
func (a *Agent) LastParams(method string) map[string]any {
	a.mu.Lock()
	defer a.mu.Unlock()
	for i := len(a.commands) - 1; i >= 0; i-- {
		if a.commands[i].Method == method {
			return a.commands[i].Params
		}
	}
	return nil
}

// Finish ends a RUNNING command now with its pending outcome (the
// handler's, independent of polls).
func (a *Agent) Finish(id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, c := range a.running() {
		if c.ID == id && c.Status == Running {
			c.finish()
		}
	}
}

func (c *Command) finish() {
	o := c.pending
	switch {
	case o.Error != nil:
		c.Status, c.Error = Failed, o.Error
	default:
		c.Status = Succeeded
		if s, ok := o.Result.(string); ok {
			// IPA prefixes the strings of asynchronous commands with the
			// command name, and only those.
			if o.Async {
				s = c.Name + ": " + s
			}
			o.Result = map[string]any{"result": s}
		}
		c.Result = o.Result
	}
	if o.Status != "" {
		c.Status = o.Status
		if o.Status == VersionMismatch {
			c.Result = nil
		}
	}
}

// tick advances every RUNNING command by one status read.
func (a *Agent) tick() {
	for _, c := range a.running() {
		if c.Status != Running {
			continue
		}
		if c.pollsLeft <= 0 {
			c.finish()
			continue
		}
		c.pollsLeft--
	}
}

// redact hides the agent token in a logged URL.
func redact(u *url.URL) string {
	q := u.Query()
	if q.Has("agent_token") {
		q.Set("agent_token", "***")
	}
	if len(q) == 0 {
		return u.Path
	}
	return u.Path + "?" + q.Encode()
}

func (a *Agent) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	a.mu.Lock()
	if a.delayN > 0 {
		a.delayN--
		d := a.delay
		a.mu.Unlock()
		time.Sleep(d)
		a.mu.Lock()
	}
	status, resp, drop := a.route(r, body)
	a.mu.Unlock()
	if drop {
		a.t.Logf("ipa: %s %s -> connection dropped", r.Method, redact(r.URL))
		hijack(w)
		return
	}
	a.t.Logf("ipa: %s %s -> %d", r.Method, redact(r.URL), status)
	data, _ := json.Marshal(resp)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(data)
}

func hijack(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic("ipa: connection cannot be hijacked")
	}
	conn, _, err := hj.Hijack()
	if err == nil {
		_ = conn.Close()
	}
}

func fault(status int, text string) (int, any, bool) {
	faultcode := "Client"
	if status >= 500 {
		faultcode = "Server"
	}
	return status, map[string]any{"faultcode": faultcode, "faultstring": text}, false
}

// werkzeugText is str() of a werkzeug HTTPException, which IPA puts in
// faultstring for the errors its web layer raises.
func werkzeugText(status int, description string) string {
	return fmt.Sprintf("%d %s: %s", status, http.StatusText(status), description)
}

// route answers a request; it runs with a.mu held.
func (a *Agent) route(r *http.Request, body []byte) (int, any, bool) {
	if a.down || a.poweredOff() {
		a.counts["dropped"]++
		return 0, nil, true
	}
	path := strings.TrimPrefix(r.URL.Path, "/v1")
	if path == r.URL.Path && r.URL.Path == "/" {
		return a.root(r)
	}
	switch {
	case r.URL.Path == "/v1/" && r.Method == http.MethodGet:
		return http.StatusOK, map[string]any{"id": "v1", "commands": []any{}, "status": []any{}}, false
	case path == "/status" && r.Method == http.MethodGet:
		return http.StatusOK, map[string]any{"started_at": a.startedAt, "version": Version}, false
	case path == "/commands/" && r.Method == http.MethodGet:
		if !a.tokenOK(r) {
			return a.unauthorized()
		}
		a.counts["status"]++
		if a.dropStatus > 0 {
			a.dropStatus--
			a.counts["dropped"]++
			return 0, nil, true
		}
		a.tick()
		list := make([]*Command, len(a.running()))
		copy(list, a.running())
		return http.StatusOK, map[string]any{"commands": list}, false
	case strings.HasPrefix(path, "/commands/") && r.Method == http.MethodGet:
		if !a.tokenOK(r) {
			return a.unauthorized()
		}
		a.counts["get"]++
		a.tick()
		id := strings.TrimPrefix(path, "/commands/")
		for _, c := range a.running() {
			if c.ID == id {
				if strings.EqualFold(r.URL.Query().Get("wait"), "true") && c.Status == Running {
					c.finish()
				}
				return http.StatusOK, c, false
			}
		}
		return fault(http.StatusNotFound, "Not found: Command with id "+id+" not found.")
	case path == "/commands/" && r.Method == http.MethodPost:
		if !a.tokenOK(r) {
			return a.unauthorized()
		}
		return a.run(r, body)
	}
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		return fault(http.StatusMethodNotAllowed, werkzeugText(http.StatusMethodNotAllowed, "The method is not allowed for the requested URL."))
	}
	return fault(http.StatusNotFound, werkzeugText(http.StatusNotFound, "The requested URL was not found on the server. If you entered the URL manually please check your spelling and try again."))
}

func (a *Agent) root(r *http.Request) (int, any, bool) {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	base := scheme + "://" + r.Host
	v1 := map[string]any{"id": "v1", "links": []any{
		map[string]any{"href": base + "/v1", "rel": "self"},
		map[string]any{"href": "https://docs.openstack.org/ironic-python-agent", "rel": "describedby", "type": "text/html"},
	}}
	return http.StatusOK, map[string]any{
		"name":            "OpenStack Ironic Python Agent API",
		"description":     "Ironic Python Agent is a provisioning agent for OpenStack Ironic",
		"versions":        []any{v1},
		"default_version": v1,
	}, false
}

// tokenOK is IPA's validate_agent_token: no token known or none sent is
// a refusal. The comparison is constant-time, as a real deployment's
// should be.
func (a *Agent) tokenOK(r *http.Request) bool {
	got := r.URL.Query().Get("agent_token")
	return got != "" && a.token != "" && subtle.ConstantTimeCompare([]byte(got), []byte(a.token)) == 1
}

func (a *Agent) unauthorized() (int, any, bool) {
	a.counts["unauthorized"]++
	return fault(http.StatusUnauthorized, werkzeugText(http.StatusUnauthorized, "Token invalid."))
}

func (a *Agent) run(r *http.Request, body []byte) (int, any, bool) {
	var req struct {
		Name   *string        `json:"name"`
		Params map[string]any `json:"params"`
	}
	var raw map[string]any
	if json.Unmarshal(body, &raw) != nil || json.Unmarshal(body, &req) != nil {
		return fault(http.StatusBadRequest, werkzeugText(http.StatusBadRequest, "The browser (or proxy) sent a request that this server could not understand."))
	}
	if _, ok := raw["params"].(map[string]any); !ok || req.Name == nil {
		return fault(http.StatusBadRequest, werkzeugText(http.StatusBadRequest, "Missing or invalid name or params"))
	}
	method := *req.Name
	a.counts[method]++
	if a.dropPOST > 0 {
		a.dropPOST--
		a.counts["dropped"]++
		return 0, nil, true
	}
	if a.busy > 0 {
		a.busy--
		a.counts["busy"]++
		return fault(http.StatusConflict, "Agent is busy: executing command "+shortName(method))
	}
	ext, name, ok := strings.Cut(method, ".")
	if !ok {
		return fault(http.StatusBadRequest, "Invalid command: Command name must be of the form <extension>.<name>")
	}
	if cur := a.running(); len(cur) > 0 && cur[len(cur)-1].Status == Running {
		a.counts["busy"]++
		return fault(http.StatusConflict, "Agent is busy: executing command "+cur[len(cur)-1].Name)
	}
	h, ok := a.handlers[method]
	if !ok {
		if !knownExtension(ext) {
			return fault(http.StatusNotFound, "Not found: Extension with id "+ext+" not found.")
		}
		return fault(http.StatusBadRequest, "Invalid command: Unknown command: "+name)
	}
	o := h(req.Params)
	if o.Fault != nil {
		return fault(o.Fault.Status, o.Fault.Faultstring)
	}
	c := &Command{
		ID:        uuid.NewString(),
		Name:      name,
		Status:    Running,
		Method:    method,
		Params:    req.Params,
		pending:   o,
		pollsLeft: o.Polls,
	}
	if !o.Async || strings.EqualFold(r.URL.Query().Get("wait"), "true") {
		c.finish()
	}
	a.commands = append(a.commands, c)
	if o.PowersOff && a.powerOffDelay >= 0 && a.powerOffAt.IsZero() {
		a.powerOffAt = a.clk.Now().Add(a.powerOffDelay)
		a.t.Logf("ipa: %s: syncing disks, the machine powers off in %s", method, a.powerOffDelay)
	}
	// IPA stops serving its API once locked down or rescued.
	if c.Status == Succeeded && (method == "system.lockdown" || method == "rescue.finalize_rescue") {
		a.down = true
	}
	if a.loseAnswers > 0 {
		a.loseAnswers--
		a.counts["dropped"]++
		return 0, nil, true
	}
	return http.StatusOK, c, false
}

func shortName(method string) string {
	if _, after, ok := strings.Cut(method, "."); ok {
		return after
	}
	return method
}
