package ironicnetworking

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store"
	"github.com/openkeel/ironic/internal/store/storetest"
)

// switches records the service calls; fail makes calls on a port fail.
type switches struct {
	mu    sync.Mutex
	calls []string
	fail  map[string]bool
}

func (s *switches) UpdatePort(_ context.Context, sw, port, _, mode string, native int, allowed []int, def int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail[port] {
		return errs.NewMessage(errs.ClassNetworkError, "Failed to configure network port: boom")
	}
	s.calls = append(s.calls, fmt.Sprintf("update %s %s %s %d %v %d", sw, port, mode, native, allowed, def))
	return nil
}

func (s *switches) ResetPort(_ context.Context, sw, port string, native int, allowed []int, def int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail[port] {
		return errs.NewMessage(errs.ClassNetworkError, "Failed to reset network port: boom")
	}
	s.calls = append(s.calls, fmt.Sprintf("reset %s %s %d %v %d", sw, port, native, allowed, def))
	return nil
}

func (s *switches) take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.calls
	s.calls = nil
	return out
}

type fixture struct {
	st    store.Store
	iface *Interface
	sw    *switches
	task  *driver.Task
	ports []*model.Port
}

func ptr[T any](v T) *T { return &v }

// newFixture is a node in state with a port per entry of extras: port i
// on switch port Gi0/i, PXE enabled for the first only; a nil extra has
// no switchport, and the last port has no local_link_connection.
func newFixture(t *testing.T, state string, networks map[string]string, extras ...map[string]any) *fixture {
	t.Helper()
	ctx := context.Background()
	st := store.New(storetest.Backends(t)[0].DB)
	n, err := st.CreateNode(ctx, &model.Node{Driver: "fake-hardware", ProvisionState: state, DriverInfo: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	sw := &switches{fail: map[string]bool{}}
	f := &fixture{st: st, sw: sw, iface: New(st, Options{Networks: networks, Service: func() (Switches, error) { return sw, nil }})}
	for i, extra := range extras {
		p := &model.Port{Address: ptr(fmt.Sprintf("52:54:00:00:00:%02d", i)), NodeID: &n.ID, PXEEnabled: ptr(i == 0), Extra: map[string]any{}}
		if extra != nil {
			p.Extra["switchport"] = extra
		}
		if i < len(extras)-1 || len(extras) == 1 {
			p.LocalLinkConnection = map[string]any{"switch_id": "aa:bb:cc:dd:ee:ff", "port_id": fmt.Sprintf("Gi0/%d", i)}
		}
		if p, err = st.CreatePort(ctx, p); err != nil {
			t.Fatal(err)
		}
		f.ports = append(f.ports, p)
	}
	f.task = &driver.Task{Node: n}
	return f
}

func access(vlan float64) map[string]any {
	return map[string]any{"mode": "access", "native_vlan": vlan}
}

func wantErr(t *testing.T, err error, class errs.Class, msg string) {
	t.Helper()
	if !errs.Is(err, class) || err.Error() != msg {
		t.Fatalf("error = %v, want %s %q", err, class, msg)
	}
}

func TestValidate(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, states.Manageable, nil, map[string]any{"mode": "trunk", "native_vlan": 5.0, "allowed_vlans": []any{5.0, 6.0}})
	p := f.ports[0]
	wantErr(t, f.iface.Validate(ctx, f.task), errs.ClassInvalidParameterValue,
		"Port "+p.UUID+" is PXE-enabled but has switchport mode 'trunk'. PXE-enabled ports must use 'access' mode when switchport configuration is present.")

	for _, tc := range []struct {
		sp  map[string]any
		ll  map[string]any
		msg string
	}{
		{access(5000), p.LocalLinkConnection, "Invalid switchport configuration for port " + p.UUID + ": 5000 is greater than the maximum of 4094"},
		{map[string]any{"mode": "access"}, p.LocalLinkConnection, "Invalid switchport configuration for port " + p.UUID + ": 'native_vlan' is a required property"},
		{map[string]any{"mode": "access", "native_vlan": 5.0, "allowed_vlans": []any{5.0}}, p.LocalLinkConnection,
			"Invalid switchport configuration for port " + p.UUID + ": {'allowed_vlans': [5], 'mode': 'access', 'native_vlan': 5} should not be valid under {'required': ['allowed_vlans']}"},
		{access(5), map[string]any{"switch_id": "aa:bb:cc:dd:ee:ff"}, "Port " + p.UUID + " local_link_connection missing required field(s): 'port_id'"},
		{access(5), nil, "Port " + p.UUID + " has switchport configuration but is missing local_link_connection in state: manageable."},
	} {
		p.Extra["switchport"], p.LocalLinkConnection = tc.sp, tc.ll
		if _, err := f.st.UpdatePort(ctx, p, "extra", "local_link_connection"); err != nil {
			t.Fatal(err)
		}
		wantErr(t, f.iface.Validate(ctx, f.task), errs.ClassInvalidParameterValue, tc.msg)
	}
	// Inspection may fill local_link_connection in from LLDP.
	f.task.Node.ProvisionState = states.InspectWait
	if err := f.iface.Validate(ctx, f.task); err != nil {
		t.Fatal(err)
	}

	pg, err := f.st.CreatePortgroup(ctx, &model.Portgroup{NodeID: &f.task.Node.ID, Extra: map[string]any{"lag": map[string]any{"mode": "access", "aggregation_mode": "lacp"}}})
	if err != nil {
		t.Fatal(err)
	}
	wantErr(t, f.iface.Validate(ctx, f.task), errs.ClassInvalidParameterValue, "Portgroup "+pg.UUID+" has LAG configuration but no member ports")
	pg.Extra["lag"] = map[string]any{"mode": "access", "aggregation_mode": "bond"}
	if _, err := f.st.UpdatePortgroup(ctx, pg, "extra"); err != nil {
		t.Fatal(err)
	}
	wantErr(t, f.iface.Validate(ctx, f.task), errs.ClassInvalidParameterValue,
		"Invalid LAG configuration for portgroup "+pg.UUID+": 'bond' is not one of ['lacp', 'static']")
	if len(f.sw.take()) != 0 {
		t.Fatal("validation called the switches")
	}
}

// Each service network puts the ports on its VLAN (driver_info over the
// option), falls back to the port's switchport when unset, and skips
// ports with neither or without a local_link_connection.
func TestServiceNetworks(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, states.Manageable, map[string]string{Provisioning: "access/native_vlan=100", Idle: "access/native_vlan=10", Cleaning: "access/native_vlan=110"},
		access(200), nil, access(300))
	if err := f.iface.AddProvisioningNetwork(ctx, f.task); err != nil {
		t.Fatal(err)
	}
	want := []string{"update aa:bb:cc:dd:ee:ff Gi0/0 access 100 [] 10", "update aa:bb:cc:dd:ee:ff Gi0/1 access 100 [] 10"}
	if got := f.sw.take(); !slices.Equal(got, want) {
		t.Fatalf("provisioning:\n got  %q\n want %q", got, want)
	}
	f.task.Node.DriverInfo["cleaning_network"] = "trunk/native_vlan=5/allowed_vlans=5-6"
	if err := f.iface.RemoveCleaningNetwork(ctx, f.task); err != nil {
		t.Fatal(err)
	}
	want = []string{"reset aa:bb:cc:dd:ee:ff Gi0/0 5 [5 6] 10", "reset aa:bb:cc:dd:ee:ff Gi0/1 5 [5 6] 10"}
	if got := f.sw.take(); !slices.Equal(got, want) {
		t.Fatalf("cleaning from driver_info:\n got  %q\n want %q", got, want)
	}
	// No rescuing network: each port's own switchport, where it has one.
	if err := f.iface.AddRescuingNetwork(ctx, f.task); err != nil {
		t.Fatal(err)
	}
	want = []string{"update aa:bb:cc:dd:ee:ff Gi0/0 access 200 [] 10"}
	if got := f.sw.take(); !slices.Equal(got, want) {
		t.Fatalf("rescuing from switchport:\n got  %q\n want %q", got, want)
	}
	if err := f.iface.ConfigureTenantNetworks(ctx, f.task); err != nil {
		t.Fatal(err)
	}
	if got := f.sw.take(); !slices.Equal(got, want) {
		t.Fatalf("tenant:\n got  %q\n want %q", got, want)
	}
	f.task.Node.DriverInfo["servicing_network"] = "bridge/native_vlan=1"
	wantErr(t, f.iface.AddServicingNetwork(ctx, f.task), errs.ClassInvalidParameterValue,
		"Invalid servicing network value 'bridge/native_vlan=1'. Expected: {access|trunk|hybrid}/native_vlan=VLAN_ID[/allowed_vlans=V1,V2,Vn-Vm,...]. Error: mode must be one of ('access', 'trunk', 'hybrid'), got 'bridge'")
}

