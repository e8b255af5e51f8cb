package port

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apiutil"
	"github.com/openkeel/ironic/internal/api/collection"
	"github.com/openkeel/ironic/internal/api/microversion"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/store"
)

// ovn90Fields are LOCAL_LINK_OVN_90_FIELDS.
var ovn90Fields = []string{"vtep-logical-switch", "vtep-physical-switch"}

func boolOr(b *bool, def bool) bool {
	if b == nil {
		return def
	}
	return *b
}

// portgroupUUID is the UUID of the port's portgroup, or nil.
func portgroupUUID(ctx context.Context, s store.Store, p *model.Port) (any, error) {
	if p.PortgroupID == nil {
		return nil, nil
	}
	pg, err := s.GetPortgroupByID(ctx, *p.PortgroupID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("portgroup of port %s: %w", p.UUID, err)
	}
	return pg.UUID, nil
}

// toDict is convert_with_links before sanitizing: every field of the port
// in upstream's order.
func (h *handlers) toDict(ctx context.Context, rc *api.RequestContext, p *model.Port) (*apiutil.Dict, error) {
	d := apiutil.RecordDict(p.UUID, p.CreatedAt, p.UpdatedAt)
	d.Set("address", apiutil.OptString(p.Address))
	d.Set("extra", apiutil.CopyEmptyMap(p.Extra))
	d.Set("internal_info", apiutil.CopyEmptyMap(p.InternalInfo))
	d.Set("is_smartnic", boolOr(p.IsSmartNIC, false))
	d.Set("local_link_connection", apiutil.CopyEmptyMap(p.LocalLinkConnection))
	d.Set("physical_network", apiutil.OptString(p.PhysicalNetwork))
	d.Set("pxe_enabled", boolOr(p.PXEEnabled, true))
	if p.NodeUUID == "" {
		d.Set("node_uuid", nil)
	} else {
		d.Set("node_uuid", p.NodeUUID)
	}
	d.Set("name", apiutil.OptString(p.Name))
	d.Set("description", apiutil.OptString(p.Description))
	d.Set("vendor", apiutil.OptString(p.Vendor))
	d.Set("category", apiutil.OptString(p.Category))
	d.Set("available_for_dynamic_portgroup", p.AvailableForDynamicPortgroup)
	d.Set("links", collection.SelfAndBookmark(rc.PublicURL, "ports", p.UUID))
	pg, err := portgroupUUID(ctx, h.Store, p)
	if err != nil {
		return nil, err
	}
	d.Set("portgroup_uuid", pg)
	return d, nil
}

// convert is convert_with_links: the port with only the requested fields
// (400 for fields a port does not have) and the fields of v.
func (h *handlers) convert(ctx context.Context, rc *api.RequestContext, p *model.Port, fields []string) (*apiutil.Dict, error) {
	d, err := h.toDict(ctx, rc, p)
	if err != nil {
		return nil, err
	}
	return apiutil.Checked(d, fields, func(d *apiutil.Dict) { sanitize(d, fields, rc.Version) })
}

// sanitize is port_sanitize: fields the version does not know hidden,
// then only the requested ones kept.
func sanitize(d *apiutil.Dict, fields []string, v microversion.Version) {
	hide := []struct {
		gate   microversion.Gate
		fields []string
	}{
		{microversion.AllowPortInternalInfo, []string{"internal_info"}},
		{microversion.AllowPortAdvancedNetFields, []string{"pxe_enabled", "local_link_connection"}},
		{microversion.AllowPortgroupsSubcontrollers, []string{"portgroup_uuid"}},
		{microversion.AllowPortPhysicalNetwork, []string{"physical_network"}},
		{microversion.AllowPortIsSmartnic, []string{"is_smartnic"}},
		{microversion.AllowPortName, []string{"name"}},
	}
	for _, x := range hide {
		if !x.gate.Allows(v) {
			for _, f := range x.fields {
				d.Delete(f)
			}
		}
	}
	// Clients of the versions without the OVN VTEP keys expect the key to
	// exist even when its value cannot be shown.
	if !microversion.AllowOvnVtepVersion.Allows(v) {
		if llc, ok := d.Get("local_link_connection"); ok {
			m, _ := llc.(map[string]any)
			for k := range m {
				if slices.Contains(ovn90Fields, k) {
					d.Set("local_link_connection", map[string]any{})
					break
				}
			}
		}
	}
	for _, x := range []struct {
		gate  microversion.Gate
		field string
	}{
		{microversion.AllowPortDescription, "description"},
		{microversion.AllowPortVendor, "vendor"},
		{microversion.AllowPortCategory, "category"},
		{microversion.AllowPortAvailableForDynamicPortgroup, "available_for_dynamic_portgroup"},
	} {
		if !x.gate.Allows(v) {
			d.Delete(x.field)
		}
	}
	d.KeepOnly(fields)
}

// checkAllowedFields is _check_allowed_port_fields: 406 for a field (or
// body key) the version does not have.
func checkAllowedFields(fields []string, v microversion.Version) error {
	gates := map[string]microversion.Gate{
		"pxe_enabled":                        microversion.AllowPortAdvancedNetFields,
		"local_link_connection":              microversion.AllowPortAdvancedNetFields,
		"portgroup_uuid":                     microversion.AllowPortgroupsSubcontrollers,
		"physical_network":                   microversion.AllowPortPhysicalNetwork,
		"is_smartnic":                        microversion.AllowPortIsSmartnic,
		"local_link_connection/network_type": microversion.AllowLocalLinkConnectionNetworkType,
		"name":                               microversion.AllowPortName,
		"description":                        microversion.AllowPortDescription,
		"vendor":                             microversion.AllowPortVendor,
		"category":                           microversion.AllowPortCategory,
		"available_for_dynamic_portgroup":    microversion.AllowPortAvailableForDynamicPortgroup,
	}
	for _, f := range fields {
		if g, ok := gates[f]; ok && !g.Allows(v) {
			return errNotAcceptable()
		}
	}
	return nil
}

// checkAllowedBody is _check_allowed_port_fields on a request body: its
// keys, and the local_link_connection keys of later versions.
func checkAllowedBody(m map[string]any, v microversion.Version) error {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	if err := checkAllowedFields(keys, v); err != nil {
		return err
	}
	if llc, ok := m["local_link_connection"].(map[string]any); ok {
		if _, has := llc["network_type"]; has && !microversion.AllowLocalLinkConnectionNetworkType.Allows(v) {
			return errNotAcceptable()
		}
		if _, has := llc["vtep-logical-switch"]; has && !microversion.AllowOvnVtepVersion.Allows(v) {
			return errNotAcceptable()
		}
	}
	return nil
}
