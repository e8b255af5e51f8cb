package model

// driver_internal_info is the contract between the API (ramdisk lookup and
// heartbeat), the conductor, the drivers and the agent client. Its keys are
// upstream's, so that a node taken over from upstream Ironic carries on;
// they are named here once, and the column is reached through InternalInfo
// so that a misspelt key is a compile error rather than a silent nil.

// Keys of driver_internal_info, as upstream spells them.
const (
	// The agent the node's ramdisk runs (upstream agent_base, heartbeat).
	DIIAgentURL                     = "agent_url"
	DIIAgentSecretToken             = "agent_secret_token"
	DIIAgentSecretTokenPregenerated = "agent_secret_token_pregenerated"
	DIIAgentVerifyCA                = "agent_verify_ca"
	DIIAgentVersion                 = "agent_version"
	DIIAgentLastHeartbeat           = "agent_last_heartbeat"
	DIIAgentStartAttempted          = "agent_start_attempted"
	DIIHardwareManagerVersion       = "hardware_manager_version"

	// Step lists, indexes and flags of the clean, deploy and service flows.
	DIICleanSteps              = "clean_steps"
	DIICleanStepIndex          = "clean_step_index"
	DIIAgentCachedCleanSteps   = "agent_cached_clean_steps"
	DIISkipCurrentCleanStep    = "skip_current_clean_step"
	DIICleaningReboot          = "cleaning_reboot"
	DIICleaningPolling         = "cleaning_polling"
	DIICleaningDisableRamdisk  = "cleaning_disable_ramdisk"
	DIIDeclarativeCleaning     = "declarative_cleaning"
	DIIDeploySteps             = "deploy_steps"
	DIIDeployStepIndex         = "deploy_step_index"
	DIIUserDeploySteps         = "user_deploy_steps"
	DIIAgentCachedDeploySteps  = "agent_cached_deploy_steps"
	DIISkipCurrentDeployStep   = "skip_current_deploy_step"
	DIIDeploymentReboot        = "deployment_reboot"
	DIIDeploymentPolling       = "deployment_polling"
	DIIServiceSteps            = "service_steps"
	DIIServiceStepIndex        = "service_step_index"
	DIIAgentCachedServiceSteps = "agent_cached_service_steps"
	DIISkipCurrentServiceStep  = "skip_current_service_step"
	DIIServicingReboot         = "servicing_reboot"
	DIIServicingPolling        = "servicing_polling"
	// The servicing ramdisk flag is service_disable_ramdisk, not
	// servicing_*: it is the key upstream's do_node_service writes and
	// is_ramdisk_disabled reads.
	DIIServiceDisableRamdisk = "service_disable_ramdisk"
	DIIStepsValidated        = "steps_validated"

	// Deployment facts.
	DIIIsWholeDiskImage     = "is_whole_disk_image"
	DIIIsSourceAPath        = "is_source_a_path"
	DIIBootFromVolume       = "boot_from_volume"
	DIIBootFromVolumeDeploy = "boot_from_volume_deploy"
	DIIImageSource          = "image_source"
	// DIIContainerImageType marks an image chosen from a container
	// registry ("oci_artifact").
	DIIContainerImageType        = "container_image_type"
	DIIInstance                  = "instance"
	DIIRootUUIDOrDiskID          = "root_uuid_or_disk_id"
	DIIDeployBootMode            = "deploy_boot_mode"
	DIIOriginalDeployInterface   = "original_deploy_interface"
	DIIDnsmasqTag                = "dnsmasq_tag"
	DIIAllocatedIPMITerminalPort = "allocated_ipmi_terminal_port"
	// A graphical console: where its container's VNC server listens and
	// the token the noVNC proxy checks (upstream common/vnc.py).
	DIIVNCHost                 = "vnc_host"
	DIIVNCPort                 = "vnc_port"
	DIINoVNCSecretToken        = "novnc_secret_token"
	DIINoVNCSecretTokenCreated = "novnc_secret_token_created"
	// The boot device ipmi_force_boot_device re-sends before each power
	// on, and whether the device set last was persistent (upstream
	// driver_utils.force_persistent_boot).
	DIIPersistentBootDevice = "persistent_boot_device"
	DIIIsNextBootPersistent = "is_next_boot_persistent"
	DIILastPowerStateChange = "last_power_state_change"
	DIIAutomaticLessee      = "automatic_lessee"
	DIITargetRAIDConfig     = "target_raid_config"

	// Inspection.
	DIIInspectorManageBoot = "inspector_manage_boot"
	DIILookupBMCAddresses  = "lookup_bmc_addresses"

	// Redfish jobs left on the BMC (upstream's redfish firmware, BIOS, RAID
	// and boot modules).
	DIIVmediaTransportProtocol    = "vmedia_transport_protocol"
	DIIRedfishBootDevice          = "redfish_boot_device"
	DIIRedfishUEFIHTTPURL         = "redfish_uefi_http_url"
	DIIRedfishFirmwareUpdates     = "redfish_fw_updates"
	DIIRedfishFirmwareUpdateStart = "redfish_fw_update_start_time"
	DIIFirmwareUpdates            = "firmware_updates"
	DIIFirmwareCleanup            = "firmware_cleanup"
	DIIBMCFirmwareVersionBefore   = "bmc_fw_version_before_update"
	DIIFirmwareRebootRequested    = "firmware_reboot_requested"
	DIIRAIDConfigs                = "raid_configs"
	DIIRedfishBIOSState           = "redfish_bios_state"
	DIIRequestedBIOSAttrs         = "requested_bios_attrs"

	// Ours (upstream has no push events): the node's BMC event
	// subscription and the secret its events carry as their Context. The
	// secret's name holds "secret", so the API masks it and the store
	// seals it as it does the agent token.
	DIIOpenkeelEventSubscription = "openkeel_event_subscription"
	DIIOpenkeelEventSecret       = "openkeel_event_secret"
	// The Destination subscribed: a conductor that takes the node over
	// from another subscribes again to its own listener.
	DIIOpenkeelEventDestination = "openkeel_event_destination"
)