// Adding stops at the first failing port; removing tries every port and
// reports all failures, as master.
func TestSwitchFailures(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, states.Manageable, map[string]string{Inspection: "access/native_vlan=120"}, access(200), access(300), access(400))
	f.sw.fail["Gi0/0"] = true
	wantErr(t, f.iface.AddInspectionNetwork(ctx, f.task), errs.ClassNetworkError,
		"Failed to configure inspection network for port "+f.ports[0].UUID+": Failed to configure network port: boom")
	if got := f.sw.take(); len(got) != 0 {
		t.Fatalf("calls after the failing port: %q", got)
	}
	wantErr(t, f.iface.RemoveInspectionNetwork(ctx, f.task), errs.ClassNetworkError,
		"Failed to reset inspection network, errors: ['Failed to reset inspection network for port "+f.ports[0].UUID+": Failed to reset network port: boom']")
	if got := f.sw.take(); !slices.Equal(got, []string{"reset aa:bb:cc:dd:ee:ff Gi0/1 120 [] 0"}) {
		t.Fatalf("other ports not reset: %q", got)
	}
	wantErr(t, f.iface.UnconfigureTenantNetworks(ctx, f.task), errs.ClassNetworkError,
		"Failed to reset ports for tenant network, errors: ['Failed to reset tenant network for port "+f.ports[0].UUID+": Failed to reset network port: boom']")

	down := New(f.st, Options{Service: func() (Switches, error) {
		return nil, errs.NewMessage(errs.ClassConfigInvalid, "Invalid configuration file. No switch drivers loaded")
	}})
	err := down.ConfigureTenantNetworks(ctx, f.task)
	if !errs.Is(err, errs.ClassNetworkError) || !strings.Contains(err.Error(), "No switch drivers loaded") {
		t.Fatalf("service that cannot start: %v", err)
	}
}

