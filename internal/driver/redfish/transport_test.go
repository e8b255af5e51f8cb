package redfish

import (
	"net/http"
	"sync"
	"testing"

	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/testing/redfishbmc"
)

// exchange is one HTTP exchange a wrapped transport saw.
type exchange struct {
	method string
	status int // 0 for a transport error
}

type recordingTransport struct {
	next http.RoundTripper
	mu   sync.Mutex
	seen []exchange
}

func (r *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.next.RoundTrip(req)
	x := exchange{method: req.Method}
	if err == nil {
		x.status = resp.StatusCode
	}
	r.mu.Lock()
	r.seen = append(r.seen, x)
	r.mu.Unlock()
	return resp, err
}

func (r *recordingTransport) exchanges() []exchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]exchange(nil), r.seen...)
}

// Every exchange with the BMC, the session login, retried 5xx answers and
// power actions included, passes through WrapTransport, which is how the
// conductor times BMC requests for /metrics.
func TestWrapTransportSeesEveryExchange(t *testing.T) {
	bmc := redfishbmc.New(t).System("sys-1").WithSessionsOnly(testUser, testPassword)
	rec := &recordingTransport{}
	wraps := 0
	e := newEnv(t, bmc, func(o *Options) {
		o.WrapTransport = func(next http.RoundTripper) http.RoundTripper {
			wraps++
			rec.next = next
			return rec
		}
	})
	bmc.FailNextMatching(redfishbmc.Match{Method: http.MethodGet, Path: "/Systems/sys-1"}, 1, http.StatusServiceUnavailable, "")
	_, err := e.power.GetPowerState(e.ctx, e.task)
	must(t, err)
	must(t, e.power.SetPowerState(e.ctx, e.task, states.PowerOn, 0))

	seen := rec.exchanges()
	if len(seen) != bmc.Requests() {
		t.Fatalf("wrapper saw %d exchanges, the BMC answered %d: %+v", len(seen), bmc.Requests(), seen)
	}
	if wraps != 1 {
		t.Errorf("transport wrapped %d times, want once for the one cached connection", wraps)
	}
	count := func(method string, status int) int {
		n := 0
		for _, x := range seen {
			if x.method == method && x.status == status {
				n++
			}
		}
		return n
	}
	if n := count(http.MethodGet, http.StatusServiceUnavailable); n != 1 {
		t.Errorf("%d GETs answered 503 seen, want the one injected: %+v", n, seen)
	}
	if n := count(http.MethodPost, http.StatusCreated); n != 1 {
		t.Errorf("%d session logins seen, want 1: %+v", n, seen)
	}
	if n := bmc.Count(http.MethodPost, sysPath+"/Actions/ComputerSystem.Reset"); n == 0 || count(http.MethodPost, http.StatusNoContent)+count(http.MethodPost, http.StatusOK)+count(http.MethodPost, http.StatusAccepted) != n {
		t.Errorf("reset POSTs: BMC %d, wrapper saw %+v", n, seen)
	}
}
