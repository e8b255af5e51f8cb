package task

import "sync"

// Fair node locks (issue 24 item 4). Upstream retries a held lock
// node_locked_retry_attempts times, node_locked_retry_interval apart:
// under contention whoever happens to retry just after a release wins,
// and the others see NodeLocked however long they waited. Here the tasks
// of one conductor that wait for a node queue in arrival order: only the
// queue's head tries the lock, woken at once when a task of this
// conductor releases it and polling at the retry interval for a holder
// in another process (the nodes.reservation column is still the lock;
// across processes the queue is no help and the retry loop stays). A
// newcomer does not overtake the queue: it joins it. The time a task may
// wait is bounded as upstream's (attempts × interval, and its context).

// lockWaiter is one task waiting for a node.
type lockWaiter struct {
	// wake is signalled when the waiter should try the lock now: it has
	// become the head after a predecessor gave up, or the node was
	// released by this conductor while it was the head.
	wake chan struct{}
}

// lockQueues are the per-node FIFO queues of one conductor's waiters.
type lockQueues struct {
	mu    sync.Mutex
	nodes map[int64][]*lockWaiter
}

// busy reports whether tasks of this conductor already wait for the node.
func (q *lockQueues) busy(nodeID int64) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.nodes[nodeID]) > 0
}

// join appends a waiter to the node's queue.
func (q *lockQueues) join(nodeID int64) *lockWaiter {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.nodes == nil {
		q.nodes = map[int64][]*lockWaiter{}
	}
	w := &lockWaiter{wake: make(chan struct{}, 1)}
	q.nodes[nodeID] = append(q.nodes[nodeID], w)
	return w
}

// isHead reports whether w is first in the node's queue.
func (q *lockQueues) isHead(nodeID int64, w *lockWaiter) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	ws := q.nodes[nodeID]
	return len(ws) > 0 && ws[0] == w
}

// leave removes w from the node's queue. A waiter that leaves without
// the lock (gave up) wakes the next one, which tries at once: the lock
// may be free, and it is that waiter's turn.
func (q *lockQueues) leave(nodeID int64, w *lockWaiter, locked bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	ws := q.nodes[nodeID]
	for i, x := range ws {
		if x == w {
			ws = append(ws[:i:i], ws[i+1:]...)
			break
		}
	}
	if len(ws) == 0 {
		delete(q.nodes, nodeID)
		return
	}
	q.nodes[nodeID] = ws
	if !locked {
		signal(ws[0])
	}
}

// released wakes the head of the node's queue: a task of this conductor
// has just dropped the lock.
func (q *lockQueues) released(nodeID int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if ws := q.nodes[nodeID]; len(ws) > 0 {
		signal(ws[0])
	}
}

func signal(w *lockWaiter) {
	select {
	case w.wake <- struct{}{}:
	default: // already signalled
	}
}
