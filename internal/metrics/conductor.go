package metrics

import (
	"context"
	"fmt"
	"time"

	"github.com/openkeel/ironic/internal/conductor/workers"
	"github.com/prometheus/client_golang/prometheus"
)

// lockCountTimeout bounds the database query a scrape makes, so that a
// slow database cannot hold scrapes open past Prometheus' own timeout.
const lockCountTimeout = 5 * time.Second

// ConductorSource is what the conductor collector reads at scrape time.
type ConductorSource struct {
	// Host is the conductor's name, the conductor label of every series
	// (several conductors' series stay apart behind one Service).
	Host string
	// Workers is the worker pool's snapshot (workers.Pool.Stats).
	Workers func() workers.Stats
	// LocksHeld counts the nodes whose reservation is Host; nil leaves
	// the series out.
	LocksHeld func(ctx context.Context) (int, error)
	// PushEvents counts the BMC events accepted and refused
	// ([openkeel_events]); nil leaves the series out.
	PushEvents func() (accepted, rejected int64)
}

// RegisterConductor registers the conductor's series on reg.
func RegisterConductor(reg prometheus.Registerer, src ConductorSource) error {
	if src.Workers == nil {
		return fmt.Errorf("register conductor metrics: no worker pool")
	}
	labels := prometheus.Labels{"conductor": src.Host}
	c := &conductorCollector{
		src: src,
		size: prometheus.NewDesc("ironic_conductor_workers_pool_size",
			"Workers of the pool by share (normal; reserved for user-initiated work).", []string{"share"}, labels),
		running: prometheus.NewDesc("ironic_conductor_workers_running",
			"Workers running by share.", []string{"share"}, labels),
		spawned: prometheus.NewDesc("ironic_conductor_workers_spawned_total",
			"Work accepted by the worker pool.", nil, labels),
		rejected: prometheus.NewDesc("ironic_conductor_workers_rejected_total",
			"Work refused with NoFreeConductorWorker because the pool was full or stopping.", nil, labels),
		locks: prometheus.NewDesc("ironic_conductor_node_locks_held",
			"Nodes reserved (exclusively locked) by this conductor.", nil, labels),
		push: prometheus.NewDesc("openkeel_conductor_push_events_total",
			"BMC push events received, by outcome (accepted; rejected: unknown node, wrong Context or malformed).", []string{"outcome"}, labels),
	}
	if err := reg.Register(c); err != nil {
		return fmt.Errorf("register conductor metrics: %w", err)
	}
	return nil
}

// conductorCollector reads its values when scraped: the pool and the
// reservations already keep them, and copying them into gauges on every
// change would need hooks in the conductor.
type conductorCollector struct {
	src                                           ConductorSource
	size, running, spawned, rejected, locks, push *prometheus.Desc
}

func (c *conductorCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.size, c.running, c.spawned, c.rejected, c.locks, c.push} {
		ch <- d
	}
}

func (c *conductorCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.src.Workers()
	ch <- prometheus.MustNewConstMetric(c.size, prometheus.GaugeValue, float64(st.NormalSize), "normal")
	ch <- prometheus.MustNewConstMetric(c.size, prometheus.GaugeValue, float64(st.ReservedSize), "reserved")
	ch <- prometheus.MustNewConstMetric(c.running, prometheus.GaugeValue, float64(st.NormalRunning), "normal")
	ch <- prometheus.MustNewConstMetric(c.running, prometheus.GaugeValue, float64(st.ReservedRunning), "reserved")
	ch <- prometheus.MustNewConstMetric(c.spawned, prometheus.CounterValue, float64(st.Spawned))
	ch <- prometheus.MustNewConstMetric(c.rejected, prometheus.CounterValue, float64(st.Rejected))
	if c.src.PushEvents != nil {
		accepted, rejected := c.src.PushEvents()
		ch <- prometheus.MustNewConstMetric(c.push, prometheus.CounterValue, float64(accepted), "accepted")
		ch <- prometheus.MustNewConstMetric(c.push, prometheus.CounterValue, float64(rejected), "rejected")
	}
	if c.src.LocksHeld == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), lockCountTimeout)
	defer cancel()
	n, err := c.src.LocksHeld(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.locks, fmt.Errorf("count node locks: %w", err))
		return
	}
	ch <- prometheus.MustNewConstMetric(c.locks, prometheus.GaugeValue, float64(n))
}
