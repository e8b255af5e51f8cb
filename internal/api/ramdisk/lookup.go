package ramdisk

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
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store"
)

// lookup is LookupController.get_all.
func (h *handlers) lookup(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	q, err := apiutil.ParseQuery(r, "addresses", "node_uuid")
	if err != nil {
		return err
	}
	addresses := collection.StringList(q.Get("addresses"))
	nodeUUID, err := collection.UUID("node_uuid", q.Get("node_uuid"))
	if err != nil {
		return err
	}
	valid := h.validMACs(addresses)
	if len(valid) == 0 && nodeUUID == nil {
		return errs.New(errs.ClassIncompleteLookup, nil)
	}
	ctx := r.Context()
	var n *model.Node
	if nodeUUID != nil {
		n, err = h.Store.GetNodeByUUID(ctx, *nodeUUID)
	} else {
		n, err = h.Store.GetNodeByPortAddresses(ctx, valid)
	}
	if err != nil {
		// Several nodes matching the addresses is a NotFound too; one
		// answer for every failure discloses nothing about the nodes.
		if errors.Is(err, store.ErrNotFound) {
			h.Logger.Error("no node has been found during lookup", "error", err)
			return errs.New(errs.ClassNotFound, nil)
		}
		return fmt.Errorf("lookup: %w", err)
	}
	if h.Config.BoolOf(config.APIRestrictLookup) {
		ok, err := h.lookupAllowed(n)
		if err != nil {
			return err
		}
		if !ok {
			h.Logger.Error("lookup is not allowed for the node in its provision state", "node", n.UUID, "state", n.ProvisionState)
			return errs.New(errs.ClassNotFound, nil)
		}
	}
	if !microversion.AllowAgentToken.Allows(rc.Version) {
		// Upstream answers older agents with the node as stored, which
		// hands out a token made for a newer agent on every lookup; the
		// token only ever leaves through the conductor's first answer.
		if n.InternalInfo().HasAgentToken() {
			masked := *n
			masked.DriverInternalInfo = apiutil.CopyJSON(n.DriverInternalInfo)
			masked.InternalInfo().SetAgentToken(apiutil.Secret)
			n = &masked
		}
		return api.WriteJSON(w, http.StatusOK, h.convert(rc, n))
	}
	topic, err := h.topic(ctx, n)
	if err != nil {
		return err
	}
	if n, err = h.Conductor.GetNodeWithToken(ctx, topic, n.UUID); err != nil {
		return err
	}
	return api.WriteJSON(w, http.StatusOK, h.convert(rc, n))
}

// lookupAllowed says whether the node's provision state allows a lookup,
// in the wider fast-track set when fast track applies to it.
func (h *handlers) lookupAllowed(n *model.Node) (bool, error) {
	fast, err := h.fastTrackEnabled(n)
	if err != nil {
		return false, err
	}
	if fast {
		return states.FastTrackLookupAllowedStates.Contains(n.ProvisionState), nil
	}
	return states.LookupAllowedStates.Contains(n.ProvisionState), nil
}

var (
	trueStrings  = []string{"1", "t", "true", "on", "y", "yes"}
	falseStrings = []string{"0", "f", "false", "off", "n", "no"}
)

// fastTrackEnabled is utils.fast_track_enabled: driver_info's fast_track
// (oslo's strict bool_from_string) over [deploy]fast_track.
func (h *handlers) fastTrackEnabled(n *model.Node) (bool, error) {
	v, ok := n.DriverInfo["fast_track"]
	if !ok || v == nil {
		return h.Config.BoolOf(config.DeployFastTrack), nil
	}
	if b, ok := v.(bool); ok {
		return b, nil
	}
	s := strings.ToLower(strings.TrimSpace(pyStr(v)))
	switch {
	case slices.Contains(trueStrings, s):
		return true, nil
	case slices.Contains(falseStrings, s):
		return false, nil
	}
	return false, errs.InvalidParameterValue(fmt.Sprintf(
		"Invalid value of fast_track: Unrecognized value '%s', acceptable values are: '0', '1', 'f', 'false', 'n', 'no', 'off', 'on', 't', 'true', 'y', 'yes'",
		pyStr(v)))
}

func pyStr(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return apiutil.PyRepr(v)
}
