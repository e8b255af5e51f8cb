// Package metrics is the service's Prometheus instrumentation: a registry
// built at start-up (never the library's global one, so that tests and
// several servers in one process do not share series), the /metrics
// handler, the API request middleware and the conductor's collector.
//
// Every series is named ironic_*. Labels are bounded: API requests are
// labelled by route ID from the route table, never by raw path.
package metrics

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Path is where the metrics are served on the API and JSON-RPC listeners.
const Path = "/metrics"

// NewRegistry returns a registry holding the Go runtime and process
// collectors; the service's own collectors are added by NewAPI and
// RegisterConductor.
func NewRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// Handler serves reg in the exposition format. A collector that fails
// (the database behind the lock count is down) drops its own series
// instead of failing the whole scrape, so that the runtime series still
// arrive when they matter most.
func Handler(reg *prometheus.Registry) http.Handler {
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		Registry:      reg,
		ErrorHandling: promhttp.ContinueOnError,
	})
}

// Mount serves metrics at Path and everything else from next. It sits
// outside the API's middleware chain, so that /metrics is not a
// microversioned resource; metrics is expected to carry its own
// authentication (auth.Handler) when the listener requires one.
func Mount(metrics, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == Path {
			metrics.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}
