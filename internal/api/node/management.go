package node

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apiutil"
	"github.com/openkeel/ironic/internal/api/collection"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
)

// allowedBootModes are ALLOWED_TARGET_BOOT_MODES.
var allowedBootModes = []string{"bios", "uefi"}

func (h *handlers) setBootDevice(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	args, err := callArgs(r, "boot_device", "persistent")
	if err != nil {
		return err
	}
	if err := apiutil.UUIDOrName("node_ident", rc.Param("node_ident")); err != nil {
		return err
	}
	device, err := apiutil.StringArg(args, "boot_device")
	if err != nil {
		return err
	}
	if device == nil {
		return errs.MissingParameterValue("Missing mandatory parameter: boot_device")
	}
	persistent, err := argBool(args, "persistent")
	if err != nil {
		return err
	}
	n, err := h.node(r, rc, "baremetal:node:set_boot_device", rc.Param("node_ident"))
	if err != nil {
		return err
	}
	topic, err := h.Topics.GetTopicFor(r.Context(), n)
	if err != nil {
		return err
	}
	if err := h.Conductor.SetBootDevice(r.Context(), topic, n.UUID, *device, persistent != nil && *persistent); err != nil {
		return err
	}
	api.WriteEmpty(w, http.StatusNoContent)
	return nil
}

// bootDeviceNode is the prelude of BootDeviceController's get and
// supported: no arguments, the node under the get_boot_device rule and
// the conductor that owns it.
func (h *handlers) bootDeviceNode(r *http.Request, rc *api.RequestContext) (*model.Node, string, error) {
	if _, err := callArgs(r); err != nil {
		return nil, "", err
	}
	ident := rc.Param("node_ident")
	if err := apiutil.UUIDOrName("node_ident", ident); err != nil {
		return nil, "", err
	}
	return h.nodeTopic(r, rc, "baremetal:node:get_boot_device", ident)
}

func (h *handlers) getBootDevice(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	n, topic, err := h.bootDeviceNode(r, rc)
	if err != nil {
		return err
	}
	bd, err := h.Conductor.GetBootDevice(r.Context(), topic, n.UUID)
	if err != nil {
		return err
	}
	d := apiutil.NewDict()
	d.Set("boot_device", nullStr(bd.BootDevice))
	if bd.Persistent == nil {
		d.Set("persistent", nil)
	} else {
		d.Set("persistent", *bd.Persistent)
	}
	return api.WriteJSON(w, http.StatusOK, d)
}

func (h *handlers) supportedBootDevices(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	n, topic, err := h.bootDeviceNode(r, rc)
	if err != nil {
		return err
	}
	devs, err := h.Conductor.GetSupportedBootDevices(r.Context(), topic, n.UUID)
	if err != nil {
		return err
	}
	if devs == nil {
		devs = []string{}
	}
	d := apiutil.NewDict()
	d.Set("supported_boot_devices", devs)
	return api.WriteJSON(w, http.StatusOK, d)
}

func (h *handlers) injectNMI(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	if _, err := callArgs(r); err != nil {
		return err
	}
	if err := apiutil.UUIDOrName("node_ident", rc.Param("node_ident")); err != nil {
		return err
	}
	n, err := h.node(r, rc, "baremetal:node:inject_nmi", rc.Param("node_ident"))
	if err != nil {
		return err
	}
	topic, err := h.Topics.GetTopicFor(r.Context(), n)
	if err != nil {
		return err
	}
	if err := h.Conductor.InjectNMI(r.Context(), topic, n.UUID); err != nil {
		return err
	}
	api.WriteEmpty(w, http.StatusNoContent)
	return nil
}

// indicatorLinks are indicator_convert_with_links' links: the unique name
// (name@component) under the node ident the client used.
func indicatorLinks(rc *api.RequestContext, ident, unique string) []collection.Link {
	return collection.SelfAndBookmark(rc.PublicURL, "nodes", ident+"/management/indicators/"+unique)
}

