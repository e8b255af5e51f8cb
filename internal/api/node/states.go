package node

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apiutil"
	"github.com/openkeel/ironic/internal/api/collection"
	"github.com/openkeel/ironic/internal/api/microversion"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/notify"
	"github.com/openkeel/ironic/internal/rpc"
	"github.com/openkeel/ironic/internal/states"
)

// callArgs are a handler's arguments from the query string and the JSON
// body together, as upstream's method.expose passes both as keyword
// arguments; anything else is 400 "Unexpected arguments". Only an
// object's members are arguments: pecan passes no keyword arguments for a
// null, list or scalar body, so upstream answers those as it answers {}
// ("Missing mandatory parameter: target" where one is required; checked
// against Ironic 21.4).
func callArgs(r *http.Request, allowed ...string) (map[string]any, error) {
	out := map[string]any{}
	for k, v := range r.URL.Query() {
		out[k] = v[len(v)-1]
	}
	body, err := apiutil.DecodeBody(r)
	if err != nil {
		return nil, err
	}
	if d, ok := body.(*apiutil.Dict); ok {
		for _, k := range d.Keys() {
			v, _ := d.Get(k)
			out[k] = apiutil.Plain(v)
		}
	}
	if err := apiutil.UnexpectedArgs(out, allowed); err != nil {
		return nil, err
	}
	return out, nil
}

// mandatoryString is a mandatory args.string argument. Upstream's
// args.validate refuses only an absent one: an explicit null reaches the
// method as None (nil here), whose own checks then name "None".
func mandatoryString(args map[string]any, name string) (*string, error) {
	if _, ok := args[name]; !ok {
		return nil, errs.MissingParameterValue("Missing mandatory parameter: " + name)
	}
	return apiutil.StringArg(args, name)
}

// pyOptional is Python's str() of an optional string argument.
func pyOptional(s *string) string {
	if s == nil {
		return "None"
	}
	return *s
}

// argInt is args.integer (Python's int() of a string or number).
func argInt(args map[string]any, name string) (*int, error) {
	v, ok := args[name]
	if !ok || v == nil {
		return nil, nil
	}
	s := apiutil.PyRepr(v)
	if str, ok := v.(string); ok {
		s = str
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return nil, errs.InvalidParameterValue(fmt.Sprintf("Expected an integer for %s: %s", name, s))
	}
	return &n, nil
}

func (h *handlers) states(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	ident := rc.Param("node_ident")
	if err := apiutil.UUIDOrName("node_ident", ident); err != nil {
		return err
	}
	n, err := h.node(r, rc, "baremetal:node:get_states", ident)
	if err != nil {
		return err
	}
	return api.WriteJSON(w, http.StatusOK, statesDoc(n, rc.Version))
}

// statesDoc is node_states_convert.
func statesDoc(n *model.Node, v microversion.Version) *apiutil.Dict {
	attrs := []string{"console_enabled", "last_error", "power_state", "provision_state",
		"target_power_state", "target_provision_state", "provision_updated_at"}
	if microversion.AllowRaidConfig.Allows(v) {
		attrs = append(attrs, "raid_config", "target_raid_config")
	}
	if v.Minor >= microversion.Minor75NodeBootMode {
		attrs = append(attrs, "boot_mode", "secure_boot")
	}
	d := apiutil.NewDict()
	for _, a := range attrs {
		d.Set(a, fieldValue(n, a))
	}
	ps, _ := d.Get("provision_state")
	switch {
	case v.Minor < microversion.Minor2AvailableState && ps == states.Available:
		d.Set("provision_state", nil)
	case !microversion.AllowInspectWaitState.Allows(v) && ps == states.InspectWait:
		d.Set("provision_state", states.Inspecting)
	}
	return d
}

// allowedPowerTargets are ALLOWED_TARGET_POWER_STATES.
var allowedPowerTargets = []string{states.PowerOn, states.PowerOff, states.Reboot, states.SoftReboot, states.SoftPowerOff}

func (h *handlers) power(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	ident := rc.Param("node_ident")
	if err := apiutil.UUIDOrName("node_ident", ident); err != nil {
		return err
	}
	args, err := callArgs(r, "target", "timeout")
	if err != nil {
		return err
	}
	target, err := mandatoryString(args, "target")
	if err != nil {
		return err
	}
	timeout, err := argInt(args, "timeout")
	if err != nil {
		return err
	}
	n, topic, err := h.nodeTopic(r, rc, "baremetal:node:set_power_state", ident)
	if err != nil {
		return err
	}
	if target == nil {
		// Observed from upstream 21.4 (master alike): a null target is
		// None, which is no allowed power state.
		return errs.InvalidStateRequested("None", ident, pyState(n.PowerState))
	}
	soft := *target == states.SoftReboot || *target == states.SoftPowerOff
	if (soft || (timeout != nil && *timeout != 0)) && !microversion.AllowSoftPowerOff.Allows(rc.Version) {
		return errs.NotAcceptable()
	}
	if timeout != nil && *timeout < 1 {
		return errs.NewMessage(errs.ClassInvalid, "timeout has to be positive integer")
	}
	switch {
	case !slices.Contains(allowedPowerTargets, *target):
		return errs.InvalidStateRequested(*target, ident, pyState(n.PowerState))
	case n.ProvisionState == states.CleanWait || n.ProvisionState == states.Cleaning:
		return errs.InvalidStateRequested(*target, ident, n.ProvisionState)
	case (*target == states.PowerOff || *target == states.SoftPowerOff) && n.DisablePowerOff:
		return errs.New(errs.ClassPowerStateFailure, map[string]any{"pstate": *target})
	}
	t := 0
	if timeout != nil {
		t = *timeout
	}
	if err := h.Conductor.ChangeNodePowerState(r.Context(), topic, n.UUID, *target, t); err != nil {
		return err
	}
	rc.SetLocation(w, "nodes", ident+"/states")
	api.WriteEmpty(w, http.StatusAccepted)
	return nil
}

