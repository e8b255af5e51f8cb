package galera

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// background is the part of the mixed load the history model does not
// follow: creates, lists and deploy/undeploy flows (fake deploy delays)
// on the bulk-inserted fleet. Each answer is counted under the fault
// running when it came; every acknowledged create is remembered so that
// the test can check none was lost.
type background struct {
	apis  []string
	hc    *http.Client
	phase atomic.Pointer[string]
	// ok counts answers in 2xx, for the throughput.
	ok atomic.Int64

	mu      sync.Mutex
	answers map[string]map[string]int // phase → "GET 200" → count
	created []string
	// serverErrors are answers in 5xx other than 503: never acceptable.
	serverErrors []string
}

func newBackground(apis []string) *background {
	b := &background{apis: apis, answers: map[string]map[string]int{},
		hc: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 16}}}
	b.setPhase("steady")
	return b
}

func (b *background) setPhase(p string) { b.phase.Store(&p) }

// send sends one request to API api and counts its answer.
func (b *background) send(ctx context.Context, api int, what, method, path string, body any) (int, []byte) {
	var rd io.Reader
	if body != nil {
		data, _ := json.Marshal(body)
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, b.apis[api%len(b.apis)]+path, rd)
	if err != nil {
		panic(err)
	}
	req.Header.Set("X-OpenStack-Ironic-API-Version", "1.80")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	status, data := 0, []byte(nil)
	resp, err := b.hc.Do(req)
	if err == nil {
		data, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		status = resp.StatusCode
	}
	key := fmt.Sprintf("%s %d", what, status)
	if err != nil {
		key = what + " no answer"
		status = 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	phase := *b.phase.Load()
	if b.answers[phase] == nil {
		b.answers[phase] = map[string]int{}
	}
	b.answers[phase][key]++
	if status >= 500 && status != http.StatusServiceUnavailable {
		b.serverErrors = append(b.serverErrors, fmt.Sprintf("%s %s during %s: %d %s", method, path, phase, status, data))
	}
	if status >= 200 && status < 300 {
		b.ok.Add(1)
	}
	return status, data
}

// run starts the load's goroutines until stop is closed: a creator, two
// listers and deployers walking nodes of pool through deploy and
// undeploy. It returns when they have all ended.
func (b *background) run(ctx context.Context, stop <-chan struct{}, pool []string, deployers int) {
	var wg sync.WaitGroup
	loop := func(id int, fn func(rnd *rand.Rand, api int) int) {
		wg.Go(func() {
			rnd := rand.New(rand.NewPCG(uint64(id), 7))
			api := id
			for {
				select {
				case <-stop:
					return
				case <-ctx.Done():
					return
				default:
				}
				if status := fn(rnd, api); status == 0 {
					// No answer: the balancer takes this API out.
					api++
				} else if status >= 500 {
					pause(ctx, 500*time.Millisecond)
				}
			}
		})
	}
	loop(0, func(rnd *rand.Rand, api int) int {
		group := []string{"", "rack2"}[rnd.IntN(2)]
		status, data := b.send(ctx, api, "create", "POST", "/v1/nodes", map[string]any{"driver": "fake-hardware", "conductor_group": group})
		if status == http.StatusCreated {
			var n struct{ UUID string }
			if json.Unmarshal(data, &n) == nil {
				b.mu.Lock()
				b.created = append(b.created, n.UUID)
				b.mu.Unlock()
			}
		}
		return status
	})
	for i := range 2 {
		loop(1+i, func(rnd *rand.Rand, api int) int {
			status, _ := b.send(ctx, api, "list", "GET", fmt.Sprintf("/v1/nodes?limit=100&provision_state=%s", []string{"available", "active", "enroll"}[rnd.IntN(3)]), nil)
			return status
		})
	}
	per := len(pool) / max(deployers, 1)
	for i := range deployers {
		mine := pool[i*per : (i+1)*per]
		loop(10+i, func(rnd *rand.Rand, api int) int {
			return b.cycle(ctx, stop, api, mine[rnd.IntN(len(mine))])
		})
	}
	wg.Wait()
}

// cycle deploys a node and undeploys it again (fake deploy and clean
// delays), waiting for each to finish. A node that a fault left in deploy
// failed is undeployed as an operator would.
func (b *background) cycle(ctx context.Context, stop <-chan struct{}, api int, uuid string) int {
	status, _ := b.send(ctx, api, "deploy", "PUT", "/v1/nodes/"+uuid+"/states/provision", map[string]any{"target": "active"})
	if status != http.StatusAccepted {
		return status
	}
	state := b.settle(ctx, stop, api, uuid)
	if state != "active" && state != "deploy failed" {
		return status
	}
	status, _ = b.send(ctx, api, "undeploy", "PUT", "/v1/nodes/"+uuid+"/states/provision", map[string]any{"target": "deleted"})
	if status == http.StatusAccepted {
		b.settle(ctx, stop, api, uuid)
	}
	return status
}

// settle polls the node until it leaves the transient states.
func (b *background) settle(ctx context.Context, stop <-chan struct{}, api int, uuid string) string {
	for {
		status, data := b.send(ctx, api, "poll", "GET", "/v1/nodes/"+uuid+"?fields=provision_state", nil)
		if status == http.StatusOK {
			var n struct {
				ProvisionState string `json:"provision_state"`
			}
			_ = json.Unmarshal(data, &n)
			switch n.ProvisionState {
			case "deploying", "wait call-back", "cleaning", "clean wait", "deleting":
			default:
				return n.ProvisionState
			}
		} else if status == 0 {
			api++
		}
		select {
		case <-stop:
			return ""
		case <-ctx.Done():
			return ""
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func pause(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// serverFaults renders, per phase, the answers a client had to treat as
// faults: no answer, or a 5xx.
func (b *background) serverFaults() map[string]string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := map[string]string{}
	for phase, counts := range b.answers {
		var parts []string
		for k, n := range counts {
			if strings.HasSuffix(k, " no answer") || strings.Contains(k, " 5") {
				parts = append(parts, fmt.Sprintf("%s: %d", k, n))
			}
		}
		sort.Strings(parts)
		if len(parts) == 0 {
			parts = []string{"none"}
		}
		out[phase] = strings.Join(parts, ", ")
	}
	return out
}
