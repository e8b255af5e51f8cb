package driver

import "github.com/openkeel/ironic/internal/model"

// CPUArch is the node's properties/cpu_arch, empty when unset: the key of
// the configuration's *_by_arch maps in multi-architecture fleets.
func CPUArch(n *model.Node) string {
	s, _ := n.Properties["cpu_arch"].(string)
	return s
}
