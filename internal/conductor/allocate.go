package conductor

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/openkeel/ironic/internal/conductor/task"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/rpc/ovo"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store"
)

// allocationFailed is upstream's AllocationFailed, carried to the
// allocation's last_error.
type allocationFailed struct{ msg string }

func (e *allocationFailed) Error() string { return e.msg }

// CreateAllocation stores a new allocation owned by this conductor
// (upstream create_allocation). With a node_id it backfills the
// allocation of an active node at once; otherwise do_allocate runs in a
// worker and the allocation is returned in state allocating.
func (c *Conductor) CreateAllocation(ctx context.Context, _ string, allocation *model.Allocation) (*model.Allocation, error) {
	a := *allocation
	id := c.ID()
	if id != 0 {
		a.ConductorAffinity = &id
	}
	nodeID := a.NodeID
	a.NodeID = nil
	if a.State == "" {
		a.State = states.Allocating
	}
	a.Version = c.objects.Version(ovo.AllocationClass)
	created, err := c.store.CreateAllocation(ctx, &a)
	if err != nil {
		return nil, storeErr(err, "create allocation")
	}
	if nodeID != nil && *nodeID != 0 {
		if err := c.backfillAllocation(ctx, created, *nodeID); err != nil {
			return nil, err
		}
		return c.getAllocation(ctx, created.ID)
	}
	clone := *created
	if err := c.pool.Spawn(context.WithoutCancel(ctx), func(ctx context.Context) { c.doAllocate(ctx, &clone) }, true); err != nil {
		return nil, err
	}
	return created, nil
}

func (c *Conductor) getAllocation(ctx context.Context, id int64) (*model.Allocation, error) {
	a, err := c.store.GetAllocationByID(ctx, id)
	if err != nil {
		return nil, storeErr(err, "load allocation")
	}
	return a, nil
}

// DestroyAllocation deletes an allocation, refusing (outside maintenance)
// when its node is active or in a state where updates are not allowed
// (upstream destroy_allocation).
func (c *Conductor) DestroyAllocation(ctx context.Context, _ string, allocation *model.Allocation) error {
	if allocation.NodeID != nil && *allocation.NodeID != 0 {
		t, err := c.tasks.Acquire(ctx, fmt.Sprint(*allocation.NodeID), task.AcquireOptions{Purpose: "allocation deletion", NoDriver: true})
		if err != nil {
			return err
		}
		defer t.Release()
		n := t.Node
		if !n.Maintenance {
			if n.TargetProvisionState != "" && !states.UpdateAllowedStates.Contains(n.ProvisionState) {
				return errs.NewMessage(errs.ClassInvalidState, fmt.Sprintf(
					"Cannot remove allocation %s for node %s, because the node is in state %s where updates are not allowed (and maintenance mode is off)",
					allocation.UUID, n.UUID, n.ProvisionState))
			}
			if n.ProvisionState == states.Active {
				return errs.NewMessage(errs.ClassInvalidState, fmt.Sprintf(
					"Cannot remove allocation %s for node %s, because the node is active (and maintenance mode is off)", allocation.UUID, n.UUID))
			}
		}
	}
	if err := c.store.DeleteAllocation(ctx, allocation.ID); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return errs.New(errs.ClassAllocationNotFound, map[string]any{"allocation": allocation.UUID})
		}
		return fmt.Errorf("delete allocation %s: %w", allocation.UUID, err)
	}
	return nil
}

// doAllocate finds a node for the allocation (upstream do_allocate); it
// reports failures in the allocation, never to a caller.
func (c *Conductor) doAllocate(ctx context.Context, a *model.Allocation) {
	nodes, err := c.candidateNodes(ctx, a)
	if err == nil {
		err = c.allocateNode(ctx, a, nodes)
	}
	if err == nil {
		return
	}
	var af *allocationFailed
	reason := err.Error()
	if !errors.As(err, &af) {
		reason = "Unexpected exception during allocation: " + reason
	}
	c.allocationFailed(ctx, a, reason)
}

func (c *Conductor) allocationFailed(ctx context.Context, a *model.Allocation, reason string) {
	a.NodeID = nil
	a.State = states.Error
	a.LastError = &reason
	if _, err := c.store.UpdateAllocation(ctx, a, "node_id", "state", "last_error"); err != nil {
		c.log.ErrorContext(ctx, "record allocation failure", "allocation", a.UUID, "error", err)
	}
}

