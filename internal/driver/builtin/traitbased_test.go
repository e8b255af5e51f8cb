package builtin

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/conductor"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/rpc"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store"
	"github.com/openkeel/ironic/internal/store/storetest"
)

// The traits file of the end-to-end tests: storage VIFs go to the port
// in the storage category; bonded VIFs to a dynamic portgroup of the
// node's acme ports.
const tbnTraits = `CUSTOM_STORAGE:
  actions:
    - action: attach_port
      filter: port.category == 'storage'
CUSTOM_BOND:
  actions:
    - action: group_and_attach_ports
      filter: port.vendor == 'acme'
      min_count: 2
`

const (
	storageVIF = "66666666-6666-4666-8666-666666666666"
	bondVIF    = "77777777-7777-4777-8777-777777777777"
)

type tbnEnv struct {
	cl  *cloud
	st  store.Store
	api rpc.ConductorAPI
	// ports counts the ports made, for unique MACs.
	ports int
}

// newTBNEnv is a started conductor with the neutron interface and
// trait-based networking on tbnTraits, with the [conductor] options given.
func newTBNEnv(t *testing.T, conductorOpts map[string]string) *tbnEnv {
	t.Helper()
	cl := newCloud(t)
	cl.fn.Port(map[string]any{"id": storageVIF, "network_id": provNet}).Port(map[string]any{"id": bondVIF, "network_id": provNet})
	path := filepath.Join(t.TempDir(), "trait_based_networking.yaml")
	if err := os.WriteFile(path, []byte(tbnTraits), 0o600); err != nil {
		t.Fatal(err)
	}
	opts := map[string]string{
		"enable_trait_based_networking": "true", "trait_based_networking_config_file": path,
		// The conductor's own loops stay off: the test drives it.
		"sync_power_state_interval": "0", "check_provision_state_interval": "0", "sync_local_state_interval": "0",
		"check_allocations_interval": "0", "conductor_cleanup_interval": "0", "node_history_cleanup_interval": "0",
		"power_failure_recovery_interval": "0",
	}
	for k, v := range conductorOpts {
		opts[k] = v
	}
	cfg := cl.configWith(t, true, map[string]map[string]string{"conductor": opts})
	st := store.New(storetest.Backends(t)[0].DB)
	d, err := DriversWithPorts(cfg, st)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	c, err := conductor.New(conductor.Options{Store: st, Drivers: d, Config: cfg, Host: "tbn-conductor", Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop(context.Background()) })
	return &tbnEnv{cl: cl, st: st, api: rpc.NewLocal(c, log)}
}

// node is a neutron-interface node whose instance carries traits, with
// one port per category given, all from vendor acme and open to dynamic
// portgroups; the first is the PXE port the usual choice would take.
func (e *tbnEnv) node(t *testing.T, traits []any, categories ...string) (*model.Node, []*model.Port) {
	t.Helper()
	ctx := context.Background()
	n, err := e.st.CreateNode(ctx, &model.Node{Driver: "fake-hardware", NetworkInterface: "neutron", ProvisionState: states.Manageable,
		InstanceInfo: map[string]any{"traits": traits}})
	if err != nil {
		t.Fatal(err)
	}
	var ports []*model.Port
	for i, cat := range categories {
		e.ports++
		p, err := e.st.CreatePort(ctx, &model.Port{Address: ptr(fmt.Sprintf("52:54:00:aa:cc:%02x", e.ports)), NodeID: &n.ID,
			PXEEnabled: ptr(i == 0), Category: ptr(cat), Vendor: ptr("acme"), PhysicalNetwork: ptr("fabric"),
			AvailableForDynamicPortgroup: true,
			LocalLinkConnection:          map[string]any{"switch_id": "aa:bb:cc:dd:ee:ff", "port_id": "Eth1/" + string(rune('1'+i))}})
		if err != nil {
			t.Fatal(err)
		}
		ports = append(ports, p)
	}
	return n, ports
}

