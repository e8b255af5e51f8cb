package redfish

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/stmcginnis/gofish/common"

	"github.com/openkeel/ironic/internal/driver"
)

// Redfish virtual media types and the Ironic device types they stand for
// (upstream VMEDIA_DEVICES_MAP).
const (
	mediaCD       = "CD"
	mediaDVD      = "DVD"
	mediaFloppy   = "Floppy"
	mediaUSBStick = "USBStick"
)

var vmediaDevicesMapRev = map[string]string{"cdrom": mediaCD, "floppy": mediaFloppy, "disk": mediaUSBStick}

// vmediaInsertAttempts and vmediaRetryWait are upstream's retry of a
// virtual media operation a BMC answers with a 5xx (an eject may still be
// in progress on some Dell machines).
const (
	vmediaInsertAttempts = 3
	vmediaRetryWait      = 3 * time.Second
)

// virtualMedia is one VirtualMedia resource.
type virtualMedia struct {
	path       string
	ID         string   `json:"Id"`
	Name       string   `json:"Name"`
	MediaTypes []string `json:"MediaTypes"`
	Inserted   bool     `json:"Inserted"`
	Image      *string  `json:"Image"`
	// TransferProtocolType is the protocol of the inserted image; BMCs
	// that take several report a list.
	TransferProtocolType any `json:"TransferProtocolType"`
	Actions              struct {
		Insert *struct {
			Target    string   `json:"target"`
			Protocols []string `json:"TransferProtocolType@Redfish.AllowableValues"`
		} `json:"#VirtualMedia.InsertMedia"`
		Eject *struct {
			Target string `json:"target"`
		} `json:"#VirtualMedia.EjectMedia"`
	} `json:"Actions"`
}

// accepts reports whether the device can take media of type t; a DVD
// drive takes CDs (Cisco UCS blades offer no CD type).
func (v *virtualMedia) accepts(t string) bool {
	return slices.Contains(v.MediaTypes, t) || (t == mediaCD && slices.Contains(v.MediaTypes, mediaDVD))
}

// vmediaCollections are the VirtualMedia collections to use: the
// system's own when it has one, else those of its managers.
func vmediaCollections(sys *system) ([]string, bool, error) {
	var own common.Link
	if err := json.Unmarshal(sys.raw["VirtualMedia"], &own); err == nil && own != "" {
		return []string{own.String()}, true, nil
	}
	var out []string
	for _, m := range sys.links("ManagedBy") {
		var doc struct{ VirtualMedia common.Link }
		if err := sys.cl.getJSON(m, &doc); err != nil {
			return nil, false, err
		}
		if doc.VirtualMedia != "" {
			out = append(out, doc.VirtualMedia.String())
		}
	}
	return out, false, nil
}

