// Package drivers serves /v1/drivers as upstream's
// ironic/api/controllers/v1/driver.py: the hardware types the live
// conductors enabled (read from the conductor registrations in the
// store), and, through a conductor that has the hardware type, its
// properties, RAID logical disk properties and vendor passthru.
package drivers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apiutil"
	"github.com/openkeel/ironic/internal/api/collection"
	"github.com/openkeel/ironic/internal/api/microversion"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/rpc"
	"github.com/openkeel/ironic/internal/store"
)

// Topics chooses a conductor that has a hardware type (rpc.Router
// implements it).
type Topics interface {
	GetTopicForDriver(ctx context.Context, driverName string) (string, error)
}

// Deps is what the driver handlers need.
type Deps struct {
	Store     store.Store
	Conductor rpc.ConductorAPI
	Topics    Topics
}

// handlers keeps upstream's per-process caches of the answers that only
// change with a conductor's code (properties, RAID properties, vendor
// methods), for the drivers that answered.
type handlers struct {
	Deps
	mu      sync.Mutex
	props   map[string]map[string]string
	raid    map[string]map[string]string
	methods map[string]map[string]map[string]any
}

// Register adds the driver handlers to m.
func Register(m map[string]api.HandlerFunc, d Deps) {
	h := &handlers{Deps: d, props: map[string]map[string]string{}, raid: map[string]map[string]string{},
		methods: map[string]map[string]map[string]any{}}
	m["GET /v1/drivers"] = h.list
	m["GET /v1/drivers/{driver_name}"] = h.show
	m["GET /v1/drivers/{driver_name}/properties"] = h.properties
	m["GET /v1/drivers/{driver_name}/raid/logical_disk_properties"] = h.raidProperties
	m["GET /v1/drivers/{driver_name}/vendor_passthru/methods"] = h.vendorMethods
	for _, method := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
		m[method+" /v1/drivers/{driver_name}/vendor_passthru"] = h.passthru
	}
}

var (
	indexQuery   = apiutil.MustRequestSchema("driver_index_request_query")
	indexQuery77 = apiutil.MustRequestSchema("driver_index_request_query_v77")
	indexQuery86 = apiutil.MustRequestSchema("driver_index_request_query_v86")
	showQuery    = apiutil.MustRequestSchema("driver_show_request_query")
	showQuery77  = apiutil.MustRequestSchema("driver_show_request_query_v77")
	showQuery86  = apiutil.MustRequestSchema("driver_show_request_query_v86")
)

func pickQuery(v microversion.Version, base, v77, v86 *apiutil.RequestSchema) *apiutil.RequestSchema {
	switch {
	case v.AtLeast(microversion.Minor86FirmwareInterface):
		return v86
	case v.AtLeast(microversion.Minor77DriverFieldsSelector):
		return v77
	}
	return base
}

// newerInterfaces are the interface kinds a version may not know, with
// the gate that introduced them.
var newerInterfaces = []struct {
	kind driver.Kind
	gate microversion.Gate
}{
	{driver.KindStorage, microversion.AllowStorageInterface},
	{driver.KindRescue, microversion.AllowRescueInterface},
	{driver.KindBIOS, microversion.AllowBiosInterface},
	{driver.KindFirmware, microversion.AllowFirmwareInterface},
}

// activeHardwareTypes is get_active_hardware_type_dict: hardware type →
// sorted hosts of the live conductors that enabled it.
func (h *handlers) activeHardwareTypes(ctx context.Context, rc *api.RequestContext) (map[string][]string, error) {
	timeout := time.Duration(rc.Config.IntOf(config.ConductorHeartbeatTimeout)) * time.Second
	byGroup, err := h.Store.GetActiveHardwareTypeDict(ctx, timeout)
	if err != nil {
		return nil, fmt.Errorf("active hardware types: %w", err)
	}
	out := map[string][]string{}
	for name, groups := range byGroup {
		hosts := []string{}
		for _, hs := range groups {
			for _, host := range hs {
				if !slices.Contains(hosts, host) {
					hosts = append(hosts, host)
				}
			}
		}
		slices.Sort(hosts)
		out[name] = hosts
	}
	return out, nil
}