func (h *handlers) setMaintenance(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	return h.maintenance(w, r, rc, true)
}

func (h *handlers) unsetMaintenance(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	return h.maintenance(w, r, rc, false)
}

func (h *handlers) maintenance(w http.ResponseWriter, r *http.Request, rc *api.RequestContext, on bool) error {
	ident := rc.Param("node_ident")
	if err := apiutil.UUIDOrName("node_ident", ident); err != nil {
		return err
	}
	rule := "baremetal:node:clear_maintenance"
	var reason *string
	if on {
		rule = "baremetal:node:set_maintenance"
		args, err := callArgs(r, "reason")
		if err != nil {
			return err
		}
		if reason, err = apiutil.StringArg(args, "reason"); err != nil {
			return err
		}
	} else if _, err := callArgs(r); err != nil {
		return err
	}
	n, err := h.node(r, rc, rule, ident)
	if err != nil {
		return err
	}
	topic, err := h.topic(r.Context(), n)
	if err != nil {
		return err
	}
	// Setting maintenance is unconditional: it writes the flag and the
	// reason to the node as it is under the lock, whatever else changed.
	upd := &model.NodeUpdate{}
	if err := upd.Set("maintenance", on); err != nil {
		return err
	}
	if err := upd.Set("maintenance_reason", reason); err != nil {
		return err
	}
	h.notifyNode(r.Context(), n, "maintenance_set", notify.StatusStart)
	saved, err := h.Conductor.UpdateNode(r.Context(), topic, n.UUID, upd, false)
	h.notifyOutcome(r.Context(), n, saved, "maintenance_set", err)
	if err != nil {
		return err
	}
	api.WriteEmpty(w, http.StatusAccepted)
	return nil
}

// validate is NodesController.validate(node, node_uuid): the node comes
// from the path (GET /v1/nodes/X/validate passes X as node) or from the
// query (GET /v1/nodes/validate?node=X, or the deprecated ?node_uuid=),
// node_uuid winning when both name one.
func (h *handlers) validate(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	q, err := apiutil.ParseQuery(r, "node", "node_uuid")
	if err != nil {
		return err
	}
	node, nodeUUID := q.Get("node"), q.Get("node_uuid")
	if ident, inPath := rc.Params["node_ident"]; inPath {
		if node != nil {
			// Python refuses the keyword that is also given positionally;
			// upstream answers that TypeError with a 500.
			return errs.InvalidParameterValue("NodesController.validate() got multiple values for argument 'node'")
		}
		node = &ident
	}
	if node != nil {
		if err := apiutil.UUIDOrName("node", *node); err != nil {
			return err
		}
		if !microversion.AllowNodeLogicalNames.Allows(rc.Version) && !collection.IsUUIDLike(*node) {
			return errs.NotAcceptable()
		}
	}
	if nodeUUID != nil {
		if !collection.IsUUIDLike(*nodeUUID) {
			return errs.InvalidParameterValue("Expected UUID for node_uuid: " + *nodeUUID)
		}
		node = nodeUUID
	}
	if node == nil {
		return errs.New(errs.ClassInvalidUuidOrName, map[string]any{"name": "None"})
	}
	n, topic, err := h.nodeTopic(r, rc, "baremetal:node:validate", *node)
	if err != nil {
		return err
	}
	res, err := h.Conductor.ValidateDriverInterfaces(r.Context(), topic, n.UUID)
	if err != nil {
		return err
	}
	return api.WriteJSON(w, http.StatusOK, validationDoc(res))
}

// validationOrder is the driver's non_vendor_interfaces: the core
// interfaces, then the optional ones, the order upstream's document has.
var validationOrder = []string{"boot", "deploy", "management", "network", "power",
	"bios", "console", "firmware", "inspect", "raid", "rescue", "storage"}

func validationDoc(res map[string]rpc.InterfaceValidation) *apiutil.Dict {
	d := apiutil.NewDict()
	for _, k := range validationOrder {
		if v, ok := res[k]; ok {
			d.Set(k, v)
		}
	}
	var rest []string
	for k := range res {
		if !slices.Contains(validationOrder, k) {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	for _, k := range rest {
		d.Set(k, res[k])
	}
	return d
}

// pyState is str() of a nullable state column ("None" when unset).
func pyState(s string) string {
	if s == "" {
		return "None"
	}
	return s
}
