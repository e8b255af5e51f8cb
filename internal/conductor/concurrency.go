package conductor

import (
	"context"
	"fmt"

	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store"
)

// Actions whose start upstream's _concurrent_action_limit guards, named as
// its ConcurrentActionLimit message names them.
const (
	actionProvisioning   = "provisioning"
	actionUnprovisioning = "unprovisioning"
	actionCleaning       = "cleaning"
)

// concurrentActionLimit refuses to start a deploy, a tear down or a manual
// clean when [conductor]/max_concurrent_deploy (nodes deploying or waiting
// on the agent) or max_concurrent_clean (nodes deleting or cleaning) nodes
// are already there, as upstream's _concurrent_action_limit does before
// taking the node's lock: a guard against a flood of requests, so the
// request is refused (503 ConcurrentActionLimit, whose message leaves the
// limit out on purpose) rather than queued. With
// max_concurrent_per_conductor_group the nodes of this conductor's group
// are counted instead of every node. Upstream also calls it for service,
// where it limits nothing.
func (c *Conductor) concurrentActionLimit(ctx context.Context, action string) error {
	var (
		limit  int
		inStep []string
	)
	switch action {
	case actionProvisioning:
		limit = c.cfg.IntOf(config.ConductorMaxConcurrentDeploy)
		inStep = []string{states.Deploying, states.DeployWait}
	case actionUnprovisioning, actionCleaning:
		// Deleting lasts a moment, but a node can be put there: counting
		// it keeps a flood of tear downs from passing the limit.
		limit = c.cfg.IntOf(config.ConductorMaxConcurrentClean)
		inStep = []string{states.Deleting, states.Cleaning, states.CleanWait}
	default:
		return nil
	}
	f := store.NodeFilter{ProvisionStateIn: inStep, IncludeChildren: true}
	if c.cfg.BoolOf(config.ConductorMaxConcurrentPerConductorGroup) {
		group := c.group
		f.ConductorGroup = &group
	}
	// Only whether the limit is reached matters: read at most that many
	// ids rather than counting every node in the states.
	ids, err := c.store.ListNodeColumns(ctx, f, store.ListOptions{Limit: limit}, []string{"id"})
	if err != nil {
		return fmt.Errorf("count nodes %s: %w", action, err)
	}
	if len(ids) >= limit {
		return errs.New(errs.ClassConcurrentActionLimit, map[string]any{"task_type": action})
	}
	return nil
}