// The last agent_status and agent_status_message a heartbeat carried (the
// anaconda installer's start, end or error, upstream HeartbeatMixin).
const (
	DIIAgentStatus        = "agent_status"
	DIIAgentStatusMessage = "agent_status_message"
)

// InternalInfo is a view over a node's driver_internal_info: reads see the
// node's map and writes change it, with the JSON the column always had
// (values are stored as given, numbers read back from the database stay
// float64, a deletion removes the key).
type InternalInfo struct{ n *Node }

// InternalInfo returns the view over n's driver_internal_info.
func (n *Node) InternalInfo() InternalInfo { return InternalInfo{n} }

// Get returns the value under key, nil when absent.
func (ii InternalInfo) Get(key string) any { return ii.n.DriverInternalInfo[key] }

// Lookup returns the value under key and whether the key is present (a key
// holding JSON null is present).
func (ii InternalInfo) Lookup(key string) (any, bool) {
	v, ok := ii.n.DriverInternalInfo[key]
	return v, ok
}

// Set stores v under key, creating the map on a node that has none
// (upstream set_driver_internal_info).
func (ii InternalInfo) Set(key string, v any) {
	if ii.n.DriverInternalInfo == nil {
		ii.n.DriverInternalInfo = map[string]any{}
	}
	ii.n.DriverInternalInfo[key] = v
}

// Delete removes the keys (upstream del_driver_internal_info).
func (ii InternalInfo) Delete(keys ...string) {
	for _, k := range keys {
		delete(ii.n.DriverInternalInfo, k)
	}
}

// String returns the string under key, "" when absent or not a string.
func (ii InternalInfo) String(key string) string {
	s, _ := ii.Get(key).(string)
	return s
}

// Bool returns the boolean under key and whether there is one.
func (ii InternalInfo) Bool(key string) (v, ok bool) {
	v, ok = ii.Get(key).(bool)
	return v, ok
}

