package drivers

import (
	"context"
	"net/http"
	"testing"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apitest"
	"github.com/openkeel/ironic/internal/rpc"
)

// vendorStub answers driver_vendor_passthru with a preset result and
// keeps the arguments it was called with; no stock driver has driver
// methods.
type vendorStub struct {
	rpc.ConductorAPI
	got    []rpc.DriverVendorPassthruArgs
	topics []string
	result *rpc.VendorPassthruResult
}

func (v *vendorStub) DriverVendorPassthru(_ context.Context, topic string, a rpc.DriverVendorPassthruArgs) (*rpc.VendorPassthruResult, error) {
	v.got = append(v.got, a)
	v.topics = append(v.topics, topic)
	return v.result, nil
}

func TestPassthruAnswers(t *testing.T) {
	e := newEnv(t, nil)
	stub := &vendorStub{ConductorAPI: e.cond}
	m := map[string]api.HandlerFunc{}
	Register(m, Deps{Store: e.s, Conductor: stub, Topics: constTopic{}})
	e.h = apitest.New(t, api.Deps{Config: e.cfg, Handlers: m, Logger: discardLogger()})
	cases := []struct {
		name, method, path, body string
		result                   rpc.VendorPassthruResult
		status                   int
		answer                   string
		wantMethod               string
		wantInfo                 string
	}{
		{"sync by query", "POST", "/v1/drivers/fake-hardware/vendor_passthru?method=m1", `{"a": 1}`, rpc.VendorPassthruResult{Return: map[string]any{"ok": true}}, 200, `{"ok": true}`, "m1", "map[a:1]"},
		{"async by path", "PUT", "/v1/drivers/fake-hardware/vendor_passthru/m2", ``, rpc.VendorPassthruResult{Async: true}, 202, ``, "m2", "map[]"},
		{"sync null", "GET", "/v1/drivers/fake-hardware/vendor_passthru/m3", ``, rpc.VendorPassthruResult{}, 200, `null`, "m3", "map[]"},
		{"attached", "DELETE", "/v1/drivers/fake-hardware/vendor_passthru/m4", ``, rpc.VendorPassthruResult{Return: "raw bytes", Attach: true}, 200, `raw bytes`, "m4", "map[]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			stub.result = &c.result
			r := e.do(c.method, c.path, "1.115", c.body)
			if r.status != c.status || string(r.body) != c.answer {
				t.Fatalf("%d %q", r.status, r.body)
			}
			got := stub.got[len(stub.got)-1]
			if got.DriverName != "fake-hardware" || got.DriverMethod != c.wantMethod || got.HTTPMethod != c.method || fmtMap(got.Info) != c.wantInfo {
				t.Fatalf("relayed %+v", got)
			}
			if stub.topics[len(stub.topics)-1] != "test-topic" {
				t.Fatalf("topic %v", stub.topics)
			}
		})
	}
	if r := e.do("GET", "/v1/drivers/fake-hardware/vendor_passthru/m3", "1.115", ""); r.status != http.StatusOK {
		t.Fatalf("%d", r.status)
	}
}

// raidStub answers RAID properties as a driver with RAID support would,
// counting the calls: upstream keeps the first answer per driver.
type raidStub struct {
	rpc.ConductorAPI
	calls int
}

func (s *raidStub) GetRAIDLogicalDiskProperties(context.Context, string, string) (map[string]string, error) {
	s.calls++
	return map[string]string{"size_gb": "Size in GiB. Required."}, nil
}

func TestRAIDPropertiesCached(t *testing.T) {
	e := newEnv(t, nil)
	stub := &raidStub{ConductorAPI: e.cond}
	m := map[string]api.HandlerFunc{}
	Register(m, Deps{Store: e.s, Conductor: stub, Topics: constTopic{}})
	e.h = apitest.New(t, api.Deps{Config: e.cfg, Handlers: m, Logger: discardLogger()})
	for _, v := range []string{"1.12", "1.115"} {
		r := e.do("GET", "/v1/drivers/fake-hardware/raid/logical_disk_properties", v, "")
		if r.status != 200 || string(r.body) != `{"size_gb": "Size in GiB. Required."}` {
			t.Fatalf("%s: %d %s", v, r.status, r.body)
		}
	}
	if stub.calls != 1 {
		t.Fatalf("conductor asked %d times", stub.calls)
	}
}
