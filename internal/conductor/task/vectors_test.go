package task_test

import (
	"context"
	"testing"

	"github.com/openkeel/ironic/internal/conductor/task"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/spectest"
	"github.com/openkeel/ironic/internal/store/sqldb"
	"github.com/openkeel/ironic/internal/store/storetest"
)

// vectorCase is a matrix or override case of state-machine-vectors.json.
type vectorCase struct {
	ID             string  `json:"id"`
	State          string  `json:"state"`
	InitialTarget  *string `json:"initial_target"`
	Event          string  `json:"event"`
	TargetState    *string `json:"target_state"`
	Valid          bool    `json:"valid"`
	NewState       string  `json:"new_state"`
	Error          string  `json:"error"`
	Message        string  `json:"message"`
	TargetProvided struct {
		NoCallback   *string `json:"no_callback"`
		WithCallback *string `json:"with_callback"`
	} `json:"target_provision_state"`
}

type vectors struct {
	Counts struct {
		Matrix    int `json:"matrix_cases"`
		Overrides int `json:"override_cases"`
	} `json:"counts"`
	Matrix    []vectorCase `json:"matrix"`
	Overrides []vectorCase `json:"target_state_overrides"`
}

func or(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// TestProcessEventVectors replays every matrix and override case of the
// state machine vectors through ProcessEvent on a stored node, with and
// without a worker, and checks what reaches the database: the new
// provision_state and the target_provision_state the vectors give for each
// variant, or, for refused events, InvalidState with upstream's message and
// an untouched node.
func TestProcessEventVectors(t *testing.T) {
	var v vectors
	spectest.LoadJSON(t, "ironic/core/state-machine-vectors.json", &v)
	if len(v.Matrix) != v.Counts.Matrix || len(v.Overrides) != v.Counts.Overrides {
		t.Fatalf("loaded %d+%d cases, the file counts %d+%d", len(v.Matrix), len(v.Overrides), v.Counts.Matrix, v.Counts.Overrides)
	}
	cases := append(append([]vectorCase(nil), v.Matrix...), v.Overrides...)
	storetest.ForEachBackend(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		pool := newPool(t, 4)
		ctx := context.Background()
		replayed := 0
		for _, c := range cases {
			variants := []bool{false}
			if c.Valid {
				variants = []bool{false, true}
			}
			for _, callback := range variants {
				n := e.node(t, c.State, or(c.InitialTarget))
				tk, err := e.m.Acquire(ctx, n.UUID, task.AcquireOptions{NoDriver: true})
				if err != nil {
					t.Fatalf("%s/%s: acquire: %v", c.State, c.Event, err)
				}
				opts := task.EventOptions{TargetState: or(c.TargetState)}
				done := make(chan struct{})
				if callback {
					opts.Spawner = pool
					opts.Work = task.Work{Name: "noop", Fn: func(context.Context, *task.Task) error { close(done); return nil }}
				}
				err = tk.ProcessEvent(ctx, c.Event, opts)
				got := e.reload(t, n.ID)
				label := c.ID
				if label == "" {
					label = c.State + " --" + c.Event + "->"
				}
				switch {
				case !c.Valid:
					ie, ok := errs.As(err)
					if !ok || string(ie.Class) != c.Error || ie.Message != c.Message {
						t.Errorf("%s: error %v, want %s %q", label, err, c.Error, c.Message)
					}
					if got.ProvisionState != c.State || got.TargetProvisionState != or(c.InitialTarget) || got.ProvisionUpdatedAt != nil {
						t.Errorf("%s: refused event changed the node to %q/%q", label, got.ProvisionState, got.TargetProvisionState)
					}
				case err != nil:
					t.Errorf("%s (callback %v): %v", label, callback, err)
				default:
					want := or(c.TargetProvided.NoCallback)
					if callback {
						want = or(c.TargetProvided.WithCallback)
					}
					if got.ProvisionState != c.NewState || got.TargetProvisionState != want {
						t.Errorf("%s (callback %v): stored %q target %q, want %q target %q",
							label, callback, got.ProvisionState, got.TargetProvisionState, c.NewState, want)
					}
				}
				if err := tk.End(); err != nil {
					t.Fatalf("%s: End: %v", label, err)
				}
				if callback && err == nil {
					<-done
				}
				replayed++
			}
		}
		want := len(cases)
		for _, c := range cases {
			if c.Valid {
				want++
			}
		}
		if replayed != want {
			t.Errorf("replayed %d variants, want %d", replayed, want)
		}
	})
}
