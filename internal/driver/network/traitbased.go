package network

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/google/uuid"

	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/store"
	"github.com/openkeel/ironic/internal/tbn"
)

// TraitBased is trait-based networking as the flat and neutron
// interfaces apply it (upstream's NeutronVIFPortIDMixin._vif_attach_tbn):
// with it, VIF attach lets the traits of the node's instance pick the
// ports instead of the usual free-port choice.
type TraitBased struct {
	// Traits is the file of [conductor]/trait_based_networking_config_file,
	// loaded when the conductor started.
	Traits *tbn.Loader
	// EnableDefaultTrait is [conductor]/trait_based_networking_enable_default_trait:
	// a node none of whose traits the file names gets CUSTOM_DEFAULT_TBN_TRAIT.
	EnableDefaultTrait bool
	// RaiseWhenNoMatch is [conductor]/trait_based_networking_raise_when_no_match:
	// fail the attach when no trait applies or nothing matched, rather than
	// log a warning and attach nothing.
	RaiseWhenNoMatch bool
}

// TraitBasedFromConfig reads the [conductor] trait-based networking
// options and, when enabled, loads the traits file as master's conductor
// does at start: a file that cannot be read or is invalid refuses the
// start with IncorrectConfiguration. Disabled, it returns nil.
func TraitBasedFromConfig(c *config.Config) (*TraitBased, error) {
	if !c.BoolOf(config.ConductorEnableTraitBasedNetworking) {
		return nil, nil
	}
	l, err := tbn.Start(c.StringOf(config.ConductorTraitBasedNetworkingConfigFile), nil)
	if err != nil {
		return nil, err
	}
	return &TraitBased{
		Traits:             l,
		EnableDefaultTrait: c.BoolOf(config.ConductorTraitBasedNetworkingEnableDefaultTrait),
		RaiseWhenNoMatch:   c.BoolOf(config.ConductorTraitBasedNetworkingRaiseWhenNoMatch),
	}, nil
}

