package conductor_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/openkeel/ironic/internal/conductor"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/driver/agent"
	"github.com/openkeel/ironic/internal/driver/fake"
	"github.com/openkeel/ironic/internal/driver/noop"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/rpc"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store"
	"github.com/openkeel/ironic/internal/store/sqldb"
	"github.com/openkeel/ironic/testing/fakeclock"
)

// componentsFirmware is a firmware interface that, like redfish, reads
// the node's components and leaves storing them to the conductor.
type componentsFirmware struct{ version string }

func (f *componentsFirmware) Properties() map[string]string                { return map[string]string{} }
func (f *componentsFirmware) Steps() []driver.StepSpec                     { return nil }
func (f *componentsFirmware) Validate(context.Context, *driver.Task) error { return nil }
func (f *componentsFirmware) Update(context.Context, *driver.Task, []map[string]any) (string, error) {
	return "", nil
}
func (f *componentsFirmware) CacheFirmwareComponents(context.Context, *driver.Task) error {
	return errors.New("the conductor must read the components, not ask the interface to cache them")
}
func (f *componentsFirmware) FirmwareComponents(context.Context, *driver.Task) ([]model.FirmwareComponent, error) {
	v := f.version
	return []model.FirmwareComponent{{Component: "bios", CurrentVersion: &v}}, nil
}

// Upstream caches the firmware components when inspection data has been
// processed, while the ramdisk still runs: some BMCs only report NIC
// firmware of a powered-on node.
func TestContinueInspectionCachesFirmwareComponents(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newFirmwareInspectEnv(t, db, &componentsFirmware{version: "1.2.3"})
		ctx := context.Background()
		n := e.node(states.Manageable, func(n *model.Node) { n.InspectInterface, n.FirmwareInterface = "agent", "components" })
		waiting := e.inspectUntilWait(n)
		if fw, err := e.st.ListFirmwareComponents(ctx, waiting.ID); err != nil || len(fw) != 0 {
			t.Fatalf("components before the ramdisk reported: %v %v", fw, err)
		}
		inv, pd := ramdiskData(t)
		if err := e.api.ContinueInspection(ctx, "", n.UUID, inv, pd); err != nil {
			t.Fatal(err)
		}
		got := e.waitState(n, states.Manageable)
		e.expect(got, states.Manageable, "", "")
		fw, err := e.st.ListFirmwareComponents(ctx, got.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(fw) != 1 || fw[0].Component != "bios" || deref(fw[0].CurrentVersion) != "1.2.3" || fw[0].InitialVersion != "1.2.3" {
			t.Fatalf("components after inspection: %+v", fw)
		}
	})
}

// newFirmwareInspectEnv is a conductor whose fake-hardware nodes may use
// the agent inspect interface and fw, registered as "components".
func newFirmwareInspectEnv(t *testing.T, db *sqldb.DB, fw driver.Interface) *env {
	t.Helper()
	cfg, err := config.Load(config.LoadOptions{Overrides: map[string]map[string]string{
		"conductor": hwConductorOff, "agent": {"require_tls": "false"},
	}})
	if err != nil {
		t.Fatalf("load config: %v", err)
	}
	clock := fakeclock.NewWall()
	st := store.New(db, store.WithClock(clock.Now))
	r := driver.NewRegistry()
	for _, h := range driver.StockHardwareTypes() {
		if err := r.AddHardwareType(h); err != nil {
			t.Fatal(err)
		}
	}
	if err := fake.Register(r, fake.Delays{}); err != nil {
		t.Fatal(err)
	}
	if err := noop.Register(r); err != nil {
		t.Fatal(err)
	}
	if err := agent.RegisterInspect(r, agent.InspectOptions{CallbackURL: agent.InspectCallbackURL("", "http://127.0.0.1:6385")}); err != nil {
		t.Fatal(err)
	}
	if err := r.Register(driver.KindFirmware, "components", fw); err != nil {
		t.Fatal(err)
	}
	fakeOnly := []string{"fake"}
	d, err := r.Build(driver.Settings{
		EnabledHardwareTypes: []string{"fake-hardware"},
		EnabledInterfaces: map[driver.Kind][]string{
			driver.KindBIOS: fakeOnly, driver.KindBoot: fakeOnly, driver.KindConsole: {"no-console"},
			driver.KindDeploy: fakeOnly, driver.KindFirmware: {"fake", "components"}, driver.KindInspect: {"agent", "fake"},
			driver.KindManagement: fakeOnly, driver.KindNetwork: {"noop"}, driver.KindPower: fakeOnly,
			driver.KindRAID: fakeOnly, driver.KindRescue: {"no-rescue"}, driver.KindStorage: {"noop"},
			driver.KindVendor: fakeOnly,
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, st: st, db: db, clock: clock, cfg: cfg, drivers: d}
	e.c, err = conductor.New(conductor.Options{Store: st, Drivers: d, Config: cfg, Host: testHost, Clock: clock, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	e.api = rpc.NewLocal(e.c, slog.New(slog.DiscardHandler))
	e.start(e.c)
	return e
}
