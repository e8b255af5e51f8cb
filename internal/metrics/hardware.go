package metrics

import (
	"fmt"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Outcome label values of the lock, agent and BMC series.
const (
	OutcomeOK     = "ok"
	OutcomeLocked = "locked"
	OutcomeError  = "error"
)

// Hardware records what a conductor waits on: node locks, the ramdisk
// agent and the BMCs. Its methods are the observers the task manager, the
// agent client and the hardware interfaces call.
type Hardware struct {
	lockWait     *prometheus.HistogramVec
	lockConflict prometheus.Counter
	agent        *prometheus.HistogramVec
	bmc          *prometheus.HistogramVec
	bmcErrors    *prometheus.CounterVec
}

// NewHardware registers the series on reg; host is the conductor label.
func NewHardware(reg prometheus.Registerer, host string) (*Hardware, error) {
	labels := prometheus.Labels{"conductor": host}
	h := &Hardware{
		lockWait: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "ironic_conductor_lock_wait_seconds", ConstLabels: labels,
			Help: "Time spent acquiring an exclusive node lock, by outcome (ok, locked = NodeLocked after the retries, error).",
			// node_locked_retry_attempts × interval is 3 s by default.
			Buckets: []float64{.001, .005, .01, .05, .1, .5, 1, 2, 3, 5, 10, 30},
		}, []string{"outcome"}),
		lockConflict: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ironic_conductor_lock_conflicts_total", ConstLabels: labels,
			Help: "Attempts to reserve a node that found it reserved by another task (each retry counts).",
		}),
		agent: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "ironic_agent_command_duration_seconds", ConstLabels: labels,
			Help:    "Time for the ramdisk agent to answer a command, by command and outcome.",
			Buckets: []float64{.01, .05, .1, .5, 1, 5, 10, 30, 60, 300, 1800},
		}, []string{"command", "outcome"}),
		bmc: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "ironic_bmc_request_duration_seconds", ConstLabels: labels,
			Help:    "Time for a BMC to answer one request, by driver (redfish, ipmitool) and operation.",
			Buckets: []float64{.01, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"driver", "operation"}),
		bmcErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ironic_bmc_request_errors_total", ConstLabels: labels,
			Help: "BMC requests that failed (transport errors, HTTP 5xx or 4xx, non-zero ipmitool exit), by driver and operation.",
		}, []string{"driver", "operation"}),
	}
	for _, c := range []prometheus.Collector{h.lockWait, h.lockConflict, h.agent, h.bmc, h.bmcErrors} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register hardware metrics: %w", err)
		}
	}
	return h, nil
}

// ObserveLock records one exclusive lock acquisition: how long it took,
// how many attempts found the node reserved, and how it ended.
func (h *Hardware) ObserveLock(wait time.Duration, conflicts int, outcome string) {
	h.lockWait.WithLabelValues(outcome).Observe(wait.Seconds())
	h.lockConflict.Add(float64(conflicts))
}

// ObserveAgentCommand records one agent command ("<extension>.<command>").
// The command names come from the conductor's code, so the label is
// bounded.
func (h *Hardware) ObserveAgentCommand(command string, d time.Duration, err error) {
	outcome := OutcomeOK
	if err != nil {
		outcome = OutcomeError
	}
	h.agent.WithLabelValues(command, outcome).Observe(d.Seconds())
}

// ObserveBMC records one BMC request.
func (h *Hardware) ObserveBMC(driver, operation string, d time.Duration, failed bool) {
	h.bmc.WithLabelValues(driver, operation).Observe(d.Seconds())
	if failed {
		h.bmcErrors.WithLabelValues(driver, operation).Inc()
	}
}

// RoundTripper wraps next so that each Redfish request is recorded under
// driver with the HTTP method as operation: resource paths carry system
// and volume IDs, which would make the label unbounded.
func (h *Hardware) RoundTripper(driver string, next http.RoundTripper) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		start := time.Now()
		resp, err := next.RoundTrip(r)
		failed := err != nil || resp.StatusCode >= 400
		h.ObserveBMC(driver, r.Method, time.Since(start), failed)
		return resp, err
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