// convert is convert_with_links. Upstream walks the interface kinds as a
// Python set (an order that varies between processes); ours is
// alphabetical, enabled names sorted.
func (h *handlers) convert(rc *api.RequestContext, name string, hosts []string, detail bool, ifaces []interfaceRow, fields []string) (*apiutil.Dict, error) {
	v := rc.Version
	d := apiutil.NewDict()
	d.Set("name", name)
	d.Set("hosts", hosts)
	d.Set("links", collection.SelfAndBookmark(rc.PublicURL, "drivers", name))
	if microversion.AllowLinksNodeStatesAndDriverProperties.Allows(v) {
		d.Set("properties", collection.SelfAndBookmark(rc.PublicURL, "drivers", name+"/properties"))
	}
	if microversion.AllowDynamicDrivers.Allows(v) {
		d.Set("type", "dynamic")
		if detail {
			for _, kind := range driver.AllKinds {
				var def any
				enabled := []string{}
				for _, i := range ifaces {
					if i.kind != string(kind) {
						continue
					}
					if !slices.Contains(enabled, i.name) {
						enabled = append(enabled, i.name)
					}
					if i.isDefault {
						def = i.name
					}
				}
				slices.Sort(enabled)
				d.Set("default_"+string(kind)+"_interface", def)
				d.Set("enabled_"+string(kind)+"_interfaces", enabled)
			}
		}
	}
	for _, n := range newerInterfaces {
		if !n.gate.Allows(v) {
			d.Delete("default_" + string(n.kind) + "_interface")
			d.Delete("enabled_" + string(n.kind) + "_interfaces")
		}
	}
	if fields != nil {
		d.KeepOnly(fields)
		if err := collection.CheckInvalidFields(fields, d.Keys()); err != nil {
			return nil, err
		}
	}
	return d, nil
}

type interfaceRow struct {
	hw, kind, name string
	isDefault      bool
}

func (h *handlers) interfaces(ctx context.Context, rc *api.RequestContext, names []string) ([]interfaceRow, error) {
	timeout := time.Duration(rc.Config.IntOf(config.ConductorHeartbeatTimeout)) * time.Second
	rows, err := h.Store.ListHardwareTypeInterfaces(ctx, names, timeout)
	if err != nil {
		return nil, fmt.Errorf("hardware type interfaces: %w", err)
	}
	out := make([]interfaceRow, 0, len(rows))
	for _, r := range rows {
		out = append(out, interfaceRow{hw: r.HardwareType, kind: r.InterfaceType, name: r.InterfaceName, isDefault: r.Default})
	}
	return out, nil
}

func anyList(l []string) []any {
	out := make([]any, len(l))
	for i, s := range l {
		out[i] = s
	}
	return out
}