func (e *tbnEnv) port(t *testing.T, p *model.Port) *model.Port {
	t.Helper()
	got, err := e.st.GetPortByID(context.Background(), p.ID)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func (e *tbnEnv) portgroups(t *testing.T, n *model.Node) []*model.Portgroup {
	t.Helper()
	pgs, err := e.st.ListPortgroups(context.Background(), store.PortgroupFilter{NodeID: &n.ID}, store.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return pgs
}

func wantClass(t *testing.T, err error, class errs.Class, msg string) {
	t.Helper()
	if !errs.Is(err, class) || err.Error() != msg {
		t.Fatalf("error = %v, want %s %q", err, class, msg)
	}
}

// A VIF attached through the conductor goes where the instance's trait
// says, not to the PXE port the usual choice takes; the Neutron port is
// given that port's MAC and the node as host.
func TestTraitBasedAttachThroughConductor(t *testing.T) {
	ctx := context.Background()
	e := newTBNEnv(t, nil)
	n, ports := e.node(t, []any{"CUSTOM_STORAGE", "CUSTOM_UNRELATED"}, "general", "storage")
	if err := e.api.VifAttach(ctx, "", n.UUID, map[string]any{"id": storageVIF}); err != nil {
		t.Fatal(err)
	}
	if got := e.port(t, ports[1]).InternalInfo["tenant_vif_port_id"]; got != storageVIF {
		t.Fatalf("storage port VIF %v", got)
	}
	if got := e.port(t, ports[0]).InternalInfo["tenant_vif_port_id"]; got != nil {
		t.Fatalf("PXE port took VIF %v", got)
	}
	if p := e.cl.fn.GetPort(storageVIF); p["binding:host_id"] != n.UUID || p["mac_address"] != *ports[1].Address {
		t.Fatalf("neutron port %v", p)
	}
	// The storage port is taken now: the trait matches nothing more, and
	// [conductor]/trait_based_networking_raise_when_no_match (default) fails
	// with upstream's class (whose message upstream's typo leaves generic).
	wantClass(t, e.api.VifAttach(ctx, "", n.UUID, map[string]any{"id": bondVIF}), errs.ClassTBNNoPortMatchesFound, "An unknown exception occurred.")
	// The failure is in the node's history, as master's conductor records it.
	hist, err := e.st.ListNodeHistory(ctx, n.ID, store.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := "Failed to attach VIF " + bondVIF + " to node " + n.UUID + ". Error: An unknown exception occurred."
	if len(hist) != 1 || model.Deref(hist[0].Event) != want || model.Deref(hist[0].Severity) != "ERROR" || model.Deref(hist[0].EventType) != states.Manageable {
		t.Fatalf("history %+v", hist)
	}
}

// group_and_attach_ports makes the ports a dynamic portgroup that holds
// the VIF; detaching it dissolves the group.
func TestTraitBasedDynamicPortgroupThroughConductor(t *testing.T) {
	ctx := context.Background()
	e := newTBNEnv(t, nil)
	n, ports := e.node(t, []any{"CUSTOM_BOND"}, "general", "storage")
	if err := e.api.VifAttach(ctx, "", n.UUID, map[string]any{"id": bondVIF}); err != nil {
		t.Fatal(err)
	}
	pgs := e.portgroups(t, n)
	if len(pgs) != 1 || !strings.HasPrefix(model.Deref(pgs[0].Name), "tbn_dyn_portgroup_") || len(model.Deref(pgs[0].Name)) != len("tbn_dyn_portgroup_")+8 ||
		pgs[0].DynamicPortgroup == nil || !*pgs[0].DynamicPortgroup || model.Deref(pgs[0].PhysicalNetwork) != "fabric" ||
		pgs[0].InternalInfo["tenant_vif_port_id"] != bondVIF {
		t.Fatalf("portgroups %+v", pgs)
	}
	for _, p := range ports {
		if got := e.port(t, p); got.PortgroupID == nil || *got.PortgroupID != pgs[0].ID || got.InternalInfo["tenant_vif_port_id"] != nil {
			t.Fatalf("port %s: portgroup %v, internal_info %v", p.UUID, got.PortgroupID, got.InternalInfo)
		}
	}
	if p := e.cl.fn.GetPort(bondVIF); p["binding:host_id"] != n.UUID {
		t.Fatalf("neutron port %v", p)
	}
	if err := e.api.VifDetach(ctx, "", n.UUID, bondVIF); err != nil {
		t.Fatal(err)
	}
	if pgs := e.portgroups(t, n); len(pgs) != 0 {
		t.Fatalf("dynamic portgroup kept: %+v", pgs)
	}
	for _, p := range ports {
		if got := e.port(t, p); got.PortgroupID != nil {
			t.Fatalf("port %s still in portgroup %d", p.UUID, *got.PortgroupID)
		}
	}
}

// Nodes none of whose traits the file names: the default trait (on by
// default) attaches the newest free port; without it, upstream's error
// or, with raise_when_no_match off, nothing attached and no error.
func TestTraitBasedNoApplicableTrait(t *testing.T) {
	ctx := context.Background()
	t.Run("default trait", func(t *testing.T) {
		e := newTBNEnv(t, nil)
		n, ports := e.node(t, []any{"CUSTOM_OTHER"}, "general", "storage")
		if err := e.api.VifAttach(ctx, "", n.UUID, map[string]any{"id": storageVIF}); err != nil {
			t.Fatal(err)
		}
		if got := e.port(t, ports[1]).InternalInfo["tenant_vif_port_id"]; got != storageVIF {
			t.Fatalf("newest port VIF %v", got)
		}
	})
	t.Run("raise", func(t *testing.T) {
		e := newTBNEnv(t, map[string]string{"trait_based_networking_enable_default_trait": "false"})
		n, _ := e.node(t, nil, "general")
		wantClass(t, e.api.VifAttach(ctx, "", n.UUID, map[string]any{"id": storageVIF}), errs.ClassTBNNoTraitsApplicableToNode,
			"No Trait Based Networking traits were found which could apply to the node "+n.UUID+".")
	})
	t.Run("warn", func(t *testing.T) {
		e := newTBNEnv(t, map[string]string{"trait_based_networking_enable_default_trait": "false", "trait_based_networking_raise_when_no_match": "false"})
		n, ports := e.node(t, []any{"CUSTOM_OTHER"}, "general")
		if err := e.api.VifAttach(ctx, "", n.UUID, map[string]any{"id": storageVIF}); err != nil {
			t.Fatal(err)
		}
		if got := e.port(t, ports[0]).InternalInfo["tenant_vif_port_id"]; got != nil {
			t.Fatalf("port took VIF %v", got)
		}
		// No match under a trait: nothing attached, no error either.
		n, ports = e.node(t, []any{"CUSTOM_STORAGE"}, "general")
		if err := e.api.VifAttach(ctx, "", n.UUID, map[string]any{"id": storageVIF}); err != nil {
			t.Fatal(err)
		}
		if got := e.port(t, ports[0]).InternalInfo["tenant_vif_port_id"]; got != nil {
			t.Fatalf("port took VIF %v", got)
		}
	})
}

// The conductor does not start on a traits file it cannot use.
func TestTraitBasedInvalidFileRefusesStart(t *testing.T) {
	cl := newCloud(t)
	path := filepath.Join(t.TempDir(), "tbn.yaml")
	if err := os.WriteFile(path, []byte("CUSTOM_X:\n  actions:\n    - action: attach_port\n      filter: port.vendor &= 'x'\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := cl.configWith(t, true, map[string]map[string]string{"conductor": {
		"enable_trait_based_networking": "true", "trait_based_networking_config_file": path}})
	_, err := DriversWithPorts(cfg, store.New(storetest.Backends(t)[0].DB))
	wantClass(t, err, errs.ClassIncorrectConfiguration,
		"Supplied configuration is incorrect and must be fixed. Error: Trait Based Networking configuration file could not be loaded or is invalid.")
}
