package store

import (
	"context"
	"fmt"
	"testing"

	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/store/storetest"
)

// The single-node paths the API and the conductor run per request: a read
// by UUID (GET /v1/nodes/{uuid}), the node lock taken and dropped, and a
// one-column update (PATCH, heartbeats).
func BenchmarkNodeHotPaths(b *testing.B) {
	ctx := context.Background()
	for _, be := range storetest.Backends(b) {
		s := New(be.DB)
		n, err := s.CreateNode(ctx, &model.Node{Driver: "fake-hardware", Name: new("bench")})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.SetNodeTraits(ctx, n.ID, []string{"CUSTOM_A", "CUSTOM_B"}, "1.0"); err != nil {
			b.Fatal(err)
		}
		b.Run(be.Name+"/GetNodeByUUID", func(b *testing.B) {
			for b.Loop() {
				if _, err := s.GetNodeByUUID(ctx, n.UUID); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(be.Name+"/ReserveRelease", func(b *testing.B) {
			for b.Loop() {
				if _, err := s.ReserveNode(ctx, "host", n.ID); err != nil {
					b.Fatal(err)
				}
				if err := s.ReleaseNode(ctx, "host", n.ID); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(be.Name+"/UpdateNode", func(b *testing.B) {
			for b.Loop() {
				n.Extra = map[string]any{"foo": "bar"}
				if _, err := s.UpdateNode(ctx, n, "extra"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// A page of 1,000 nodes as the API lists them: every column with the JSON
// columns decoded (ListNodes), every column as stored text (the detail
// page's ListNodeRows) and the six columns of GET /v1/nodes.
func BenchmarkNodeListPage(b *testing.B) {
	ctx := context.Background()
	for _, be := range storetest.Backends(b) {
		s := New(be.DB)
		for i := range 1000 {
			n := benchNode(i)
			if _, err := s.CreateNode(ctx, n); err != nil {
				b.Fatal(err)
			}
		}
		opts := ListOptions{Limit: 1000, SortKey: "id", SortDir: "asc"}
		b.Run(be.Name+"/ListNodes", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if ns, err := s.ListNodes(ctx, NodeFilter{}, opts); err != nil || len(ns) != 1000 {
					b.Fatal(len(ns), err)
				}
			}
		})
		for _, c := range []struct {
			name string
			cols []string
		}{
			{"ListNodeRows/detail", nil},
			{"ListNodeRows/list", []string{"uuid", "instance_uuid", "maintenance", "power_state", "provision_state", "name", "owner", "lessee"}},
		} {
			b.Run(be.Name+"/"+c.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if rows, err := s.ListNodeRows(ctx, NodeFilter{}, opts, c.cols); err != nil || len(rows) != 1000 {
						b.Fatal(len(rows), err)
					}
				}
			})
		}
	}
}

// benchNode is a node enrolled like a rack server (credentials, deploy
// images, Nova's properties).
func benchNode(i int) *model.Node {
	return &model.Node{
		Driver: "fake-hardware", Name: new(fmt.Sprintf("bench-%06d", i)), ResourceClass: new("baremetal"),
		DriverInfo: map[string]any{
			"ipmi_address": fmt.Sprintf("10.0.%d.%d", i>>8&255, i&255), "ipmi_username": "admin",
			"ipmi_password": fmt.Sprintf("pw-%08x", i), "ipmi_port": 623,
			"deploy_kernel": "http://172.22.0.1/images/ipa.kernel", "deploy_ramdisk": "http://172.22.0.1/images/ipa.initramfs",
		},
		Properties: map[string]any{"cpus": 64, "cpu_arch": "x86_64", "memory_mb": 524288, "local_gb": 1788.5,
			"capabilities": "boot_mode:uefi", "root_device": map[string]any{"serial": fmt.Sprintf("S4EV%06d", i)}},
		Extra: map[string]any{"rack": fmt.Sprintf("r%03d", i/40), "tags": []any{"x", 1, true, nil}},
	}
}

// BenchmarkNodeGauges is what the /metrics node gauges read per scrape
// over 2,000 nodes: every node's three columns, as they did, against the
// database's count (CountNodesByState).
func BenchmarkNodeGauges(b *testing.B) {
	ctx := context.Background()
	for _, be := range storetest.Backends(b) {
		s := New(be.DB)
		for i := range 2000 {
			if _, err := s.CreateNode(ctx, benchNode(i)); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(be.Name+"/ListNodeColumns", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				ns, err := s.ListNodeColumns(ctx, NodeFilter{IncludeChildren: true}, ListOptions{},
					[]string{"provision_state", "power_state", "maintenance"})
				if err != nil || len(ns) != 2000 {
					b.Fatal(len(ns), err)
				}
			}
		})
		b.Run(be.Name+"/CountNodesByState", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if c, err := s.CountNodesByState(ctx); err != nil || len(c) != 1 || c[0].Count != 2000 {
					b.Fatal(c, err)
				}
			}
		})
	}
}