// A changed switchport or local_link_connection moves the switch port
// for the network the node's state is on.
func TestPortChanged(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, states.Active, nil, access(200))
	p := *f.ports[0]
	p.Extra = map[string]any{"switchport": access(300)}
	if err := f.iface.PortChanged(ctx, f.task, &p); err != nil {
		t.Fatal(err)
	}
	if got := f.sw.take(); !slices.Equal(got, []string{"update aa:bb:cc:dd:ee:ff Gi0/0 access 300 [] 0"}) {
		t.Fatalf("switchport changed: %q", got)
	}
	p.LocalLinkConnection = map[string]any{"switch_id": "aa:bb:cc:dd:ee:ff", "port_id": "Gi0/9"}
	if err := f.iface.PortChanged(ctx, f.task, &p); err != nil {
		t.Fatal(err)
	}
	want := []string{"reset aa:bb:cc:dd:ee:ff Gi0/0 200 [] 0", "update aa:bb:cc:dd:ee:ff Gi0/9 access 300 [] 0"}
	if got := f.sw.take(); !slices.Equal(got, want) {
		t.Fatalf("moved to another switch port:\n got  %q\n want %q", got, want)
	}
	p.Extra = map[string]any{}
	if err := f.iface.PortChanged(ctx, f.task, &p); err != nil {
		t.Fatal(err)
	}
	if got := f.sw.take(); !slices.Equal(got, []string{"reset aa:bb:cc:dd:ee:ff Gi0/0 200 [] 0"}) {
		t.Fatalf("switchport removed: %q", got)
	}
}

func TestNetworkData(t *testing.T) {
	f := newFixture(t, states.Manageable, nil, access(10), map[string]any{"mode": "trunk", "native_vlan": 10.0, "allowed_vlans": []any{20.0}})
	nd, err := f.iface.GetNodeNetworkData(context.Background(), f.task)
	if err != nil {
		t.Fatal(err)
	}
	links, _ := nd["links"].([]any)
	if len(links) != 3 {
		t.Fatalf("links %v", links)
	}
	vlan := links[2].(map[string]any)
	if vlan["type"] != "vlan" || vlan["vlan_link"] != f.ports[1].UUID || vlan["id"] != f.ports[1].UUID+"_vlan_20" {
		t.Fatalf("vlan link %v", vlan)
	}
}
