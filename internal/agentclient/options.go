// Package agentclient is the conductor's client of ironic-python-agent's
// REST API (upstream ironic/drivers/modules/agent_client.py): commands are
// POSTed to <agent_url>/v1/commands/ with the node's agent token as the
// agent_token query parameter, long commands are polled through
// GET /v1/commands/, connection failures are retried and, when a POST
// fails in transit, the agent is asked whether it is running the command
// anyway before the failure is reported. Errors carry upstream's classes
// and messages (AgentAPIError, AgentConnectionFailed, AgentInProgress,
// AgentCommandTimeout). The token never reaches a log line or a message.
package agentclient

import (
	"context"
	"log/slog"
	"time"

	"github.com/openkeel/ironic/internal/clock"
	"github.com/openkeel/ironic/internal/config"
)

// Options are the ironic.conf settings the client reads, plus the clock
// and logger, which tests replace.
type Options struct {
	// [agent]
	APIVersion          string
	CommandTimeout      time.Duration
	MaxCommandAttempts  int
	CommandWaitInterval time.Duration
	CommandWaitAttempts int
	VerifyCA            string
	TLSMinimumVersion   string
	// PostDeployGetPowerStateRetries and ...RetryInterval bound the wait
	// for a locked-down agent to stop answering (lockdown).
	PostDeployGetPowerStateRetries       int
	PostDeployGetPowerStateRetryInterval time.Duration
	// [conductor]/require_rescue_password_hashed: refuse the plain-text
	// rescue password fallback for agents too old to take a hash.
	RequireRescuePasswordHashed bool
	// DeployLogs say when the ramdisk's logs are collected and where
	// they go.
	DeployLogs DeployLogs

	// Observe, when set, hears of every command: its name, how long the
	// agent took to answer it (retries and polling included) and the
	// error it ended with (the conductor's metrics).
	Observe func(command string, d time.Duration, err error)

	// Clock waits between polls; nil means the real clock.
	Clock Clock
	// Now dates the stored ramdisk logs; nil means time.Now.
	Now func() time.Time
	// Log receives the client's debug and error lines; nil means
	// slog.Default().
	Log *slog.Logger
}

// Clock is the time source of every wait in this package.
type Clock interface {
	// Sleep waits for d or until ctx ends.
	Sleep(ctx context.Context, d time.Duration) error
}

// DefaultOptions are upstream's defaults.
func DefaultOptions() Options {
	return Options{
		APIVersion:                           "v1",
		CommandTimeout:                       60 * time.Second,
		MaxCommandAttempts:                   3,
		CommandWaitInterval:                  6 * time.Second,
		CommandWaitAttempts:                  100,
		VerifyCA:                             "True",
		TLSMinimumVersion:                    "1.3",
		PostDeployGetPowerStateRetries:       6,
		PostDeployGetPowerStateRetryInterval: 5 * time.Second,
		RequireRescuePasswordHashed:          true,
		DeployLogs: DeployLogs{Collect: LogsOnFailure, StorageBackend: "local", LocalPath: "/var/log/ironic/deploy",
			SwiftContainer: "ironic_deploy_logs_container", SwiftDaysToExpire: 30},
	}
}

// OptionsFromConfig reads the [agent] and [conductor] options the client
// uses.
func OptionsFromConfig(c *config.Config) Options {
	o := DefaultOptions()
	o.APIVersion = c.StringOf(config.AgentAgentAPIVersion)
	o.CommandTimeout = c.DurationOf(config.AgentCommandTimeout)
	o.MaxCommandAttempts = c.IntOf(config.AgentMaxCommandAttempts)
	o.CommandWaitInterval = c.DurationOf(config.AgentCommandWaitInterval)
	o.CommandWaitAttempts = c.IntOf(config.AgentCommandWaitAttempts)
	o.VerifyCA = c.StringOf(config.AgentVerifyCA)
	o.TLSMinimumVersion = c.StringOf(config.AgentTLSMinimumVersion)
	o.PostDeployGetPowerStateRetries = c.IntOf(config.AgentPostDeployGetPowerStateRetries)
	o.PostDeployGetPowerStateRetryInterval = c.DurationOf(config.AgentPostDeployGetPowerStateRetryInterval)
	o.RequireRescuePasswordHashed = c.BoolOf(config.ConductorRequireRescuePasswordHashed)
	o.DeployLogs = DeployLogsFromConfig(c)
	return o
}

func (o *Options) clock() Clock {
	if o.Clock == nil {
		return clock.Real{}
	}
	return o.Clock
}

func (o *Options) now() time.Time {
	if o.Now == nil {
		return time.Now()
	}
	return o.Now()
}

func (o *Options) log() *slog.Logger {
	if o.Log == nil {
		return slog.Default()
	}
	return o.Log
}

// attempts is tenacity's stop_after_attempt(n): at least one try.
func attempts(n int) int {
	if n < 1 {
		return 1
	}
	return n
}
