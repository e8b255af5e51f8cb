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