func (h *handlers) list(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	q, err := apiutil.ParseQuery(r, "type", "detail", "fields")
	if err != nil {
		return err
	}
	typ := q.Get("type")
	detail, err := collection.Boolean("detail", q.Get("detail"))
	if err != nil {
		return err
	}
	rawFields := q.Get("fields")
	fields := collection.StringList(rawFields)
	kwargs := map[string]any{}
	if typ != nil {
		kwargs["type"] = *typ
	}
	if detail != nil {
		kwargs["detail"] = *detail
	}
	if rawFields != nil {
		kwargs["fields"] = anyList(fields)
	}
	v := rc.Version
	if err := pickQuery(v, indexQuery, indexQuery77, indexQuery86).Validate(kwargs); err != nil {
		return err
	}
	isDetail := detail != nil && *detail
	if len(fields) > 0 && isDetail {
		return errs.InvalidParameterValue("Can not specify ?detail=True and fields in the same request.")
	}
	if (detail != nil || typ != nil) && !microversion.AllowDynamicDrivers.Allows(v) {
		// check_allow_driver_detail and check_allow_filter_driver_type name
		// the version, unlike the fields check below.
		return errs.NewMessage(errs.ClassNotAcceptable, fmt.Sprintf(
			"Request not acceptable. The minimal required API version should be 1.%d", microversion.Minor30DynamicDrivers))
	}
	if rawFields != nil && !v.AtLeast(microversion.Minor77DriverFieldsSelector) {
		return errs.NotAcceptable()
	}
	if typ != nil && *typ != "classic" && *typ != "dynamic" {
		return errs.NewMessage(errs.ClassInvalid, `"type" filter must be one of "classic" or "dynamic", if specified.`)
	}
	hw := map[string][]string{}
	if typ == nil || *typ == "dynamic" {
		if hw, err = h.activeHardwareTypes(r.Context(), rc); err != nil {
			return err
		}
	}
	names := make([]string, 0, len(hw))
	for n := range hw {
		names = append(names, n)
	}
	slices.Sort(names)
	var ifaces []interfaceRow
	if microversion.AllowDynamicDrivers.Allows(v) && isDetail {
		if ifaces, err = h.interfaces(r.Context(), rc, names); err != nil {
			return err
		}
	}
	items := make([]*apiutil.Dict, 0, len(names))
	for _, n := range names {
		var own []interfaceRow
		for _, i := range ifaces {
			if i.hw == n {
				own = append(own, i)
			}
		}
		var f []string
		if rawFields != nil {
			f = fields
		}
		d, err := h.convert(rc, n, hw[n], isDetail, own, f)
		if err != nil {
			return err
		}
		items = append(items, d)
	}
	out := apiutil.NewDict()
	out.Set("drivers", items)
	return api.WriteJSON(w, http.StatusOK, out)
}

func (h *handlers) show(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	q, err := apiutil.ParseQuery(r, "fields")
	if err != nil {
		return err
	}
	rawFields := q.Get("fields")
	fields := collection.StringList(rawFields)
	kwargs := map[string]any{}
	if rawFields != nil {
		kwargs["fields"] = anyList(fields)
	}
	v := rc.Version
	if err := pickQuery(v, showQuery, showQuery77, showQuery86).Validate(kwargs); err != nil {
		return err
	}
	if rawFields != nil && !v.AtLeast(microversion.Minor77DriverFieldsSelector) {
		return errs.NotAcceptable()
	}
	name := rc.Param("driver_name")
	hw, err := h.activeHardwareTypes(r.Context(), rc)
	if err != nil {
		return err
	}
	hosts, ok := hw[name]
	if !ok {
		return errs.New(errs.ClassDriverNotFound, map[string]any{"driver_name": name})
	}
	var ifaces []interfaceRow
	if microversion.AllowDynamicDrivers.Allows(v) {
		if ifaces, err = h.interfaces(r.Context(), rc, []string{name}); err != nil {
			return err
		}
	}
	var f []string
	if rawFields != nil {
		f = fields
	}
	d, err := h.convert(rc, name, hosts, true, ifaces, f)
	if err != nil {
		return err
	}
	return api.WriteJSON(w, http.StatusOK, d)
}

// cached answers from cache, or asks the conductor of the driver and
// keeps a successful answer.
func cached[T any](h *handlers, cache map[string]T, r *http.Request, name string, call func(topic string) (T, error)) (T, error) {
	h.mu.Lock()
	v, ok := cache[name]
	h.mu.Unlock()
	if ok {
		return v, nil
	}
	topic, err := h.Topics.GetTopicForDriver(r.Context(), name)
	if err != nil {
		var zero T
		return zero, err
	}
	v, err = call(topic)
	if err != nil {
		return v, err
	}
	h.mu.Lock()
	cache[name] = v
	h.mu.Unlock()
	return v, nil
}

