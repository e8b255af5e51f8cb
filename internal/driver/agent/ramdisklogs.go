package agent

import (
	"context"

	"github.com/openkeel/ironic/internal/driver"
)

var (
	_ driver.RamdiskLogCollector = (*Direct)(nil)
	_ driver.RamdiskLogCollector = (*Ramdisk)(nil)
)

// CollectRamdiskLogs asks the agent for its logs and stores them.
func (b *base) CollectRamdiskLogs(ctx context.Context, task *driver.Task, label string) {
	b.client().CollectRamdiskLogs(ctx, targetFor(task.Node), label)
}

// DeployLogsCollect is [agent]/deploy_logs_collect.
func (b *base) DeployLogsCollect() string { return b.client().DeployLogsCollect() }

// CollectsDeployLogs is true for the agent deploy interfaces.
func (b *base) CollectsDeployLogs() bool { return true }

// CollectsDeployLogs is false: a failed ramdisk deployment is the
// instance's, not an agent's, failure.
func (r *Ramdisk) CollectsDeployLogs() bool { return false }
