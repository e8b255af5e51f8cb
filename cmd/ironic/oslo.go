package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/rpc"
	"github.com/openkeel/ironic/internal/rpc/jsonrpc"
	"github.com/openkeel/ironic/internal/rpc/oslo"
)

// usesOslo reports whether the api and conductor processes talk
// oslo.messaging over RabbitMQ: [DEFAULT]/rpc_transport = oslo set in a
// file. Unset, they talk JSON-RPC: upstream's default is oslo, but
// openkeel fleets were deployed with JSON-RPC before oslo existed here,
// and a silent switch would cut their APIs off their conductors.
func usesOslo(cfg *config.Config) bool {
	return cfg.IsSetOf(config.DefaultRPCTransport) && cfg.StringOf(config.DefaultRPCTransport) == "oslo"
}

// topicPrefix is what the API's topics start with: upstream's manager
// topic on oslo.messaging, nothing on JSON-RPC (upstream's ".<host>").
func topicPrefix(cfg *config.Config) string {
	if usesOslo(cfg) {
		return rpc.ManagerTopic
	}
	return ""
}

// osloClient is the API's conductor RPC over oslo.messaging; payloads
// are encoded as for JSON-RPC, pinned updates comparing with rows of
// stored.
func osloClient(cfg *config.Config, log *slog.Logger, stored jsonrpc.StoredObjects) (rpc.ConductorAPI, error) {
	o, err := oslo.OptionsFromConfig(cfg)
	if err != nil {
		return nil, err
	}
	o.Logger = log
	copts := jsonrpc.ClientOptionsFromConfig(cfg)
	copts.Store = stored
	api, _, err := oslo.NewConductorAPI(o, copts)
	if err != nil {
		return nil, fmt.Errorf("oslo.messaging RPC client: %w", err)
	}
	return api, nil
}

// startOslo consumes the conductor's RPC queues (upstream's RPC server on
// topic ironic.conductor_manager, server [DEFAULT]/host), dispatching to
// the same method table as the JSON-RPC server. The returned stop ends
// consuming and waits for the running calls to answer.
func (s *stack) startOslo(ctx context.Context) (stop func() error, err error) {
	o, err := oslo.OptionsFromConfig(s.cfg)
	if err != nil {
		return nil, err
	}
	o.Logger = s.log
	opts := jsonrpc.ServerOptionsFromConfig(s.cfg)
	opts.Logger = s.log
	srv, err := oslo.NewServer(o, rpc.ManagerTopic, s.conductor.Host(), jsonrpc.NewServer(s.conductor, opts))
	if err != nil {
		return nil, fmt.Errorf("oslo.messaging RPC server: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	return func() error {
		cancel()
		return <-done
	}, nil
}
