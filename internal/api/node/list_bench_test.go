package node

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apitest"
	"github.com/openkeel/ironic/internal/store"
)

// novaFields are the fields Nova's driver asks for when it lists nodes.
const novaFields = "uuid,power_state,target_power_state,provision_state,target_provision_state,last_error,maintenance,properties,instance_uuid,traits,resource_class"

// benchNodeBody is a fake-hardware node shaped like a rack server's
// enrolment (credentials, deploy images, Nova's properties, notes with
// characters encoding/json escapes).
func benchNodeBody(i int) string {
	b, err := json.Marshal(map[string]any{
		"name":           fmt.Sprintf("bench-%06d", i),
		"driver":         "fake-hardware",
		"resource_class": "baremetal",
		"description":    fmt.Sprintf("rack %d unit %d <é>", i/40, i%40),
		"driver_info": map[string]any{
			"ipmi_address":    fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255),
			"ipmi_username":   "admin",
			"ipmi_password":   fmt.Sprintf("pw-%08x", i*2654435761),
			"ipmi_port":       623,
			"ipmi_priv_level": "ADMINISTRATOR",
			"deploy_kernel":   "http://172.22.0.1/images/ironic-python-agent.kernel",
			"deploy_ramdisk":  "http://172.22.0.1/images/ironic-python-agent.initramfs",
		},
		"properties": map[string]any{
			"cpus": 64, "cpu_arch": "x86_64", "memory_mb": 524288, "local_gb": 1788.5,
			"capabilities": "boot_mode:uefi,secure_boot:true",
			"root_device":  map[string]any{"serial": fmt.Sprintf("S4EVNX0N%06d", i)},
		},
		"extra": map[string]any{
			"foo": "a&b", "rack": fmt.Sprintf("r%03d", i/40), "asset_tag": fmt.Sprintf("AT-%07d", i),
			"tags": []any{"x", 1, true, nil, "\U0001F600"},
		},
	})
	if err != nil {
		panic(err)
	}
	return string(b)
}

// fullRowStore answers ListNodeRows with every column, as the list did
// before it read only what it renders: the reference for the narrower
// queries.
type fullRowStore struct{ store.Store }

func (s fullRowStore) ListNodeRows(ctx context.Context, f store.NodeFilter, o store.ListOptions, _ []string) ([]store.NodeRow, error) {
	return s.Store.ListNodeRows(ctx, f, o, nil)
}

// listEnv is an env with n nodes and a second handler reading full rows
// from the same store.
func listEnv(t testing.TB, n int) (*env, http.Handler) {
	t.Helper()
	var deps Deps
	e := newEnvWith(t, func(d *Deps) { deps = *d })
	for i := range n {
		e.create(benchNodeBody(i))
	}
	r := e.do("PATCH", "/v1/nodes/bench-000001", "1.115", `[{"op": "add", "path": "/instance_uuid", "value": "1be26c0b-03f2-4d2e-ae87-c02d7f33c123"}, {"op": "add", "path": "/maintenance", "value": true}]`)
	if r.status != http.StatusOK {
		t.Fatalf("patch: %d %s", r.status, r.body)
	}
	if r := e.do("PUT", "/v1/nodes/bench-000002/traits/CUSTOM_GOLD", "1.115", ""); r.status != http.StatusNoContent {
		t.Fatalf("trait: %d %s", r.status, r.body)
	}
	deps.Store = fullRowStore{deps.Store}
	handlers := map[string]api.HandlerFunc{}
	Register(handlers, deps)
	return e, apitest.New(t, api.Deps{Logger: deps.Logger, Handlers: handlers})
}

