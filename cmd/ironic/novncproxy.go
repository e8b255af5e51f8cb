package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/console/container"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/httpserver"
	"github.com/openkeel/ironic/internal/novncproxy"
	"github.com/openkeel/ironic/internal/store"
)

// modeNoVNCProxy is the proxy's own process.
const modeNoVNCProxy mode = "novncproxy"

// runNoVNCProxy is upstream's ironic-novncproxy: the noVNC web client and
// its websocket proxy to the nodes' graphical consoles, reading tokens
// from the database.
func runNoVNCProxy(ctx context.Context, opts *config.LoadOptions, stderr io.Writer) error {
	cfg, log, err := loadConfig(modeNoVNCProxy, opts, stderr)
	if err != nil {
		return err
	}
	log = log.With("mode", string(modeNoVNCProxy))
	warnUnknown(cfg, log)
	if !cfg.BoolOf(config.VNCEnabled) {
		return errs.New(errs.ClassConfigInvalid, map[string]any{"error_msg": "To allow this service to start, set [vnc]enabled = True"})
	}
	db, err := openDatabase(ctx, cfg, false)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := checkSchema(ctx, db); err != nil {
		return err
	}
	st, err := newStore(ctx, cfg, db)
	if err != nil {
		return err
	}
	srv, err := noVNCProxyServer(cfg, st, log)
	if err != nil {
		return err
	}
	return runServers(ctx, []*httpserver.Server{srv})
}

// noVNCProxyServer listens on [vnc]/host_ip:port (TLS with enable_ssl)
// with the proxy; the all-in-one runs it beside its API when
// [vnc]/enabled, as upstream's single process does.
func noVNCProxyServer(cfg *config.Config, st store.Store, log *slog.Logger) (*httpserver.Server, error) {
	if cfg.StringOf(config.VNCNovncRecord) != "" {
		log.Warn("[vnc]novnc_record is not supported: websocket frames are not recorded")
	}
	p, err := novncproxy.New(novncproxy.Options{
		Web:            cfg.StringOf(config.VNCNovncWeb),
		AuthSchemes:    cfg.ListOf(config.VNCNovncAuthSchemes),
		TokenTimeout:   time.Duration(cfg.IntOf(config.VNCTokenTimeout)) * time.Second,
		AllowedOrigins: cfg.ListOf(config.CorsAllowedOrigin),
		Log:            log,
	}, st)
	if err != nil {
		return nil, err
	}
	srv, err := httpserver.Listen(httpserver.Options{
		HostIP:          cfg.StringOf(config.VNCHostIP),
		Port:            cfg.IntOf(config.VNCPort),
		EnableSSL:       cfg.BoolOf(config.VNCEnableSSL),
		CertFile:        cfg.StringOf(config.VNCCertFile),
		KeyFile:         cfg.StringOf(config.VNCKeyFile),
		TLSMinVersion:   cfg.StringOf(config.VNCTLSMinimumVersion),
		ShutdownTimeout: cfg.DurationOf(config.ConductorGracefulShutdownTimeout),
		Limits:          httpserver.LimitsFromConfig(cfg),
		Logger:          log,
	}, p)
	if err != nil {
		return nil, fmt.Errorf("noVNC proxy: %w", err)
	}
	log.Info("noVNC proxy listening", "address", srv.Addr().String())
	return srv, nil
}

// stopConsoleContainers removes this conductor's console containers, at
// start-up (left by a previous run) and at shutdown, as upstream's
// conductor does. The default fake provider has none; a provider that
// cannot be reached is logged, not fatal: no console can run anyway.
func stopConsoleContainers(ctx context.Context, cfg *config.Config, log *slog.Logger) {
	p := container.NewLazy(container.OptionsFromConfig(cfg))
	if err := p.StopAll(ctx); err != nil {
		log.Error("stopping console containers", "provider", p.Name(), "error", err)
	}
}
