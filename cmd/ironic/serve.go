package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/openkeel/ironic/internal/conductor"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/httproot"
	"github.com/openkeel/ironic/internal/httpserver"
	"github.com/openkeel/ironic/internal/mdns"
	"github.com/openkeel/ironic/internal/store/migrations"
	"github.com/openkeel/ironic/internal/store/sqldb"
)

// mode is the role a process plays.
type mode string

const (
	modeAllInOne  mode = "all-in-one"
	modeAPI       mode = "api"
	modeConductor mode = "conductor"
	modeDBSync    mode = "dbsync"
)

// serve runs the API, the conductor or both until ctx ends.
func serve(ctx context.Context, m mode, opts *config.LoadOptions, stderr io.Writer) error {
	cfg, log, err := loadConfig(m, opts, stderr)
	if err != nil {
		return err
	}
	log = log.With("mode", string(m))
	warnUnknown(cfg, log)
	warnIneffective(m, cfg, log)
	if m == modeConductor {
		// Before the database: a refused start says so at once.
		if err := checkJSONRPCExposure(ctx, cfg, log); err != nil {
			return err
		}
	}
	db, err := openDatabase(ctx, cfg, m == modeAllInOne)
	if err != nil {
		return err
	}
	defer db.Close()
	if m == modeAllInOne {
		// The embedded database is ours alone: keep it at our schema.
		if err := migrations.Upgrade(ctx, db); err != nil {
			return fmt.Errorf("database: %w", err)
		}
	} else if err := checkSchema(ctx, db); err != nil {
		return err
	}
	st, err := newStack(ctx, m, cfg, log, db)
	if err != nil {
		return err
	}
	// Packages given no logger fall back to slog.Default: their lines
	// must be records like ours (JSON when use_json, mode, flow), not the
	// log package's plain text.
	slog.SetDefault(st.log)
	var servers []*httpserver.Server
	if m == modeConductor {
		srv, err := st.jsonRPCServer()
		if err != nil {
			return err
		}
		log.Info("JSON-RPC listening", "address", srv.Addr().String())
		servers = append(servers, srv)
	} else {
		h, err := st.apiHandler()
		if err != nil {
			return err
		}
		srv, err := httpserver.Listen(apiServerOptions(cfg, log), h)
		if err != nil {
			return fmt.Errorf("API server: %w", err)
		}
		log.Info("API listening", "address", srv.Addr().String())
		servers = append(servers, srv)
		if m == modeAllInOne && cfg.BoolOf(config.VNCEnabled) {
			proxy, err := noVNCProxyServer(cfg, st.store, log)
			if err != nil {
				return err
			}
			servers = append(servers, proxy)
		}
	}
	if st.conductor != nil {
		// SIGUSR2 ends everything below as SIGTERM does, with a drain.
		var stopDrain func()
		ctx, stopDrain = onDrainSignal(ctx, st.conductor, log)
		defer stopDrain()
	}
	var files *httproot.Server
	if st.conductor != nil && cfg.StringOf(config.DeployHTTPURL) != "" {
		opts, err := httproot.OptionsFromConfig(cfg)
		if err != nil {
			return err
		}
		opts.Logger = log
		if m == modeAllInOne && !cfg.HasOf(config.OpenkeelHTTPHTTPRootHostIP) {
			// A laptop's files are served where its API is, loopback
			// unless said otherwise.
			opts.HostIP = cfg.StringOf(config.APIHostIP)
		}
		fctx, stopFiles := context.WithCancel(ctx)
		defer stopFiles()
		if files, err = httproot.Start(fctx, opts); err != nil {
			return fmt.Errorf("http_root file server: %w", err)
		}
		log.Info("serving http_root", "root", opts.Root, "url", cfg.StringOf(config.DeployHTTPURL))
	}
	if st.conductor != nil {
		stopConsoleContainers(ctx, cfg, log)
		if err := st.conductor.Start(ctx); err != nil {
			return fmt.Errorf("conductor: %w", err)
		}
		// After the start, as upstream's init_host publishes last.
		published, err := mdns.PublishAPI(ctx, cfg, log)
		if err != nil {
			return fmt.Errorf("conductor: %w", err)
		}
		if published != nil {
			defer published.Close()
		}
	}
	var stopOslo func() error
	if m == modeConductor && usesOslo(cfg) {
		// After the conductor's start, as upstream's RPC server.
		if stopOslo, err = st.startOslo(ctx); err != nil {
			return err
		}
	}
	err = runServers(ctx, servers)
	if stopOslo != nil {
		if oerr := stopOslo(); oerr != nil && err == nil {
			err = oerr
		}
	}
	st.closeAPI()
	if files != nil {
		if ferr := files.Wait(); ferr != nil && err == nil {
			err = fmt.Errorf("http_root file server: %w", ferr)
		}
	}
	if st.conductor != nil {
		// After the listeners: no new work arrives while the running
		// work is given graceful_shutdown_timeout (drain_shutdown_timeout
		// after SIGUSR2) to end.
		stopCtx, cancel := conductor.WithShutdownTimeout(context.WithoutCancel(ctx), st.conductor.ShutdownTimeout())
		defer cancel()
		if serr := st.conductor.Stop(stopCtx); serr != nil && err == nil {
			err = fmt.Errorf("conductor stop: %w", serr)
		}
		stopConsoleContainers(stopCtx, cfg, log)
	}
	if err != nil {
		return err
	}
	log.Info("stopped")
	return nil
}

