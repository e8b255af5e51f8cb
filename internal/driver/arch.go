package driver

import "github.com/openkeel/ironic/internal/model"

// CPUArch is the node's properties/cpu_arch, empty when unset: the key of
// the configuration's *_by_arch maps in multi-architecture fleets.
func CPUArch(n *model.Node) string {
	s, _ := n.Properties["cpu_arch"].(string)
	return s
}

// KernelRamdiskByArch is the agent kernel and ramdisk that
// [conductor]/<mode>_kernel_by_arch and <mode>_ramdisk_by_arch give the
// node's cpu_arch, as upstream's _get_kernel_ramdisk_by_arch: only a whole
// pair counts (ok), a kernel without its ramdisk or the reverse is left
// for the conductor-wide pair. The node's own driver_info pair comes
// before it, the conductor-wide pair after.
func KernelRamdiskByArch(n *model.Node, kernels, ramdisks map[string]string) (kernel, ramdisk string, ok bool) {
	arch := CPUArch(n)
	if arch == "" {
		return "", "", false
	}
	kernel, ramdisk = kernels[arch], ramdisks[arch]
	if kernel == "" || ramdisk == "" {
		return "", "", false
	}
	return kernel, ramdisk, true
}
