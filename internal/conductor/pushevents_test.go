package conductor_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
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
	t.Run("http", func(t *testing.T) { testPushEventsPowerDrift(t, false) })
	t.Run("https", func(t *testing.T) { testPushEventsPowerDrift(t, true) })
}

func testPushEventsPowerDrift(t *testing.T, useTLS bool) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		bmc := redfishbmc.New(t).System("sys-1", redfishbmc.PowerState(redfishbmc.On)).WithBasicAuth(oobUser, oobPassword)
		logs := &hwLog{}
		events := map[string]string{"enabled": "true", "host_ip": "127.0.0.1", "port": "0", "subscription_check_interval": "0"}
		scheme := "http://"
		if useTLS {
			events["cert_file"], events["key_file"] = eventsCert(t)
			scheme = "https://"
		}
		cfg := testConfig(t, map[string]map[string]string{
			"DEFAULT": redfishShipped,
			// Recorded rather than forced back, so that the drift shows
			// in the database.
			"conductor":       {"force_power_state_during_sync": "false", "sync_power_state_interval": "60"},
			"openkeel_events": events,
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
		if !strings.HasPrefix(sub.Destination, scheme+"127.0.0.1:") {
			t.Fatalf("destination %s, want %s on 127.0.0.1", sub.Destination, scheme)
		}
		ii := e.get(n).InternalInfo()
		if sub.Destination != e.c.PushEventsURL()+"/openkeel/events/"+n.UUID || sub.Protocol != "Redfish" ||
			sub.Context == "" || sub.Context != ii.String(model.DIIOpenkeelEventSecret) ||
			sub.ID != ii.String(model.DIIOpenkeelEventSubscription) {
			t.Fatalf("subscription %+v, node's %v", sub, ii.Get(model.DIIOpenkeelEventSubscription))
		}

		// A forged event: right node, wrong Context.
		forger := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // the test's own certificate
		defer forger.CloseIdleConnections()
		resp, err := forger.Post(sub.Destination, "application/json",
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

// eventsCert writes a self-signed certificate for 127.0.0.1 and its key
// for the event listener, returning their paths.
func eventsCert(t *testing.T) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "conductor events"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "events.pem"), filepath.Join(dir, "events-key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}