func TestListReadsOnlyNeededColumnsSameBytes(t *testing.T) {
	e, full := listEnv(t, 5)
	for _, c := range []struct{ path, version string }{
		{"/v1/nodes", "1.115"},
		{"/v1/nodes", "1.1"},
		{"/v1/nodes?limit=2", "1.78"},
		{"/v1/nodes?fields=" + novaFields, "1.46"},
		{"/v1/nodes?fields=uuid,created_at,updated_at,chassis_uuid,allocation_uuid,conductor,driver_info,instance_info,tags", "1.115"},
		{"/v1/nodes?fields=uuid,traits,extra,description,name", "1.115"},
		{"/v1/nodes?fields=uuid,bogus", "1.115"},
		{"/v1/nodes?detail=True", "1.115"},
		{"/v1/nodes?conductor=" + testHost, "1.115"},
		{"/v1/nodes/detail", "1.115"},
		{"/v1/nodes/detail", "1.1"},
	} {
		got := e.do("GET", c.path, c.version, "")
		req := httptest.NewRequest("GET", "http://127.0.0.1:6385"+c.path, nil)
		req.Header.Set("X-OpenStack-Ironic-API-Version", c.version)
		w := httptest.NewRecorder()
		full.ServeHTTP(w, req)
		if got.status != w.Code || !bytes.Equal(got.body, w.Body.Bytes()) {
			t.Errorf("%s at %s:\n got %d %s\nwant %d %s", c.path, c.version, got.status, got.body, w.Code, w.Body.Bytes())
		}
		if got.status == http.StatusOK && !bytes.Contains(got.body, []byte(`"nodes": [{`)) {
			t.Errorf("%s at %s: no nodes in %s", c.path, c.version, got.body)
		}
	}
}

func benchmarkList(b *testing.B, path, version string) {
	e, _ := listEnv(b, 1000)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		r := e.do("GET", path, version, "")
		if r.status != http.StatusOK {
			b.Fatalf("%s: %d %s", path, r.status, r.body)
		}
	}
}

func BenchmarkNodeList(b *testing.B)   { benchmarkList(b, "/v1/nodes?limit=1000", "1.78") }
func BenchmarkNodeDetail(b *testing.B) { benchmarkList(b, "/v1/nodes/detail?limit=1000", "1.78") }
func BenchmarkNodeNovaFields(b *testing.B) {
	benchmarkList(b, "/v1/nodes?fields="+novaFields, "1.46")
}

// The single-node requests of issue 29's goals, through the router, the
// handlers and the in-process conductor on SQLite: one node read by UUID,
// a PATCH of extra, and an enrolment.
func BenchmarkNodeShow(b *testing.B) {
	e, _ := listEnv(b, 10)
	uuid := e.do("GET", "/v1/nodes/bench-000003", "1.78", "").json(b)["uuid"].(string)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if r := e.do("GET", "/v1/nodes/"+uuid, "1.78", ""); r.status != http.StatusOK {
			b.Fatalf("show: %d %s", r.status, r.body)
		}
	}
}

func BenchmarkNodePatch(b *testing.B) {
	e, _ := listEnv(b, 10)
	uuid := e.do("GET", "/v1/nodes/bench-000003", "1.78", "").json(b)["uuid"].(string)
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		i++
		body := fmt.Sprintf(`[{"op": "add", "path": "/extra/n", "value": %d}]`, i)
		if r := e.do("PATCH", "/v1/nodes/"+uuid, "1.78", body); r.status != http.StatusOK {
			b.Fatalf("patch: %d %s", r.status, r.body)
		}
	}
}

func BenchmarkNodeCreate(b *testing.B) {
	e, _ := listEnv(b, 3)
	b.ReportAllocs()
	b.ResetTimer()
	i := 1000
	for b.Loop() {
		i++
		if r := e.do("POST", "/v1/nodes", "1.78", benchNodeBody(i)); r.status != http.StatusCreated {
			b.Fatalf("create: %d %s", r.status, r.body)
		}
	}
}

// BenchmarkNodeDetailConcurrent8 is the memory side of detail pages: 8
// clients each fetching a 1,000-node page, as make bench drives them; it
// reports the largest live heap sampled while they run (peak-heap-MiB),
// the figure behind the process's peak RSS.
func BenchmarkNodeDetailConcurrent8(b *testing.B) {
	e, _ := listEnv(b, 1000)
	const clients = 8
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
		}
	}()
	runtime.GC()
	peak.Store(0)
	b.ReportAllocs()
	b.ResetTimer()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				if r := e.do("GET", "/v1/nodes/detail?limit=1000", "1.78", ""); r.status != http.StatusOK {
					b.Errorf("detail: %d", r.status)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	close(stop)
	<-sampled
	b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MiB")
}