func listVirtualMedia(cl *client, collection string) ([]*virtualMedia, error) {
	coll, err := common.GetCollection(cl, collection)
	if err != nil {
		return nil, err
	}
	out := make([]*virtualMedia, 0, len(coll.ItemLinks))
	for _, p := range coll.ItemLinks {
		v := &virtualMedia{path: p}
		if err := cl.getJSON(p, v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// GetVirtualMedia lists the virtual media devices of the node.
func (m *Management) GetVirtualMedia(ctx context.Context, task *driver.Task) ([]map[string]any, error) {
	sys, err := m.core.getSystem(ctx, task)
	if err != nil {
		return nil, err
	}
	colls, _, err := vmediaCollections(sys)
	if err != nil {
		return nil, redfishError(err.Error())
	}
	var lastErr error
	for _, c := range colls {
		devices, err := listVirtualMedia(sys.cl, c)
		if err != nil {
			lastErr = err
			continue
		}
		if len(devices) == 0 {
			continue
		}
		out := make([]map[string]any, 0, len(devices))
		for _, v := range devices {
			out = append(out, map[string]any{"media_types": v.MediaTypes, "inserted": v.Inserted, "image": v.Image})
		}
		return out, nil
	}
	if lastErr != nil {
		return nil, driver.InvalidParameterValue("All virtual media GET attempts failed. Most recent error: %s", lastErr)
	}
	return nil, driver.InvalidParameterValue("No suitable virtual media device found")
}

// AttachVirtualMedia inserts imageURL into the first device taking
// deviceType media, after ejecting whatever those devices hold (some BMCs
// keep reporting stale media).
func (m *Management) AttachVirtualMedia(ctx context.Context, task *driver.Task, deviceType, imageURL string) error {
	return m.attachVirtualMedia(ctx, task, deviceType, imageURL, nil)
}

// attachVirtualMedia is AttachVirtualMedia with extra InsertMedia
// parameters (a share's TransferProtocolType, UserName and Password).
func (m *Management) attachVirtualMedia(ctx context.Context, task *driver.Task, deviceType, imageURL string, extra map[string]any) error {
	if err := requireExclusive(task); err != nil {
		return err
	}
	mediaType, ok := vmediaDevicesMapRev[deviceType]
	if !ok {
		return driver.InvalidParameterValue("Invalid device type %s specified.", deviceType)
	}
	sys, err := m.core.getSystem(ctx, task)
	if err != nil {
		return err
	}
	colls, viaSystem, err := vmediaCollections(sys)
	if err != nil {
		return redfishError(err.Error())
	}
	if viaSystem {
		colls = colls[:1]
	}
	slot := ""
	if acceptable := m.core.ext.AcceptableMediaID; acceptable != nil {
		if slot, err = acceptable(&Session{cl: sys.cl, sys: sys}, viaSystem); err != nil {
			return redfishError(err.Error())
		}
	}
	var errMsgs []string
	for _, c := range colls {
		inserted, err := m.insertWithRetry(ctx, task, sys.cl, c, mediaType, imageURL, slot, extra, &errMsgs)
		if inserted {
			return nil
		}
		if err != nil && !isServerSide(err) {
			return redfishError(err.Error())
		}
	}
	switch {
	case len(errMsgs) == 0:
		return driver.InvalidParameterValue("No suitable virtual media device found for node %s to mount image %s",
			task.Node.UUID, imageURL)
	case len(errMsgs) == 1 || errMsgs[0] == errMsgs[len(errMsgs)-1]:
		return driver.InvalidParameterValue("Virtual media mount failed for node %s with image %s. Error: %s",
			task.Node.UUID, imageURL, errMsgs[0])
	}
	return driver.InvalidParameterValue("Virtual media mount failed for node %s with image %s after multiple attempts. "+
		"First error: %s. Last error: %s", task.Node.UUID, imageURL, errMsgs[0], errMsgs[len(errMsgs)-1])
}

func isServerSide(err error) bool {
	var herr *HTTPError
	return errors.As(err, &herr) && herr.Status >= 500
}

func (m *Management) insertWithRetry(ctx context.Context, task *driver.Task, cl *client, coll, mediaType, url, slot string, extra map[string]any, errMsgs *[]string) (bool, error) {
	for attempt := 1; ; attempt++ {
		ok, err := m.insertInCollection(task, cl, coll, mediaType, url, slot, extra, errMsgs)
		if err == nil || !isServerSide(err) || attempt >= vmediaInsertAttempts {
			return ok, err
		}
		task.Logger().Warn("virtual media operation failed, will retry", "node", task.Node.UUID, "error", err)
		if serr := m.core.opts.clock().Sleep(ctx, vmediaRetryWait); serr != nil {
			return false, serr
		}
	}
}

// A slot other than "" is the only device an insert may use.
func (m *Management) insertInCollection(task *driver.Task, cl *client, coll, mediaType, url, slot string, extra map[string]any, errMsgs *[]string) (bool, error) {
	if _, err := ejectInCollection(task, cl, coll, mediaType); err != nil {
		task.Logger().Debug("failed to eject existing boot media", "node", task.Node.UUID, "error", err)
	}
	devices, err := listVirtualMedia(cl, coll)
	if err != nil {
		return false, err
	}
	for _, v := range devices {
		if slot != "" && v.ID != slot {
			task.Logger().Debug("skipping a virtual media slot the boot interface does not accept", "node", task.Node.UUID,
				"slot", v.ID, "accepted", slot)
			continue
		}
		if !v.accepts(mediaType) {
			continue
		}
		if v.Actions.Insert == nil || v.Actions.Insert.Target == "" {
			task.Logger().Info("virtual media device does not support InsertMedia, skipping", "node", task.Node.UUID, "slot", v.ID)
			continue
		}
		body := map[string]any{"Image": url, "Inserted": true, "WriteProtected": true}
		for k, v := range extra {
			body[k] = v
		}
		resp, err := cl.Post(v.Actions.Insert.Target, body)
		if err == nil {
			_ = resp.Body.Close()
			task.Logger().Info("inserted boot media", "node", task.Node.UUID, "device", mediaType)
			return true, nil
		}
		var herr *HTTPError
		if !errors.As(err, &herr) {
			return false, err
		}
		switch {
		case herr.Status >= 500:
			if !slices.Contains(*errMsgs, herr.Error()) {
				*errMsgs = append(*errMsgs, herr.Error())
			}
			return false, err
		case herr.Status == http.StatusBadRequest || herr.Status == http.StatusMethodNotAllowed:
			msg := fmt.Sprintf("Inserting virtual media into %s failed for node %s, moving to next virtual media device, if available. %s",
				mediaType, task.Node.UUID, herr)
			*errMsgs = append(*errMsgs, msg)
			task.Logger().Warn(msg)
			continue
		}
		return false, err
	}
	return false, nil
}

// ejectInCollection ejects the inserted media of type mediaType ("" any).
func ejectInCollection(task *driver.Task, cl *client, coll, mediaType string) (bool, error) {
	devices, err := listVirtualMedia(cl, coll)
	if err != nil {
		return false, err
	}
	found := false
	for _, v := range devices {
		if mediaType != "" && !v.accepts(mediaType) {
			continue
		}
		if !v.Inserted {
			continue
		}
		if v.Actions.Eject == nil || v.Actions.Eject.Target == "" {
			return found, fmt.Errorf("The action #VirtualMedia.EjectMedia is missing from the resource %s", v.path)
		}
		resp, err := cl.Post(v.Actions.Eject.Target, map[string]any{})
		if err != nil {
			return found, err
		}
		_ = resp.Body.Close()
		found = true
		task.Logger().Info("boot media ejected", "node", task.Node.UUID, "device", v.Name)
	}
	return found, nil
}

// DetachVirtualMedia ejects the media of the given device types, or of
// every device when none is given. Removing the published images is the
// boot interface's business.
func (m *Management) DetachVirtualMedia(ctx context.Context, task *driver.Task, deviceTypes []string) error {
	if err := requireExclusive(task); err != nil {
		return err
	}
	types := []string{""}
	if deviceTypes != nil {
		types = types[:0]
		for _, d := range deviceTypes {
			t, ok := vmediaDevicesMapRev[d]
			if !ok {
				return driver.InvalidParameterValue("Invalid device type %s specified.", d)
			}
			types = append(types, t)
		}
	}
	sys, err := m.core.getSystem(ctx, task)
	if err != nil {
		return err
	}
	colls, _, err := vmediaCollections(sys)
	if err != nil {
		return redfishError(err.Error())
	}
	for _, t := range types {
		for _, c := range colls {
			if _, err := ejectInCollection(task, sys.cl, c, t); err != nil {
				return redfishError(err.Error())
			}
		}
	}
	return nil
}
