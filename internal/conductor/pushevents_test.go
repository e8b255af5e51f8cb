package conductor_test

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/conductor"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/driver/builtin"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/notify"
	"github.com/openkeel/ironic/internal/notify/notifytest"
	"github.com/openkeel/ironic/internal/secrets"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store/sqldb"
	"github.com/openkeel/ironic/testing/await"
	"github.com/openkeel/ironic/testing/fakeclock"
	"github.com/openkeel/ironic/testing/redfishbmc"
)

// The power of a Redfish node changed behind the conductor's back reaches
// the database through the BMC's event within 2 s, although the power
// sync runs only every 60 s; an event with another Context is refused;
// a subscription the BMC lost is made again by the subscription pass;
// deleting the node deletes its subscription.
// newPushEnv is newBuiltinEnv's conductor with a notifier recording into
// rec.
func newPushEnv(t *testing.T, db *sqldb.DB, cfg *config.Config, log *slog.Logger, rec *notifytest.Recorder) *env {
	t.Helper()
	e := newStoreEnv(t, db, cfg)
	o, err := builtin.OptionsFromConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	o.Ports = e.st
	o.Redfish.Clock = fakeclock.NewWallInstant()
	r, err := builtin.Registry(o)
	if err != nil {
		t.Fatal(err)
	}
	if e.drivers, err = r.Build(driver.SettingsFromConfig(cfg)); err != nil {
		t.Fatal(err)
	}
	e.run(conductor.Options{Logger: log,
		Notifier: notify.New(notify.Options{Service: notify.ServiceConductor, Host: testHost, Level: "info", Drivers: []notify.Driver{rec}})})
	return e
}

