package agent

import (
	"context"

	"github.com/openkeel/ironic/internal/driver"
)

// RamdiskLogCollector is how the conductor keeps the agent's logs when a
// flow fails or, with [agent]/deploy_logs_collect = always, ends (upstream
// driver_utils.collect_ramdisk_logs, called from the step runners).
type RamdiskLogCollector interface {
	// CollectRamdiskLogs stores the running agent's logs, label naming
	// the flow; it never fails the caller.
	CollectRamdiskLogs(ctx context.Context, task *driver.Task, label string)
	// DeployLogsCollect is [agent]/deploy_logs_collect.
	DeployLogsCollect() string
	// CollectsDeployLogs is upstream collect_deploy_logs: whether a failed
	// deployment keeps the ramdisk's logs (not for the ramdisk deploy,
	// whose instance is the ramdisk).
	CollectsDeployLogs() bool
}

var (
	_ RamdiskLogCollector = (*Direct)(nil)
	_ RamdiskLogCollector = (*Ramdisk)(nil)
)

// CollectRamdiskLogs asks the agent for its logs and stores them.
func (b *base) CollectRamdiskLogs(ctx context.Context, task *driver.Task, label string) {
	b.client().CollectRamdiskLogs(ctx, task.Node, label)
}

// DeployLogsCollect is [agent]/deploy_logs_collect.
func (b *base) DeployLogsCollect() string { return b.client().DeployLogsCollect() }

// CollectsDeployLogs is true for the agent deploy interfaces.
func (b *base) CollectsDeployLogs() bool { return true }

// CollectsDeployLogs is false: a failed ramdisk deployment is the
// instance's, not an agent's, failure.
func (r *Ramdisk) CollectsDeployLogs() bool { return false }
