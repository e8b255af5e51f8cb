package conductor

import (
	"context"
	"slices"
	"strings"

	"github.com/openkeel/ironic/internal/conductor/task"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/rpc"
)

// checkDeploymentBootMode refuses to deploy a node whose
// properties/boot_mode is one of [conductor]/disallowed_deployment_boot_modes
// (upstream validate_node), so that an operator can retire BIOS boot, say,
// fleet-wide: 400 BootModeNotAllowed.
func (c *Conductor) checkDeploymentBootMode(n *model.Node) error {
	disallowed := c.cfg.ListOf(config.ConductorDisallowedDeploymentBootModes)
	if len(disallowed) == 0 {
		return nil
	}
	mode, _ := n.Properties["boot_mode"].(string)
	mode = strings.ToLower(mode)
	if slices.Contains(disallowed, strings.TrimSpace(mode)) {
		return errs.New(errs.ClassBootModeNotAllowed, map[string]any{"mode": mode, "op": "provisioning"})
	}
	return nil
}

// Sources of the automatic lessee ([conductor]/automatic_lessee_source).
const (
	lesseeFromInstance = "instance"
	lesseeFromRequest  = "request"
)

// applyAutomaticLessee leases a node that is being deployed (not rebuilt)
// to the project it is deployed for, as upstream's apply_automatic_lessee:
// instance_info/project_id (set by Nova) with the source "instance", the
// caller's project with "request", nothing with "none" or when the
// deprecated [conductor]/automatic_lessee is false. A node that already
// has a lessee keeps it. driver_internal_info/automatic_lessee marks the
// lessee as ours, so that tear down removes it again. It reports whether
// the node changed.
func (c *Conductor) applyAutomaticLessee(ctx context.Context, t *task.Task) bool {
	if !c.cfg.BoolOf(config.ConductorAutomaticLessee) {
		return false
	}
	n := t.Node
	var project string
	switch c.cfg.StringOf(config.ConductorAutomaticLesseeSource) {
	case lesseeFromInstance:
		project, _ = n.InstanceInfo["project_id"].(string)
	case lesseeFromRequest:
		// The caller's project is in the RPC request context, which the
		// API sends with every call in-process as over JSON-RPC
		// (upstream's task.context.project_id); a call without one, as
		// upstream without a token's project, records no lessee.
		if rc := rpc.RequestContextFrom(ctx); rc != nil {
			project = rc.ProjectID
		}
	}
	if project == "" {
		t.Log().DebugContext(ctx, "could not automatically save lessee: no project for the node")
		return false
	}
	if n.Lessee != nil {
		t.Log().WarnContext(ctx, "could not automatically save lessee to node, which already has a lessee",
			"project", project, "lessee", *n.Lessee)
		return false
	}
	n.InternalInfo().Set(model.DIIAutomaticLessee, true)
	n.Lessee = &project
	return true
}
