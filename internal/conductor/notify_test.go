package conductor_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/conductor"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/notify"
	"github.com/openkeel/ironic/internal/notify/notifytest"
	"github.com/openkeel/ironic/internal/nova"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store/sqldb"
	"github.com/openkeel/ironic/testing/await"
	novafixture "github.com/openkeel/ironic/testing/nova"
)

const novaInstance = "1be26c0b-03f2-4d2e-ae87-c02d7f33c123"

// notifyingEnv runs a conductor that notifies into a recorder and posts
// power events to a Nova fixture.
func notifyingEnv(t *testing.T, db *sqldb.DB, opts ...envOption) (*env, *notifytest.Recorder, *novafixture.Fixture) {
	t.Helper()
	e := newEnv(t, db, append(opts, withoutStart())...)
	rec := &notifytest.Recorder{}
	fx := novafixture.New(t).Instance(novaInstance)
	novaCfg, err := config.Load(config.LoadOptions{Overrides: map[string]map[string]string{"nova": {"auth_type": "none", "endpoint_override": fx.Endpoint()}}})
	if err != nil {
		t.Fatal(err)
	}
	e.run(conductor.Options{
		Notifier: notify.New(notify.Options{Service: notify.ServiceConductor, Host: testHost, Level: "info", Drivers: []notify.Driver{rec}}),
		Nova:     nova.FromConfig(novaCfg, nil, nil),
	})
	return e, rec, fx
}

func withInstance(n *model.Node) {
	id := novaInstance
	n.InstanceUUID = &id
}

// Scenario 4 of seed 001 at the conductor: power changed behind Ironic's
// back is recorded by the sync (force off), Nova hears power-update and
// power_state_corrected is sent with the state it replaced.
func TestPowerDriftNotifiesNova(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e, rec, fx := notifyingEnv(t, db, withConf("conductor", "force_power_state_during_sync", "false"))
		n := e.node(states.Active, flaky, withInstance, func(n *model.Node) { n.PowerState = states.PowerOn })
		e.power.reading(states.PowerOff, nil)
		e.c.SyncPowerStates(context.Background())
		if got := e.get(n); got.PowerState != states.PowerOff {
			t.Fatalf("power %q", got.PowerState)
		}
		ev := fx.Accepted()
		if len(ev) != 1 || ev[0].Name != "power-update" || ev[0].ServerUUID != novaInstance || ev[0].Tag != "POWER_OFF" {
			t.Fatalf("nova events %+v", ev)
		}
		m := rec.Find("baremetal.node.power_state_corrected.success")
		if m == nil {
			t.Fatalf("no power_state_corrected: %v", rec.Events())
		}
		d := m.Payload.Data
		if m.Payload.Name != "NodeCorrectedPowerStatePayload" || d["from_power"] != states.PowerOn || d["power_state"] != states.PowerOff || d["uuid"] != n.UUID || m.Priority != "INFO" {
			t.Errorf("payload %s %v", m.Payload.Name, d)
		}
	})
}

// A power action through the API sends power_set start and end and tells
// Nova of the instance's new state, as node_power_action does.
func TestPowerActionNotifies(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e, rec, fx := notifyingEnv(t, db)
		n := e.node(states.Active, flaky, withInstance, func(n *model.Node) { n.PowerState = states.PowerOff })
		e.power.reading(states.PowerOff, nil)
		if err := e.api.ChangeNodePowerState(context.Background(), "", n.UUID, states.PowerOn, 0); err != nil {
			t.Fatal(err)
		}
		await.Until(t, 10*time.Second, "power_set.end", func() bool { return rec.Find("baremetal.node.power_set.end") != nil })
		if got := rec.Events(); !slices.Equal(got, []string{"baremetal.node.power_set.start", "baremetal.node.power_set.end"}) {
			t.Errorf("events %v", got)
		}
		if d := rec.Find("baremetal.node.power_set.end").Payload.Data; d["to_power"] != states.PowerOn || d["power_state"] != states.PowerOn {
			t.Errorf("end payload to_power %v power_state %v", d["to_power"], d["power_state"])
		}
		if ev := fx.Accepted(); len(ev) != 1 || ev[0].Tag != "POWER_ON" {
			t.Errorf("nova events %+v", ev)
		}
	})
}

// Nova failing does not fail the sync: the state is recorded and the
// notification sent all the same.
func TestPowerDriftWithNovaDown(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e, rec, fx := notifyingEnv(t, db, withConf("conductor", "force_power_state_during_sync", "false"))
		fx.FailNext(500)
		n := e.node(states.Active, flaky, withInstance, func(n *model.Node) { n.PowerState = states.PowerOn })
		e.power.reading(states.PowerOff, nil)
		e.c.SyncPowerStates(context.Background())
		if got := e.get(n); got.PowerState != states.PowerOff || got.Maintenance {
			t.Fatalf("power %q maintenance %v", got.PowerState, got.Maintenance)
		}
		if len(fx.Requests()) != 1 || len(fx.Accepted()) != 0 {
			t.Errorf("nova requests %+v", fx.Requests())
		}
		if rec.Find("baremetal.node.power_state_corrected.success") == nil {
			t.Errorf("events %v", rec.Events())
		}
	})
}

// Provision transitions go out as provision_set notifications with the
// payload of upstream's NodeSetProvisionStatePayload.
func TestProvisionNotifications(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e, rec, _ := notifyingEnv(t, db)
		n := e.node(states.Enroll)
		if err := e.api.DoProvisioningAction(context.Background(), "", n.UUID, "manage"); err != nil {
			t.Fatal(err)
		}
		e.waitState(n, states.Manageable)
		await.Until(t, 10*time.Second, "provision_set.end", func() bool { return rec.Find("baremetal.node.provision_set.end") != nil })
		start := rec.Find("baremetal.node.provision_set.start")
		if start == nil {
			t.Fatalf("events %v", rec.Events())
		}
		d := start.Payload.Data
		if start.Payload.Name != "NodeSetProvisionStatePayload" || start.Payload.Version != "1.18" || d["event"] != "manage" ||
			d["previous_provision_state"] != states.Enroll || d["provision_state"] != states.Verifying {
			t.Errorf("start payload %s %s %v", start.Payload.Name, start.Payload.Version, d)
		}
	})
}
