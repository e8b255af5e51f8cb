package task

import (
	"context"
	"log/slog"
	"strings"

	"github.com/openkeel/ironic/internal/states"
)

// ErrHandler is called when the worker of a state transition cannot start;
// it gets the provision state and target the node had before the event, to
// roll back to (ProvisioningErrorHandler is upstream's).
type ErrHandler func(ctx context.Context, err error, t *Task, prevState, prevTarget string)

// EventOptions are process_event's keyword arguments.
type EventOptions struct {
	// Spawner and Work are upstream's callback and call_args: when Spawner
	// is set, Work runs in a worker when the task ends (see End), the node
	// keeps the FSM target even in a stable state, and last_error takes
	// LastError (nil clears it).
	Spawner Spawner
	Work    Work
	// ErrHandler runs, with Spawner set, when the worker cannot start.
	ErrHandler ErrHandler
	// TargetState, when not empty, overrides the target the machine gives.
	TargetState string
	// LastError, when not nil, is written to last_error with the
	// transition.
	LastError *string
}

// ProcessEvent moves the node along event and saves it: provision_state
// becomes the new state; target_provision_state is cleared when the new
// state is stable and no worker follows, else it is the machine's target;
// last_error is set as EventOptions.LastError says; provision_updated_at is
// stamped by the save. The provision notification is sent now, or, with a
// worker, once End has started it. Errors: ExclusiveLockRequired on a shared
// task, InvalidState when the event does not apply (nothing is changed).
func (t *Task) ProcessEvent(ctx context.Context, event string, opts EventOptions) error {
	if err := t.RequireExclusive(); err != nil {
		return err
	}
	prevState, prevTarget := t.Node.ProvisionState, t.Node.TargetProvisionState
	var target *string
	if opts.TargetState != "" {
		target = &opts.TargetState
	}
	if err := t.FSM.ProcessEvent(event, target); err != nil {
		// A refused target override has already moved the machine; put it
		// back where the (unsaved) node is.
		_ = t.initFSM()
		return invalidState(err)
	}
	callback := opts.Spawner != nil
	if callback && opts.ErrHandler != nil {
		h := opts.ErrHandler
		t.SetSpawnErrorHook(func(ctx context.Context, err error, t *Task) {
			h(ctx, err, t, prevState, prevTarget)
		})
	}
	t.Node.ProvisionState = t.FSM.CurrentState()
	t.Node.TargetProvisionState = t.FSM.TaskTarget(callback)
	always := []string{"provision_state", "target_provision_state"}
	switch {
	case callback:
		t.Node.LastError = cloneString(opts.LastError)
		always = append(always, "last_error")
	case opts.LastError != nil:
		t.Node.LastError = cloneString(opts.LastError)
		always = append(always, "last_error")
	}
	if err := t.save(ctx, always...); err != nil {
		return err
	}
	// Only a saved transition gets its worker (upstream's __exit__ does not
	// spawn when the block raised).
	if callback {
		t.SpawnAfter(opts.Spawner, opts.Work)
	}
	level := slog.LevelInfo
	if strings.HasSuffix(t.Node.ProvisionState, "failed") || t.Node.ProvisionState == states.Error {
		level = slog.LevelError
	}
	t.log.Log(ctx, level, "node moved to a new provision state", "state", t.Node.ProvisionState,
		"previous", prevState, "target", t.Node.TargetProvisionState, "event", event)
	note := t.provisionNotification(event, prevState, prevTarget)
	if callback {
		t.pendingNote = note
	} else {
		t.m.emit(ctx, note)
	}
	return nil
}

// ResumeCleaning resumes cleaning towards manageable when manual cleaning
// was under way, otherwise towards the machine's target (upstream
// resume_cleaning).
func (t *Task) ResumeCleaning(ctx context.Context) error {
	var opts EventOptions
	if t.Node.TargetProvisionState == states.Manageable {
		opts.TargetState = states.Manageable
	}
	return t.ProcessEvent(ctx, states.EventResume, opts)
}

func cloneString(s *string) *string {
	if s == nil {
		return nil
	}
	v := *s
	return &v
}