// runServers serves until ctx ends or one server fails, then stops them
// all gracefully.
func runServers(ctx context.Context, servers []*httpserver.Server) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, len(servers))
	for _, srv := range servers {
		go func() {
			err := srv.Serve(ctx)
			cancel()
			errc <- err
		}()
	}
	var first error
	for range servers {
		if err := <-errc; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// openDatabase opens [database]/connection, creating the folder of a SQLite
// file so that a fresh all-in-one start needs no preparation.
func openDatabase(ctx context.Context, cfg *config.Config, createDir bool) (*sqldb.DB, error) {
	url := cfg.StringOf(config.DatabaseConnection)
	if url == "" {
		return nil, errors.New("[database]/connection is not set")
	}
	if createDir {
		if path, ok := sqliteFile(url); ok {
			if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
				return nil, fmt.Errorf("database folder: %w", err)
			}
		}
	}
	db, err := sqldb.OpenWith(ctx, url, sqldb.SettingsFromConfig(cfg))
	if err != nil {
		return nil, fmt.Errorf("database: %w", err)
	}
	return db, nil
}

// sqliteFile returns the file path of a sqlite:/// URL (relative) or
// sqlite://// URL (absolute); in-memory URLs have none.
func sqliteFile(url string) (string, bool) {
	rest, ok := strings.CutPrefix(url, "sqlite:///")
	if !ok || rest == "" || strings.HasPrefix(rest, ":memory:") {
		return "", false
	}
	if i := strings.IndexByte(rest, '?'); i >= 0 {
		rest = rest[:i]
	}
	return rest, true
}

// checkSchema refuses to serve a database that `dbsync upgrade` has not
// brought to our schema, rather than failing on the first query.
func checkSchema(ctx context.Context, db *sqldb.DB) error {
	ours, _, err := migrations.Version(ctx, db)
	if err != nil {
		return fmt.Errorf("database schema: %w", err)
	}
	latest, err := migrations.Latest(db.Dialect())
	if err != nil {
		return fmt.Errorf("database schema: %w", err)
	}
	if ours != latest {
		return fmt.Errorf("database schema is at version %d, this program needs %d: run `ironic dbsync upgrade`", ours, latest)
	}
	return nil
}

func apiServerOptions(cfg *config.Config, log *slog.Logger) httpserver.Options {
	o := httpserver.Options{
		HostIP:          cfg.StringOf(config.APIHostIP),
		Port:            cfg.IntOf(config.APIPort),
		UnixSocket:      cfg.StringOf(config.APIUnixSocket),
		EnableSSL:       cfg.BoolOf(config.APIEnableSSLAPI),
		CertFile:        cfg.StringOf(config.APICertFile),
		KeyFile:         cfg.StringOf(config.APIKeyFile),
		TLSMinVersion:   cfg.StringOf(config.APITLSMinimumVersion),
		ShutdownTimeout: cfg.DurationOf(config.ConductorGracefulShutdownTimeout),
		Limits:          httpserver.LimitsFromConfig(cfg),
		Logger:          log,
		// Upstream master's standalone API server (ironic/command/api.py)
		// is cheroot's, named so.
		CherootServerName: "ironic_api",
	}
	if cfg.HasOf(config.APIUnixSocketMode) {
		o.UnixSocketMode = fs.FileMode(cfg.IntOf(config.APIUnixSocketMode))
	}
	return o
}
