package conductor_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store/sqldb"
)

func TestManageVerifiesAndRecordsPowerState(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		n := e.node(states.Enroll, func(n *model.Node) { n.PowerInterface = "flaky"; n.VendorInterface = "scripted" })
		e.power.reading(states.PowerOn, nil)
		if err := e.api.DoProvisioningAction(ctx, "", n.UUID, "manage"); err != nil {
			t.Fatal(err)
		}
		got := e.waitState(n, states.Manageable)
		e.expect(got, states.Manageable, "", "")
		if got.PowerState != states.PowerOn {
			t.Fatalf("power state %q, want the one read during verification", got.PowerState)
		}
		// Enabled verify steps run; the scripted one has priority 0.
		for _, s := range e.steps.Ran() {
			if s == "verify_check" {
				t.Fatal("disabled verify step ran")
			}
		}
		if err := e.api.DoProvisioningAction(ctx, "", n.UUID, "manage"); class(err) != "InvalidStateRequested" {
			t.Fatalf("manage from manageable: %v", err)
		}
	})
}

func TestManageFailsBackToEnrollWhenPowerUnreadable(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		n := e.node(states.Enroll, func(n *model.Node) { n.PowerInterface = "flaky" })
		e.power.reading("", errors.New("BMC unreachable"))
		if err := e.api.DoProvisioningAction(context.Background(), "", n.UUID, "manage"); err != nil {
			t.Fatal(err)
		}
		got := e.waitState(n, states.Enroll)
		want := "Failed to get power state for node " + n.UUID + ". Error: BMC unreachable"
		e.expect(got, states.Enroll, "", want)
		h := e.history(got)
		if len(h) != 1 || !strings.HasPrefix(h[0], "ERROR|verify|"+want+"|verifying") {
			t.Fatalf("history %v", h)
		}
	})
}
