package ramdisk

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apiutil"
	"github.com/openkeel/ironic/internal/api/collection"
	"github.com/openkeel/ironic/internal/api/microversion"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store"
)

// inspectionData is upstream's DATA_VALIDATOR: the minimal inventory.
var inspectionData = apiutil.MustSchema("inspection_data")

// lookupCacheField is where inspection start caches a node's BMC
// addresses (inspect_utils.LOOKUP_CACHE_FIELD).
const lookupCacheField = model.DIILookupBMCAddresses

// autoDiscoveredFlag marks plugin data of an auto-enrolled node, as
// ironic-inspector did.
const autoDiscoveredFlag = "auto_discovered"

// errAutoEnroll is inspect_utils.AutoEnrollPossible: nothing matched.
var errAutoEnroll = errors.New("no node matches the inspection data")

func notFound() error { return errs.New(errs.ClassNotFound, nil) }

// continueInspection is ContinueInspectionController.post.
func (h *handlers) continueInspection(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	q, err := apiutil.ParseQuery(r, "node_uuid")
	if err != nil {
		return err
	}
	body, err := apiutil.DecodeBody(r)
	if err != nil {
		return err
	}
	plain := apiutil.Plain(body)
	if err := inspectionData.ValidateBody("data", plain); err != nil {
		return err
	}
	nodeUUID, err := collection.UUID("node_uuid", q.Get("node_uuid"))
	if err != nil {
		return err
	}
	newEndpoint := microversion.NewContinueInspectionEndpoint.Allows(rc.Version)
	if nodeUUID != nil && !newEndpoint {
		return errs.NewMessage(errs.ClassNotFound, fmt.Sprintf("API version 1.%d or newer is required", microversion.Minor84ContinueInspection))
	}
	data := plain.(map[string]any)
	inventory := data["inventory"].(map[string]any)
	delete(data, "inventory")
	var addrs []string
	for _, iface := range inventory["interfaces"].([]any) {
		if s, ok := iface.(map[string]any)["mac_address"].(string); ok {
			addrs = append(addrs, s)
		}
	}
	macs := h.validMACs(addrs)
	var bmcs []string
	for _, k := range []string{"bmc_address", "bmc_v6address"} {
		if s, ok := inventory[k].(string); ok && s != "" {
			bmcs = append(bmcs, s)
		}
	}
	if len(macs) == 0 && len(bmcs) == 0 && nodeUUID == nil {
		// Upstream raises exception.BadRequest, an alias of Invalid (400).
		return errs.NewMessage(errs.ClassInvalid, "No lookup information provided")
	}
	ctx := r.Context()
	n, err := h.lookupInspected(r, macs, bmcs, nodeUUID)
	var topic string
	switch {
	case errors.Is(err, errAutoEnroll):
		if !h.Config.BoolOf(config.AutoDiscoveryEnabled) {
			return notFound()
		}
		n, topic, err = h.autoEnroll(r, macs, bmcs)
		if err != nil {
			return err
		}
		data[autoDiscoveredFlag] = true
	case err != nil:
		return err
	default:
		if topic, err = h.topic(ctx, n); err != nil {
			return err
		}
	}
	if newEndpoint {
		// Before the data is processed: processing can take long, and
		// making a token needs the node's lock.
		if n, err = h.Conductor.GetNodeWithToken(ctx, topic, n.UUID); err != nil {
			return err
		}
	}
	if err := h.Conductor.ContinueInspection(ctx, topic, n.UUID, inventory, data); err != nil {
		return err
	}
	if newEndpoint {
		return api.WriteJSON(w, http.StatusAccepted, h.convert(rc, n))
	}
	// What ironic-inspector answered.
	out := apiutil.NewDict()
	out.Set("uuid", n.UUID)
	return api.WriteJSON(w, http.StatusAccepted, out)
}

