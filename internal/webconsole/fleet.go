package webconsole

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sort"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/store"
)

// NodeCounter is the part of store.Store the fleet counts read.
type NodeCounter interface {
	CountFleet(ctx context.Context, f store.NodeFilter) ([]store.FleetCount, error)
}

// Fleet counts nodes for the overview page.
type Fleet struct {
	// Nodes is the node table.
	Nodes NodeCounter
	// ListProject is the node list policy (authz.ListProject with
	// "node"): nil when the caller may list every node, the project it
	// is limited to otherwise, or the refusal the API's node list gives.
	ListProject func(r *http.Request) (*string, error)
	// Log records the database failures answered 503.
	Log *slog.Logger
}

// Counts are the fleet's node counts, as the overview shows them.
type Counts struct {
	// Total is the number of nodes counted.
	Total int `json:"total"`
	// ProvisionState counts nodes by provision state.
	ProvisionState map[string]int `json:"provision_state"`
	// PowerState counts nodes by power state; "" is unknown (null).
	PowerState map[string]int `json:"power_state"`
	// Maintenance is the number of nodes in maintenance.
	Maintenance int `json:"maintenance"`
	// Fault counts nodes by fault ("power failure", "clean failure"…);
	// nodes without a fault are not counted.
	Fault map[string]int `json:"fault"`
}

// FleetView is the body of GET /openkeel/v1/fleet.
type FleetView struct {
	Counts
	// ConductorGroups are the same counts per conductor group, "" being
	// the default group, sorted by name.
	ConductorGroups []GroupCounts `json:"conductor_groups"`
}

// GroupCounts are one conductor group's counts.
type GroupCounts struct {
	Name string `json:"name"`
	Counts
}

func newCounts() Counts {
	return Counts{ProvisionState: map[string]int{}, PowerState: map[string]int{}, Fault: map[string]int{}}
}

func (c *Counts) add(n store.FleetCount) {
	k := int(n.Count)
	c.Total += k
	c.ProvisionState[n.ProvisionState] += k
	c.PowerState[n.PowerState] += k
	if n.Maintenance {
		c.Maintenance += k
	}
	if n.Fault != "" {
		c.Fault[n.Fault] += k
	}
}

// Count is the fleet view of the nodes of project (every node when nil).
// Child nodes are counted: each is a machine the fleet holds. The database
// counts (GROUP BY); the groups are summed here.
func (f *Fleet) Count(ctx context.Context, project *string) (*FleetView, error) {
	nodes, err := f.Nodes.CountFleet(ctx, store.NodeFilter{Project: project, IncludeChildren: true})
	if err != nil {
		return nil, fmt.Errorf("count nodes: %w", err)
	}
	v := &FleetView{Counts: newCounts()}
	groups := map[string]*GroupCounts{}
	for _, n := range nodes {
		v.add(n)
		g := groups[n.ConductorGroup]
		if g == nil {
			g = &GroupCounts{Name: n.ConductorGroup, Counts: newCounts()}
			groups[n.ConductorGroup] = g
		}
		g.add(n)
	}
	v.ConductorGroups = make([]GroupCounts, 0, len(groups))
	for _, g := range groups {
		v.ConductorGroups = append(v.ConductorGroups, *g)
	}
	sort.Slice(v.ConductorGroups, func(i, j int) bool { return v.ConductorGroups[i].Name < v.ConductorGroups[j].Name })
	return v, nil
}

// serve answers GET with the counts of the nodes the caller may list,
// refusing as the API's node list refuses.
func (f *Fleet) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", "GET")
		errs.WriteFault(w, r, errs.Abort(http.StatusMethodNotAllowed), errs.FaultOptions{Routing: true})
		return
	}
	project, err := f.ListProject(r)
	if err != nil {
		errs.WriteFault(w, r, err, errs.FaultOptions{})
		return
	}
	v, err := f.Count(r.Context(), project)
	if err != nil {
		if f.Log != nil {
			f.Log.ErrorContext(r.Context(), "fleet counts", "error", err)
		}
		errs.WriteFault(w, r, errs.Unavailable(err), errs.FaultOptions{})
		return
	}
	writeJSON(w, http.StatusOK, v)
}
