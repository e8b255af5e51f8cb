package store

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
)

// CreateNode and UpdateNodeIf return the row they wrote without reading
// it back: what they return must be what a read gives, on both backends,
// with and without sealed secrets (JSON numbers, times at the backend's
// precision, states stored as NULL, provision timestamps).
func TestNodeWrittenIsNodeRead(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		for _, sealed := range []bool{false, true} {
			s := e.s
			if sealed {
				s = New(e.db, WithClock(e.clock.Now), WithKeyRing(ring(t, "k1", map[string]byte{"k1": 1})))
			}
			same := func(what string, got *model.Node) {
				t.Helper()
				read, err := s.GetNodeByID(e.ctx, got.ID)
				if err != nil {
					t.Fatalf("%s: read: %v", what, err)
				}
				if !reflect.DeepEqual(got, read) {
					t.Errorf("sealed=%v %s: returned\n%+v\nread\n%+v", sealed, what, got, read)
				}
			}
			e.clock.Advance(1500*time.Millisecond + 1234*time.Nanosecond)
			n, err := s.CreateNode(e.ctx, &model.Node{
				Driver: "fake-hardware", Name: model.Ptr(fmt.Sprintf("written-%v", sealed)),
				DriverInfo:  map[string]any{"ipmi_password": "secret", "ipmi_port": 623, "nested": map[string]any{"f": 1.5, "l": []any{1, "x", nil}}},
				Properties:  map[string]any{"cpus": int64(64), "memory_mb": 1024},
				Extra:       map[string]any{"note": "a&b <é>"},
				Description: model.Ptr(""),
			})
			if err != nil {
				t.Fatal(err)
			}
			same("create", n)

			e.clock.Advance(2*time.Second + 7*time.Microsecond)
			n.Extra = map[string]any{"n": 1, "deep": map[string]any{"k": []any{2, 3}}}
			n.PowerState = ""
			n.InstanceInfo = map[string]any{"image_source": "http://x", "configdrive": map[string]any{"a": 1}}
			got, err := s.UpdateNode(e.ctx, n, "extra", "power_state", "instance_info")
			if err != nil {
				t.Fatal(err)
			}
			same("update of named columns", got)

			e.clock.Advance(time.Second)
			got.ProvisionState = states.Inspecting
			host := "h"
			got.Reservation = &host
			got, err = s.UpdateNode(e.ctx, got)
			if err != nil {
				t.Fatal(err)
			}
			same("update of every column into inspecting", got)

			e.clock.Advance(time.Second)
			got.ProvisionState = states.Manageable
			got.DriverInternalInfo = map[string]any{"agent_secret_token": "tok", "n": 2}
			got, err = s.UpdateNodeIf(e.ctx, got, NodeCondition{Reservation: &host}, "provision_state", "driver_internal_info")
			if err != nil {
				t.Fatal(err)
			}
			same("guarded update out of inspection", got)
		}
	})
}