func failAllocation(a *model.Allocation, msg string) error {
	return &allocationFailed{msg: fmt.Sprintf("Failed to process allocation %s: %s.", a.UUID, msg)}
}

// candidateNodes lists available, unassociated nodes of the resource
// class (and candidate list, owner and traits), shuffled so parallel
// allocations try different orders, a node named like the allocation
// first.
func (c *Conductor) candidateNodes(ctx context.Context, a *model.Allocation) ([]*model.Node, error) {
	avail := states.Available
	f := store.NodeFilter{
		ResourceClass: a.ResourceClass, ProvisionState: &avail, Associated: boolPtr(false),
		WithPowerState: boolPtr(true), Maintenance: boolPtr(false), IncludeChildren: true,
	}
	if len(a.CandidateNodes) > 0 {
		f.UUIDIn = a.CandidateNodes
	}
	if a.Owner != nil {
		f.Project = a.Owner
	}
	nodes, err := c.store.ListNodes(ctx, f, store.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list candidate nodes: %w", err)
	}
	rc := derefStr(a.ResourceClass)
	if len(nodes) == 0 {
		if len(a.CandidateNodes) > 0 {
			return nil, failAllocation(a, "none of the requested nodes are available and match the resource class "+rc)
		}
		return nil, failAllocation(a, "no available nodes match the resource class "+rc)
	}
	if len(a.Traits) > 0 {
		nodes = filterNodes(nodes, func(n *model.Node) bool { return hasTraits(n, a.Traits) })
		if len(nodes) == 0 {
			return nil, failAllocation(a, "no suitable nodes have the requested traits "+strings.Join(a.Traits, ", "))
		}
	}
	rand.Shuffle(len(nodes), func(i, j int) { nodes[i], nodes[j] = nodes[j], nodes[i] })
	if a.Name != nil {
		for i, n := range nodes {
			if n.Name != nil && *n.Name == *a.Name {
				nodes = append([]*model.Node{n}, append(nodes[:i:i], nodes[i+1:]...)...)
				break
			}
		}
	}
	return nodes, nil
}

func filterNodes(nodes []*model.Node, keep func(*model.Node) bool) []*model.Node {
	var out []*model.Node
	for _, n := range nodes {
		if keep(n) {
			out = append(out, n)
		}
	}
	return out
}

func hasTraits(n *model.Node, want []string) bool {
	for _, t := range want {
		if !containsStr(n.Traits, t) {
			return false
		}
	}
	return true
}

// allocateNode locks the candidates in turn (no lock retry) and binds the
// first that still fits; locked ones are retried
// node_locked_retry_attempts times, node_locked_retry_interval apart.
func (c *Conductor) allocateNode(ctx context.Context, a *model.Allocation, nodes []*model.Node) error {
	attempts := c.cfg.IntOf(config.ConductorNodeLockedRetryAttempts)
	if attempts < 1 {
		attempts = 1
	}
	var lastErr error
	for try := 0; try < attempts; try++ {
		if try > 0 {
			if err := c.clock.Sleep(ctx, c.cfg.DurationOf(config.ConductorNodeLockedRetryInterval)); err != nil {
				return err
			}
		}
		var retry []*model.Node
		for _, n := range nodes {
			done, err := c.tryAllocate(ctx, a, n)
			switch {
			case err == nil && done:
				return nil
			case errs.Is(err, errs.ClassNodeLocked):
				retry = append(retry, n)
			case err != nil && !errs.Is(err, errs.ClassNodeAssociated) && !errs.Is(err, errs.ClassInstanceAssociated):
				c.log.WarnContext(ctx, "allocation candidate failed", "node", n.UUID, "error", err)
			}
		}
		nodes = retry
		if len(nodes) > 0 {
			lastErr = failAllocation(a, fmt.Sprintf("could not reserve any of %d suitable nodes", len(nodes)))
		} else {
			return failAllocation(a, "all nodes were filtered out during reservation")
		}
	}
	return lastErr
}

