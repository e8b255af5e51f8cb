package driver

import (
	"fmt"
	"log/slog"

	"github.com/openkeel/ironic/internal/model"
)

// RamdiskSources are where a boot interface finds the agent kernel and
// ramdisk of one mode (deploy or rescue) when the node names none: the
// [conductor]/<mode>_kernel_by_arch and <mode>_ramdisk_by_arch pairs,
// then [conductor]/<mode>_kernel and <mode>_ramdisk.
type RamdiskSources struct {
	Kernel, Ramdisk             string
	KernelByArch, RamdiskByArch map[string]string
	// ErrorOnInconsistency is [conductor]/
	// error_on_ramdisk_config_inconsistency: a half pair fails instead of
	// being passed over with a warning.
	ErrorOnInconsistency bool
}

// AgentKernelRamdisk is upstream's get_agent_kernel_ramdisk: the node's
// driver_info <mode>_kernel and <mode>_ramdisk when it names both, else
// the pair configured for its cpu_arch, else the conductor-wide pair
// (which may be empty: the caller reports what is missing). A half pair,
// in driver_info or in the by-arch options, is ambiguous: it is logged
// and passed over, or, with ErrorOnInconsistency, answered with
// MissingParameterValue, upstream's message in both cases.
func AgentKernelRamdisk(n *model.Node, mode string, src RamdiskSources, log *slog.Logger) (kernel, ramdisk string, err error) {
	kernelName, ramdiskName := mode+"_kernel", mode+"_ramdisk"
	kernel, _ = n.DriverInfo[kernelName].(string)
	ramdisk, _ = n.DriverInfo[ramdiskName].(string)
	if kernel != "" && ramdisk != "" {
		return kernel, ramdisk, nil
	}
	if kernel != "" || ramdisk != "" {
		solo, missing := kernelName, ramdiskName
		if ramdisk != "" {
			solo, missing = ramdiskName, kernelName
		}
		msg := fmt.Sprintf("Node %s driver_info has an override for %s, but not for %s. This configuration is ambiguous. "+
			"Node %s cannot boot a ramdisk.", n.UUID, solo, missing, n.UUID)
		if err := src.inconsistent(msg, log); err != nil {
			return "", "", err
		}
	}
	if arch := CPUArch(n); arch != "" {
		kernel, ramdisk = src.KernelByArch[arch], src.RamdiskByArch[arch]
		if kernel != "" && ramdisk != "" {
			return kernel, ramdisk, nil
		}
		if kernel != "" || ramdisk != "" {
			solo, missing := kernelName+"_by_arch", ramdiskName+"_by_arch"
			if ramdisk != "" {
				solo, missing = missing, solo
			}
			msg := fmt.Sprintf("CONF.conductor.%s has a value for %s servers, but doesn't have one in CONF.conductor.%s. "+
				"This configuration is ambiguous. Node %s cannot boot a ramdisk.", solo, arch, missing, n.UUID)
			if err := src.inconsistent(msg, log); err != nil {
				return "", "", err
			}
		}
	}
	return src.Kernel, src.Ramdisk, nil
}

// inconsistent is upstream's _handle_inconsistent_ramdisk_config: the
// ambiguity is always logged, and an error only when configured so.
func (src RamdiskSources) inconsistent(msg string, log *slog.Logger) error {
	if log == nil {
		log = slog.Default()
	}
	log.Warn(msg)
	if src.ErrorOnInconsistency {
		return MissingParameterValue("%s", msg)
	}
	return nil
}
