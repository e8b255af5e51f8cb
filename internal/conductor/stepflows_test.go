package conductor_test

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/conductor"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store/sqldb"
)

// flowRecords are the node's history lines of step flow milestones
// (event types ending in _start or _end).
func flowRecords(e *env, n *model.Node) []string {
	e.t.Helper()
	var out []string
	for _, h := range e.history(n) {
		typ := strings.Split(h, "|")[1]
		if strings.HasSuffix(typ, "_start") || strings.HasSuffix(typ, "_end") {
			out = append(out, h)
		}
	}
	return out
}

func TestStepFlowRecordsInHistory(t *testing.T) {
	// The steps as the flows store them after validation, rendered as
	// upstream's history text does (a Python list of step dicts).
	const (
		needsArgs  = "{'interface': 'vendor', 'step': 'needs_args', 'args': {'admin_password': '******', 'size': 10}, 'priority': 0, 'abortable': False}"
		block      = "{'interface': 'vendor', 'step': 'block', 'priority': 50, 'abortable': False, 'argsinfo': None, 'requires_ramdisk': True}"
		deploySeq  = "[{'interface': 'deploy', 'step': 'deploy', 'priority': 100, 'abortable': True, 'argsinfo': None}, {'interface': 'vendor', 'step': 'deploy_wait', 'priority': 80, 'abortable': True, 'argsinfo': None}]"
		serviceSeq = "[{'interface': 'vendor', 'step': 'svc_fail', 'priority': 0, 'abortable': False}]"
	)
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		ctx := context.Background()

		t.Run("manual cleaning masks secrets and ends with the wiped list", func(t *testing.T) {
			n := e.node(states.Manageable, scriptedNode)
			steps := []map[string]any{{"interface": "vendor", "step": "needs_args", "args": map[string]any{"size": 10, "admin_password": "hunter2"}}}
			if err := e.api.DoNodeClean(ctx, "", n.UUID, steps, false); err != nil {
				t.Fatal(err)
			}
			got := e.waitState(n, states.Manageable)
			want := []string{
				"INFO|manual_cleaning_start|Starting manual cleaning with steps=[" + needsArgs + "]|cleaning",
				"INFO|manual_cleaning_end|Manual Cleaning completed successfully with steps=[]|cleaning",
			}
			if h := flowRecords(e, got); !slices.Equal(h, want) {
				t.Fatalf("history\n%q\nwant\n%q", h, want)
			}
			if h := strings.Join(e.history(got), "\n"); strings.Contains(h, "hunter2") {
				t.Fatalf("secret in history: %s", h)
			}
		})

		t.Run("automated cleaning aborted at a failing step", func(t *testing.T) {
			n := e.node(states.Manageable, scriptedNode)
			e.steps.set("block", "", errors.New("disk on fire"))
			close(gate(e))
			if err := e.api.DoProvisioningAction(ctx, "", n.UUID, "provide"); err != nil {
				t.Fatal(err)
			}
			got := e.waitState(n, states.CleanFail)
			want := []string{
				"INFO|automated_cleaning_start|Starting automated cleaning with steps=[" + block + "]|cleaning",
				"ERROR|automated_cleaning_end|Automated Cleaning aborted at step 'block' with steps=[" + block + "]|cleaning",
			}
			if h := flowRecords(e, got); !slices.Equal(h, want) {
				t.Fatalf("history\n%q\nwant\n%q", h, want)
			}
			// The flow's error handler has the last word on last_error.
			if le := deref(got.LastError); !strings.HasPrefix(le, "Node "+n.UUID+" failed step") {
				t.Fatalf("last_error %q", le)
			}
		})

		t.Run("deployment and servicing", func(t *testing.T) {
			n := e.node(states.Available, scriptedNode)
			if err := e.api.DoNodeDeploy(ctx, "", n.UUID, false, nil, nil); err != nil {
				t.Fatal(err)
			}
			e.waitState(n, states.Active)
			e.steps.set("svc_fail", "", errors.New("firmware refused"))
			if err := e.api.DoNodeService(ctx, "", n.UUID, []map[string]any{{"interface": "vendor", "step": "svc_fail"}}, false); err != nil {
				t.Fatal(err)
			}
			got := e.waitState(n, states.ServiceFail)
			want := []string{
				"INFO|deployment_start|Starting deployment with steps=" + deploySeq + "|deploying",
				"INFO|deployment_end|Deployment completed successfully with steps=" + deploySeq + "|deploying",
				"INFO|servicing_start|Starting servicing with steps=" + serviceSeq + "|servicing",
				"ERROR|servicing_end|Servicing aborted at step 'svc_fail' with steps=" + serviceSeq + "|servicing",
			}
			if h := flowRecords(e, got); !slices.Equal(h, want) {
				t.Fatalf("history\n%q\nwant\n%q", h, want)
			}
		})
	})
}

func TestStepFlowRecordsToLogOnly(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db, withoutStart(),
			withConf("conductor", "record_step_flows_in_history", "false"),
			withConf("conductor", "log_step_flows_to_syslog", "true"))
		logs := &syncBuffer{}
		e.run(conductor.Options{Logger: slog.New(slog.NewTextHandler(logs, nil))})
		ctx := context.Background()
		n := e.node(states.Available, scriptedNode)
		e.steps.set("deploy_wait", "", errors.New("no luck"))
		if err := e.api.DoNodeDeploy(ctx, "", n.UUID, false, nil, nil); err != nil {
			t.Fatal(err)
		}
		got := e.waitState(n, states.DeployFail)
		if h := flowRecords(e, got); len(h) != 0 {
			t.Fatalf("recorded with record_step_flows_in_history off: %q", h)
		}
		out := logs.String()
		for _, want := range []string{
			`level=INFO msg="Node ` + n.UUID + `: Starting deployment with steps=[`,
			`level=WARN msg="Node ` + n.UUID + `: Deployment aborted at step 'deploy_wait' with steps=[`,
		} {
			if !strings.Contains(out, want) {
				t.Fatalf("log lacks %s:\n%s", want, out)
			}
		}

		// With both off nothing is recorded or logged.
		e2 := newEnv(t, db, withConf("conductor", "record_step_flows_in_history", "false"))
		m := e2.node(states.Available, scriptedNode)
		if err := e2.api.DoNodeDeploy(ctx, "", m.UUID, false, nil, nil); err != nil {
			t.Fatal(err)
		}
		if h := flowRecords(e2, e2.waitState(m, states.Active)); len(h) != 0 {
			t.Fatalf("recorded with both options off: %q", h)
		}
	})
}
