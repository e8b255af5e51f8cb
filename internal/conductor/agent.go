package conductor

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/openkeel/ironic/internal/conductor/task"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/rpc"
	"github.com/openkeel/ironic/internal/store"
)

// Heartbeat relays an agent heartbeat to the deploy interface in a worker
// that never uses the reserved share (upstream heartbeat). The agent
// token is compared in constant time.
func (c *Conductor) Heartbeat(ctx context.Context, _ string, args rpc.HeartbeatArgs) error {
	if args.AgentVersion == "" && args.AgentStatus == "" {
		return errs.InvalidParameterValue("Agent did not transmit a version, and a version is required. Please update the agent being used.")
	}
	// Upstream takes a shared lock here and upgrades it in the worker,
	// reading the node twice. The exclusive lock is tried first: it reads
	// the node once, in the reservation's transaction, and the worker's
	// upgrade has nothing left to do (issue 29: the reads were a fifth of
	// a heartbeat). A node another holds gets upstream's shared path.
	//
	// Where the node alone shows that the worker would only record the
	// agent's fields, they are recorded in that same transaction and no
	// lock is left taken: one write instead of the reservation and the
	// save with the release, and the same node in the database after it.
	// A certificate to store is a file written first: that heartbeat
	// takes the lock as before.
	var t *task.Task
	var err error
	if args.AgentVerifyCA == "" {
		var recorded *model.Node
		t, recorded, err = c.tasks.ReserveOrUpdate(ctx, args.NodeID, task.AcquireOptions{Purpose: "heartbeat", NoRetry: true}, func(n *model.Node) (store.NodeVerdict, error) {
			if err := c.checkHeartbeat(n, args); err != nil {
				return store.NodeVerdict{}, err
			}
			if !c.heartbeatOnlyRecords(n, c.deployInterface(n)) {
				return store.NodeVerdict{Reserve: true}, nil
			}
			c.recordAgent(n, args)
			return store.NodeVerdict{Fields: []string{"driver_internal_info"}}, nil
		})
		if err == nil && recorded != nil {
			return nil
		}
	} else {
		t, err = c.tasks.Acquire(ctx, args.NodeID, task.AcquireOptions{Purpose: "heartbeat", NoRetry: true})
	}
	if errs.Is(err, errs.ClassNodeLocked) {
		t, err = c.tasks.Acquire(ctx, args.NodeID, task.AcquireOptions{Shared: true, Purpose: "heartbeat"})
	}
	if err != nil {
		return err
	}
	defer t.Release()
	if err := c.checkHeartbeat(t.Node, args); err != nil {
		return err
	}
	// The reservation of a shared task is another's; an exclusive one
	// found none.
	if t.Shared() && t.Node.InternalInfo().Get(model.DIIAgentURL) == nil && t.Node.Reservation != nil {
		return errs.NodeLocked(args.NodeID, *t.Node.Reservation)
	}
	if args.AgentVerifyCA != "" {
		path, err := c.storeAgentCertificate(t.Node, args.AgentVerifyCA)
		if err != nil {
			return err
		}
		args.AgentVerifyCA = path
	}
	t.SpawnAfter(c.spawner(), task.Work{Name: "heartbeat", NoReservedPool: true, Fn: func(ctx context.Context, t *task.Task) error {
		return c.processHeartbeat(ctx, t, args)
	}})
	return t.End()
}

// deployInterface is the node's deploy interface as its own field names
// it, nil when that is not known without resolving the node's drivers
// (an instance_info override, a default to fill, a bad name): only the
// deploy interface decides whether a heartbeat only records, and the
// task resolves every interface once the lock is taken anyway.
func (c *Conductor) deployInterface(n *model.Node) driver.Interface {
	name := driver.NodeInterface(n, driver.KindDeploy)
	if _, override := n.InstanceInfo["deploy_interface"]; override || name == "" {
		return nil
	}
	ht, err := c.drivers.HardwareType(n.Driver)
	if err != nil {
		return nil
	}
	impl, err := c.drivers.Interface(ht, driver.KindDeploy, name)
	if err != nil {
		return nil
	}
	return impl
}

// checkHeartbeat refuses a heartbeat without the node's agent token, or
// with a plain HTTP callback when TLS is required.
func (c *Conductor) checkHeartbeat(n *model.Node, args rpc.HeartbeatArgs) error {
	known := n.InternalInfo().AgentToken()
	if args.AgentToken == "" || known == "" || subtle.ConstantTimeCompare([]byte(known), []byte(args.AgentToken)) != 1 {
		return errs.InvalidParameterValue("Invalid or missing agent token received.")
	}
	if c.cfg.BoolOf(config.AgentRequireTLS) && args.CallbackURL != "" && !strings.HasPrefix(args.CallbackURL, "https://") {
		return errs.InvalidParameterValue("TLS is required by configuration")
	}
	return nil
}

// GetNodeWithToken generates the agent token for the node's first lookup
// (upstream get_node_with_token); later calls get "******".
func (c *Conductor) GetNodeWithToken(ctx context.Context, _ string, nodeID string) (*model.Node, error) {
	t, err := c.tasks.Acquire(ctx, nodeID, task.AcquireOptions{Shared: true, Purpose: "generate_token"})
	if err != nil {
		return nil, err
	}
	defer t.Release()
	if t.Node.InternalInfo().Get(model.DIIAgentSecretToken) != nil {
		out := cloneNode(t.Node)
		out.InternalInfo().Set(model.DIIAgentSecretToken, "******")
		return out, nil
	}
	if err := t.UpgradeLock(ctx, task.UpgradeOptions{NoRetry: true}); err != nil {
		return nil, err
	}
	buf := make([]byte, 32)
	if _, err := rand.Read(buf); err != nil {
		return nil, fmt.Errorf("generate agent token: %w", err)
	}
	t.Node.InternalInfo().Set(model.DIIAgentSecretToken, base64.RawURLEncoding.EncodeToString(buf))
	t.Node.InternalInfo().Delete(model.DIIAgentSecretTokenPregenerated)
	if err := t.Save(ctx); err != nil {
		return nil, err
	}
	return cloneNode(t.Node), nil
}
