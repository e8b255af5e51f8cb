package ipa

// RAIDSteps runs in-band steps of kind ("clean", "deploy", "service") as
// IPA's GenericHardwareManager does for its raid steps: create_configuration
// answers the node's target_raid_config (what the agent built),
// apply_configuration the raid_config argument, delete_configuration
// nothing; other steps answer nothing either.
func RAIDSteps(kind string, polls int) Handler {
	return func(params map[string]any) Outcome {
		st, _ := params["step"].(map[string]any)
		var result any
		if st["interface"] == "raid" {
			switch st["step"] {
			case "create_configuration":
				node, _ := params["node"].(map[string]any)
				result = node["target_raid_config"]
			case "apply_configuration":
				args, _ := st["args"].(map[string]any)
				result = args["raid_config"]
			}
		}
		return ExecuteStep(kind, polls, result)(params)
	}
}
