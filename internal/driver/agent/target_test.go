package agent

import (
	"testing"

	"github.com/openkeel/ironic/internal/agentclient"
	"github.com/openkeel/ironic/internal/model"
)

// The node's CA setting is driver_internal_info's (auto-TLS) before
// driver_info's; without either the client falls back to
// [agent]/verify_ca.
func TestTargetFor(t *testing.T) {
	name, instance := "node-7", "0c5a4f8e-4f6b-4a87-9e8b-3b8c6f6f2a11"
	for _, tc := range []struct {
		name       string
		internal   map[string]any
		driverInfo map[string]any
		want       any
	}{
		{"internal info first", map[string]any{model.DIIAgentVerifyCA: "/var/lib/ironic/certificates/n.crt"}, map[string]any{"agent_verify_ca": false}, "/var/lib/ironic/certificates/n.crt"},
		{"driver_info when internal info is null", map[string]any{model.DIIAgentVerifyCA: nil}, map[string]any{"agent_verify_ca": false}, false},
		{"configuration otherwise", nil, map[string]any{}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := &model.Node{UUID: "1be26c0b-03f2-4d2e-ae87-c02d7f33c123", Name: &name, InstanceUUID: &instance, DriverInfo: tc.driverInfo, DriverInternalInfo: tc.internal}
			n.InternalInfo().SetAgentURL("https://10.0.0.5:9999")
			n.InternalInfo().SetAgentToken("tok")
			want := agentclient.Target{NodeUUID: n.UUID, NodeName: name, InstanceUUID: instance,
				URL: "https://10.0.0.5:9999", Token: "tok", VerifyCA: tc.want}
			if got := targetFor(n); got != want {
				t.Errorf("targetFor = %+v, want %+v", got, want)
			}
		})
	}
}

func TestRescuePassword(t *testing.T) {
	n := &model.Node{InstanceInfo: map[string]any{"hashed_rescue_password": "$6$s$h", "rescue_password": "plain"}}
	if got := rescuePassword(n); got != (agentclient.RescuePassword{Hashed: "$6$s$h", Plain: "plain"}) {
		t.Errorf("rescuePassword = %+v", got)
	}
	if got := rescuePassword(&model.Node{}); got != (agentclient.RescuePassword{}) {
		t.Errorf("rescuePassword of a node without one = %+v", got)
	}
}
