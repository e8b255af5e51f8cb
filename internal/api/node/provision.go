package node

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apiutil"
	"github.com/openkeel/ironic/internal/api/collection"
	"github.com/openkeel/ironic/internal/api/microversion"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store"
)

// minVerbVersions is MIN_VERB_VERSIONS. Its keys are event names and
// upstream looks the raw target up in it, so "undeploy" and "deleted" are
// never gated while "deploy" is: kept as upstream has it.
var minVerbVersions = map[string]int{
	"manage":   microversion.Minor4ManageableState,
	"provide":  microversion.Minor4ManageableState,
	"inspect":  microversion.Minor6InspectState,
	"abort":    microversion.Minor13AbortVerb,
	"clean":    microversion.Minor15ManualClean,
	"adopt":    microversion.Minor17AdoptVerb,
	"rescue":   microversion.Minor38RescueInterface,
	"unrescue": microversion.Minor38RescueInterface,
	"deploy":   microversion.Minor73DeployUndeployVerbs,
	"delete":   microversion.Minor73DeployUndeployVerbs,
}

// provisionActionTargets are PROVISION_ACTION_STATES: the targets the
// conductor's do_provisioning_action serves.
var provisionActionTargets = []string{"manage", "provide", "abort", "adopt", "unhold", "service"}

// b64Alphabet is what a base64 configdrive may hold (newlines and spaces
// are common in such values).
const b64Alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=\n\r\t "

// provisionArgs are the validated arguments of PUT .../states/provision.
type provisionArgs struct {
	target string
	// action is target as upstream's messages print it.
	action         string
	configdrive    any
	cleanSteps     []any
	deploySteps    []any
	serviceSteps   []any
	rescuePassword *string
	disableRamdisk *bool
	runbook        *string
}

// pyTypeNames are str() of the Python types args.types names.
var pyTypeNames = map[string]string{"none": "<class 'NoneType'>", "dict": "<class 'dict'>",
	"str": "<class 'str'>", "list": "<class 'list'>"}

// argTypes is args.types: value must be one of the named JSON types.
func argTypes(args map[string]any, name string, types ...string) (any, error) {
	v := args[name]
	kind := "other"
	switch v.(type) {
	case nil:
		kind = "none"
	case map[string]any:
		kind = "dict"
	case string:
		kind = "str"
	case []any:
		kind = "list"
	}
	if !slices.Contains(types, kind) {
		names := make([]string, len(types))
		for i, t := range types {
			names[i] = pyTypeNames[t]
		}
		return nil, errs.InvalidParameterValue(fmt.Sprintf("Expected types %s for %s: %s",
			strings.Join(names, ", "), name, apiutil.PyStr(v)))
	}
	return v, nil
}

// argBool is args.boolean (strutils.bool_from_string, strict).
func argBool(args map[string]any, name string) (*bool, error) {
	v, ok := args[name]
	if !ok || v == nil {
		return nil, nil
	}
	if b, ok := v.(bool); ok {
		return &b, nil
	}
	s := apiutil.PyStr(v)
	return collection.Boolean(name, &s)
}

func parseProvisionArgs(r *http.Request) (*provisionArgs, error) {
	args, err := callArgs(r, "target", "configdrive", "clean_steps", "deploy_steps", "rescue_password",
		"disable_ramdisk", "service_steps", "runbook")
	if err != nil {
		return nil, err
	}
	p := &provisionArgs{}
	target, err := mandatoryString(args, "target")
	if err != nil {
		return nil, err
	}
	// A null target is no verb: it stays "" and fails the state machine,
	// named as Python prints None.
	p.target, p.action = "", "None"
	if target != nil {
		p.target, p.action = *target, *target
	}
	if p.configdrive, err = argTypes(args, "configdrive", "none", "dict", "str"); err != nil {
		return nil, err
	}
	list := func(name string) ([]any, error) {
		v, err := argTypes(args, name, "none", "list")
		if err != nil || v == nil {
			return nil, err
		}
		return v.([]any), nil
	}
	if p.cleanSteps, err = list("clean_steps"); err != nil {
		return nil, err
	}
	if p.deploySteps, err = list("deploy_steps"); err != nil {
		return nil, err
	}
	if p.rescuePassword, err = apiutil.StringArg(args, "rescue_password"); err != nil {
		return nil, err
	}
	if p.disableRamdisk, err = argBool(args, "disable_ramdisk"); err != nil {
		return nil, err
	}
	if p.serviceSteps, err = list("service_steps"); err != nil {
		return nil, err
	}
	rb, err := argTypes(args, "runbook", "none", "str")
	if err != nil {
		return nil, err
	}
	if s, ok := rb.(string); ok {
		p.runbook = &s
	}
	return p, nil
}

