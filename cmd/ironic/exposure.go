package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strconv"

	"github.com/openkeel/ironic/internal/auth"
	"github.com/openkeel/ironic/internal/config"
)

// checkJSONRPCExposure refuses a conductor whose JSON-RPC would answer
// anyone on the network: with noauth, create_node,
// change_node_power_state and get_node_with_token need no credentials.
// Upstream starts such a conductor on "::" without a word; we start it
// only on loopback or a Unix socket, or when the operator has said
// [openkeel_http]/allow_unauthenticated_json_rpc (then with a warning).
func checkJSONRPCExposure(ctx context.Context, cfg *config.Config, log *slog.Logger) error {
	strategy, from := cfg.StringOf(config.JSONRPCAuthStrategy), "[json_rpc]/auth_strategy"
	if strategy == "" {
		strategy, from = cfg.StringOf(config.DefaultAuthStrategy), "[DEFAULT]/auth_strategy"
	}
	if strategy != auth.StrategyNoAuth || cfg.StringOf(config.JSONRPCUnixSocket) != "" {
		return nil
	}
	host := cfg.StringOf(config.JSONRPCHostIP)
	addr := net.JoinHostPort(host, strconv.Itoa(cfg.IntOf(config.JSONRPCPort)))
	loopback, err := loopbackOnly(ctx, host)
	if err != nil {
		return fmt.Errorf("[json_rpc]/host_ip %q: %w", host, err)
	}
	if loopback {
		return nil
	}
	if cfg.BoolOf(config.OpenkeelHTTPAllowUnauthenticatedJSONRPC) {
		log.Warn("JSON-RPC listens without authentication on an address other than loopback: anyone who reaches it can drive this conductor",
			"address", addr, "auth_strategy", from, "allowed_by", "[openkeel_http]/allow_unauthenticated_json_rpc")
		return nil
	}
	return fmt.Errorf("refusing to start: JSON-RPC would listen on %s without authentication (%s = noauth), so anyone who reaches the port could create nodes and change their power state; "+
		"set [json_rpc]/auth_strategy = http_basic (with [json_rpc]/http_basic_auth_user_file, and [json_rpc]/username and password on the API side), "+
		"or bind [json_rpc]/host_ip to a loopback address, or set [openkeel_http]/allow_unauthenticated_json_rpc = true to accept the risk", addr, from)
}

// loopbackOnly reports whether host names only loopback addresses. The
// empty host and the unspecified addresses ("::", "0.0.0.0") are every
// address.
func loopbackOnly(ctx context.Context, host string) (bool, error) {
	if host == "" {
		return false, nil
	}
	if ip := net.ParseIP(host); ip != nil {
		return ip.IsLoopback(), nil
	}
	ips, err := net.DefaultResolver.LookupIPAddr(ctx, host)
	if err != nil {
		return false, fmt.Errorf("resolve: %w", err)
	}
	for _, ip := range ips {
		if !ip.IP.IsLoopback() {
			return false, nil
		}
	}
	return len(ips) > 0, nil
}
