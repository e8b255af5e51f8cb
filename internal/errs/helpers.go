package errs

// Typed constructors for the classes raised most often, so call sites
// cannot misspell a class or a placeholder.

// NodeLocked is raised when another conductor holds the node's lock;
// callers retry it.
func NodeLocked(node, host string) *Error {
	return New("NodeLocked", map[string]any{"node": node, "host": host})
}

// NodeNotFound is a missing node (404).
func NodeNotFound(node string) *Error {
	return New("NodeNotFound", map[string]any{"node": node})
}

// InvalidParameterValue carries a complete message (400).
func InvalidParameterValue(msg string) *Error {
	return New("InvalidParameterValue", map[string]any{"err": msg})
}

// MissingParameterValue carries a complete message (400).
func MissingParameterValue(msg string) *Error {
	return New("MissingParameterValue", map[string]any{"err": msg})
}

// InvalidStateRequested rejects a provision action in the node's state.
func InvalidStateRequested(action, node, state string) *Error {
	return New("InvalidStateRequested", map[string]any{"action": action, "node": node, "state": state})
}

// NodeInMaintenance rejects an operation on a node in maintenance.
func NodeInMaintenance(op, node string) *Error {
	return New("NodeInMaintenance", map[string]any{"op": op, "node": node})
}

// NotAcceptable is the generic 406 ("Request not acceptable.").
func NotAcceptable() *Error { return New("NotAcceptable", nil) }

// TemporaryFailure is the generic 503 clients retry.
func TemporaryFailure() *Error { return New("TemporaryFailure", nil) }

// NoFreeConductorWorker is the 503 when the conductor's worker pool is
// full.
func NoFreeConductorWorker() *Error { return New("NoFreeConductorWorker", nil) }

// ClassNodeChanged is our own class (upstream has none): a conditional
// node update whose condition no longer holds because another writer
// changed the node since it was read. It travels from the conductor to
// the API, which re-reads the node and applies its PATCH again; a client
// sees it only as a 409 once those retries are exhausted.
const ClassNodeChanged = "NodeChanged"

// NodeChanged reports that path of node changed since the writer read it.
func NodeChanged(node, path string) *Error {
	return NewMessageKw(ClassNodeChanged, "Node "+node+" was changed by another request ("+path+") while this update was applied; please retry.", map[string]any{"code": 409})
}
