package redfish

import (
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/testing/redfishbmc"
)

// closedPort is an address on 127.0.0.1 nobody listens on: connecting is
// refused at once.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	must(t, ln.Close())
	return addr
}

// failedExchanges counts the exchanges that got no HTTP answer.
func failedExchanges(seen []exchange) int {
	n := 0
	for _, x := range seen {
		if x.status == 0 {
			n++
		}
	}
	return n
}

// A connection error fails the attempt at once, as sushy raises it: the
// only retries are [redfish]connection_attempts (3 here),
// connection_retry_interval (4 s) apart. Permanent errors are not
// retried at all; 5xx answers and the "not ready yet" 400s sushy knows
// are retried server_side_retries (2 here) times, 3 s apart, on the same
// connection.
func TestConnectionErrorsAndRetries(t *testing.T) {
	type outcome struct {
		class     errs.Class // "" for success
		exchanges int        // HTTP exchanges attempted, answered or not
		failed    int        // of which got no answer
		waited    time.Duration
	}
	for _, tc := range []struct {
		name  string
		tls   bool
		setup func(e *env, bmc *redfishbmc.BMC)
		op    func(e *env) error
		want  outcome
	}{{
		name:  "connection refused",
		setup: func(e *env, _ *redfishbmc.BMC) { e.node.DriverInfo["redfish_address"] = "http://" + closedPort(e.t) },
		want:  outcome{class: "RedfishConnectionError", exchanges: 3, failed: 3, waited: 8 * time.Second},
	}, {
		name:  "connection dropped twice, then answered",
		setup: func(_ *env, bmc *redfishbmc.BMC) { bmc.DropNext(2) },
		want:  outcome{exchanges: 3, failed: 2, waited: 8 * time.Second},
	}, {
		name: "503 then 200",
		setup: func(_ *env, bmc *redfishbmc.BMC) {
			bmc.FailNextMatching(redfishbmc.Match{Method: http.MethodGet, Path: "/Systems/sys-1"}, 1, http.StatusServiceUnavailable, "")
		},
		want: outcome{exchanges: 2, waited: 3 * time.Second},
	}, {
		name: "503 until server side retries are exhausted",
		setup: func(_ *env, bmc *redfishbmc.BMC) {
			bmc.FailNextMatching(redfishbmc.Match{Method: http.MethodGet, Path: "/Systems/sys-1"}, 100, http.StatusServiceUnavailable, "")
		},
		// An answer is no connection error: no new connection attempt.
		want: outcome{class: "RedfishError", exchanges: 3, waited: 6 * time.Second},
	}, {
		name:  "ftp address",
		setup: func(e *env, bmc *redfishbmc.BMC) { e.node.DriverInfo["redfish_address"] = "ftp://" + bmc.Address() },
		want:  outcome{class: "RedfishConnectionError"},
	}, {
		name:  "TLS spoken to a plain-HTTP BMC",
		setup: func(e *env, bmc *redfishbmc.BMC) { e.node.DriverInfo["redfish_address"] = "https://" + bmc.Address() },
		want:  outcome{class: "RedfishConnectionError", exchanges: 1, failed: 1},
	}, {
		name:  "certificate that does not verify",
		tls:   true,
		setup: func(*env, *redfishbmc.BMC) {},
		want:  outcome{class: "RedfishConnectionError", exchanges: 1, failed: 1},
	}, {
		name: "iDRAC SYS518 400 to a POST",
		setup: func(_ *env, bmc *redfishbmc.BMC) {
			bmc.FailNextMatching(redfishbmc.Match{Method: http.MethodPost, Path: "ComputerSystem.Reset"}, 1, http.StatusBadRequest, "IDRAC.2.8.SYS518")
		},
		op:   func(e *env) error { return e.mgmt.InjectNMI(e.ctx, e.task) },
		want: outcome{exchanges: 3, waited: 3 * time.Second},
	}, {
		name: "iLO InvalidOperationForSystemState 400 to a POST",
		setup: func(_ *env, bmc *redfishbmc.BMC) {
			bmc.FailNextMatching(redfishbmc.Match{Method: http.MethodPost, Path: "ComputerSystem.Reset"}, 2, http.StatusBadRequest, "iLO.2.14.InvalidOperationForSystemState")
		},
		op:   func(e *env) error { return e.mgmt.InjectNMI(e.ctx, e.task) },
		want: outcome{exchanges: 4, waited: 6 * time.Second},
	}, {
		name: "SYS518 500 to a POST",
		setup: func(_ *env, bmc *redfishbmc.BMC) {
			bmc.FailNextMatching(redfishbmc.Match{Method: http.MethodPost, Path: "ComputerSystem.Reset"}, 1, http.StatusInternalServerError, "IDRAC.2.8.SYS518")
		},
		op:   func(e *env) error { return e.mgmt.InjectNMI(e.ctx, e.task) },
		want: outcome{exchanges: 3, waited: 3 * time.Second},
	}, {
		name: "other 400 to a POST",
		setup: func(_ *env, bmc *redfishbmc.BMC) {
			bmc.FailNextMatching(redfishbmc.Match{Method: http.MethodPost, Path: "ComputerSystem.Reset"}, 1, http.StatusBadRequest, "Base.1.8.ActionParameterValueConflict")
		},
		op:   func(e *env) error { return e.mgmt.InjectNMI(e.ctx, e.task) },
		want: outcome{class: "RedfishError", exchanges: 2},
	}, {
		name: "SYS518 400 to a GET",
		setup: func(_ *env, bmc *redfishbmc.BMC) {
			bmc.FailNextMatching(redfishbmc.Match{Method: http.MethodGet, Path: "/Systems/sys-1"}, 1, http.StatusBadRequest, "IDRAC.2.8.SYS518")
		},
		want: outcome{class: "RedfishError", exchanges: 1},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			bmc := redfishbmc.New(t)
			if tc.tls {
				bmc = bmc.WithTLS()
			}
			bmc = bmc.System("sys-1").WithBasicAuth(testUser, testPassword)
			rec := &recordingTransport{}
			e := newEnv(t, bmc, func(o *Options) {
				o.WrapTransport = func(next http.RoundTripper) http.RoundTripper {
					rec.next = next
					return rec
				}
			})
			// Basic authentication and redfish_system_id spare the
			// session login and the systems collection: every exchange
			// is the operation's.
			e.node.DriverInfo["redfish_auth_type"] = "basic"
			e.node.DriverInfo["redfish_system_id"] = sysPath
			tc.setup(e, bmc)
			op := tc.op
			if op == nil {
				op = func(e *env) error { _, err := e.power.GetPowerState(e.ctx, e.task); return err }
			}
			err := op(e)
			if tc.want.class == "" {
				must(t, err)
			} else {
				wantClass(t, err, tc.want.class, "")
			}
			seen := rec.exchanges()
			got := outcome{class: tc.want.class, exchanges: len(seen), failed: failedExchanges(seen), waited: e.clock.Slept()}
			if got != tc.want {
				t.Fatalf("got %+v, want %+v (sleeps %v, exchanges %+v, error %v)", got, tc.want, e.clock.Sleeps(), seen, err)
			}
		})
	}
}

