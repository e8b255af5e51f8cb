package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/store/storetest"
)

// BenchmarkAPINodeShow is GET /v1/nodes/{uuid} through the whole handler
// an api service serves (noauth): the access log, the metrics
// middleware, the change-stream and console mounts, upstream's
// middleware chain, the policy of the configuration (authz) and the node
// handler, on the first storetest backend with one conductor registered,
// logging at INFO to nowhere.
// The resource package's BenchmarkNodeShow leaves out everything but the
// chain (issue 29).
func BenchmarkAPINodeShow(b *testing.B) {
	ctx := context.Background()
	cfg, err := config.Load(config.LoadOptions{Overrides: map[string]map[string]string{
		"DEFAULT": {"auth_strategy": "noauth"},
	}})
	if err != nil {
		b.Fatal(err)
	}
	db := storetest.Backends(b)[0].DB
	st, err := newStack(ctx, modeAPI, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), db)
	if err != nil {
		b.Fatal(err)
	}
	h, err := st.apiHandler()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(st.closeAPI)
	// A live conductor serving fake-hardware, as beside a real api
	// service: the node's conductor field is then found in the cached ring.
	ifaces := []model.ConductorHardwareInterface{{HardwareType: "fake-hardware", InterfaceType: "power", InterfaceName: "fake", Default: true}}
	if _, err := st.store.RegisterConductor(ctx, "conductor-0", "", ifaces, false); err != nil {
		b.Fatal(err)
	}
	var uuid string
	for i := range 10 {
		n, err := st.store.CreateNode(ctx, &model.Node{
			Driver: "fake-hardware", Name: new(fmt.Sprintf("bench-%06d", i)), ResourceClass: new("baremetal"),
			DriverInfo: map[string]any{
				"ipmi_address": fmt.Sprintf("10.0.0.%d", i), "ipmi_username": "admin", "ipmi_password": "pw",
				"deploy_kernel": "http://172.22.0.1/images/ipa.kernel", "deploy_ramdisk": "http://172.22.0.1/images/ipa.initramfs",
			},
			Properties: map[string]any{"cpus": 64, "cpu_arch": "x86_64", "memory_mb": 524288, "local_gb": 1788.5,
				"capabilities": "boot_mode:uefi", "root_device": map[string]any{"serial": fmt.Sprintf("S4EV%06d", i)}},
			Extra: map[string]any{"rack": "r001", "tags": []any{"x", 1, true, nil}},
		})
		if err != nil {
			b.Fatal(err)
		}
		uuid = n.UUID
	}
	req := httptest.NewRequest("GET", "http://127.0.0.1:6385/v1/nodes/"+uuid, nil)
	req.Header.Set("X-OpenStack-Ironic-API-Version", "1.78")
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatalf("%d %s", w.Code, w.Body)
		}
	}
}
