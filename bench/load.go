package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// novaFields is what Nova's ironic driver asks for when it lists nodes.
const novaFields = "uuid,power_state,target_power_state,provision_state,target_provision_state,last_error,maintenance,properties,instance_uuid,traits,resource_class"

// maxSamples bounds the latencies one worker keeps.
const maxSamples = 4 << 20

func newClient(conns int) *http.Client {
	return &http.Client{
		Timeout: 2 * time.Minute,
		Transport: &http.Transport{
			MaxIdleConns:        conns,
			MaxIdleConnsPerHost: conns,
			MaxConnsPerHost:     conns,
			DisableCompression:  true,
			IdleConnTimeout:     time.Minute,
		},
	}
}

// call sends one request and reads the whole answer.
func call(ctx context.Context, c *http.Client, method, url, version string, body []byte) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s: %w", method, url, err)
	}
	req.Header.Set("X-OpenStack-Ironic-API-Version", version)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s: %w", method, url, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, nil, fmt.Errorf("%s %s: read: %w", method, url, err)
	}
	return resp.StatusCode, data, nil
}

// nodeBody is a fake-hardware node shaped like a real rack server's
// enrolment: IPMI credentials and deploy images, the scheduling
// properties Nova reads, and operator notes in extra (with the foo key
// the PATCH benchmark replaces).
func nodeBody(i int) []byte {
	b, _ := json.Marshal(map[string]any{
		"name":           fmt.Sprintf("bench-%06d", i),
		"driver":         "fake-hardware",
		"resource_class": "baremetal",
		"description":    fmt.Sprintf("rack %d unit %d", i/40, i%40),
		"driver_info": map[string]any{
			"ipmi_address":       fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255),
			"ipmi_username":      "admin",
			"ipmi_password":      fmt.Sprintf("pw-%08x", i*2654435761),
			"ipmi_port":          623,
			"ipmi_priv_level":    "ADMINISTRATOR",
			"ipmi_terminal_port": 10000 + i%50000,
			"deploy_kernel":      "http://172.22.0.1/images/ironic-python-agent.kernel",
			"deploy_ramdisk":     "http://172.22.0.1/images/ironic-python-agent.initramfs",
		},
		"properties": map[string]any{
			"cpus":         64,
			"cpu_arch":     "x86_64",
			"memory_mb":    524288,
			"local_gb":     1788,
			"capabilities": "boot_mode:uefi,secure_boot:true,cpu_vt:true",
			"root_device":  map[string]any{"serial": fmt.Sprintf("S4EVNX0N%06d", i)},
		},
		"extra": map[string]any{
			"foo":       "initial",
			"rack":      fmt.Sprintf("r%03d", i/40),
			"asset_tag": fmt.Sprintf("AT-%07d", i),
			"serial":    fmt.Sprintf("CZ%08d", i),
		},
	})
	return b
}

