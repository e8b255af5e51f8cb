package ipa

// The default handlers answer as IPA with only its GenericHardwareManager
// loaded (hardware manager version 1.2) on a machine whose image writes
// succeed.

const (
	managerName    = "GenericHardwareManager"
	managerVersion = "1.2"
)

// HardwareManagerVersion is what get_*_steps report and execute_*_step
// expect back as clean_version/deploy_version/service_version.
func HardwareManagerVersion() map[string]any {
	return map[string]any{"generic_hardware_manager": managerVersion}
}

func step(name, iface string, priority int, abortable bool) map[string]any {
	s := map[string]any{"step": name, "priority": priority, "interface": iface, "reboot_requested": false}
	if abortable {
		s["abortable"] = true
	}
	return s
}

// CleanSteps are GenericHardwareManager's clean steps: erase_devices
// (priority 10) and erase_devices_metadata (99) run in automated
// cleaning, the others only when asked for. argsinfo is left out.
func CleanSteps() []any {
	return []any{
		step("erase_devices", "deploy", 10, true),
		step("erase_devices_metadata", "deploy", 99, true),
		step("erase_devices_express", "deploy", 0, true),
		step("erase_pstore", "deploy", 0, true),
		step("clean_uefi_nvram", "deploy", 0, true),
		step("delete_configuration", "raid", 0, true),
		step("create_configuration", "raid", 0, true),
		step("burnin_cpu", "deploy", 0, true),
		step("burnin_gpu", "deploy", 0, true),
		step("burnin_disk", "deploy", 0, true),
		step("burnin_memory", "deploy", 0, true),
		step("burnin_network", "deploy", 0, true),
	}
}

// DeploySteps are GenericHardwareManager's deploy steps; write_image is
// proxied by the conductor's out-of-band step of the same name.
func DeploySteps() []any {
	return []any{
		step("erase_devices_metadata", "deploy", 0, false),
		step("apply_configuration", "raid", 0, false),
		step("clean_uefi_nvram", "deploy", 0, false),
		step("write_image", "deploy", 0, false),
		step("inject_files", "deploy", 0, false),
		step("execute_bootc_install", "deploy", 0, false),
	}
}

// ServiceSteps are GenericHardwareManager's service steps.
func ServiceSteps() []any {
	return []any{
		step("delete_configuration", "raid", 0, true),
		step("apply_configuration", "raid", 0, false),
		step("create_configuration", "raid", 0, true),
		step("burnin_cpu", "deploy", 0, true),
		step("burnin_gpu", "deploy", 0, true),
		step("burnin_memory", "deploy", 0, true),
		step("burnin_network", "deploy", 0, true),
		step("write_image", "deploy", 0, false),
	}
}

// knownExtension reports whether IPA ships the extension; an unknown one
// is a 404 rather than an unknown command.
func knownExtension(ext string) bool {
	switch ext {
	case "clean", "deploy", "service", "standby", "image", "log", "rescue", "system", "flow", "poll":
		return true
	}
	return false
}

// ExecuteStep runs an in-band step the way IPA's clean/deploy/service
// extensions do: polls status reads of RUNNING, then
// {"<kind>_result": result, "<kind>_step": step}. A step without "step" or
// a hardware manager version that does not match fails as IPA fails.
func ExecuteStep(kind string, polls int, result any) Handler {
	return func(params map[string]any) Outcome {
		st, _ := params["step"].(map[string]any)
		if v, ok := params[kind+"_version"]; ok && v != nil && !sameVersion(v) {
			return Outcome{Async: true, Polls: polls, Status: VersionMismatch,
				Error: CommandError("VersionMismatch", "Hardware managers version mismatch",
					"Current hardware manager versions do not match those reported by the node", 500)}
		}
		if st == nil || st["step"] == nil {
			return Outcome{Async: true, Polls: polls,
				Error: CommandError("CommandExecutionError", "Command execution failed", "Malformed "+kind+"_step, no \"step\" key", 500)}
		}
		return Outcome{Async: true, Polls: polls, Result: map[string]any{kind + "_result": result, kind + "_step": st}}
	}
}

func sameVersion(v any) bool {
	m, ok := v.(map[string]any)
	return ok && len(m) == 1 && m["generic_hardware_manager"] == managerVersion
}

func stepsResult(kind string, steps []any) Handler {
	return Sync(map[string]any{
		kind + "_steps":            map[string]any{managerName: steps},
		"hardware_manager_version": HardwareManagerVersion(),
	})
}

// DefaultPartitionUUIDs is what standby.get_partition_uuids reports after
// a partition image was written.
func DefaultPartitionUUIDs() map[string]any {
	return map[string]any{
		"root uuid":                 "6e9a0f1c-5c2e-4b47-9d0b-2d4e9b7c1a10",
		"efi system partition uuid": "3b1f2a4c-8d7e-4f60-a1b2-c3d4e5f60718",
	}
}

func defaultHandlers() map[string]Handler {
	return map[string]Handler{
		"clean.get_clean_steps":        stepsResult("clean", CleanSteps()),
		"clean.execute_clean_step":     ExecuteStep("clean", 1, nil),
		"deploy.get_deploy_steps":      stepsResult("deploy", DeploySteps()),
		"deploy.execute_deploy_step":   ExecuteStep("deploy", 2, nil),
		"service.get_service_steps":    stepsResult("service", ServiceSteps()),
		"service.execute_service_step": ExecuteStep("service", 1, nil),
		"image.install_bootloader":     Async(1, nil),
		"standby.get_partition_uuids":  Sync(DefaultPartitionUUIDs()),
		"standby.power_off":            PowerOff(),
		"standby.run_image":            Async(0, nil),
		"standby.sync":                 Sync(nil),
		// A gzipped, base64-encoded empty tar archive.
		"log.collect_system_logs": Sync(map[string]any{"system_logs": "H4sIAAAAAAAAA+3BAQ0AAADCoPdPbQ43oAAAAAAAAAAAAIA3A5reHScAKAAA"}),
		"rescue.finalize_rescue":  Sync(nil),
		"system.lockdown":         Sync(nil),
	}
}
