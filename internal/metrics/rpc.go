package metrics

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/openkeel/ironic/internal/rpc/jsonrpc"
	"github.com/prometheus/client_golang/prometheus"
)

// Label values of the JSON-RPC series.
const (
	// RPCMethodInvalid labels requests whose method the server did not
	// accept (malformed frames, unknown methods, non-POST requests), so
	// that callers cannot grow the series set with made-up names.
	RPCMethodInvalid = "invalid"

	// RPCOutcomeOK is a call answered with a result.
	RPCOutcomeOK = "ok"
	// RPCOutcomeClientError is a call answered with an ironic exception
	// of a 4xx code (NodeLocked, NodeNotFound, InvalidState…).
	RPCOutcomeClientError = "client_error"
	// RPCOutcomeServerError is a call answered with a 5xx exception.
	RPCOutcomeServerError = "server_error"
	// RPCOutcomeInvalid is a request refused by the JSON-RPC layer itself
	// (parse error, bad frame, unknown method or arguments, HTTP errors).
	RPCOutcomeInvalid = "invalid"
	// RPCOutcomeCast is a call without id: it is answered 204 before its
	// result is known.
	RPCOutcomeCast = "cast"
)

// RPC records the calls a conductor's JSON-RPC server answers.
type RPC struct {
	calls    *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

// NewRPC registers the JSON-RPC call series on reg.
func NewRPC(reg prometheus.Registerer) (*RPC, error) {
	r := &RPC{
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ironic_rpc_calls_total",
			Help: "JSON-RPC calls answered by this conductor, by method and outcome (ok, client_error, server_error, invalid, cast).",
		}, []string{"method", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "ironic_rpc_call_duration_seconds",
			Help: "Time to answer a JSON-RPC call, by method.",
			// Synchronous calls such as validate or vendor passthru wait
			// on the BMC.
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"method"}),
	}
	for _, c := range []prometheus.Collector{r.calls, r.duration} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register JSON-RPC metrics: %w", err)
		}
	}
	return r, nil
}

// Middleware counts and times the calls next (the JSON-RPC server)
// answers. It reads the frame's method from the request and the outcome
// from the response; the body it read is handed on unchanged.
func (m *RPC) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		method := ""
		if r.Method == http.MethodPost {
			// One byte past the server's bound, so that the server still
			// sees an oversized body and answers 413.
			body, err := io.ReadAll(io.LimitReader(r.Body, jsonrpc.DefaultMaxBodyBytes+1))
			if err != nil {
				http.Error(w, "Cannot read request body", http.StatusBadRequest)
				m.record(RPCMethodInvalid, RPCOutcomeInvalid, start)
				return
			}
			var frame struct {
				Method string `json:"method"`
			}
			if json.Unmarshal(body, &frame) == nil {
				method = frame.Method
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		cw := &captureWriter{ResponseWriter: w}
		next.ServeHTTP(cw, r)
		outcome := cw.outcome()
		if outcome == RPCOutcomeInvalid || method == "" {
			method, outcome = RPCMethodInvalid, RPCOutcomeInvalid
		}
		m.record(method, outcome, start)
	})
}

func (m *RPC) record(method, outcome string, start time.Time) {
	m.calls.WithLabelValues(method, outcome).Inc()
	m.duration.WithLabelValues(method).Observe(time.Since(start).Seconds())
}

// captureWriter keeps the status and body of a JSON-RPC answer, which are
// small: results are single objects or short lists.
type captureWriter struct {
	http.ResponseWriter
	code int
	body bytes.Buffer
}

func (c *captureWriter) WriteHeader(code int) {
	if c.code == 0 {
		c.code = code
	}
	c.ResponseWriter.WriteHeader(code)
}

func (c *captureWriter) Write(b []byte) (int, error) {
	if c.code == 0 {
		c.code = http.StatusOK
	}
	c.body.Write(b)
	return c.ResponseWriter.Write(b)
}

func (c *captureWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// outcome classifies the answer: 204 is a cast, other HTTP errors and
// JSON-RPC protocol errors (negative codes) are invalid requests, and an
// ironic exception is classed by its HTTP-like code.
func (c *captureWriter) outcome() string {
	switch {
	case c.code == http.StatusNoContent:
		return RPCOutcomeCast
	case c.code != http.StatusOK && c.code != 0:
		return RPCOutcomeInvalid
	}
	var resp struct {
		Error *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(c.body.Bytes(), &resp); err != nil {
		return RPCOutcomeInvalid
	}
	switch {
	case resp.Error == nil:
		return RPCOutcomeOK
	case resp.Error.Code < 0:
		return RPCOutcomeInvalid
	case resp.Error.Code >= 400 && resp.Error.Code < 500:
		return RPCOutcomeClientError
	default:
		return RPCOutcomeServerError
	}
}
