package store

import (
	"context"
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
