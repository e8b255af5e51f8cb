package conductor

import "github.com/openkeel/ironic/internal/model"

// Helpers on driver_internal_info, the conductor's scratch space on the
// node (upstream set_driver_internal_info / del_driver_internal_info).

func setDII(n *model.Node, key string, v any) {
	if n.DriverInternalInfo == nil {
		n.DriverInternalInfo = map[string]any{}
	}
	n.DriverInternalInfo[key] = v
}

func getDII(n *model.Node, key string) any {
	if n.DriverInternalInfo == nil {
		return nil
	}
	return n.DriverInternalInfo[key]
}

func delDII(n *model.Node, keys ...string) {
	for _, k := range keys {
		delete(n.DriverInternalInfo, k)
	}
}

// diiInt reads an integer entry (JSON numbers decode as float64).
func diiInt(n *model.Node, key string) (int, bool) {
	switch v := getDII(n, key).(type) {
	case int:
		return v, true
	case int64:
		return int(v), true
	case float64:
		return int(v), true
	}
	return 0, false
}

// diiBool reads a boolean entry; def when absent.
func diiBool(n *model.Node, key string, def bool) bool {
	v, ok := getDII(n, key).(bool)
	if !ok {
		return def
	}
	return v
}

// diiSteps reads a step list entry.
func diiSteps(n *model.Node, key string) []map[string]any {
	switch v := getDII(n, key).(type) {
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

// stepsValue stores a step list as JSON-like values.
func stepsValue(steps []map[string]any) []any {
	out := make([]any, len(steps))
	for i, s := range steps {
		out[i] = s
	}
	return out
}

// wipeTokenAndURL drops the agent's URL, token and certificate (upstream
// wipe_token_and_url).
func wipeTokenAndURL(n *model.Node) {
	delDII(n, "agent_secret_token", "agent_secret_token_pregenerated", "agent_url", "agent_verify_ca")
}

// removeAsyncFlags drops the async step flags of every flow (upstream
// async_steps.remove_node_flags).
func removeAsyncFlags(n *model.Node) {
	delDII(n, "skip_current_clean_step", "cleaning_reboot", "cleaning_polling",
		"skip_current_deploy_step", "deployment_reboot", "deployment_polling",
		"skip_current_service_step", "servicing_reboot", "servicing_polling")
}

func wipeDeployInternalInfo(n *model.Node) {
	wipeTokenAndURL(n)
	setDII(n, "deploy_steps", nil)
	delDII(n, "user_deploy_steps", "agent_cached_deploy_steps", "deploy_step_index", "steps_validated",
		"image_source", "agent_start_attempted")
	removeAsyncFlags(n)
}

func wipeCleaningInternalInfo(n *model.Node) {
	wipeTokenAndURL(n)
	setDII(n, "clean_steps", nil)
	delDII(n, "agent_cached_clean_steps", "clean_step_index", "cleaning_disable_ramdisk", "steps_validated",
		"declarative_cleaning", "agent_start_attempted")
	removeAsyncFlags(n)
}

func wipeServiceInternalInfo(n *model.Node) {
	wipeTokenAndURL(n)
	setDII(n, "service_steps", nil)
	delDII(n, "agent_cached_service_steps", "service_step_index", "service_disable_ramdisk", "steps_validated",
		"image_source", "agent_start_attempted")
	removeAsyncFlags(n)
}

// removeRescuePassword drops the rescue password from instance_info.
func removeRescuePassword(n *model.Node) {
	delete(n.InstanceInfo, "rescue_password")
	delete(n.InstanceInfo, "hashed_rescue_password")
}