func TestPushEventsPowerDrift(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		bmc := redfishbmc.New(t).System("sys-1", redfishbmc.PowerState(redfishbmc.On)).WithBasicAuth(oobUser, oobPassword)
		logs := &hwLog{}
		cfg := testConfig(t, map[string]map[string]string{
			"DEFAULT": redfishShipped,
			// Recorded rather than forced back, so that the drift shows
			// in the database.
			"conductor": {"force_power_state_during_sync": "false", "sync_power_state_interval": "60"},
			"openkeel_events": {"enabled": "true", "host_ip": "127.0.0.1", "port": "0",
				"subscription_check_interval": "0"},
		})
		rec := &notifytest.Recorder{}
		e := newPushEnv(t, db, cfg, logs.logger(), rec)
		ctx := context.Background()
		n := e.enrollRedfish(bmc, oobPassword)
		if err := e.api.DoProvisioningAction(ctx, "", n.UUID, "manage"); err != nil {
			t.Fatal(err)
		}
		e.waitState(n, states.Manageable)
		e.c.SyncPowerStates(ctx)

		e.c.EnsureEventSubscriptions(ctx)
		subs := bmc.Subscriptions()
		if len(subs) != 1 {
			t.Fatalf("subscriptions after the pass: %+v", subs)
		}
		sub := subs[0]
		ii := e.get(n).InternalInfo()
		if sub.Destination != e.c.PushEventsURL()+"/openkeel/events/"+n.UUID || sub.Protocol != "Redfish" ||
			sub.Context == "" || sub.Context != ii.String(model.DIIOpenkeelEventSecret) ||
			sub.ID != ii.String(model.DIIOpenkeelEventSubscription) {
			t.Fatalf("subscription %+v, node's %v", sub, ii.Get(model.DIIOpenkeelEventSubscription))
		}

		// A forged event: right node, wrong Context.
		resp, err := http.Post(sub.Destination, "application/json",
			strings.NewReader(`{"Context": "guess", "Events": [{"EventType": "ResourceUpdated"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if accepted, rejected := e.c.PushEventCounts(); resp.StatusCode != http.StatusUnauthorized || accepted != 0 || rejected != 1 {
			t.Fatalf("forged event: %d, accepted %d rejected %d", resp.StatusCode, accepted, rejected)
		}

		drift := func(bmcState, want string) time.Duration {
			t.Helper()
			start := time.Now()
			bmc.SetPower("sys-1", bmcState)
			await.Until(t, 2*time.Second, "the node's power_state to follow the BMC's event", func() bool {
				return e.get(n).PowerState == want
			})
			return time.Since(start)
		}
		took := drift(redfishbmc.Off, states.PowerOff)
		t.Logf("drift seen in %v (sync interval 60 s)", took)
		// As the sync would: power_state_corrected with the state replaced.
		await.Until(t, 2*time.Second, "power_state_corrected", func() bool {
			m := rec.Find("baremetal.node.power_state_corrected.success")
			return m != nil && m.Payload.Data["from_power"] == states.PowerOn && m.Payload.Data["power_state"] == states.PowerOff
		})
		// A health change reaches the node the same way.
		bmc.SetSystemHealth("sys-1", "Warning")
		await.Until(t, 2*time.Second, "the node's health to follow the BMC's event", func() bool {
			return deref(e.get(n).Health) == "Warning"
		})
		if !secrets.IsSecretKey(model.DIIOpenkeelEventSecret) {
			t.Fatal("the event secret's key is not one the API masks")
		}

		// The BMC forgets its subscriptions (a reset): the pass makes a
		// new one, with a new secret, and events flow again.
		bmc.DropSubscriptions()
		e.c.EnsureEventSubscriptions(ctx)
		subs = bmc.Subscriptions()
		ii = e.get(n).InternalInfo()
		if len(subs) != 1 || subs[0].Context == sub.Context || subs[0].Context != ii.String(model.DIIOpenkeelEventSecret) {
			t.Fatalf("subscription after the BMC lost it: %+v", subs)
		}
		took = drift(redfishbmc.On, states.PowerOn)
		t.Logf("drift seen in %v after the subscription was re-created", took)
		if accepted, _ := e.c.PushEventCounts(); accepted < 2 {
			t.Fatalf("events accepted: %d", accepted)
		}
		// A pass finding the subscription in place leaves it.
		e.c.EnsureEventSubscriptions(ctx)
		if again := bmc.Subscriptions(); len(again) != 1 || again[0].ID != subs[0].ID {
			t.Fatalf("subscriptions after a pass with nothing lost: %+v", again)
		}
		if strings.Contains(logs.String(), subs[0].Context) {
			t.Fatal("the event secret is in the logs")
		}

		// A subscription another conductor made (before this one took the
		// node over) is replaced by one to this conductor's listener.
		cur := e.get(n)
		cur.DriverInternalInfo[model.DIIOpenkeelEventDestination] = "http://127.0.0.1:9/openkeel/events/" + n.UUID
		if _, err := e.st.UpdateNode(ctx, cur, "driver_internal_info"); err != nil {
			t.Fatal(err)
		}
		e.c.EnsureEventSubscriptions(ctx)
		if moved := bmc.Subscriptions(); len(moved) != 1 || moved[0].ID == subs[0].ID || moved[0].Destination != sub.Destination {
			t.Fatalf("subscriptions after the take-over: %+v (before: %+v)", moved, subs)
		}
		if err := e.api.DestroyNode(ctx, "", n.UUID); err != nil {
			t.Fatal(err)
		}
		if left := bmc.Subscriptions(); len(left) != 0 {
			t.Fatalf("subscriptions after the node's deletion: %+v", left)
		}
	})
}

// A listener that cannot open fails Start before the conductor
// registers.
func TestPushEventsBusyPortFailsStart(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		busy, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer busy.Close()
		cfg := testConfig(t, map[string]map[string]string{
			"DEFAULT": redfishShipped,
			"openkeel_events": {"enabled": "true", "host_ip": "127.0.0.1",
				"port": strconv.Itoa(busy.Addr().(*net.TCPAddr).Port)},
		})
		e := newStoreEnv(t, db, cfg)
		o, err := builtin.OptionsFromConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		o.Ports = e.st
		r, err := builtin.Registry(o)
		if err != nil {
			t.Fatal(err)
		}
		if e.drivers, err = r.Build(driver.SettingsFromConfig(cfg)); err != nil {
			t.Fatal(err)
		}
		c := e.newConductor(testHost, nil, nil)
		if err := c.Start(context.Background()); err == nil || !strings.Contains(err.Error(), "push events listener") {
			_ = c.Stop(context.Background())
			t.Fatalf("start on a busy port: %v", err)
		}
		if _, err := e.st.GetConductor(context.Background(), testHost, nil); err == nil {
			t.Fatal("the conductor registered although it could not start")
		}
	})
}
