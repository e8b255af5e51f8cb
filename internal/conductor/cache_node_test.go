package conductor_test

import (
	"context"
	"errors"
	"testing"

	"github.com/openkeel/ironic/internal/conductor"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/driver/agent"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store/sqldb"
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
	e := newStoreEnv(t, db, testConfig(t, map[string]map[string]string{"agent": {"require_tls": "false"}}))
	r := stockRegistry(t)
	if err := agent.RegisterInspect(r, agent.InspectOptions{CallbackURL: agent.InspectCallbackURL("", "http://127.0.0.1:6385")}); err != nil {
		t.Fatal(err)
	}
	mustRegister(t, r, driver.KindFirmware, "components", fw)
	e.drivers = buildFakeHardware(t, r, map[driver.Kind][]string{
		driver.KindFirmware: {"fake", "components"}, driver.KindInspect: {"agent", "fake"},
	})
	e.run(conductor.Options{})
	return e
}
