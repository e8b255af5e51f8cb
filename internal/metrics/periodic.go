package metrics

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Periodic records the conductor's periodic task runs. Its Observe method
// takes what conductor.Options.ObservePeriodic is told of each pass.
type Periodic struct {
	runs     *prometheus.CounterVec
	duration *prometheus.HistogramVec
	lag      *prometheus.HistogramVec
	interval *prometheus.GaugeVec
	last     *prometheus.GaugeVec
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
		lag: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "ironic_conductor_periodic_lag_seconds", ConstLabels: labels,
			Help:    "How late a pass of a periodic task started after it was due: the previous pass overran the interval, or the conductor was starved.",
			Buckets: []float64{.001, .01, .1, .5, 1, 5, 10, 30, 60, 120, 300, 600},
		}, []string{"task"}),
		interval: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "ironic_conductor_periodic_interval_seconds", ConstLabels: labels,
			Help: "Configured interval of each periodic task that has run, to compare its lag and duration with.",
		}, []string{"task"}),
		// The lag is only known once a pass starts: a task that hangs
		// never reports it, but time() minus this gauge grows.
		last: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "ironic_conductor_periodic_last_run_timestamp_seconds", ConstLabels: labels,
			Help: "Unix time at which the last pass of each periodic task ended.",
		}, []string{"task"}),
	}
	for _, c := range []prometheus.Collector{p.runs, p.duration, p.lag, p.interval, p.last} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register periodic task metrics: %w", err)
		}
	}
	return p, nil
}

// Observe records one pass of task name, run every interval, that was due
// at due, started at started and took d.
func (p *Periodic) Observe(name string, interval time.Duration, due, started time.Time, d time.Duration) {
	p.runs.WithLabelValues(name).Inc()
	p.duration.WithLabelValues(name).Observe(d.Seconds())
	p.lag.WithLabelValues(name).Observe(max(started.Sub(due), 0).Seconds())
	p.interval.WithLabelValues(name).Set(interval.Seconds())
	p.last.WithLabelValues(name).Set(float64(started.Add(d).UnixNano()) / 1e9)
}
