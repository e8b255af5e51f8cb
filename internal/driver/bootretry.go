package driver

import (
	"context"
	"time"
)

// BootRetrier is implemented by boot interfaces that boot the agent from
// the network, where a lost DHCP or TFTP exchange leaves the machine
// sitting in its firmware until the flow's callback timeout: the
// conductor periodically power-cycles such nodes back into a network boot,
// as upstream's PXEBaseMixin._check_boot_timeouts node periodic does.
type BootRetrier interface {
	// BootRetryPolicy is when the retry applies; a zero Interval or
	// Timeout disables it.
	BootRetryPolicy() BootRetryPolicy
	// ShouldRetryBoot tells from driver_internal_info whether the node's
	// agent has given no sign of life within the timeout at now; it is
	// asked under the shared lock and again under the exclusive one.
	ShouldRetryBoot(task *Task, now time.Time) bool
	// RetryBoot power-cycles the node into a network boot under the
	// exclusive lock; power runs the conductor's power action, which
	// records the change on the node.
	RetryBoot(ctx context.Context, task *Task, power PowerAction) error
}

// BootRetryPolicy is the period of the check and the filters of the nodes
// it looks at.
type BootRetryPolicy struct {
	// Interval is the period of the check.
	Interval time.Duration
	// Timeout is how long a node must have been in its state, and its
	// agent silent, before its boot is retried.
	Timeout time.Duration
	// States are the provision states a boot is retried in.
	States []string
}

// PowerAction is the conductor's power action (upstream
// node_power_action) on the task's node.
type PowerAction func(ctx context.Context, state string) error
