package task

import (
	"context"
	"fmt"
	"runtime/debug"
)

// Spawner starts work in a worker and returns once the work is accepted;
// *workers.Pool is one. allowReserved is false for work that must not take
// the share kept for user requests (heartbeats).
type Spawner interface {
	Spawn(ctx context.Context, fn func(context.Context), allowReserved bool) error
}

// WorkFunc is the body of a worker. It owns the task (and its lock) until
// it returns; an error it returns is written to last_error.
type WorkFunc func(ctx context.Context, t *Task) error

// Work is what a task spawns.
type Work struct {
	// Name is the operation as upstream names the spawned method
	// (do_node_deploy…), used in "Async execution of <name> failed".
	Name string
	Fn   WorkFunc
	// NoReservedPool keeps the work out of the reserved share (upstream
	// _allow_reserved_pool=False, used for heartbeats).
	NoReservedPool bool
}

// SpawnErrorHook runs when the worker could not be started (typically
// NoFreeConductorWorker), before the lock is released; it may still change
// and save the node.
type SpawnErrorHook func(ctx context.Context, err error, t *Task)

type pendingSpawn struct {
	spawner Spawner
	work    Work
}

// SpawnAfter records work to start when the caller ends the task with End;
// the lock then stays held until the work returns.
func (t *Task) SpawnAfter(s Spawner, w Work) {
	t.spawn = &pendingSpawn{spawner: s, work: w}
}

// SetSpawnErrorHook sets the hook End runs when the worker cannot start.
func (t *Task) SetSpawnErrorHook(h SpawnErrorHook) { t.errHook = h }

// End finishes the caller's part of the task (upstream's leaving the
// "with" block without an exception). With work recorded by SpawnAfter or
// ProcessEvent, it starts the work and hands it the task and its lock; the
// deferred provision notification is sent once the work is accepted. When
// the work cannot start, the spawn error hook runs, the lock is released
// and the spawn error is returned. Without work it releases the lock.
//
// After End returns nil with work started, the caller must not touch the
// task again; its deferred Release is a no-op.
func (t *Task) End() error {
	sp := t.spawn
	if sp == nil {
		return t.Release()
	}
	t.spawn = nil
	note := t.pendingNote
	t.pendingNote = nil
	t.mu.Lock()
	t.handed = true
	t.mu.Unlock()
	err := sp.spawner.Spawn(t.base, t.worker(sp.work), !sp.work.NoReservedPool)
	if err == nil {
		if note != nil {
			t.m.emit(t.base, note)
		}
		return nil
	}
	t.mu.Lock()
	t.handed = false
	t.mu.Unlock()
	if t.errHook != nil {
		t.runHook(err)
	}
	if rerr := t.release(); rerr != nil {
		t.log.ErrorContext(t.base, "release after a failed spawn", "error", rerr)
	}
	return err
}

// runHook runs the spawn error hook; its failure is logged, never returned,
// so the spawn error stays what the caller sees.
func (t *Task) runHook(spawnErr error) {
	defer func() {
		if r := recover(); r != nil {
			t.log.WarnContext(t.base, "task's spawn error hook failed", "panic", fmt.Sprint(r))
		}
	}()
	t.errHook(t.base, spawnErr, t)
}

// worker wraps the work so that, however it ends, its error is written to
// last_error and the lock is released.
func (t *Task) worker(w Work) func(context.Context) {
	return func(ctx context.Context) {
		var err error
		defer func() {
			if r := recover(); r != nil {
				t.log.ErrorContext(ctx, "worker panicked", "work", w.Name, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
				err = fmt.Errorf("%v", r)
			}
			t.writeException(ctx, w.Name, err)
			if rerr := t.release(); rerr != nil {
				t.log.ErrorContext(ctx, "release after the worker ended", "work", w.Name, "error", rerr)
			}
		}()
		err = w.Fn(ctx, t)
	}
}

// writeException records a worker's failure in last_error unless the work
// already left an error there (upstream _write_exception).
func (t *Task) writeException(ctx context.Context, name string, err error) {
	if err == nil {
		return
	}
	if t.Node.LastError != nil {
		t.log.ErrorContext(ctx, "asynchronous execution failed", "work", name, "error", err)
		return
	}
	msg := fmt.Sprintf("Async execution of %s failed with error: %s", name, err)
	t.Node.LastError = &msg
	if serr := t.save(ctx); serr != nil {
		t.log.ErrorContext(ctx, "save the error of asynchronous execution", "work", name, "error", serr)
	}
}