func badRequest(msg string) error { return errs.ClientSideError(msg, http.StatusBadRequest, "") }

// provision is NodeStatesController.provision.
func (h *handlers) provision(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	p, err := parseProvisionArgs(r)
	if err != nil {
		return err
	}
	ident := rc.Param("node_ident")
	if err := apiutil.UUIDOrName("node_ident", ident); err != nil {
		return err
	}
	n, err := h.node(r, rc, "baremetal:node:set_provision_state", ident)
	if err != nil {
		return err
	}
	v := rc.Version
	target := p.target
	if minor, ok := minVerbVersions[target]; ok && v.Minor < minor {
		return errs.NotAcceptable()
	}
	if p.runbook == nil || *p.runbook == "" {
		if err := h.checkStepsPolicy(r, n, p); err != nil {
			return err
		}
	}
	if (target == states.Active || target == states.Rebuild) && n.Maintenance {
		return errs.NodeInMaintenance("provisioning", n.UUID)
	}
	event := target
	if e, ok := states.VerbEvent(target); ok {
		event = e
	}
	fsm := states.Provision().NewFSM()
	if err := fsm.Initialize(n.ProvisionState, ""); err != nil || !fsm.IsActionableEvent(event) {
		// A node busy in a transition answers 409 rather than 400, as
		// upstream keeps for compatibility.
		if n.Reservation != nil && *n.Reservation != "" {
			return errs.NodeLocked(n.UUID, *n.Reservation)
		}
		return errs.InvalidStateRequested(p.action, n.UUID, pyState(n.ProvisionState))
	}
	if err := checkConfigdrive(target, p.configdrive, v); err != nil {
		return err
	}
	disableRamdisk := p.disableRamdisk
	if p.runbook != nil && *p.runbook != "" {
		clean, service, dr, err := h.runbookSteps(r, n, p, v)
		if err != nil {
			return err
		}
		p.cleanSteps, p.serviceSteps, disableRamdisk = clean, service, &dr
	}
	if err := checkDisableRamdisk(target, disableRamdisk, v); err != nil {
		return err
	}
	rbTargets := fmt.Sprintf("\"runbooks\" is only valid when setting target provision state to any of %s",
		apiutil.PyRepr([]any{"clean", "service"}))
	if len(p.cleanSteps) > 0 && target != "clean" {
		if p.runbook != nil && *p.runbook != "" {
			return badRequest(rbTargets)
		}
		return badRequest("\"clean_steps\" is only valid when setting target provision state to clean")
	}
	if len(p.deploySteps) > 0 {
		if !microversion.AllowDeploySteps.Allows(v) {
			return notAcceptableBelow(microversion.Minor69DeploySteps)
		}
		if target != states.Active && target != states.Rebuild {
			return badRequest("\"deploy_steps\" is only valid when setting target provision state to active or rebuild")
		}
	}
	if p.rescuePassword != nil && target != states.Rescue {
		return badRequest("\"rescue_password\" is only valid when setting target provision state to rescue")
	}
	if target == "abort" {
		if n.ProvisionState == states.InspectWait && !microversion.AllowInspectAbort.Allows(v) {
			return errs.NotAcceptable()
		}
		if n.ProvisionState == states.DeployWait && !microversion.AllowDeployAbort.Allows(v) {
			return errs.NotAcceptable()
		}
	}
	if target == "unhold" && !microversion.AllowUnholdVerb.Allows(v) {
		return errs.NotAcceptable()
	}
	if len(p.serviceSteps) > 0 && target != states.Service {
		if p.runbook != nil && *p.runbook != "" {
			return badRequest(rbTargets)
		}
		return badRequest("\"service_steps\" is only valid when setting target provision state to service")
	}
	if target == states.Service && !microversion.AllowServiceVerb.Allows(v) {
		return errs.NotAcceptable()
	}
	if err := h.doProvisionAction(r, rc, n, p, disableRamdisk); err != nil {
		return err
	}
	rc.SetLocation(w, "nodes", ident+"/states")
	api.WriteEmpty(w, http.StatusAccepted)
	return nil
}

