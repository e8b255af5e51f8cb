package history

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"
)

// Workload is a run of concurrent clients against one API.
type Workload struct {
	// BaseURL is the API's address, e.g. http://127.0.0.1:6385.
	BaseURL string
	// BaseURLs, when set, are several APIs behind one service (a load
	// balancer): client i starts on BaseURLs[i mod len] and moves to the
	// next after a request without an answer, as a balancer's health
	// check would take a dead API out.
	BaseURLs []string
	// Clients is how many clients send requests at the same time.
	Clients int
	// Duration is how long they send them.
	Duration time.Duration
	// Stop, when set, ends the run early once closed: a test whose faults
	// take as long as they take. The final reads still run.
	Stop <-chan struct{}
	// Seed makes each client's choice of operations reproducible (their
	// interleaving is not).
	Seed uint64
	// Timeout bounds each request; a request without an answer by then
	// has an unknown outcome.
	Timeout time.Duration
}

// version is the microversion of every request: traits are part of the
// node since 1.37, and 1.80 is what the repository's other clients use.
const version = "1.80"

// readFields is what a GET asks for: what the model compares.
const readFields = "extra,properties,instance_info,driver_info,maintenance,maintenance_reason,traits,provision_state,power_state"

// Stats counts answers by operation kind and status, for the test log.
type Stats map[string]int

func (s Stats) String() string {
	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s: %d", k, s[k])
	}
	return strings.Join(parts, ", ")
}

// CreateNodes enrols n fake-hardware nodes and returns their UUIDs. Each
// starts as the model's zero State: enroll, power state null, empty
// dictionaries, no maintenance, no traits.
func CreateNodes(ctx context.Context, baseURL string, n int) ([]string, error) {
	hc := &http.Client{Timeout: time.Minute}
	uuids := make([]string, n)
	for i := range uuids {
		status, data, _, err := send(ctx, hc, "POST", baseURL+"/v1/nodes", map[string]any{"driver": "fake-hardware"})
		if err != nil || status != http.StatusCreated {
			return nil, fmt.Errorf("create node %d: %d %s %v", i, status, data, err)
		}
		var out struct{ UUID string }
		if err := json.Unmarshal(data, &out); err != nil {
			return nil, fmt.Errorf("create node %d: %w", i, err)
		}
		uuids[i] = out.UUID
	}
	return uuids, nil
}

// Run drives w.Clients clients against nodes for w.Duration, each sending
// a random mix of operations to random nodes, then reads every node once
// more, and returns the history (porcupine operations with Input and
// Output) and the count of answers.
func (w Workload) Run(ctx context.Context, nodes []string) ([]porcupine.Operation, Stats) {
	rec := &recorder{start: time.Now(), stats: Stats{}}
	hc := &http.Client{
		Timeout:   w.Timeout,
		Transport: &http.Transport{MaxIdleConnsPerHost: w.Clients + 1},
	}
	deadline := rec.start.Add(w.Duration)
	var wg sync.WaitGroup
	for id := range w.Clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &client{id: id, w: w, hc: hc, rec: rec, nodes: nodes, api: id,
				rnd: rand.New(rand.NewPCG(w.Seed, uint64(id)))}
			for time.Now().Before(deadline) && ctx.Err() == nil && !closed(w.Stop) {
				c.run(ctx, c.next())
			}
		}()
	}
	wg.Wait()
	// A write lost after the last read of its node would go unseen.
	final := &client{id: w.Clients, w: w, hc: hc, rec: rec, nodes: nodes}
	for i := range nodes {
		final.run(ctx, Input{Node: i, Kind: Read})
	}
	return rec.ops, rec.stats
}

// closed reports whether ch is closed; a nil channel never is.
func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

type recorder struct {
	start time.Time
	mu    sync.Mutex
	ops   []porcupine.Operation
	stats Stats
}

func (r *recorder) now() int64 { return time.Since(r.start).Nanoseconds() }

func (r *recorder) add(op porcupine.Operation, stat string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stats[stat]++
	if op.Input != nil {
		r.ops = append(r.ops, op)
	}
}

type client struct {
	id    int
	w     Workload
	hc    *http.Client
	rec   *recorder
	nodes []string
	rnd   *rand.Rand
	seq   int
	// api indexes w.BaseURLs (modulo their number).
	api int
}

