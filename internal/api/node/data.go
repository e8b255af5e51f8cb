package node

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apiutil"
	"github.com/openkeel/ironic/internal/api/collection"
	"github.com/openkeel/ironic/internal/api/microversion"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/store"
	"github.com/openkeel/ironic/internal/swift"
)

// The BIOS and firmware field lists of upstream's bios.py and firmware.py.
var (
	biosDefaultFields  = []string{"name", "value"}
	biosRegistryFields = []string{"name", "value", "attribute_type", "allowable_values", "lower_bound",
		"max_length", "min_length", "read_only", "reset_required", "unique", "upper_bound"}
	firmwareDefaultFields  = []string{"component", "initial_version", "current_version", "last_version_flashed"}
	firmwareIdentityFields = []string{"vendor", "model", "serial_number"}
)

func (h *handlers) inventory(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	if _, err := apiutil.ParseQuery(r); err != nil {
		return err
	}
	n, err := h.node(r, rc, "baremetal:node:inventory:get", rc.Param("node_ident"))
	if err != nil {
		return err
	}
	switch rc.Config.StringOf(config.InventoryDataBackend) {
	case "database":
	case "swift":
		h.swiftOnce.Do(func() { h.swift = swift.FromConfig(rc.Config) })
		inventory, pluginData, err := h.swift.InspectionData(r.Context(), rc.Config.StringOf(config.InventorySwiftDataContainer), n.UUID, h.Logger)
		if err != nil {
			return err
		}
		d := apiutil.NewDict()
		d.Set("inventory", inventory)
		d.Set("plugin_data", pluginData)
		return api.WriteJSON(w, http.StatusOK, d)
	default:
		return errs.New(errs.ClassNodeInventoryNotFound, map[string]any{"node": n.UUID})
	}
	inv, err := h.Store.GetNodeInventory(r.Context(), n.ID)
	if errors.Is(err, store.ErrNotFound) {
		// The database layer names the node by its id, and upstream lets
		// that through.
		return errs.New(errs.ClassNodeInventoryNotFound, map[string]any{"node": n.ID})
	}
	if err != nil {
		return fmt.Errorf("inventory of node %s: %w", n.UUID, err)
	}
	d := apiutil.NewDict()
	d.Set("inventory", inv.InventoryData)
	d.Set("plugin_data", inv.PluginData)
	return api.WriteJSON(w, http.StatusOK, d)
}