// checkStepsPolicy is the secondary policy check of user-given steps: the
// owner rules of clean and service steps, then the operator's
// baremetal:step:execute:<interface>.<step> rules.
func (h *handlers) checkStepsPolicy(r *http.Request, n *model.Node, p *provisionArgs) error {
	if len(p.cleanSteps) > 0 {
		if err := h.Authorize(r, "baremetal:node:set_provision_state:clean_steps", n); err != nil {
			return err
		}
	}
	if len(p.serviceSteps) > 0 {
		if err := h.Authorize(r, "baremetal:node:set_provision_state:service_steps", n); err != nil {
			return err
		}
	}
	all := slices.Concat(p.deploySteps, p.cleanSteps, p.serviceSteps)
	return h.checkUserStepsPolicy(r, n, all)
}

// checkUserStepsPolicy is validate_user_steps_policy: only the steps an
// operator wrote a rule for are checked; every refusal is reported at once.
func (h *handlers) checkUserStepsPolicy(r *http.Request, n *model.Node, steps []any) error {
	if h.HasRule == nil {
		return nil
	}
	var refused []string
	for _, s := range steps {
		m, _ := s.(map[string]any)
		iface, step := apiutil.PyStr(m["interface"]), apiutil.PyStr(m["step"])
		rule := "baremetal:step:execute:" + iface + "." + step
		if !h.HasRule(rule) {
			continue
		}
		if err := h.Authorize(r, rule, n); err != nil {
			refused = append(refused, fmt.Sprintf("insufficient privileges to execute step %s on interface %s", step, iface))
		}
	}
	if len(refused) > 0 {
		return errs.NewMessage(errs.ClassNotAuthorized, strings.Join(refused, "; "))
	}
	return nil
}

// checkConfigdrive is check_allow_configdrive.
func checkConfigdrive(target string, cd any, v microversion.Version) error {
	if !apiutil.Truthy(cd) {
		return nil
	}
	allowed := []string{states.Active}
	if microversion.AllowNodeRebuildWithConfigdrive.Allows(v) {
		allowed = append(allowed, states.Rebuild)
	}
	if !slices.Contains(allowed, target) {
		return badRequest("Adding a config drive is only supported when setting provision state to " + strings.Join(allowed, ", "))
	}
	if msg := apiutil.MustSchema("configdrive").Message(cd); msg != "" {
		return badRequest("Invalid configdrive format: " + msg)
	}
	if m, ok := cd.(map[string]any); ok {
		if !microversion.AllowBuildConfigdrive.Allows(v) {
			return badRequest(fmt.Sprintf("Providing a JSON object for configdrive is only supported starting with API version 1.%d", microversion.Minor56BuildConfigdrive))
		}
		if _, ok := m["vendor_data"]; ok && !microversion.AllowConfigdriveVendorData.Allows(v) {
			return badRequest(fmt.Sprintf("Providing vendor_data in configdrive is only supported starting with API version 1.%d", microversion.Minor59ConfigdriveVendorData))
		}
		return nil
	}
	s := cd.(string)
	if strings.Contains(s, "://") {
		return nil
	}
	for _, c := range s {
		if !strings.ContainsRune(b64Alphabet, c) {
			return badRequest("Invalid configdrive format: it is neither a JSON, nor a URL, nor a base64 string")
		}
	}
	return nil
}

// checkDisableRamdisk is check_allow_disable_ramdisk.
func checkDisableRamdisk(target string, dr *bool, v microversion.Version) error {
	if dr == nil {
		return nil
	}
	switch target {
	case "clean":
		if v.Minor < microversion.Minor70CleanDisableRamdisk {
			return errs.NewMessage(errs.ClassNotAcceptable, "disable_ramdisk is not acceptable in this API version")
		}
		return nil
	case states.Service:
		if v.Minor < microversion.Minor108ServiceDisableRamdisk {
			return errs.NewMessage(errs.ClassNotAcceptable, "disable_ramdisk is not acceptable in this API version")
		}
		return nil
	}
	return errs.NewMessage(errs.ClassInvalid, "disable_ramdisk is supported only with manual cleaning or servicing")
}

