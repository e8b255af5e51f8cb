package agentclient

// Target is the agent a call goes to and the node it serves: all the
// client needs of a node. The caller reads it from the node's
// driver_internal_info and driver_info, so this package knows nothing of
// where a node keeps them.
type Target struct {
	// NodeUUID names the node in log lines, error messages and the names
	// of stored ramdisk logs.
	NodeUUID string
	// NodeName and InstanceUUID, when set, also go into the names of
	// stored ramdisk logs (upstream get_ramdisk_logs_file_name).
	NodeName     string
	InstanceUUID string
	// URL is the agent's API root (driver_internal_info.agent_url);
	// without it every call fails with AgentConnectionFailed.
	URL string
	// Token is the agent token (driver_internal_info.agent_secret_token),
	// sent as the agent_token query parameter; empty sends none.
	Token string
	// VerifyCA is the node's own CA setting, requests' verify argument:
	// a bool, or a string that is a strict boolean or the path of a CA
	// bundle. Nil falls back to [agent]/verify_ca.
	VerifyCA any
}

// RescuePassword is what finalize_rescue hands to the agent
// (instance_info.hashed_rescue_password and rescue_password).
type RescuePassword struct {
	// Hashed is the crypt hash of the rescue password; required.
	Hashed string
	// Plain is sent as given, only to an agent too old for hashes and
	// only when [conductor]/require_rescue_password_hashed is off.
	Plain any
}