// createNodes enrols n nodes with conc concurrent POSTs and returns their
// UUIDs. The first POST is retried for up to 60 s: in api mode the API
// answers before the conductor has registered its hardware types.
func createNodes(ctx context.Context, base string, n, conc int, logf func(string, ...any)) ([]string, *Create, error) {
	client := newClient(conc)
	first, err := createFirst(ctx, client, base)
	if err != nil {
		return nil, nil, err
	}
	uuids := make([]string, n)
	uuids[0] = first
	var next atomic.Int64
	next.Store(1)
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		firstEr error
		samples = make([][]time.Duration, conc)
	)
	start := time.Now()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for w := range conc {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				t0 := time.Now()
				status, data, err := call(ctx, client, http.MethodPost, base+"/v1/nodes", "1.78", nodeBody(i))
				samples[w] = append(samples[w], time.Since(t0))
				if err == nil && status != http.StatusCreated {
					err = fmt.Errorf("POST /v1/nodes: %d %s", status, truncate(data))
				}
				var created struct {
					UUID string `json:"uuid"`
				}
				if err == nil {
					err = json.Unmarshal(data, &created)
				}
				if err != nil {
					mu.Lock()
					if firstEr == nil {
						firstEr = fmt.Errorf("node %d: %w", i, err)
					}
					mu.Unlock()
					cancel()
					return
				}
				uuids[i] = created.UUID
				if i%10000 == 0 {
					logf("  %d nodes enrolled", i)
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if firstEr != nil {
		return nil, nil, firstEr
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	lat := summarize(slices.Concat(samples...))
	return uuids, &Create{Nodes: n - 1, Elapsed: elapsed, P50: lat.p50, P99: lat.p99}, nil
}

func createFirst(ctx context.Context, client *http.Client, base string) (string, error) {
	deadline := time.Now().Add(60 * time.Second)
	for {
		status, data, err := call(ctx, client, http.MethodPost, base+"/v1/nodes", "1.78", nodeBody(0))
		if err != nil {
			return "", err
		}
		if status == http.StatusCreated {
			var created struct {
				UUID string `json:"uuid"`
			}
			if err := json.Unmarshal(data, &created); err != nil {
				return "", fmt.Errorf("first node: %w", err)
			}
			return created.UUID, nil
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("first node: %d %s", status, truncate(data))
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func truncate(b []byte) string {
	if len(b) > 500 {
		return string(b[:500]) + "…"
	}
	return string(b)
}

// request is one of the five measured requests; build returns the
// method, path and body of one instance of it.
type request struct {
	key     string
	name    string
	version string
	// listPath is a list request's path without its limit.
	listPath string
	// list requests are compared with the SQL+JSON floor of this kind.
	floor string
	build func(r *rand.Rand, uuids []string) (string, string, []byte)
}

func requests() []request {
	fixed := func(path string) func(*rand.Rand, []string) (string, string, []byte) {
		return func(*rand.Rand, []string) (string, string, []byte) { return http.MethodGet, path, nil }
	}
	return []request{
		{key: "list", name: "`GET /v1/nodes` (1,000 per page)", version: "1.78", floor: "list", listPath: "/v1/nodes", build: fixed("/v1/nodes?limit=1000")},
		{key: "detail", name: "`GET /v1/nodes/detail` (1,000 per page)", version: "1.78", floor: "detail", listPath: "/v1/nodes/detail", build: fixed("/v1/nodes/detail?limit=1000")},
		// Nova sends no limit: the server's max_limit of 1,000 applies.
		{key: "nova", name: "`GET /v1/nodes?fields=<Nova's 11 fields>`", version: "1.46", floor: "nova", listPath: "/v1/nodes?fields=" + novaFields, build: fixed("/v1/nodes?fields=" + novaFields)},
		{key: "show", name: "`GET /v1/nodes/{uuid}` (random node)", version: "1.78", build: func(r *rand.Rand, uuids []string) (string, string, []byte) {
			return http.MethodGet, "/v1/nodes/" + uuids[r.IntN(len(uuids))], nil
		}},
		{key: "patch", name: "`PATCH /v1/nodes/{uuid}` (replace /extra/foo, random node)", version: "1.78", build: func(r *rand.Rand, uuids []string) (string, string, []byte) {
			body := fmt.Appendf(nil, `[{"op": "replace", "path": "/extra/foo", "value": "v%d"}]`, r.Uint32())
			return http.MethodPatch, "/v1/nodes/" + uuids[r.IntN(len(uuids))], body
		}},
	}
}

// check sends the request once and verifies its answer, so that a table
// never reports the speed of an error page.
func check(ctx context.Context, base string, req request, uuids []string) (int, error) {
	method, path, body := req.build(rand.New(rand.NewPCG(1, 2)), uuids)
	status, data, err := call(ctx, newClient(1), method, base+path, req.version, body)
	if err != nil {
		return 0, err
	}
	if status != http.StatusOK {
		return 0, fmt.Errorf("%s %s: %d %s", method, path, status, truncate(data))
	}
	if req.floor == "" {
		return 1, nil
	}
	var page struct {
		Nodes []json.RawMessage `json:"nodes"`
	}
	if err := json.Unmarshal(data, &page); err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	if len(page.Nodes) != 1000 {
		return 0, fmt.Errorf("%s: %d nodes in the page, want 1000", path, len(page.Nodes))
	}
	return len(page.Nodes), nil
}

// drive runs conc closed-loop workers against one request for d, as
// wrk -c conc -d d does: each worker sends its next request when the
// previous answer has been read.
func drive(ctx context.Context, base string, req request, uuids []string, conc int, d time.Duration) *Load {
	client := newClient(conc)
	defer client.CloseIdleConnections()
	type worker struct {
		samples  []time.Duration
		errors   int
		firstErr string
		bytes    int64
	}
	workers := make([]worker, conc)
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(d)
	ctx, cancel := context.WithDeadline(ctx, deadline.Add(time.Minute))
	defer cancel()
	for i := range workers {
		w := &workers[i]
		r := rand.New(rand.NewPCG(uint64(i)+1, uint64(start.UnixNano())))
		wg.Go(func() {
			for time.Now().Before(deadline) && ctx.Err() == nil {
				method, path, body := req.build(r, uuids)
				t0 := time.Now()
				status, data, err := call(ctx, client, method, base+path, req.version, body)
				lat := time.Since(t0)
				if err == nil && status != http.StatusOK {
					err = fmt.Errorf("%s %s: %d %s", method, path, status, truncate(data))
				}
				if err != nil {
					if w.errors == 0 {
						w.firstErr = err.Error()
					}
					w.errors++
					continue
				}
				w.bytes += int64(len(data))
				if len(w.samples) < maxSamples {
					w.samples = append(w.samples, lat)
				}
			}
		})
	}
	wg.Wait()
	res := &Load{Key: req.key, Name: req.name, Version: req.version, Elapsed: time.Since(start)}
	var all []time.Duration
	for _, w := range workers {
		all = append(all, w.samples...)
		res.Errors += w.errors
		res.Bytes += w.bytes
		if res.FirstErr == "" {
			res.FirstErr = w.firstErr
		}
	}
	res.Requests = len(all)
	lat := summarize(all)
	res.P50, res.P99 = lat.p50, lat.p99
	return res
}

// latency is the distribution of a set of samples.
type latency struct{ p50, p99, max time.Duration }

func summarize(samples []time.Duration) latency {
	if len(samples) == 0 {
		return latency{}
	}
	slices.Sort(samples)
	at := func(q float64) time.Duration { return samples[min(len(samples)-1, int(q*float64(len(samples))))] }
	return latency{p50: at(0.50), p99: at(0.99), max: samples[len(samples)-1]}
}

func ms(d time.Duration) string {
	v := float64(d) / float64(time.Millisecond)
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

func shortName(name string) string {
	name = strings.TrimPrefix(name, "`")
	if i := strings.IndexByte(name, '`'); i >= 0 {
		return name[:i]
	}
	return name
}
