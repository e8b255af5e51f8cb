package portgroup

import (
	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apiutil"
	"github.com/openkeel/ironic/internal/api/collection"
	"github.com/openkeel/ironic/internal/api/microversion"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
)

func boolOr(b *bool, def bool) bool {
	if b == nil {
		return def
	}
	return *b
}

// toDict is convert_with_links before sanitizing: every field of the
// portgroup in upstream's order, with the links to its ports.
func toDict(rc *api.RequestContext, pg *model.Portgroup) *apiutil.Dict {
	d := apiutil.NewDict()
	d.Set("uuid", pg.UUID)
	d.Set("created_at", apiutil.ISOTime(pg.CreatedAt))
	d.Set("updated_at", apiutil.OptISOTime(pg.UpdatedAt))
	d.Set("address", apiutil.OptString(pg.Address))
	d.Set("extra", apiutil.CopyEmptyMap(pg.Extra))
	d.Set("internal_info", apiutil.CopyEmptyMap(pg.InternalInfo))
	d.Set("mode", apiutil.OptString(pg.Mode))
	d.Set("name", apiutil.OptString(pg.Name))
	d.Set("properties", apiutil.CopyEmptyMap(pg.Properties))
	d.Set("standalone_ports_supported", boolOr(pg.StandalonePortsSupported, true))
	if pg.NodeUUID == "" {
		d.Set("node_uuid", nil)
	} else {
		d.Set("node_uuid", pg.NodeUUID)
	}
	d.Set("physical_network", apiutil.OptString(pg.PhysicalNetwork))
	d.Set("category", apiutil.OptString(pg.Category))
	d.Set("dynamic_portgroup", boolOr(pg.DynamicPortgroup, false))
	d.Set("links", collection.SelfAndBookmark(rc.PublicURL, "portgroups", pg.UUID))
	d.Set("ports", collection.SelfAndBookmark(rc.PublicURL, "portgroups", pg.UUID+"/ports"))
	return d
}

// convert is convert_with_links: 400 for fields a portgroup does not
// have, then portgroup_sanitize.
func convert(rc *api.RequestContext, pg *model.Portgroup, fields []string) (*apiutil.Dict, error) {
	d := toDict(rc, pg)
	if err := apiutil.CheckFields(d, fields); err != nil {
		return nil, err
	}
	sanitize(d, fields, rc.Version)
	return d, nil
}

// sanitize is portgroup_sanitize: the fields of later versions hidden
// (hide_fields_in_newer_versions), then only the requested ones kept.
func sanitize(d *apiutil.Dict, fields []string, v microversion.Version) {
	for _, x := range []struct {
		gate   microversion.Gate
		fields []string
	}{
		{microversion.AllowPortgroupModeProperties, []string{"mode", "properties"}},
		{microversion.AllowPortgroupPhysicalNetwork, []string{"physical_network"}},
		{microversion.AllowPortgroupCategory, []string{"category"}},
		{microversion.AllowPortgroupDynamicPortgroup, []string{"dynamic_portgroup"}},
	} {
		if !x.gate.Allows(v) {
			for _, f := range x.fields {
				d.Delete(f)
			}
		}
	}
	d.KeepOnly(fields)
}

// checkAllowedFields is check_allowed_portgroup_fields: 406 for mode,
// properties or dynamic_portgroup before their versions. Upstream does
// not gate physical_network and category here: asking for them early
// yields a portgroup without them.
func checkAllowedFields(fields []string, v microversion.Version) error {
	for _, f := range fields {
		switch f {
		case "mode", "properties":
			if !microversion.AllowPortgroupModeProperties.Allows(v) {
				return errs.NotAcceptable()
			}
		case "dynamic_portgroup":
			if !microversion.AllowPortgroupDynamicPortgroup.Allows(v) {
				return errs.NotAcceptable()
			}
		}
	}
	return nil
}