// runbookSteps is _handle_runbook: the steps and disable_ramdisk of the
// runbook named by p.runbook, once the node is allowed to use it.
func (h *handlers) runbookSteps(r *http.Request, n *model.Node, p *provisionArgs, v microversion.Version) ([]any, []any, bool, error) {
	if !microversion.AllowRunbooks.Allows(v) {
		return nil, nil, false, errs.NotAcceptable()
	}
	rb, err := h.getRunbook(r, *p.runbook)
	if err != nil {
		return nil, nil, false, err
	}
	traits, err := h.Store.GetNodeTraits(r.Context(), n.ID)
	if err != nil {
		return nil, nil, false, fmt.Errorf("traits of node %s: %w", n.UUID, err)
	}
	nodeTraits := map[string]bool{}
	for _, t := range traits {
		nodeTraits[t.Trait] = true
	}
	if microversion.AllowRunbookTraits.Allows(v) {
		var rbTraits []string
		match := false
		for _, t := range rb.Traits {
			rbTraits = append(rbTraits, t.Trait)
			match = match || nodeTraits[t.Trait]
		}
		if len(rbTraits) == 0 {
			return nil, nil, false, badRequest(fmt.Sprintf("Runbook %s has no traits configured. Please ask an administrator to add traits to the runbook.", rb.UUID))
		}
		if !match {
			slices.Sort(rbTraits)
			return nil, nil, false, badRequest(fmt.Sprintf("This runbook has not been approved for use on this node %s. The node does not have any of the runbook's traits %s. Please ask an administrator to add a matching trait to your node.",
				n.UUID, apiutil.PyRepr(rbTraits)))
		}
	} else if !nodeTraits[rb.Name] {
		return nil, nil, false, badRequest(fmt.Sprintf("This runbook has not been approved for use on this node %s. Please ask an administrator to add it to your node traits.", n.UUID))
	}
	clean, service := p.cleanSteps, p.serviceSteps
	steps := runbookStepList(rb)
	switch p.target {
	case "clean":
		if len(clean) > 0 {
			return nil, nil, false, badRequest("Please provide either \"clean_steps\" or a runbook, but not both.")
		}
		clean = steps
	case states.Service:
		if len(service) > 0 {
			return nil, nil, false, badRequest("Please provide either \"service_steps\" or a runbook, but not both.")
		}
		service = steps
	}
	if rb.Owner != nil && !rb.Public {
		given := clean
		if len(given) == 0 {
			given = service
		}
		if err := h.checkUserStepsPolicy(r, n, given); err != nil {
			return nil, nil, false, err
		}
	}
	return clean, service, rb.DisableRamdisk, nil
}

// getRunbook is check_runbook_policy_and_retrieve's lookup: by UUID when
// the ident looks like one, else by name.
func (h *handlers) getRunbook(r *http.Request, ident string) (*model.Runbook, error) {
	var rb *model.Runbook
	var err error
	if collection.IsUUIDLike(ident) {
		rb, err = h.Store.GetRunbookByUUID(r.Context(), ident)
	} else {
		rb, err = h.Store.GetRunbookByName(r.Context(), ident)
	}
	if errors.Is(err, store.ErrNotFound) {
		return nil, errs.New(errs.ClassRunbookNotFound, map[string]any{"runbook": ident})
	}
	if err != nil {
		return nil, fmt.Errorf("get runbook %s: %w", ident, err)
	}
	if err := h.AuthorizeRunbook(r, "baremetal:runbook:use", rb); err != nil {
		return nil, err
	}
	return rb, nil
}

// runbookStepList is convert_steps: the runbook's steps as user steps.
func runbookStepList(rb *model.Runbook) []any {
	out := make([]any, 0, len(rb.Steps))
	for _, s := range rb.Steps {
		args := s.Args
		if args == nil {
			args = map[string]any{}
		}
		out = append(out, map[string]any{"interface": s.Interface, "step": s.Step, "args": args, "order": s.Order})
	}
	return out
}

