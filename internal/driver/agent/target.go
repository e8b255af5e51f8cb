package agent

import (
	"github.com/openkeel/ironic/internal/agentclient"
	"github.com/openkeel/ironic/internal/model"
)

// targetFor is the agent of n as the client needs it: the URL and token
// its ramdisk registered, and the node's CA setting, which upstream's
// _get_verify takes from driver_internal_info (recorded from an auto-TLS
// heartbeat) before driver_info. It is read at each call: a reboot or a
// new lookup changes them.
func targetFor(n *model.Node) agentclient.Target {
	ii := n.InternalInfo()
	t := agentclient.Target{NodeUUID: n.UUID, URL: ii.AgentURL(), Token: ii.AgentToken()}
	if n.Name != nil {
		t.NodeName = *n.Name
	}
	if n.InstanceUUID != nil {
		t.InstanceUUID = *n.InstanceUUID
	}
	if v := ii.Get(model.DIIAgentVerifyCA); v != nil {
		t.VerifyCA = v
	} else if v := n.DriverInfo["agent_verify_ca"]; v != nil {
		t.VerifyCA = v
	}
	return t
}

// rescuePassword is the password finalize_rescue sends, from
// instance_info.
func rescuePassword(n *model.Node) agentclient.RescuePassword {
	hashed, _ := n.InstanceInfo["hashed_rescue_password"].(string)
	return agentclient.RescuePassword{Hashed: hashed, Plain: n.InstanceInfo["rescue_password"]}
}