// base is the API the client sends to.
func (c *client) base() string {
	if len(c.w.BaseURLs) == 0 {
		return c.w.BaseURL
	}
	return c.w.BaseURLs[c.api%len(c.w.BaseURLs)]
}

// next picks an operation. Reads and patches dominate, as in a real
// deployment; the rest keep the conductor taking locks and writing the
// node on its own.
func (c *client) next() Input {
	c.seq++
	in := Input{Node: c.rnd.IntN(len(c.nodes))}
	switch r := c.rnd.IntN(100); {
	case r < 25:
		in.Kind = Read
	case r < 60:
		in.Kind = Patch
		for range 1 + c.rnd.IntN(4)/3 {
			p := PatchOp{Field: Field(c.rnd.IntN(int(numFields))), Key: c.rnd.IntN(NumKeys)}
			switch c.rnd.IntN(4) {
			case 0, 1:
				p.Op = "add"
			case 2:
				p.Op = "replace"
			default:
				p.Op = "remove"
			}
			if p.Op != "remove" {
				p.Value = fmt.Sprintf("c%d.%d", c.id, c.seq)
			}
			in.Patch = append(in.Patch, p)
		}
	case r < 66:
		in.Kind = SetMaintenance
		if c.rnd.IntN(2) == 0 {
			in.Reason = fmt.Sprintf("r%d.%d", c.id, c.seq)
		}
	case r < 72:
		in.Kind = UnsetMaintenance
	case r < 78:
		in.Kind, in.Trait = AddTrait, c.rnd.IntN(NumTraits)
	case r < 84:
		in.Kind, in.Trait = RemoveTrait, c.rnd.IntN(NumTraits)
	case r < 88:
		in.Kind = Manage
	case r < 92:
		in.Kind = Provide
	default:
		in.Kind, in.Power = SetPower, PowerOn
		if c.rnd.IntN(2) == 0 {
			in.Power = PowerOff
		}
	}
	return in
}

// run sends in and records it.
func (c *client) run(ctx context.Context, in Input) {
	method, path, body := request(c.nodes[in.Node], in)
	call := c.rec.now()
	status, data, retryAfter, err := send(ctx, c.hc, method, c.base()+path, body)
	ret := c.rec.now()
	op := porcupine.Operation{ClientId: c.id, Input: in, Call: call, Return: ret}
	out := Output{Status: status}
	stat := fmt.Sprintf("%s %d", kindNames[in.Kind], status)
	switch {
	case err != nil:
		// The request may still be carried out after we gave up on it.
		out.Unknown, out.Detail, op.Return = true, err.Error(), Infinity
		stat = kindNames[in.Kind] + " no answer"
		c.api++
	case status >= 500:
		// The API answered: whatever the conductor did, it did before.
		out.Unknown, out.Detail = true, fault(data)
	case status == http.StatusOK && (in.Kind == Read || in.Kind == Patch):
		n, perr := parseNode(data)
		if perr != nil {
			out.Detail = perr.Error()
		} else {
			out.Node = &n
		}
	case status >= 400:
		out.Detail = fault(data)
	}
	if out.Unknown {
		defer c.backOff(ctx, retryAfter)
	}
	// A read without a node says nothing of it.
	if in.Kind == Read && out.Node == nil && (out.Unknown || status != http.StatusOK) {
		c.rec.add(porcupine.Operation{}, stat)
		return
	}
	op.Output = out
	c.rec.add(op, stat)
}

