package store

import (
	"context"
	"fmt"
	"testing"

	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/secrets"
	"github.com/openkeel/ironic/internal/store/storetest"
)

// benchSecretNode is an enrolled IPMI node as the API benchmarks make it,
// with the agent token a deployment leaves: three sealed values with a key
// ring.
func benchSecretNode(i int) *model.Node {
	return &model.Node{Driver: "fake-hardware", Name: model.Ptr(fmt.Sprintf("bench-%06d", i)),
		DriverInfo: map[string]any{"ipmi_address": "10.0.0.1", "ipmi_username": "admin", "ipmi_password": fmt.Sprintf("pw-%08x", i),
			"ipmi_port": 623, "deploy_kernel": "http://172.22.0.1/ipa.kernel", "deploy_ramdisk": "http://172.22.0.1/ipa.initramfs"},
		InstanceInfo:       map[string]any{"image_source": "http://172.22.0.1/img.qcow2", "image_url": "https://swift/temp?sig=abc"},
		DriverInternalInfo: map[string]any{"agent_secret_token": "t0k3n", "agent_url": "https://10.0.0.1:9999", "clean_steps": nil},
		Properties:         map[string]any{"cpus": 64, "memory_mb": 524288, "local_gb": 1788},
	}
}

// The cost of encryption at rest on the store's share of GET
// /v1/nodes/{uuid} (a read and its opening) and of an enrolment (sealing
// and the insert), with no key ring and with one.
func BenchmarkSecretsAtRest(b *testing.B) {
	ctx := context.Background()
	r, err := secrets.NewKeyRing(map[string][]byte{"k1": make([]byte, secrets.KeySize)}, "")
	if err != nil {
		b.Fatal(err)
	}
	for _, be := range storetest.Backends(b) {
		for _, mode := range []struct {
			name string
			opts []Option
		}{{"plain", nil}, {"sealed", []Option{WithKeyRing(r)}}} {
			s := New(be.DB, mode.opts...)
			n, err := s.CreateNode(ctx, benchSecretNode(0))
			if err != nil {
				b.Fatal(err)
			}
			b.Run(be.Name+"/GetNodeByUUID/"+mode.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := s.GetNodeByUUID(ctx, n.UUID); err != nil {
						b.Fatal(err)
					}
				}
			})
			i := 0
			b.Run(be.Name+"/CreateNode/"+mode.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					i++
					nn := benchSecretNode(i)
					nn.Name = model.Ptr(fmt.Sprintf("%s-%d", mode.name, i))
					if _, err := s.CreateNode(ctx, nn); err != nil {
						b.Fatal(err)
					}
				}
			})
			if err := s.DeleteNode(ctx, n.ID); err != nil {
				b.Fatal(err)
			}
		}
	}
}