// BoolOr returns the boolean under key, def when there is none.
func (ii InternalInfo) BoolOr(key string, def bool) bool {
	if v, ok := ii.Bool(key); ok {
		return v
	}
	return def
}

// Int returns the integer under key: JSON numbers decode as float64, values
// set in this process may be int or int64.
func (ii InternalInfo) Int(key string) (int, bool) {
	switch v := ii.Get(key).(type) {
	case int:
		return v, true
	case int64:
		return int(v), true
	case float64:
		return int(v), true
	}
	return 0, false
}

// Map returns the object under key, nil when absent or not an object.
func (ii InternalInfo) Map(key string) map[string]any {
	m, _ := ii.Get(key).(map[string]any)
	return m
}

// List returns the array under key, nil when absent or not an array.
func (ii InternalInfo) List(key string) []any {
	l, _ := ii.Get(key).([]any)
	return l
}

// Steps returns the step list under key: as decoded from the column
// ([]any of objects) or as set in this process ([]map[string]any).
func (ii InternalInfo) Steps(key string) []map[string]any {
	switch v := ii.Get(key).(type) {
	case []map[string]any:
		return v
	case []any:
		out := make([]map[string]any, 0, len(v))
		for _, e := range v {
			if m, ok := e.(map[string]any); ok {
				out = append(out, m)
			}
		}
		return out
	}
	return nil
}

// AgentURL is the URL the agent heartbeats from, "" before its first
// heartbeat.
func (ii InternalInfo) AgentURL() string { return ii.String(DIIAgentURL) }

// SetAgentURL records the agent's URL.
func (ii InternalInfo) SetAgentURL(url string) { ii.Set(DIIAgentURL, url) }

// AgentToken is the agent's secret token, "" when none was issued.
func (ii InternalInfo) AgentToken() string { return ii.String(DIIAgentSecretToken) }

// HasAgentToken reports whether a token key is present (upstream tests the
// key, whatever its value).
func (ii InternalInfo) HasAgentToken() bool {
	_, ok := ii.Lookup(DIIAgentSecretToken)
	return ok
}

// SetAgentToken records the agent's secret token.
func (ii InternalInfo) SetAgentToken(token string) { ii.Set(DIIAgentSecretToken, token) }

// AgentTokenPregenerated reports whether the token was generated before
// the ramdisk booted (handed over in virtual media) rather than at lookup.
func (ii InternalInfo) AgentTokenPregenerated() bool {
	v, _ := ii.Bool(DIIAgentSecretTokenPregenerated)
	return v
}

// AgentVersion is the version the agent reported in its heartbeat.
func (ii InternalInfo) AgentVersion() string { return ii.String(DIIAgentVersion) }

// AgentLastHeartbeat is the time of the last heartbeat as stored
// (driver.AgentHeartbeatLayout), "" when none.
func (ii InternalInfo) AgentLastHeartbeat() string { return ii.String(DIIAgentLastHeartbeat) }

// IsWholeDiskImage reports the image kind and whether it is known.
func (ii InternalInfo) IsWholeDiskImage() (v, known bool) { return ii.Bool(DIIIsWholeDiskImage) }

// WipeAgentTokenAndURL drops the agent's URL, token and certificate
// (upstream wipe_token_and_url).
func (ii InternalInfo) WipeAgentTokenAndURL() {
	ii.Delete(DIIAgentSecretToken, DIIAgentSecretTokenPregenerated, DIIAgentURL, DIIAgentVerifyCA)
}

// RemoveAsyncStepFlags drops the async step flags of every flow (upstream
// async_steps.remove_node_flags).
func (ii InternalInfo) RemoveAsyncStepFlags() {
	ii.Delete(DIISkipCurrentCleanStep, DIICleaningReboot, DIICleaningPolling,
		DIISkipCurrentDeployStep, DIIDeploymentReboot, DIIDeploymentPolling,
		DIISkipCurrentServiceStep, DIIServicingReboot, DIIServicingPolling)
}