// lookupInspected is inspect_utils.lookup_node: by UUID, then MACs, then
// cached BMC addresses, every conflict a bare NotFound; errAutoEnroll when
// nothing matched.
func (h *handlers) lookupInspected(r *http.Request, macs, bmcs []string, nodeUUID *string) (*model.Node, error) {
	ctx := r.Context()
	var n *model.Node
	if nodeUUID != nil {
		found, err := h.Store.GetNodeByUUID(ctx, *nodeUUID)
		if errors.Is(err, store.ErrNotFound) {
			return nil, notFound()
		}
		if err != nil {
			return nil, fmt.Errorf("inspection lookup of %s: %w", *nodeUUID, err)
		}
		n = found
	}
	if len(macs) > 0 {
		found, err := h.Store.GetNodeByPortAddresses(ctx, macs)
		switch {
		case errors.Is(err, store.ErrDuplicateNodeOnLookup):
			h.Logger.Error("conflict on inspection lookup: several nodes match the MAC addresses", "macs", strings.Join(macs, ", "))
			return nil, notFound()
		case errors.Is(err, store.ErrNotFound):
		case err != nil:
			return nil, fmt.Errorf("inspection lookup by MAC addresses: %w", err)
		case n != nil && found.UUID != n.UUID:
			h.Logger.Error("conflict on inspection lookup: the MAC addresses belong to another node", "node", n.UUID, "other", found.UUID)
			return nil, notFound()
		default:
			n = found
		}
	}
	if n != nil && n.ProvisionState != states.InspectWait {
		h.Logger.Error("node found by inspection lookup is not waiting for inspection", "node", n.UUID, "state", n.ProvisionState)
		return nil, notFound()
	}
	if len(bmcs) > 0 {
		var err error
		if n, err = h.lookupByBMC(r, bmcs, n); err != nil {
			return nil, err
		}
	}
	if n == nil {
		h.Logger.Error("no node satisfies the inspection data", "macs", strings.Join(macs, ", "), "bmc", strings.Join(bmcs, ", "))
		return nil, errAutoEnroll
	}
	return n, nil
}

// lookupByBMC finds the nodes waiting for inspection whose cached BMC
// addresses include one of bmcs; several BMC matches or a match that is
// not known are conflicts.
func (h *handlers) lookupByBMC(r *http.Request, bmcs []string, known *model.Node) (*model.Node, error) {
	ctx := r.Context()
	state := states.InspectWait
	candidates, err := h.Store.ListNodes(ctx, store.NodeFilter{ProvisionState: &state}, store.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("inspection lookup by BMC addresses: %w", err)
	}
	var byBMC []string
	for _, c := range candidates {
		cached := c.InternalInfo().List(lookupCacheField)
		for _, a := range cached {
			if s, ok := a.(string); ok && slices.Contains(bmcs, s) && !slices.Contains(byBMC, c.UUID) {
				byBMC = append(byBMC, c.UUID)
			}
		}
	}
	if known != nil {
		if len(byBMC) > 0 && !slices.Contains(byBMC, known.UUID) {
			h.Logger.Error("conflict on inspection lookup: MAC and BMC addresses match different nodes", "nodes", strings.Join(byBMC, ", "), "node", known.UUID)
			return nil, notFound()
		}
		return known, nil
	}
	switch len(byBMC) {
	case 0:
		return nil, nil
	case 1:
		n, err := h.Store.GetNodeByUUID(ctx, byBMC[0])
		if errors.Is(err, store.ErrNotFound) {
			return nil, errs.NodeNotFound(byBMC[0])
		}
		return n, err
	}
	h.Logger.Error("several nodes satisfy the BMC addresses but none the MAC addresses", "nodes", strings.Join(byBMC, ", "))
	return nil, notFound()
}

// autoEnroll creates a node for unknown hardware ([auto_discovery]); its
// failures disclose nothing to the caller.
func (h *handlers) autoEnroll(r *http.Request, macs, bmcs []string) (*model.Node, string, error) {
	ctx := r.Context()
	rcls := h.Config.StringOf(config.DefaultDefaultResourceClass)
	n := &model.Node{
		UUID:           uuid.NewString(),
		Driver:         h.Config.StringOf(config.AutoDiscoveryDriver),
		ConductorGroup: h.Config.StringOf(config.DefaultDefaultConductorGroup),
		ProvisionState: states.Enroll,
	}
	if h.Config.HasOf(config.DefaultDefaultResourceClass) {
		n.ResourceClass = &rcls
	}
	topic, err := h.Topics.GetTopicFor(ctx, n)
	if err != nil {
		h.Logger.Error("no conductor for a newly enrolled node", "driver", n.Driver, "error", err)
		return nil, "", errs.New(errs.ClassIronicException, nil)
	}
	h.Logger.Info("enrolling a newly discovered node", "uuid", n.UUID, "driver", n.Driver, "macs", strings.Join(macs, ", "), "bmc", strings.Join(bmcs, ", "))
	created, err := h.Conductor.CreateNode(ctx, topic, n)
	if err != nil {
		h.Logger.Error("failed to enroll a discovered node", "driver", n.Driver, "error", err)
		return nil, "", errs.New(errs.ClassIronicException, nil)
	}
	return created, topic, nil
}
