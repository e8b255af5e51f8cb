package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/pxefilter"
)

// modePXEFilter is the PXE filter's own process.
const modePXEFilter mode = "pxe-filter"

// runPXEFilter is upstream's ironic-pxe-filter: one per dnsmasq of
// unmanaged inspection, on the machine whose hostsdir that dnsmasq reads.
// It reads the database directly and serves no RPC, so unlike upstream's
// it does not care which rpc_transport the conductors use.
func runPXEFilter(ctx context.Context, inv *invocation, stderr io.Writer) error {
	if len(inv.args) > 0 {
		return fmt.Errorf("%w: pxe-filter takes no arguments, got %q", errUsage, strings.Join(inv.args, " "))
	}
	cfg, log, err := loadConfig(modePXEFilter, inv.load, stderr)
	if err != nil {
		return err
	}
	log = log.With("mode", string(modePXEFilter))
	warnUnknown(cfg, log)
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
	f, err := pxefilter.New(st, pxefilter.Options{
		Hostsdir:                   cfg.StringOf(config.PXEFilterDHCPHostsdir),
		SupportedInspectInterfaces: cfg.ListOf(config.PXEFilterSupportedInspectInterfaces),
		SyncPeriod:                 time.Duration(cfg.IntOf(config.PXEFilterSyncPeriod)) * time.Second,
		AutoDiscovery:              cfg.BoolOf(config.AutoDiscoveryEnabled),
		Log:                        log,
	})
	if err != nil {
		return errs.New(errs.ClassConfigInvalid, map[string]any{"error_msg": err.Error()})
	}
	log.Info("PXE filter started", "hostsdir", cfg.StringOf(config.PXEFilterDHCPHostsdir))
	return f.Run(ctx)
}