func (h *handlers) listIndicators(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	ident := rc.Param("node_ident")
	if err := apiutil.UUIDOrName("node_ident", ident); err != nil {
		return err
	}
	n, topic, err := h.nodeTopic(r, rc, "baremetal:node:get_indicator_state", ident)
	if err != nil {
		return err
	}
	all, err := h.Conductor.GetSupportedIndicators(r.Context(), topic, n.UUID, "")
	if err != nil {
		return err
	}
	items := []*apiutil.Dict{}
	for _, comp := range slices.Sorted(maps.Keys(all)) {
		names, _ := all[comp].(map[string]any)
		for _, name := range slices.Sorted(maps.Keys(names)) {
			fields, _ := names[name].(map[string]any)
			unique := name + "@" + comp
			d := apiutil.NewDict()
			d.Set("name", unique)
			d.Set("component", comp)
			readonly, ok := fields["readonly"]
			if !ok {
				readonly = true
			}
			d.Set("readonly", readonly)
			st, ok := fields["states"]
			if !ok || st == nil {
				st = []any{}
			}
			d.Set("states", st)
			d.Set("links", indicatorLinks(rc, ident, unique))
			items = append(items, d)
		}
	}
	out := apiutil.NewDict()
	out.Set("indicators", items)
	return api.WriteJSON(w, http.StatusOK, out)
}

// indicatorIdent is IndicatorAtComponent(unique_name=...): the router
// splits the element at its first "@" and leaves component unset when it
// has none.
func indicatorIdent(rc *api.RequestContext) (name, component string, err error) {
	name = rc.Param("ind_ident")
	component, ok := rc.Params["component"]
	if !ok {
		return "", "", errs.InvalidParameterValue(fmt.Sprintf("Malformed indicator name \"%s\"", name))
	}
	return name, component, nil
}

func (h *handlers) getIndicator(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	if _, err := callArgs(r); err != nil {
		return err
	}
	n, err := h.node(r, rc, "baremetal:node:get_indicator_state", rc.Param("node_ident"))
	if err != nil {
		return err
	}
	topic, err := h.Topics.GetTopicFor(r.Context(), n)
	if err != nil {
		return err
	}
	name, comp, err := indicatorIdent(rc)
	if err != nil {
		return err
	}
	state, err := h.Conductor.GetIndicatorState(r.Context(), topic, n.UUID, comp, name)
	if err != nil {
		return err
	}
	d := apiutil.NewDict()
	d.Set("state", state)
	return api.WriteJSON(w, http.StatusOK, d)
}

func (h *handlers) setIndicator(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	args, err := callArgs(r, "state")
	if err != nil {
		return err
	}
	state, err := apiutil.StringArg(args, "state")
	if err != nil {
		return err
	}
	if s, inPath := rc.Params["state"]; inPath {
		if state != nil {
			// Python refuses a keyword argument that is also given
			// positionally; upstream answers that TypeError with a 500.
			return fmt.Errorf("IndicatorController.put: got multiple values for argument 'state'")
		}
		state = &s
	}
	if state == nil {
		return errs.MissingParameterValue("Missing mandatory parameter: state")
	}
	n, err := h.node(r, rc, "baremetal:node:set_indicator_state", rc.Param("node_ident"))
	if err != nil {
		return err
	}
	topic, err := h.Topics.GetTopicFor(r.Context(), n)
	if err != nil {
		return err
	}
	name, comp, err := indicatorIdent(rc)
	if err != nil {
		return err
	}
	if err := h.Conductor.SetIndicatorState(r.Context(), topic, n.UUID, comp, name, *state); err != nil {
		return err
	}
	api.WriteEmpty(w, http.StatusNoContent)
	return nil
}

// setRAID is NodeStatesController.raid: the whole body is the target RAID
// configuration; a driver without RAID support answers 404.
func (h *handlers) setRAID(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	ident := rc.Param("node_ident")
	if err := apiutil.UUIDOrName("node_ident", ident); err != nil {
		return err
	}
	body, err := apiutil.DecodeBody(r)
	if err != nil {
		return err
	}
	cfg, ok := apiutil.Plain(body).(map[string]any)
	if !ok {
		return errs.InvalidParameterValue(fmt.Sprintf("Expected types <class 'dict'> for target_raid_config: %s", apiutil.PyStr(apiutil.Plain(body))))
	}
	n, topic, err := h.nodeTopic(r, rc, "baremetal:node:set_raid_state", ident)
	if err != nil {
		return err
	}
	if err := h.Conductor.SetTargetRAIDConfig(r.Context(), topic, n.UUID, cfg); err != nil {
		if e, ok := errs.As(err); ok && e.Class == errs.ClassUnsupportedDriverExtension {
			c := *e
			c.Code = http.StatusNotFound
			return &c
		}
		return err
	}
	api.WriteEmpty(w, http.StatusNoContent)
	return nil
}