// With upstream's defaults (5 connection attempts 4 s apart) a BMC that
// does not answer fails the operation after 16 s of waiting, with
// upstream's RedfishConnectionError naming the node and the service root
// sushy reads first, and a log line for every attempt.
func TestDeadBMCGivesUpAfterConnectionAttempts(t *testing.T) {
	bmc := redfishbmc.New(t).System("sys-1").WithBasicAuth(testUser, testPassword)
	e := newEnv(t, bmc, func(o *Options) {
		d := DefaultOptions()
		o.ConnectionAttempts, o.ConnectionRetryInterval = d.ConnectionAttempts, d.ConnectionRetryInterval
		o.ServerSideRetries, o.ServerSideRetriesDelay = d.ServerSideRetries, d.ServerSideRetriesDelay
	})
	addr := "http://" + closedPort(t)
	e.node.DriverInfo["redfish_address"] = addr
	_, err := e.power.GetPowerState(e.ctx, e.task)
	wantClass(t, err, "RedfishConnectionError", "")
	prefix := "Redfish connection failed for node " + testNode + ": Unable to connect to " + addr + "/redfish/v1/. Error: "
	if !strings.HasPrefix(err.Error(), prefix) || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("message %q, want it to start %q and say the connection was refused", err, prefix)
	}
	if d := e.clock.Slept(); d != 16*time.Second || len(e.clock.Sleeps()) != 4 {
		t.Fatalf("waited %v in %v, want four 4 s connection_retry_interval waits", d, e.clock.Sleeps())
	}
	if n := strings.Count(e.logs.String(), "connection error from redfish BMC"); n != 5 {
		t.Fatalf("%d connection errors logged, want one per attempt:\n%s", n, e.logs)
	}
	if e.core.cache.len() != 0 {
		t.Fatal("the dead BMC's connection stayed cached")
	}
}
