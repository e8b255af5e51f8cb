package metrics

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Periodic records the conductor's periodic task runs. Its Observe method
// is conductor.Options.ObservePeriodic.
type Periodic struct {
	runs     *prometheus.CounterVec
	duration *prometheus.HistogramVec
	last     *prometheus.GaugeVec
	now      func() time.Time
}

// NewPeriodic registers the periodic task series on reg; host is the
// conductor label. The task label takes the names of the conductor's own
// task table, so it is bounded.
func NewPeriodic(reg prometheus.Registerer, host string) (*Periodic, error) {
	labels := prometheus.Labels{"conductor": host}
	p := &Periodic{
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ironic_conductor_periodic_runs_total", ConstLabels: labels,
			Help: "Passes of each periodic task.",
		}, []string{"task"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "ironic_conductor_periodic_duration_seconds", ConstLabels: labels,
			Help: "Time one pass of a periodic task took.",
			// A power sync over thousands of nodes takes minutes.
			Buckets: []float64{.01, .05, .1, .5, 1, 5, 10, 30, 60, 120, 300, 600},
		}, []string{"task"}),
		// A gauge of the last end rather than a lag histogram: a task
		// that hangs never reports its lag, but time() minus this grows.
		last: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "ironic_conductor_periodic_last_run_timestamp_seconds", ConstLabels: labels,
			Help: "Unix time at which the last pass of each periodic task ended.",
		}, []string{"task"}),
		now: time.Now,
	}
	for _, c := range []prometheus.Collector{p.runs, p.duration, p.last} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register periodic task metrics: %w", err)
		}
	}
	return p, nil
}

// Observe records one pass of task name that took d.
func (p *Periodic) Observe(name string, d time.Duration) {
	p.runs.WithLabelValues(name).Inc()
	p.duration.WithLabelValues(name).Observe(d.Seconds())
	p.last.WithLabelValues(name).Set(float64(p.now().UnixNano()) / 1e9)
}
