package network

import (
	"context"
	"testing"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/store"
	"github.com/openkeel/ironic/internal/store/storetest"
)

type fixture struct {
	st    store.Store
	task  *driver.Task
	ports []*model.Port
}

func ptr[T any](v T) *T { return &v }

// newFixture is a node with two ports, the second not PXE enabled.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	st := store.New(storetest.Backends(t)[0].DB)
	n, err := st.CreateNode(ctx, &model.Node{Driver: "ipmi"})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{st: st, task: &driver.Task{Node: n}}
	for i, mac := range []string{"52:54:00:aa:bb:01", "52:54:00:aa:bb:02"} {
		p, err := st.CreatePort(ctx, &model.Port{Address: ptr(mac), NodeID: &n.ID, PXEEnabled: ptr(i == 0)})
		if err != nil {
			t.Fatal(err)
		}
		f.ports = append(f.ports, p)
	}
	return f
}

func (f *fixture) port(t *testing.T, i int) *model.Port {
	t.Helper()
	p, err := f.st.GetPortByID(context.Background(), f.ports[i].ID)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestFlatVifAttachListDetach(t *testing.T) {
	ctx := context.Background()
	fx := newFixture(t)
	fl := &Flat{Ports: fx.st}
	if err := fl.Validate(ctx, fx.task); err != nil {
		t.Fatal(err)
	}
	if err := fl.VifAttach(ctx, fx.task, map[string]any{"id": "vif-1"}); err != nil {
		t.Fatal(err)
	}
	// The PXE-enabled port is preferred.
	if got := fx.port(t, 0).InternalInfo[TenantVIFKey]; got != "vif-1" {
		t.Fatalf("port 0 internal_info = %v", fx.port(t, 0).InternalInfo)
	}
	err := fl.VifAttach(ctx, fx.task, map[string]any{"id": "vif-1"})
	if !errs.Is(err, errs.ClassVifAlreadyAttached) || errs.Status(err) != 409 ||
		err.Error() != "Unable to attach VIF because VIF vif-1 is already attached to Ironic Port "+fx.ports[0].UUID {
		t.Fatalf("second attach = %v", err)
	}
	if err := fl.VifAttach(ctx, fx.task, map[string]any{"id": "vif-2"}); err != nil {
		t.Fatal(err)
	}
	if got := fx.port(t, 1).InternalInfo[TenantVIFKey]; got != "vif-2" {
		t.Fatalf("port 1 internal_info = %v", fx.port(t, 1).InternalInfo)
	}
	err = fl.VifAttach(ctx, fx.task, map[string]any{"id": "vif-3"})
	if !errs.Is(err, errs.ClassNoFreePhysicalPorts) || err.Error() != "Unable to attach VIF vif-3, not enough free physical ports." {
		t.Fatalf("third attach = %v", err)
	}
	vifs, err := fl.VifList(ctx, fx.task)
	if err != nil || len(vifs) != 2 || vifs[0]["id"] != "vif-1" || vifs[1]["id"] != "vif-2" {
		t.Fatalf("list = %v, %v", vifs, err)
	}
	cur, _ := fl.GetCurrentVif(ctx, fx.task, map[string]any{TenantVIFKey: "vif-1", "cleaning_vif_port_id": "c"})
	if cur != "c" {
		t.Errorf("current vif = %q, want the cleaning one", cur)
	}
	if err := fl.VifDetach(ctx, fx.task, "vif-1"); err != nil {
		t.Fatal(err)
	}
	if _, ok := fx.port(t, 0).InternalInfo[TenantVIFKey]; ok {
		t.Errorf("detached VIF still recorded: %v", fx.port(t, 0).InternalInfo)
	}
	err = fl.VifDetach(ctx, fx.task, "vif-1")
	if !errs.Is(err, errs.ClassVifNotAttached) || err.Error() != "Unable to detach VIF vif-1 from node "+fx.task.Node.UUID+" because it is not attached to it." {
		t.Fatalf("second detach = %v", err)
	}
	vifs, _ = fl.VifList(ctx, fx.task)
	if len(vifs) != 1 || vifs[0]["id"] != "vif-2" {
		t.Fatalf("list after detach = %v", vifs)
	}
}

func TestFlatLegacyExtraVif(t *testing.T) {
	ctx := context.Background()
	fx := newFixture(t)
	p := fx.port(t, 1)
	p.Extra = map[string]any{"vif_port_id": "old"}
	if _, err := fx.st.UpdatePort(ctx, p, "extra"); err != nil {
		t.Fatal(err)
	}
	fl := &Flat{Ports: fx.st}
	if vifs, _ := fl.VifList(ctx, fx.task); len(vifs) != 1 || vifs[0]["id"] != "old" {
		t.Fatalf("list = %v", vifs)
	}
	if err := fl.VifAttach(ctx, fx.task, map[string]any{"id": "old"}); !errs.Is(err, errs.ClassVifAlreadyAttached) {
		t.Fatalf("attach = %v", err)
	}
	if err := fl.VifDetach(ctx, fx.task, "old"); err != nil {
		t.Fatal(err)
	}
	if _, ok := fx.port(t, 1).Extra["vif_port_id"]; ok {
		t.Error("legacy extra key survived detach")
	}
}

func TestFlatPrefersPortgroup(t *testing.T) {
	ctx := context.Background()
	fx := newFixture(t)
	pg, err := fx.st.CreatePortgroup(ctx, &model.Portgroup{NodeID: &fx.task.Node.ID, Address: ptr("52:54:00:aa:bb:10"), StandalonePortsSupported: ptr(false)})
	if err != nil {
		t.Fatal(err)
	}
	p := fx.port(t, 1)
	p.PortgroupID = &pg.ID
	if _, err := fx.st.UpdatePort(ctx, p, "portgroup_id"); err != nil {
		t.Fatal(err)
	}
	fl := &Flat{Ports: fx.st}
	if err := fl.VifAttach(ctx, fx.task, map[string]any{"id": "v"}); err != nil {
		t.Fatal(err)
	}
	got, _ := fx.st.GetPortgroupByID(ctx, pg.ID)
	if got.InternalInfo[TenantVIFKey] != "v" {
		t.Fatalf("portgroup internal_info = %v", got.InternalInfo)
	}
	vifs, _ := fl.VifList(ctx, fx.task)
	if len(vifs) != 1 {
		t.Fatalf("list = %v", vifs)
	}
	// A PXE-enabled member cannot join a group without standalone ports.
	member := fx.port(t, 0)
	member.PortgroupID = &pg.ID
	err = fl.PortChanged(ctx, fx.task, member)
	if !errs.Is(err, errs.ClassConflict) || errs.Status(err) != 409 {
		t.Fatalf("port changed = %v", err)
	}
	// Turning standalone ports off is fine while the only member is
	// PXE-disabled and carries no VIF, refused once it carries one.
	pg.StandalonePortsSupported = ptr(true)
	if _, err := fx.st.UpdatePortgroup(ctx, pg, "standalone_ports_supported"); err != nil {
		t.Fatal(err)
	}
	pg.StandalonePortsSupported = ptr(false)
	if err := fl.PortgroupChanged(ctx, fx.task, pg); err != nil {
		t.Fatalf("portgroup changed with a plain member = %v", err)
	}
	p = fx.port(t, 1)
	p.InternalInfo = map[string]any{TenantVIFKey: "x"}
	if _, err := fx.st.UpdatePort(ctx, p, "internal_info"); err != nil {
		t.Fatal(err)
	}
	err = fl.PortgroupChanged(ctx, fx.task, pg)
	if !errs.Is(err, errs.ClassConflict) || err.Error() != "standalone_ports_supported can not be set to False, because the port group "+pg.UUID+" contains port with VIF x is attached to this port" {
		t.Fatalf("portgroup changed = %v", err)
	}
}

func TestFlatNetworkHooksAndMissingStore(t *testing.T) {
	ctx := context.Background()
	fl := &Flat{}
	tk := &driver.Task{Node: &model.Node{UUID: "n"}}
	if err := fl.Validate(ctx, tk); !errs.Is(err, errs.ClassInvalidParameterValue) {
		t.Errorf("validate without store = %v", err)
	}
	for name, hook := range map[string]func(context.Context, *driver.Task) error{
		"add provisioning": fl.AddProvisioningNetwork, "remove provisioning": fl.RemoveProvisioningNetwork,
		"configure tenant": fl.ConfigureTenantNetworks, "unconfigure tenant": fl.UnconfigureTenantNetworks,
		"add cleaning": fl.AddCleaningNetwork, "remove cleaning": fl.RemoveCleaningNetwork,
	} {
		if err := hook(ctx, tk); err != nil {
			t.Errorf("%s = %v", name, err)
		}
	}
	if err := fl.VifAttach(ctx, tk, map[string]any{}); !errs.Is(err, errs.ClassMissingParameterValue) {
		t.Errorf("attach without id = %v", err)
	}
	r := driver.NewRegistry()
	if err := Register(r, nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, ok := r.Implementation(driver.KindNetwork, "flat"); !ok {
		t.Error("flat not registered")
	}
}

// vif_info's port_uuid picks the port (API 1.67), over the PXE preference.
func TestFlatVifAttachToChosenPort(t *testing.T) {
	ctx := context.Background()
	fx := newFixture(t)
	fl := &Flat{Ports: fx.st}
	if err := fl.VifAttach(ctx, fx.task, map[string]any{"id": "vif-1", "port_uuid": fx.ports[1].UUID}); err != nil {
		t.Fatal(err)
	}
	if fx.port(t, 1).InternalInfo[TenantVIFKey] != "vif-1" || fx.port(t, 0).InternalInfo[TenantVIFKey] != nil {
		t.Fatalf("internal_info %v / %v", fx.port(t, 0).InternalInfo, fx.port(t, 1).InternalInfo)
	}
	err := fl.VifAttach(ctx, fx.task, map[string]any{"id": "vif-2", "port_uuid": fx.ports[1].UUID})
	if !errs.Is(err, errs.ClassNoFreePhysicalPorts) {
		t.Fatalf("chosen port busy: %v", err)
	}
	err = fl.VifAttach(ctx, fx.task, map[string]any{"id": "vif-2", "portgroup_uuid": "00000000-0000-4000-8000-000000000000"})
	if !errs.Is(err, errs.ClassNoFreePhysicalPorts) {
		t.Fatalf("unknown portgroup: %v", err)
	}
}