// checkSteps is _check_clean_steps, _check_deploy_steps and
// _check_service_steps: the schema, the operator's disallowed steps and
// the child-node options.
func (h *handlers) checkSteps(r *http.Request, rc *api.RequestContext, steps []any, kind, schema string) error {
	if msg := apiutil.MustSchema(schema).Message(steps); msg != "" {
		return errs.InvalidParameterValue(fmt.Sprintf("Invalid %s_steps: %s", kind, msg))
	}
	for _, s := range steps {
		m := s.(map[string]any)
		eocn, hasEOCN := m["execute_on_child_nodes"]
		if children, ok := m["limit_child_node_execution"].([]any); ok && apiutil.Truthy(eocn) {
			for _, c := range children {
				cs, _ := c.(string)
				if !collection.IsUUIDLike(cs) {
					return errs.InvalidParameterValue("Invalid entry detected for execute_on_child_node parameter in step " + apiutil.PyStr(m["step"]) + ".")
				}
				if _, err := h.node(r, rc, "baremetal:node:set_provision_state", cs); err != nil {
					return err
				}
			}
		} else if hasEOCN && apiutil.Truthy(eocn) {
			if _, ok := eocn.(bool); !ok {
				return errs.InvalidParameterValue("Invalid entry detected for execute_on_child_node parameter in step " + apiutil.PyStr(m["step"]) + ". A boolean or a UUID value is expected.")
			}
		}
	}
	disallowed := rc.Config.List("api", "disallow_"+kind+"_steps")
	for _, s := range steps {
		m := s.(map[string]any)
		id := apiutil.PyStr(m["interface"]) + "." + apiutil.PyStr(m["step"])
		if slices.Contains(disallowed, id) {
			return errs.New(errs.ClassStepNotAllowed, map[string]any{"step": id, "step_type": kind})
		}
	}
	return nil
}

// stepMaps converts validated steps for the RPC call.
func stepMaps(steps []any) []map[string]any {
	if steps == nil {
		return nil
	}
	out := make([]map[string]any, len(steps))
	for i, s := range steps {
		out[i] = s.(map[string]any)
	}
	return out
}

// doProvisionAction is _do_provision_action: the RPC call of the target.
func (h *handlers) doProvisionAction(r *http.Request, rc *api.RequestContext, n *model.Node, p *provisionArgs, disableRamdisk *bool) error {
	ctx := r.Context()
	topic, err := h.Topics.GetTopicFor(ctx, n)
	if err != nil {
		return err
	}
	dr := disableRamdisk != nil && *disableRamdisk
	switch t := p.target; {
	case t == states.Active || t == states.Rebuild || t == states.Deploy:
		if len(p.deploySteps) > 0 {
			if err := h.checkSteps(r, rc, p.deploySteps, "deploy", "deploy_steps"); err != nil {
				return err
			}
		}
		return h.Conductor.DoNodeDeploy(ctx, topic, n.UUID, t == states.Rebuild, p.configdrive, stepMaps(p.deploySteps))
	case t == "unrescue":
		return h.Conductor.DoNodeUnrescue(ctx, topic, n.UUID)
	case t == states.Rescue:
		if p.rescuePassword == nil || strings.TrimSpace(*p.rescuePassword) == "" {
			return badRequest("A non-empty \"rescue_password\" is required when setting target provision state to rescue")
		}
		return h.Conductor.DoNodeRescue(ctx, topic, n.UUID, *p.rescuePassword)
	case t == states.Deleted || t == states.Undeploy:
		return h.Conductor.DoNodeTearDown(ctx, topic, n.UUID)
	case t == "inspect":
		return h.Conductor.InspectHardware(ctx, topic, n.UUID)
	case t == "clean":
		if len(p.cleanSteps) == 0 {
			return badRequest("\"clean_steps\" is required when setting target provision state to clean")
		}
		if err := h.checkSteps(r, rc, p.cleanSteps, "clean", "steps"); err != nil {
			return err
		}
		return h.Conductor.DoNodeClean(ctx, topic, n.UUID, stepMaps(p.cleanSteps), dr)
	case t == states.Service:
		if len(p.serviceSteps) == 0 {
			return badRequest("\"service_steps\" is required when setting target provision state to service")
		}
		if err := h.checkSteps(r, rc, p.serviceSteps, "service", "steps"); err != nil {
			return err
		}
		return h.Conductor.DoNodeService(ctx, topic, n.UUID, stepMaps(p.serviceSteps), dr)
	case slices.Contains(provisionActionTargets, t):
		return h.Conductor.DoProvisioningAction(ctx, topic, n.UUID, t)
	}
	return errs.NewMessage(errs.ClassInvalidStateRequested, fmt.Sprintf("The requested action \"%s\" could not be understood.", p.target))
}