func anyList(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

func biosValue(s *model.BIOSSetting, f string) any {
	switch f {
	case "created_at":
		return apiutil.ISOTime(s.CreatedAt)
	case "updated_at":
		return apiutil.OptISOTime(s.UpdatedAt)
	case "name":
		return s.Name
	case "value":
		return apiutil.OptString(s.Value)
	case "attribute_type":
		return apiutil.OptString(s.AttributeType)
	case "allowable_values":
		if s.AllowableValues == nil {
			return []string{}
		}
		return s.AllowableValues
	case "lower_bound":
		if s.LowerBound == nil {
			return nil
		}
		return *s.LowerBound
	case "upper_bound":
		if s.UpperBound == nil {
			return nil
		}
		return *s.UpperBound
	case "max_length":
		return optInt(s.MaxLength)
	case "min_length":
		return optInt(s.MinLength)
	case "read_only":
		return optBool(s.ReadOnly)
	case "reset_required":
		return optBool(s.ResetRequired)
	case "unique":
		return optBool(s.Unique)
	}
	return nil
}

func optBool(b *bool) any {
	if b == nil {
		return nil
	}
	return *b
}

// biosSetting is bios.convert_with_links: object_to_dict without uuid.
func biosSetting(rc *api.RequestContext, nodeIdent string, s *model.BIOSSetting, fields []string) *apiutil.Dict {
	d := apiutil.NewDict()
	for _, f := range append([]string{"created_at", "updated_at"}, fields...) {
		if !d.Has(f) {
			d.Set(f, biosValue(s, f))
		}
	}
	d.Set("links", collection.SelfAndBookmark(rc.PublicURL, "nodes", nodeIdent+"/bios/"+s.Name))
	return d
}

// queryDoc is the keyword arguments a query schema sees: the query
// parameters in request order, as the handler's argument validators left
// them.
func queryDoc(r *http.Request, conv map[string]any) *apiutil.Dict {
	d := apiutil.NewDict()
	for _, kv := range strings.Split(r.URL.RawQuery, "&") {
		k, _, _ := strings.Cut(kv, "=")
		k, err := url.QueryUnescape(k)
		if err != nil || k == "" || d.Has(k) {
			continue
		}
		if v, ok := conv[k]; ok {
			d.Set(k, v)
		} else {
			d.Set(k, r.URL.Query().Get(k))
		}
	}
	return d
}

// biosQuerySchema is the query schema of NodeBiosController.get_all at v.
func biosQuerySchema(v microversion.Version) string {
	if v.Minor >= microversion.Minor74BiosRegistry {
		return "bios_index_request_query_v74"
	}
	return "bios_index_request_query"
}

func (h *handlers) listBIOS(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	q, err := apiutil.ParseQuery(r, "fields", "detail")
	if err != nil {
		return err
	}
	rawFields := q.Get("fields")
	fields := collection.StringList(rawFields)
	detail, err := collection.Boolean("detail", q.Get("detail"))
	if err != nil {
		return err
	}
	conv := map[string]any{}
	if fields != nil {
		conv["fields"] = anyList(fields)
	}
	if detail != nil {
		conv["detail"] = *detail
	}
	if err := apiutil.MustRequestSchema(biosQuerySchema(rc.Version)).Validate(queryDoc(r, conv)); err != nil {
		return err
	}
	ident := rc.Param("node_ident")
	n, err := h.node(r, rc, "baremetal:node:bios:get", ident)
	if err != nil {
		return err
	}
	fields, err = collection.ReturnFields(fields, rawFields, detail, q.Get("detail"), biosDefaultFields,
		microversion.AllowQueryBios.Allows(rc.Version), func() bool { return microversion.AllowQueryBios.Allows(rc.Version) })
	if err != nil {
		return err
	}
	if detail != nil && *detail {
		fields = biosRegistryFields
	}
	settings, err := h.Store.ListBIOSSettings(r.Context(), n.ID)
	if err != nil {
		return fmt.Errorf("BIOS settings of node %s: %w", n.UUID, err)
	}
	items := make([]*apiutil.Dict, 0, len(settings))
	for i := range settings {
		items = append(items, biosSetting(rc, ident, &settings[i], fields))
	}
	d := apiutil.NewDict()
	d.Set("bios", items)
	return api.WriteJSON(w, http.StatusOK, d)
}

func (h *handlers) getBIOS(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	if err := apiutil.MustRequestSchema("bios_show_request_query").Validate(queryDoc(r, nil)); err != nil {
		return err
	}
	n, err := h.node(r, rc, "baremetal:node:bios:get", rc.Param("node_ident"))
	if err != nil {
		return err
	}
	name := rc.Param("bios_setting")
	s, err := h.Store.GetBIOSSetting(r.Context(), n.ID, name)
	if errors.Is(err, store.ErrNotFound) {
		return errs.New(errs.ClassBIOSSettingNotFound, map[string]any{"node": n.UUID, "name": name})
	}
	if err != nil {
		return fmt.Errorf("BIOS setting %s of node %s: %w", name, n.UUID, err)
	}
	fields := biosDefaultFields
	if microversion.AllowQueryBios.Allows(rc.Version) {
		fields = biosRegistryFields
	}
	d := apiutil.NewDict()
	d.Set(name, biosSetting(rc, n.UUID, s, fields))
	return api.WriteJSON(w, http.StatusOK, d)
}

func firmwareValue(c *model.FirmwareComponent, f string) any {
	switch f {
	case "created_at":
		return apiutil.ISOTime(c.CreatedAt)
	case "updated_at":
		return apiutil.OptISOTime(c.UpdatedAt)
	case "component":
		return c.Component
	case "initial_version":
		return c.InitialVersion
	case "current_version":
		return apiutil.OptString(c.CurrentVersion)
	case "last_version_flashed":
		return apiutil.OptString(c.LastVersionFlashed)
	case "vendor":
		return apiutil.OptString(c.Vendor)
	case "model":
		return apiutil.OptString(c.Model)
	case "serial_number":
		return apiutil.OptString(c.SerialNumber)
	}
	return nil
}

func (h *handlers) listFirmware(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	q, err := apiutil.ParseQuery(r, "fields", "detail")
	if err != nil {
		return err
	}
	rawFields := q.Get("fields")
	fields := collection.StringList(rawFields)
	conv := map[string]any{}
	if fields != nil {
		conv["fields"] = anyList(fields)
	}
	// Upstream validates only fields before its query schema, so detail
	// reaches the schema as the string the client sent.
	if err := apiutil.MustRequestSchema("firmware_index_request_query").Validate(queryDoc(r, conv)); err != nil {
		return err
	}
	detail, err := collection.Boolean("detail", q.Get("detail"))
	if err != nil {
		return err
	}
	n, err := h.node(r, rc, "baremetal:node:firmware:get", rc.Param("node_ident"))
	if err != nil {
		return err
	}
	defaults := firmwareDefaultFields
	if microversion.AllowFirmwareIdentity.Allows(rc.Version) {
		defaults = slices.Concat(firmwareDefaultFields, firmwareIdentityFields)
	} else if fields != nil {
		var bad []string
		for _, f := range fields {
			if slices.Contains(firmwareIdentityFields, f) && !slices.Contains(bad, f) {
				bad = append(bad, f)
			}
		}
		if len(bad) > 0 {
			sort.Strings(bad)
			return errs.InvalidParameterValue(fmt.Sprintf("Fields %s are not allowed in this API version. They require at least API version 1.%d.",
				strings.Join(bad, ", "), microversion.Minor114FirmwareIdentity))
		}
	}
	fields, err = collection.ReturnFields(fields, rawFields, detail, q.Get("detail"), defaults, true, nil)
	if err != nil {
		return err
	}
	comps, err := h.Store.ListFirmwareComponents(r.Context(), n.ID)
	if err != nil {
		return fmt.Errorf("firmware of node %s: %w", n.UUID, err)
	}
	items := make([]*apiutil.Dict, 0, len(comps))
	for _, c := range comps {
		d := apiutil.NewDict()
		for _, f := range append([]string{"created_at", "updated_at"}, fields...) {
			if !d.Has(f) {
				d.Set(f, firmwareValue(c, f))
			}
		}
		items = append(items, d)
	}
	out := apiutil.NewDict()
	out.Set("firmware", items)
	return api.WriteJSON(w, http.StatusOK, out)
}

// children is NodeChildrenController.get_all: the UUIDs of the node's
// children visible to the caller; a parent the caller may not see is 404.
func (h *handlers) children(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	if _, err := apiutil.ParseQuery(r); err != nil {
		return err
	}
	n, err := h.node(r, rc, "baremetal:node:get", rc.Param("node_ident"))
	if err != nil {
		if errs.Status(err) == http.StatusForbidden {
			return errs.HTTPStatusNoDetail(http.StatusNotFound)
		}
		return err
	}
	f := store.NodeFilter{ParentNode: &n.UUID}
	if h.Project != nil {
		f.Project = h.Project(r)
	}
	nodes, err := h.Store.ListNodes(r.Context(), f, store.ListOptions{})
	if err != nil {
		return fmt.Errorf("children of node %s: %w", n.UUID, err)
	}
	ids := make([]string, 0, len(nodes))
	for _, c := range nodes {
		ids = append(ids, c.UUID)
	}
	d := apiutil.NewDict()
	d.Set("children", ids)
	d.Set("links", collection.MakeLink("children", rc.PublicURL, "nodes", "?parent_node="+n.UUID, false))
	return api.WriteJSON(w, http.StatusOK, d)
}