// vifAttachTBN plans the attach from the node's traits and carries the
// plan out: each planned port or portgroup gets the VIF, each planned
// group of ports becomes a dynamic portgroup that gets it.
func (f *Flat) vifAttachTBN(ctx context.Context, task *driver.Task, vifInfo map[string]any, vif string) error {
	log := task.Logger()
	all, err := f.TBN.Traits.Traits()
	if err != nil {
		return err
	}
	traits := tbn.NodeTraits(task.Node, all)
	if len(traits) == 0 {
		switch {
		case f.TBN.EnableDefaultTrait:
			traits = []*tbn.NetworkTrait{tbn.DefaultTrait(all)}
		case f.TBN.RaiseWhenNoMatch:
			return errs.New(errs.ClassTBNNoTraitsApplicableToNode, map[string]any{"node": task.Node.UUID})
		default:
			log.Warn("_vif_attach_tbn: No applicable traits found for node. Trait Based Networking unable to plan networking actions without any traits.",
				"node", task.Node.UUID)
			return nil
		}
	}
	ports, pgs, err := f.load(ctx, task.Node)
	if err != nil {
		return err
	}
	var portLikes, groupLikes []tbn.PortLike
	for _, p := range ports {
		portLikes = append(portLikes, tbn.FromPort(p))
	}
	for _, pg := range pgs {
		groupLikes = append(groupLikes, tbn.FromPortgroup(pg))
	}
	plan, err := tbn.PlanVIFAttach(traits, task.Node.UUID, portLikes, groupLikes, vifInfo)
	if err != nil {
		return err
	}
	if tbn.AllNoMatch(plan) {
		if f.TBN.RaiseWhenNoMatch {
			return errs.New(errs.ClassTBNNoPortMatchesFound, map[string]any{"node": task.Node.UUID, "vif_id": vif})
		}
		log.Warn("_vif_attach_tbn: No trait generated networking actions to apply or ports to attach to the node.", "node", task.Node.UUID)
		return nil
	}
	for _, a := range plan {
		var err error
		switch a := a.(type) {
		case *tbn.NoMatch:
			continue
		case *tbn.AttachPortAction:
			if p := findPort(ports, a.PortUUID); p != nil {
				err = f.attachPortLike(ctx, task, portLike{port: p}, vif, ports)
			}
		case *tbn.AttachPortgroupAction:
			for _, pg := range pgs {
				if pg.UUID == a.PortgroupUUID {
					err = f.attachPortLike(ctx, task, portLike{pg: pg}, vif, ports)
				}
			}
		case *tbn.GroupAndAttachPortsAction:
			err = f.groupAndAttach(ctx, task, a.PortUUIDs, vif, ports)
		default:
			log.Warn("_vif_attach_tbn: Unhandled action encountered", "action", a.String())
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// findPort is the node's port the plan names; the plan names only ports
// it was given, so nil does not happen.
func findPort(ports []*model.Port, u string) *model.Port {
	for _, p := range ports {
		if p.UUID == u {
			return p
		}
	}
	return nil
}

// groupAndAttach makes the planned ports a new dynamic portgroup on the
// first one's physical network and attaches the VIF to it (upstream's
// GroupAndAttachPorts branch).
func (f *Flat) groupAndAttach(ctx context.Context, task *driver.Task, portUUIDs []string, vif string, ports []*model.Port) error {
	members := make([]*model.Port, 0, len(portUUIDs))
	for _, u := range portUUIDs {
		p := findPort(ports, u)
		if p == nil {
			return errs.NewMessage(errs.ClassNetworkError, fmt.Sprintf("A selected port for the dynamic portgroup was not found. Port %s could not be found.", u))
		}
		members = append(members, p)
	}
	pg, err := f.createDynamicPortgroup(ctx, task, members[0])
	if err != nil {
		return err
	}
	for _, p := range members {
		upd := *p
		upd.PortgroupID = &pg.ID
		if _, err := f.Ports.UpdatePort(ctx, &upd, "portgroup_id"); err != nil {
			msg := fmt.Sprintf("Could not update port to belong to dynamic portgroup. %v", store.Ironic(err, &upd))
			task.Logger().Error(msg)
			return errs.NewMessage(errs.ClassNetworkError, msg)
		}
		p.PortgroupID = &pg.ID
	}
	return f.attachPortLike(ctx, task, portLike{pg: pg}, vif, ports)
}

// dynamicNameAttempts is how many random names a dynamic portgroup tries.
const dynamicNameAttempts = 3

// createDynamicPortgroup is upstream's _create_dynamic_portgroup: named
// tbn_dyn_portgroup_ and eight random letters or digits, retried on a name
// collision.
func (f *Flat) createDynamicPortgroup(ctx context.Context, task *driver.Task, first *model.Port) (*model.Portgroup, error) {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	for range dynamicNameAttempts {
		suffix := make([]byte, 8)
		for i := range suffix {
			suffix[i] = alphabet[rand.IntN(len(alphabet))]
		}
		id := task.Node.ID
		pg := &model.Portgroup{
			UUID: uuid.NewString(), Name: model.Ptr("tbn_dyn_portgroup_" + string(suffix)),
			NodeID: &id, PhysicalNetwork: first.PhysicalNetwork,
			StandalonePortsSupported: model.Ptr(true), DynamicPortgroup: model.Ptr(true),
		}
		created, err := f.Ports.CreatePortgroup(ctx, pg)
		if err == nil {
			task.Logger().Info(fmt.Sprintf("Created dynamic portgroup '%s'", *pg.Name))
			return created, nil
		}
		err = store.Ironic(err, pg)
		var e *errs.Error
		if errors.As(err, &e) && e.Class == errs.ClassPortgroupDuplicateName {
			continue
		}
		msg := fmt.Sprintf("Could not create dynamic portgroup. %v", err)
		task.Logger().Error(msg)
		return nil, errs.NewMessage(errs.ClassNetworkError, msg)
	}
	return nil, errs.NewMessage(errs.ClassNetworkError, "Could not create dynamic portgroup due to duplicate name collisions despite several retries.")
}

// teardownDynamicPortgroup is upstream's _teardown_dynamic_portgroup: a
// dynamic portgroup lives only while its VIF is attached; its ports leave
// it and it is deleted.
func (f *Flat) teardownDynamicPortgroup(ctx context.Context, pg *model.Portgroup, ports []*model.Port) error {
	for _, p := range ports {
		if p.PortgroupID == nil || *p.PortgroupID != pg.ID {
			continue
		}
		upd := *p
		upd.PortgroupID = nil
		if _, err := f.Ports.UpdatePort(ctx, &upd, "portgroup_id"); err != nil {
			return fmt.Errorf("remove port %s from dynamic portgroup %s: %w", p.UUID, pg.UUID, store.Ironic(err, &upd))
		}
	}
	if err := f.Ports.DeletePortgroup(ctx, pg.ID); err != nil {
		return fmt.Errorf("delete dynamic portgroup %s: %w", pg.UUID, store.Ironic(err, pg))
	}
	return nil
}
