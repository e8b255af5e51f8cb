package driver

import (
	"slices"
	"strings"

	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
)

// ramdiskStates are the provision states in which the agent ramdisk is
// booted.
var ramdiskStates = []string{
	states.Deploying, states.DeployWait, states.Cleaning, states.CleanWait, states.Inspecting,
	states.InspectWait, states.Rescuing, states.RescueWait, states.Servicing, states.ServiceWait,
}

// NeedPrepareRamdisk is upstream driver_utils.need_prepare_ramdisk: boot
// interfaces prepare (write the boot configuration, build or insert the
// media) only in the states that boot the agent ramdisk, not, for
// instance, when a conductor takes over an active node.
func NeedPrepareRamdisk(n *model.Node) bool {
	return slices.Contains(ramdiskStates, n.ProvisionState)
}

// Capability reads key from a capabilities value (properties or
// instance_info "capabilities"): an object, or upstream's "k:v,k2:v2"
// string. It is "" when the key is absent.
func Capability(caps any, key string) string {
	switch c := caps.(type) {
	case map[string]any:
		s, _ := c[key].(string)
		return s
	case string:
		for item := range strings.SplitSeq(c, ",") {
			if k, v, ok := strings.Cut(item, ":"); ok && strings.TrimSpace(k) == key {
				return strings.TrimSpace(v)
			}
		}
	}
	return ""
}