// unstableConflict is the 409 of boot_mode and secure_boot while the node
// transitions.
func unstableConflict(state string) error {
	if !states.UnstableStates.Contains(state) {
		return nil
	}
	return errs.NewMessage(errs.ClassConflict, fmt.Sprintf("Node is in %s state. Since node is transitioning, the boot mode will not be set as this may interfere with ongoing changes and result in erroneous modification. Try again later.", state))
}

func (h *handlers) setBootMode(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	args, err := callArgs(r, "target")
	if err != nil {
		return err
	}
	ident := rc.Param("node_ident")
	if err := apiutil.UUIDOrName("node_ident", ident); err != nil {
		return err
	}
	target, err := mandatoryString(args, "target")
	if err != nil {
		return err
	}
	n, topic, err := h.nodeTopic(r, rc, "baremetal:node:set_boot_mode", ident)
	if err != nil {
		return err
	}
	if target == nil || !slices.Contains(allowedBootModes, *target) {
		return errs.InvalidParameterValue(fmt.Sprintf("Invalid boot mode %s requested for node. Allowed boot modes are: %s",
			pyOptional(target), strings.Join(allowedBootModes, ", ")))
	}
	if err := unstableConflict(n.ProvisionState); err != nil {
		return err
	}
	if err := h.Conductor.ChangeNodeBootMode(r.Context(), topic, n.UUID, *target); err != nil {
		return err
	}
	rc.SetLocation(w, "nodes", ident+"/states")
	api.WriteEmpty(w, http.StatusAccepted)
	return nil
}

func (h *handlers) setSecureBoot(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	args, err := callArgs(r, "target")
	if err != nil {
		return err
	}
	ident := rc.Param("node_ident")
	if err := apiutil.UUIDOrName("node_ident", ident); err != nil {
		return err
	}
	target, err := argBool(args, "target")
	if err != nil {
		return err
	}
	if _, given := args["target"]; !given {
		return errs.MissingParameterValue("Missing mandatory parameter: target")
	}
	n, topic, err := h.nodeTopic(r, rc, "baremetal:node:set_secure_boot", ident)
	if err != nil {
		return err
	}
	if target == nil {
		return errs.InvalidParameterValue("Invalid secure_boot None requested for node. Allowed secure_boot states are: True, False) ")
	}
	if err := unstableConflict(n.ProvisionState); err != nil {
		return err
	}
	if err := h.Conductor.ChangeNodeSecureBoot(r.Context(), topic, n.UUID, *target); err != nil {
		return err
	}
	rc.SetLocation(w, "nodes", ident+"/states")
	api.WriteEmpty(w, http.StatusAccepted)
	return nil
}

func (h *handlers) getConsole(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	if _, err := callArgs(r); err != nil {
		return err
	}
	ident := rc.Param("node_ident")
	if err := apiutil.UUIDOrName("node_ident", ident); err != nil {
		return err
	}
	n, topic, err := h.nodeTopic(r, rc, "baremetal:node:get_console", ident)
	if err != nil {
		return err
	}
	d := apiutil.NewDict()
	info, err := h.Conductor.GetConsoleInformation(r.Context(), topic, n.UUID)
	switch {
	case errs.Is(err, errs.ClassNodeConsoleNotEnabled):
		d.Set("console_enabled", false)
		d.Set("console_info", nil)
	case err != nil:
		return err
	default:
		d.Set("console_enabled", true)
		d.Set("console_info", info)
	}
	return api.WriteJSON(w, http.StatusOK, d)
}

func (h *handlers) setConsole(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	args, err := callArgs(r, "enabled")
	if err != nil {
		return err
	}
	ident := rc.Param("node_ident")
	if err := apiutil.UUIDOrName("node_ident", ident); err != nil {
		return err
	}
	enabled, err := argBool(args, "enabled")
	if err != nil {
		return err
	}
	if enabled == nil {
		return errs.MissingParameterValue("Missing mandatory parameter: enabled")
	}
	n, topic, err := h.nodeTopic(r, rc, "baremetal:node:set_console_state", ident)
	if err != nil {
		return err
	}
	if err := h.Conductor.SetConsoleMode(r.Context(), topic, n.UUID, *enabled); err != nil {
		return err
	}
	rc.SetLocation(w, "nodes", ident+"/states/console")
	api.WriteEmpty(w, http.StatusAccepted)
	return nil
}
