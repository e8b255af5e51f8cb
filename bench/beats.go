package main

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"
)

// beatVersion is a microversion that takes agent_token and agent_version.
const beatVersion = "1.68"

// driveHeartbeats runs agents fake agents for d: each owns every
// agents-th node of nodes and heartbeats them in turn through
// POST /v1/heartbeat/{uuid}, the next one when the answer has come, so
// that one node's heartbeats never overlap. 202 counts as accepted; 503
// (no free conductor worker) as busy.
func driveHeartbeats(ctx context.Context, base string, nodes []string, agents int, d time.Duration) *Beats {
	client := newClient(agents)
	defer client.CloseIdleConnections()
	body := fmt.Appendf(nil, `{"callback_url": %q, "agent_token": %q, "agent_version": "9.4.0"}`, beatCallbackURL, beatToken)
	type agent struct {
		samples      []time.Duration
		busy, errors int
		firstErr     string
	}
	all := make([]agent, agents)
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(d)
	ctx, cancel := context.WithDeadline(ctx, deadline.Add(time.Minute))
	defer cancel()
	for i := range all {
		a := &all[i]
		wg.Go(func() {
			for k := i; time.Now().Before(deadline) && ctx.Err() == nil; k += agents {
				uuid := nodes[k%len(nodes)]
				t0 := time.Now()
				status, data, err := call(ctx, client, http.MethodPost, base+"/v1/heartbeat/"+uuid, beatVersion, body)
				lat := time.Since(t0)
				switch {
				case err == nil && status == http.StatusAccepted:
					if len(a.samples) < maxSamples {
						a.samples = append(a.samples, lat)
					}
				case err == nil && status == http.StatusServiceUnavailable:
					a.busy++
				default:
					if err == nil {
						err = fmt.Errorf("heartbeat %s: %d %s", uuid, status, truncate(data))
					}
					if a.errors == 0 {
						a.firstErr = err.Error()
					}
					a.errors++
				}
			}
		})
	}
	wg.Wait()
	res := &Beats{Agents: agents, Nodes: len(nodes), Elapsed: time.Since(start)}
	var lat []time.Duration
	for _, a := range all {
		lat = append(lat, a.samples...)
		res.Busy += a.busy
		res.Errors += a.errors
		if res.FirstErr == "" {
			res.FirstErr = a.firstErr
		}
	}
	res.Accepted = len(lat)
	l := summarize(slices.Clip(lat))
	res.P50, res.P99 = l.p50, l.p99
	return res
}
