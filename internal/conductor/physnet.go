package conductor

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
)

// validatePortPhysnet is upstream's validate_port_physnet, run when a port
// is created or its portgroup or physical network changes: every port of
// a portgroup is on the same physical network (None included), that of
// the portgroup's other ports, or when it has none the portgroup's own
// physical_network if set.
func (c *Conductor) validatePortPhysnet(ctx context.Context, port *model.Port) error {
	if port.PortgroupID == nil {
		return nil
	}
	members, err := c.store.ListPorts(ctx, portFilterByGroup(*port.PortgroupID), listAll())
	if err != nil {
		return fmt.Errorf("list ports of portgroup %d: %w", *port.PortgroupID, err)
	}
	// The set of the other members' physical networks; nil (Python's
	// None) is a member like any name.
	nets := map[string]*string{}
	for _, p := range members {
		if p.ID != port.ID {
			nets[physnetRepr(p.PhysicalNetwork)] = p.PhysicalNetwork
		}
	}
	var pg *model.Portgroup
	loadPG := func() (*model.Portgroup, error) {
		if pg != nil {
			return pg, nil
		}
		g, err := c.store.GetPortgroupByID(ctx, *port.PortgroupID)
		if err != nil {
			return nil, storeErr(err, "load portgroup")
		}
		pg = g
		return pg, nil
	}
	if len(nets) > 1 {
		g, err := loadPG()
		if err != nil {
			return err
		}
		names := make([]string, 0, len(nets))
		for k := range nets {
			names = append(names, k)
		}
		sort.Strings(names)
		return errs.New(errs.ClassPortgroupPhysnetInconsistent, map[string]any{
			"portgroup": g.UUID, "physical_networks": strings.Join(names, ", ")})
	}
	var want *string
	if len(nets) == 0 {
		g, err := loadPG()
		if err != nil {
			return err
		}
		if g.PhysicalNetwork == nil {
			return nil
		}
		want = g.PhysicalNetwork
	}
	for _, n := range nets {
		want = n
	}
	if physnetRepr(want) == physnetRepr(port.PhysicalNetwork) {
		return nil
	}
	g, err := loadPG()
	if err != nil {
		return err
	}
	return errs.NewMessage(errs.ClassConflict, fmt.Sprintf(
		"Port with physical network %s cannot become a member of port group %s which has ports in physical network %s.",
		physnetRepr(port.PhysicalNetwork), g.UUID, physnetRepr(want)))
}

// physnetRepr is a physical network as Python's %s prints it.
func physnetRepr(n *string) string {
	if n == nil {
		return "None"
	}
	return *n
}
