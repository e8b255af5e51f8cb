package conductor

import "github.com/openkeel/ironic/internal/model"

// The conductor's groupings of driver_internal_info keys (upstream
// conductor utils' wipe_*_internal_info); single keys are read and written
// through model.InternalInfo.

// stepsValue stores a step list as JSON-like values.
func stepsValue(steps []map[string]any) []any {
	out := make([]any, len(steps))
	for i, s := range steps {
		out[i] = s
	}
	return out
}

func wipeDeployInternalInfo(n *model.Node) {
	ii := n.InternalInfo()
	ii.WipeAgentTokenAndURL()
	ii.Set(model.DIIDeploySteps, nil)
	ii.Delete(model.DIIUserDeploySteps, model.DIIAgentCachedDeploySteps, model.DIIDeployStepIndex, model.DIIStepsValidated,
		model.DIIImageSource, model.DIIAgentStartAttempted)
	ii.RemoveAsyncStepFlags()
}

func wipeCleaningInternalInfo(n *model.Node) {
	ii := n.InternalInfo()
	ii.WipeAgentTokenAndURL()
	ii.Set(model.DIICleanSteps, nil)
	ii.Delete(model.DIIAgentCachedCleanSteps, model.DIICleanStepIndex, model.DIICleaningDisableRamdisk, model.DIIStepsValidated,
		model.DIIDeclarativeCleaning, model.DIIAgentStartAttempted)
	ii.RemoveAsyncStepFlags()
}

func wipeServiceInternalInfo(n *model.Node) {
	ii := n.InternalInfo()
	ii.WipeAgentTokenAndURL()
	ii.Set(model.DIIServiceSteps, nil)
	ii.Delete(model.DIIAgentCachedServiceSteps, model.DIIServiceStepIndex, model.DIIServiceDisableRamdisk, model.DIIStepsValidated,
		model.DIIImageSource, model.DIIAgentStartAttempted)
	ii.RemoveAsyncStepFlags()
}

// removeRescuePassword drops the rescue password from instance_info.
func removeRescuePassword(n *model.Node) {
	delete(n.InstanceInfo, "rescue_password")
	delete(n.InstanceInfo, "hashed_rescue_password")
}
