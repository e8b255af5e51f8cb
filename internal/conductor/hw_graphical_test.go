package conductor_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/driver/builtin"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/store/sqldb"
	"github.com/openkeel/ironic/testing/await"
	"github.com/openkeel/ironic/testing/fakeclock"
	"github.com/openkeel/ironic/testing/redfishbmc"
)

// consoleContainers records what the graphical consoles ask of their
// container provider; a started container takes a while to answer, as
// a real one pulling its image and starting X does.
type consoleContainers struct {
	mu      sync.Mutex
	started map[string]map[string]any
	apps    map[string]string
	stopped []string
}

func (c *consoleContainers) Name() string { return "recording" }

func (c *consoleContainers) Start(ctx context.Context, n *model.Node, app string, info map[string]any) (string, int, error) {
	select {
	case <-time.After(50 * time.Millisecond):
	case <-ctx.Done():
		return "", 0, ctx.Err()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.started[n.UUID], c.apps[n.UUID] = info, app
	return "127.0.0.1", 5901, nil
}

func (c *consoleContainers) Stop(_ context.Context, n *model.Node) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stopped = append(c.stopped, n.UUID)
	delete(c.started, n.UUID)
	return nil
}

func (c *consoleContainers) StopAll(context.Context) error { return nil }

// A redfish node's redfish-graphical console: enabling runs its console
// container with the BMC's parsed driver_info as the app's information,
// the console answers the noVNC URL with a token, and the session
// periodic closes it once [vnc]/token_timeout has passed, not before.
func TestHWRedfishGraphicalConsoleExpires(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		bmc := redfishbmc.New(t)
		clock := fakeclock.New(time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC))
		rec := &consoleContainers{started: map[string]map[string]any{}, apps: map[string]string{}}
		defaults := map[string]string{}
		for k, v := range redfishShipped {
			defaults[k] = v
		}
		defaults["enabled_console_interfaces"] = "redfish-graphical,no-console"
		logs := &hwLog{}
		cfg := testConfig(t, map[string]map[string]string{"DEFAULT": defaults,
			"vnc": {"token_timeout": "60", "public_url": "https://console.example.org/vnc_lite.html"}})
		e := newBuiltinEnv(t, db, cfg, logs.logger(), func(o *builtin.Options) {
			o.Redfish.Log = logs.logger()
			o.Graphical.Provider = rec
			o.Graphical.Now = clock.Now
		})
		n := e.enrollRedfish(bmc, "console-secret")
		ctx := context.Background()
		if err := e.api.SetConsoleMode(ctx, "", n.UUID, true); err != nil {
			t.Fatal(err)
		}
		await.UntilReason(t, 30*time.Second, "console enabled", func() (bool, string) {
			cur := e.get(n)
			return cur.ConsoleEnabled && cur.Reservation == nil, fmt.Sprintf("console_enabled %v, last_error %q", cur.ConsoleEnabled, deref(cur.LastError))
		})
		rec.mu.Lock()
		info, app := rec.started[n.UUID], rec.apps[n.UUID]
		rec.mu.Unlock()
		if app != "redfish-graphical" || info["address"] != bmc.URL() || info["username"] != oobUser ||
			info["password"] != "console-secret" || info["system_id"] != redfishbmc.SystemPath("sys-1") || info["node_uuid"] != n.UUID {
			t.Fatalf("console container app %q info %v", app, info)
		}
		cur := e.get(n)
		ii := cur.InternalInfo()
		token := ii.String(model.DIINoVNCSecretToken)
		if ii.String(model.DIIVNCHost) != "127.0.0.1" || token == "" {
			t.Fatalf("driver_internal_info %v", cur.DriverInternalInfo)
		}
		got, err := e.api.GetConsoleInformation(ctx, "", n.UUID)
		if err != nil {
			t.Fatal(err)
		}
		if want := "https://console.example.org/vnc_lite.html?path=websockify%3Fnode%3D" + n.UUID + "%26token%3D" + token; got["type"] != "vnc" || got["url"] != want {
			t.Fatalf("console information %v, want url %s", got, want)
		}

		clock.Advance(59 * time.Second)
		e.c.ExpireConsoleSessions(ctx)
		if !e.get(n).ConsoleEnabled {
			t.Fatal("a session closed before token_timeout")
		}
		clock.Advance(2 * time.Second)
		e.c.ExpireConsoleSessions(ctx)
		cur = e.get(n)
		if cur.ConsoleEnabled || cur.InternalInfo().String(model.DIINoVNCSecretToken) != "" || cur.InternalInfo().String(model.DIIVNCHost) != "" {
			t.Fatalf("expired session left open: console_enabled %v, driver_internal_info %v", cur.ConsoleEnabled, cur.DriverInternalInfo)
		}
		rec.mu.Lock()
		stopped := strings.Join(rec.stopped, ",")
		rec.mu.Unlock()
		if stopped != n.UUID {
			t.Errorf("containers stopped %q, want the node's", stopped)
		}
		if strings.Contains(logs.String(), "console-secret") {
			t.Error("the BMC password is in the logs")
		}
	})
}
