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
	d := apiutil.RecordDict(pg.UUID, pg.CreatedAt, pg.UpdatedAt)
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
	return apiutil.Checked(d, fields, func(d *apiutil.Dict) { sanitize(d, fields, rc.Version) })
}

// sanitize is portgroup_sanitize: the fields of later versions hidden
// (hide_fields_in_newer_versions), then only the requested ones kept.
func sanitize(d *apiutil.Dict, fields []string, v microversion.Version) {
	hideNewer(d, v, append([]gatedFields{{microversion.AllowPortgroupModeProperties, []string{"mode", "properties"}}}, sinceRelease...))
	d.KeepOnly(fields)
}

// sanitizeListed is what upstream does to a listed portgroup: only the
// requested fields kept (sanitize_dict), so mode and properties show in
// lists before 1.26, as Ironic 21.4 answers. The fields added after that
// release are hidden before their versions all the same: master leaves
// them in lists at every version, but a client of those versions never
// saw them from 21.4, which lacks them, and master's single GET hides
// them.
func sanitizeListed(d *apiutil.Dict, fields []string, v microversion.Version) {
	hideNewer(d, v, sinceRelease)
	d.KeepOnly(fields)
}

// gatedFields are fields a version gate hides below its version.
type gatedFields struct {
	gate   microversion.Gate
	fields []string
}

// sinceRelease are the portgroup fields added after Ironic 21.4 (1.82).
var sinceRelease = []gatedFields{
	{microversion.AllowPortgroupPhysicalNetwork, []string{"physical_network"}},
	{microversion.AllowPortgroupCategory, []string{"category"}},
	{microversion.AllowPortgroupDynamicPortgroup, []string{"dynamic_portgroup"}},
}

func hideNewer(d *apiutil.Dict, v microversion.Version, gated []gatedFields) {
	for _, x := range gated {
		if !x.gate.Allows(v) {
			for _, f := range x.fields {
				d.Delete(f)
			}
		}
	}
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
