package node

import (
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apiutil"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/rpc"
)

// vmediaSchemes are image_publisher.VMEDIA_SUPPORTED_URL_SCHEMES and
// vmediaDevices boot_devices.VMEDIA_DEVICES.
var (
	vmediaSchemes = []string{"http", "https", "nfs", "cifs", "smb"}
	vmediaDevices = []string{"disk", "cdrom", "floppy"}
)

func (h *handlers) vendorMethods(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	if _, err := apiutil.ParseQuery(r); err != nil {
		return err
	}
	ident := rc.Param("node_ident")
	if err := apiutil.UUIDOrName("node_ident", ident); err != nil {
		return err
	}
	n, topic, err := h.nodeTopic(r, rc, "baremetal:node:vendor_passthru", ident)
	if err != nil {
		return err
	}
	methods, err := h.Conductor.GetNodeVendorPassthruMethods(r.Context(), topic, n.UUID)
	if err != nil {
		return err
	}
	return api.WriteJSON(w, http.StatusOK, methods)
}

// vendorCall is NodeVendorPassthruController._default: ?method= names the
// driver method, the body is its data; asynchronous methods answer 202,
// attached return values are sent as the raw body.
func (h *handlers) vendorCall(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	ident := rc.Param("node_ident")
	if err := apiutil.UUIDOrName("node_ident", ident); err != nil {
		return err
	}
	q := r.URL.Query()
	if !q.Has("method") {
		return errs.MissingParameterValue("Missing mandatory parameter: method")
	}
	method := q.Get("method")
	body, err := apiutil.DecodeBody(r)
	if err != nil {
		return err
	}
	data, _ := apiutil.Plain(body).(map[string]any)
	if data == nil {
		data = map[string]any{}
	}
	n, topic, err := h.nodeTopic(r, rc, "baremetal:node:vendor_passthru", ident)
	if err != nil {
		return err
	}
	if method == "" {
		return errs.ClientSideError("Method not specified", http.StatusBadRequest, "")
	}
	res, err := h.Conductor.VendorPassthru(r.Context(), topic, rpc.VendorPassthruArgs{
		NodeID: n.UUID, DriverMethod: method, HTTPMethod: strings.ToUpper(r.Method), Info: data})
	if err != nil {
		return err
	}
	return writePassthru(w, res)
}

func writePassthru(w http.ResponseWriter, res *rpc.VendorPassthruResult) error {
	status := http.StatusOK
	if res.Async {
		status = http.StatusAccepted
	}
	switch {
	case res.Return == nil:
		api.WriteEmpty(w, status)
		return nil
	case res.Attach:
		s, ok := res.Return.(string)
		if !ok {
			s = apiutil.PyStr(res.Return)
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.WriteHeader(status)
		_, err := w.Write([]byte(s))
		return err
	}
	return api.WriteJSON(w, status, res.Return)
}

func (h *handlers) getVmedia(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	if _, err := apiutil.ParseQuery(r); err != nil {
		return err
	}
	n, topic, err := h.nodeAndTopic(r, rc, "baremetal:node:vmedia:get")
	if err != nil {
		return err
	}
	vm, err := h.Conductor.GetVirtualMedia(r.Context(), topic, n.UUID)
	if err != nil {
		return err
	}
	return api.WriteJSON(w, http.StatusOK, vm)
}

func (h *handlers) attachVmedia(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	body, err := apiutil.DecodeBody(r)
	if err != nil {
		return err
	}
	if err := apiutil.MustSchema("vmedia_attach").ValidateBody("vmedia", body); err != nil {
		return err
	}
	vm := apiutil.Plain(body).(map[string]any)
	imageURL := vm["image_url"].(string)
	scheme := ""
	if u, err := url.Parse(imageURL); err == nil {
		scheme = strings.ToLower(u.Scheme)
	}
	if !slices.Contains(vmediaSchemes, scheme) {
		return errs.NewMessage(errs.ClassInvalid, "Unsupported or missing URL scheme: "+scheme)
	}
	n, topic, err := h.nodeAndTopic(r, rc, "baremetal:node:vmedia:attach")
	if err != nil {
		return err
	}
	src, _ := vm["image_download_source"].(string)
	if src == "" {
		src = "local"
	}
	if err := h.Conductor.AttachVirtualMedia(r.Context(), topic, rpc.AttachVirtualMediaArgs{
		NodeID: n.UUID, DeviceType: vm["device_type"].(string), ImageURL: imageURL, ImageDownloadSource: src}); err != nil {
		return err
	}
	api.WriteEmpty(w, http.StatusNoContent)
	return nil
}

func (h *handlers) detachVmedia(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	args, err := callArgs(r, "device_types")
	if err != nil {
		return err
	}
	var types []string
	if v, ok := args["device_types"]; ok && v != nil {
		s, ok := v.(string)
		if !ok {
			return errs.InvalidParameterValue("Expected string for device_types: " + apiutil.PyStr(v))
		}
		for _, t := range strings.Split(s, ",") {
			t = strings.ToLower(strings.TrimSpace(t))
			if t != "" && !slices.Contains(types, t) {
				types = append(types, t)
			}
		}
	}
	if len(types) > 0 {
		var invalid []string
		for _, t := range types {
			if !slices.Contains(vmediaDevices, t) {
				invalid = append(invalid, t)
			}
		}
		if len(invalid) > 0 {
			return errs.NewMessage(errs.ClassInvalid, "Invalid device type(s) "+strings.Join(invalid, ", ")+" (valid are "+strings.Join(vmediaDevices, ", ")+")")
		}
	}
	n, topic, err := h.nodeAndTopic(r, rc, "baremetal:node:vmedia:detach")
	if err != nil {
		return err
	}
	if len(types) == 0 {
		types = nil
	}
	if err := h.Conductor.DetachVirtualMedia(r.Context(), topic, n.UUID, types); err != nil {
		return err
	}
	api.WriteEmpty(w, http.StatusNoContent)
	return nil
}