func (c *Conductor) tryAllocate(ctx context.Context, a *model.Allocation, n *model.Node) (bool, error) {
	t, err := c.tasks.Acquire(ctx, n.UUID, task.AcquireOptions{Purpose: "allocating", NoRetry: true, NoDriver: true})
	if err != nil {
		return false, err
	}
	defer t.Release()
	cur := t.Node
	if cur.Maintenance || cur.InstanceUUID != nil || cur.ProvisionState != states.Available ||
		derefStr(cur.ResourceClass) != derefStr(a.ResourceClass) || (len(a.Traits) > 0 && !hasTraits(cur, a.Traits)) {
		return false, nil
	}
	id := cur.ID
	a.NodeID = &id
	a.State = states.Active
	if _, err := c.store.UpdateAllocation(ctx, a, "node_id", "state"); err != nil {
		a.NodeID = nil
		a.State = states.Allocating
		return false, storeErr(err, "bind allocation "+a.UUID)
	}
	t.Log().InfoContext(ctx, "node has been successfully reserved for allocation", "allocation", a.UUID)
	return true, nil
}

// backfillAllocation binds an allocation to an already active node
// (upstream backfill_allocation).
func (c *Conductor) backfillAllocation(ctx context.Context, a *model.Allocation, nodeID int64) error {
	err := func() error {
		t, err := c.tasks.Acquire(ctx, fmt.Sprint(nodeID), task.AcquireOptions{Purpose: "allocation backfilling", NoDriver: true})
		if err != nil {
			return err
		}
		defer t.Release()
		n := t.Node
		var problems []string
		if n.ProvisionState != states.Active {
			problems = append(problems, fmt.Sprintf("Node must be in the \"active\" state, but the current state is \"%s\"", n.ProvisionState))
		}
		if a.ResourceClass != nil && derefStr(n.ResourceClass) != *a.ResourceClass {
			problems = append(problems, fmt.Sprintf("Resource class %s does not match the requested resource class %s", pyNone(derefStr(n.ResourceClass)), *a.ResourceClass))
		}
		if len(a.Traits) > 0 && !hasTraits(n, a.Traits) {
			problems = append(problems, fmt.Sprintf("List of traits %s does not match the requested traits %s", pyRepr(n.Traits), pyRepr(a.Traits)))
		}
		if len(a.CandidateNodes) > 0 && !containsStr(a.CandidateNodes, n.UUID) {
			problems = append(problems, fmt.Sprintf("Candidate nodes must be empty or contain the target node, but got %s", pyRepr(a.CandidateNodes)))
		}
		if len(problems) > 0 {
			return failAllocation(a, fmt.Sprintf("Cannot backfill an allocation for node %s: %s", n.UUID, strings.Join(problems, "; ")))
		}
		id := n.ID
		a.NodeID = &id
		a.State = states.Active
		if _, err := c.store.UpdateAllocation(ctx, a, "node_id", "state"); err != nil {
			a.NodeID = nil
			return storeErr(err, "bind allocation "+a.UUID)
		}
		return nil
	}()
	if err == nil {
		return nil
	}
	var af *allocationFailed
	if errors.As(err, &af) {
		c.allocationFailed(ctx, a, af.msg)
		return errs.NewMessage(errs.ClassAllocationFailed, af.msg)
	}
	c.allocationFailed(ctx, a, err.Error())
	return err
}

// CheckOrphanAllocations takes over the allocations dead conductors left
// in allocating and processes them (upstream _check_orphan_allocations).
func (c *Conductor) CheckOrphanAllocations(ctx context.Context) {
	me := c.ID()
	if me == 0 {
		return
	}
	for _, host := range c.offlineConductors(ctx) {
		cond, err := c.store.GetConductor(ctx, host, nil)
		if err != nil {
			continue
		}
		state := states.Allocating
		id := cond.ID
		list, err := c.store.ListAllocations(ctx, store.AllocationFilter{State: &state, ConductorAffinity: &id}, store.ListOptions{})
		if err != nil {
			c.log.ErrorContext(ctx, "list orphan allocations", "error", err)
			continue
		}
		for _, a := range list {
			ok, err := c.store.TakeOverAllocation(ctx, a.ID, id, me)
			if err != nil || !ok {
				continue
			}
			a.ConductorAffinity = &me
			c.doAllocate(ctx, a)
		}
	}
}