// backOff waits before the next request after a fault, as openstacksdk and
// Nova do: Retry-After when the answer gave one (at most 2 s), else half a
// second. A client hammering a dead conductor would fill the history with
// operations of unknown outcome, each of which porcupine must try both
// ways, and real clients do not do that.
func (c *client) backOff(ctx context.Context, retryAfter string) {
	d := 500 * time.Millisecond
	if s, err := strconv.Atoi(retryAfter); err == nil && s >= 0 {
		d = min(time.Duration(s)*time.Second, 2*time.Second)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

var kindNames = map[Kind]string{
	Read: "GET", Patch: "PATCH", SetMaintenance: "maintenance set", UnsetMaintenance: "maintenance unset",
	AddTrait: "trait add", RemoveTrait: "trait remove", Manage: "manage", Provide: "provide", SetPower: "power",
}

// request is the API call for in on the node uuid.
func request(uuid string, in Input) (method, path string, body any) {
	node := "/v1/nodes/" + uuid
	switch in.Kind {
	case Patch:
		ops := make([]map[string]any, len(in.Patch))
		for i, p := range in.Patch {
			ops[i] = map[string]any{"op": p.Op, "path": "/" + p.Field.String() + "/" + KeyName(p.Key)}
			if p.Op != "remove" {
				ops[i]["value"] = p.Value
			}
		}
		return "PATCH", node, ops
	case SetMaintenance:
		if in.Reason != "" {
			return "PUT", node + "/maintenance", map[string]any{"reason": in.Reason}
		}
		return "PUT", node + "/maintenance", nil
	case UnsetMaintenance:
		return "DELETE", node + "/maintenance", nil
	case AddTrait:
		return "PUT", node + "/traits/" + TraitName(in.Trait), nil
	case RemoveTrait:
		return "DELETE", node + "/traits/" + TraitName(in.Trait), nil
	case Manage:
		return "PUT", node + "/states/provision", map[string]any{"target": "manage"}
	case Provide:
		return "PUT", node + "/states/provision", map[string]any{"target": "provide"}
	case SetPower:
		return "PUT", node + "/states/power", map[string]any{"target": in.Power.String()}
	}
	return "GET", node + "?fields=" + readFields, nil
}

// send sends one API request and returns the status, the body and the
// Retry-After header.
func send(ctx context.Context, hc *http.Client, method, url string, body any) (int, []byte, string, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, "", err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return 0, nil, "", err
	}
	req.Header.Set("X-OpenStack-Ironic-API-Version", version)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, nil, "", err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, "", fmt.Errorf("read answer %d: %w", resp.StatusCode, err)
	}
	return resp.StatusCode, data, resp.Header.Get("Retry-After"), nil
}

// fault is the faultstring of an Ironic error body, shortened.
func fault(data []byte) string {
	var env struct {
		ErrorMessage string `json:"error_message"`
	}
	msg := strings.TrimSpace(string(data))
	if json.Unmarshal(data, &env) == nil && env.ErrorMessage != "" {
		var f struct{ Faultstring string }
		if json.Unmarshal([]byte(env.ErrorMessage), &f) == nil && f.Faultstring != "" {
			msg = f.Faultstring
		}
	}
	if len(msg) > 160 {
		msg = msg[:160] + "…"
	}
	return msg
}

// parseNode reads the model's part of a node from the API.
func parseNode(data []byte) (State, error) {
	var n struct {
		Extra             map[string]any `json:"extra"`
		Properties        map[string]any `json:"properties"`
		InstanceInfo      map[string]any `json:"instance_info"`
		DriverInfo        map[string]any `json:"driver_info"`
		Maintenance       *bool          `json:"maintenance"`
		MaintenanceReason *string        `json:"maintenance_reason"`
		Traits            []string       `json:"traits"`
		ProvisionState    *string        `json:"provision_state"`
		PowerState        *string        `json:"power_state"`
	}
	if err := json.Unmarshal(data, &n); err != nil {
		return State{}, fmt.Errorf("node: %w", err)
	}
	if n.Maintenance == nil || n.ProvisionState == nil {
		return State{}, errors.New("node without maintenance or provision_state")
	}
	var s State
	for f, d := range [numFields]map[string]any{n.Extra, n.Properties, n.InstanceInfo, n.DriverInfo} {
		for k := range NumKeys {
			switch v := d[KeyName(k)].(type) {
			case nil:
			case string:
				s.Dicts[f][k] = v
			default:
				// Never written by the workload: no state of the model
				// holds it.
				s.Dicts[f][k] = fmt.Sprintf("?%v", v)
			}
		}
	}
	s.Maintenance = *n.Maintenance
	if n.MaintenanceReason != nil {
		s.Reason = *n.MaintenanceReason
	}
	for i := range NumTraits {
		for _, t := range n.Traits {
			if t == TraitName(i) {
				s.Traits |= 1 << i
			}
		}
	}
	s.Provision = ParseProvision(*n.ProvisionState)
	s.Power = ParsePower(n.PowerState)
	return s, nil
}
