// Package pxefilter is upstream's ironic-pxe-filter: it keeps the
// hostsdir of the dnsmasq that serves unmanaged inspection in step with
// the database, so that this dnsmasq answers only machines that are being
// inspected or discovered and can share a network with another DHCP
// server (Neutron's). The filter reads ports and provision states; it
// writes nothing to the database.
package pxefilter

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/openkeel/ironic/internal/clock"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store"
)

// Decision is what dnsmasq should answer: the MACs of known ports to
// allow and to deny, and whether MACs of no port are allowed.
type Decision struct {
	Allow, Deny  []string
	AllowUnknown bool
}

// Decide applies upstream's rules: the ports of nodes on in-band
// inspection (inspecting or inspect wait, with an inspect interface of
// supported) are allowed and every other port is denied; unknown MACs are
// allowed while any node is on such inspection or auto-discovery is
// enabled, since discovery boots machines nobody has enrolled yet.
// onInspection holds the ids of the nodes on inspection.
func Decide(ports []*model.Port, onInspection map[int64]bool, autoDiscovery bool) Decision {
	d := Decision{AllowUnknown: autoDiscovery || len(onInspection) > 0}
	for _, p := range ports {
		if p.Address == nil || *p.Address == "" {
			continue
		}
		mac := strings.ToLower(*p.Address)
		if p.NodeID != nil && onInspection[*p.NodeID] {
			d.Allow = append(d.Allow, mac)
		} else {
			d.Deny = append(d.Deny, mac)
		}
	}
	slices.Sort(d.Allow)
	slices.Sort(d.Deny)
	return d
}

// Options configure a Filter, from [pxe_filter] and [auto_discovery].
type Options struct {
	// Hostsdir is [pxe_filter]dhcp_hostsdir, dnsmasq's --dhcp-hostsdir.
	Hostsdir string
	// SupportedInspectInterfaces is [pxe_filter]supported_inspect_interfaces:
	// nodes inspected by another interface (out-of-band ones) do not
	// PXE boot the inspection ramdisk.
	SupportedInspectInterfaces []string
	// SyncPeriod is [pxe_filter]sync_period.
	SyncPeriod time.Duration
	// AutoDiscovery is [auto_discovery]enabled.
	AutoDiscovery bool
	// Clock paces Run; nil is the wall clock.
	Clock clock.Clock
	Log   *slog.Logger
}

// Filter syncs one hostsdir from one database.
type Filter struct {
	opts  Options
	store store.Store
}

// New checks the hostsdir as upstream's prepare_host does: it must be set
// and exist (the filter does not create it: dnsmasq's user must be able to
// read it, which only the operator can arrange).
func New(st store.Store, opts Options) (*Filter, error) {
	if opts.Hostsdir == "" {
		return nil, errors.New("the [pxe_filter]dhcp_hostsdir option is required")
	}
	if fi, err := os.Stat(opts.Hostsdir); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("the path in [pxe_filter]dhcp_hostsdir does not exist: %s", opts.Hostsdir)
	}
	if opts.SyncPeriod <= 0 {
		return nil, fmt.Errorf("[pxe_filter]sync_period must be positive, got %s", opts.SyncPeriod)
	}
	if opts.Clock == nil {
		opts.Clock = clock.Real{}
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	return &Filter{opts: opts, store: st}, nil
}

// Decide reads the database and returns what the hostsdir should say.
// Child nodes are not considered on inspection, as upstream's node query
// leaves them out; their ports are denied.
func (f *Filter) Decide(ctx context.Context) (Decision, error) {
	nodes, err := f.store.ListNodeColumns(ctx, store.NodeFilter{
		ProvisionStateIn: []string{states.InspectWait, states.Inspecting},
	}, store.ListOptions{}, []string{"id", "inspect_interface"})
	if err != nil {
		return Decision{}, fmt.Errorf("list nodes on inspection: %w", err)
	}
	onInspection := make(map[int64]bool, len(nodes))
	for _, n := range nodes {
		if slices.Contains(f.opts.SupportedInspectInterfaces, n.InspectInterface) {
			onInspection[n.ID] = true
		}
	}
	ports, err := f.store.ListPorts(ctx, store.PortFilter{}, store.ListOptions{})
	if err != nil {
		return Decision{}, fmt.Errorf("list ports: %w", err)
	}
	f.opts.Log.Debug("PXE filter sync", "nodes_on_inspection", len(onInspection), "ports", len(ports))
	return Decide(ports, onInspection, f.opts.AutoDiscovery), nil
}

// Sync is one pass: read the database, write the hostsdir.
func (f *Filter) Sync(ctx context.Context) (Decision, Changes, error) {
	start := time.Now()
	d, err := f.Decide(ctx)
	if err != nil {
		return d, Changes{}, err
	}
	ch, err := Apply(f.opts.Hostsdir, d)
	if err != nil {
		return d, ch, err
	}
	f.opts.Log.Info("finished periodic sync of the PXE filter", "allowed", len(d.Allow), "denied", len(d.Deny),
		"allow_unknown", d.AllowUnknown, "files_written", ch.Allowed+ch.Denied+boolInt(ch.Unknown),
		"took", time.Since(start).Round(time.Millisecond))
	return d, ch, nil
}

// Run syncs at once, then every SyncPeriod until ctx ends. A failed pass
// (database away, hostsdir unwritable) is logged and retried at the next
// period, as upstream does.
func (f *Filter) Run(ctx context.Context) error {
	for {
		if _, _, err := f.Sync(ctx); err != nil && ctx.Err() == nil {
			f.opts.Log.Error("PXE filter sync failed, will retry", "error", err)
		}
		if err := f.opts.Clock.Sleep(ctx, f.opts.SyncPeriod); err != nil {
			return nil
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