func (h *handlers) properties(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	if _, err := apiutil.ParseQuery(r); err != nil {
		return err
	}
	name := rc.Param("driver_name")
	props, err := cached(h, h.props, r, name, func(topic string) (map[string]string, error) {
		return h.Conductor.GetDriverProperties(r.Context(), topic, name)
	})
	if err != nil {
		return err
	}
	return api.WriteJSON(w, http.StatusOK, props)
}

func (h *handlers) raidProperties(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	if _, err := apiutil.ParseQuery(r); err != nil {
		return err
	}
	name := rc.Param("driver_name")
	props, err := cached(h, h.raid, r, name, func(topic string) (map[string]string, error) {
		p, err := h.Conductor.GetRAIDLogicalDiskProperties(r.Context(), topic, name)
		// A driver without RAID support is not found here, as upstream.
		if e, ok := errs.As(err); ok && e.Class == errs.ClassUnsupportedDriverExtension {
			c := *e
			c.Code = http.StatusNotFound
			return nil, &c
		}
		return p, err
	})
	if err != nil {
		return err
	}
	return api.WriteJSON(w, http.StatusOK, props)
}

func (h *handlers) vendorMethods(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	if _, err := apiutil.ParseQuery(r); err != nil {
		return err
	}
	name := rc.Param("driver_name")
	methods, err := cached(h, h.methods, r, name, func(topic string) (map[string]map[string]any, error) {
		return h.Conductor.GetDriverVendorPassthruMethods(r.Context(), topic, name)
	})
	if err != nil {
		return err
	}
	return api.WriteJSON(w, http.StatusOK, methods)
}

// passthru is DriverPassthruController._default: the method named by
// ?method= or the path, the body handed to the driver as is.
func (h *handlers) passthru(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	q, err := apiutil.ParseQuery(r, "method")
	if err != nil {
		return err
	}
	method := rc.Param("method_name")
	if method == "" {
		m := q.Get("method")
		if m == nil {
			// wsme's check of the mandatory argument, before the method's
			// own check of an empty name below.
			return errs.MissingParameterValue("Missing mandatory parameter: method")
		}
		method = *m
	}
	if method == "" {
		return errs.ClientSideError("Method not specified", http.StatusBadRequest, "")
	}
	info := map[string]any{}
	if r.ContentLength != 0 {
		body, err := apiutil.DecodeBody(r)
		if err != nil {
			return err
		}
		switch b := apiutil.Plain(body).(type) {
		case map[string]any:
			info = b
		case nil:
		default:
			// The conductor's methods take keyword arguments: only an
			// object can carry them.
			return errs.InvalidParameterValue("Expected a JSON object for the vendor passthru data")
		}
	}
	name := rc.Param("driver_name")
	topic, err := h.Topics.GetTopicForDriver(r.Context(), name)
	if err != nil {
		return err
	}
	res, err := h.Conductor.DriverVendorPassthru(r.Context(), topic, rpc.DriverVendorPassthruArgs{
		DriverName: name, DriverMethod: method, HTTPMethod: r.Method, Info: info,
	})
	if err != nil {
		return err
	}
	return writePassthru(w, res)
}

// writePassthru is api_utils.vendor_passthru's answer: 202 for an
// asynchronous method (empty when it returns nothing), 200 otherwise; an
// attached return value is sent as the raw body.
func writePassthru(w http.ResponseWriter, res *rpc.VendorPassthruResult) error {
	status := http.StatusOK
	if res.Async {
		status = http.StatusAccepted
	}
	if res.Attach {
		var raw []byte
		switch v := res.Return.(type) {
		case string:
			raw = []byte(v)
		case []byte:
			raw = v
		default:
			return errors.New("vendor passthru: attached value is neither text nor bytes")
		}
		w.WriteHeader(status)
		_, err := w.Write(raw)
		return err
	}
	if res.Return == nil && status == http.StatusAccepted {
		api.WriteEmpty(w, status)
		return nil
	}
	return api.WriteJSON(w, status, res.Return)
}
