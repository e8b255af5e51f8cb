package rpc

import (
	"context"
	"log/slog"
)

// Local is the in-process transport of the all-in-one process
// (rpc_transport = none): calls go straight to the conductor
// implementation, whatever the topic, and its errors come back unchanged.
// Casts run synchronously, as upstream's LocalContext (the conductor
// spawns its own worker), and their errors are logged and dropped because
// a cast never reports one on a real transport.
type Local struct {
	ConductorAPI
	log *slog.Logger
}

var _ ConductorAPI = (*Local)(nil)

// NewLocal returns the in-process transport to impl.
func NewLocal(impl ConductorAPI, log *slog.Logger) *Local {
	if log == nil {
		log = slog.Default()
	}
	return &Local{ConductorAPI: impl, log: log}
}

func (l *Local) cast(ctx context.Context, method string, err error) error {
	if err != nil {
		l.log.ErrorContext(ctx, "ignoring error of RPC cast", "method", method, "error", err)
	}
	return nil
}

// ContinueNodeClean casts continue_node_clean.
func (l *Local) ContinueNodeClean(ctx context.Context, topic, nodeID string) error {
	return l.cast(ctx, "continue_node_clean", l.ConductorAPI.ContinueNodeClean(ctx, topic, nodeID))
}

// ContinueNodeDeploy casts continue_node_deploy.
func (l *Local) ContinueNodeDeploy(ctx context.Context, topic, nodeID string) error {
	return l.cast(ctx, "continue_node_deploy", l.ConductorAPI.ContinueNodeDeploy(ctx, topic, nodeID))
}

// ContinueNodeService casts continue_node_service.
func (l *Local) ContinueNodeService(ctx context.Context, topic, nodeID string) error {
	return l.cast(ctx, "continue_node_service", l.ConductorAPI.ContinueNodeService(ctx, topic, nodeID))
}
