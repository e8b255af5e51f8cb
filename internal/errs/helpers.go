package errs

// Typed constructors for the classes raised most often, so call sites
// cannot misspell a class or a placeholder.

// NodeLocked is raised when another conductor holds the node's lock;
// callers retry it.
func NodeLocked(node, host string) *Error {
	return New(ClassNodeLocked, map[string]any{"node": node, "host": host})
}

// NodeNotFound is a missing node (404).
func NodeNotFound(node string) *Error {
	return New(ClassNodeNotFound, map[string]any{"node": node})
}

// InvalidParameterValue carries a complete message (400).
func InvalidParameterValue(msg string) *Error {
	return New(ClassInvalidParameterValue, map[string]any{"err": msg})
}

// MissingParameterValue carries a complete message (400).
func MissingParameterValue(msg string) *Error {
	return New(ClassMissingParameterValue, map[string]any{"err": msg})
}

// InvalidStateRequested rejects a provision action in the node's state.
func InvalidStateRequested(action, node, state string) *Error {
	return New(ClassInvalidStateRequested, map[string]any{"action": action, "node": node, "state": state})
}

// NodeInMaintenance rejects an operation on a node in maintenance.
func NodeInMaintenance(op, node string) *Error {
	return New(ClassNodeInMaintenance, map[string]any{"op": op, "node": node})
}

// NotAcceptable is the generic 406 ("Request not acceptable.").
func NotAcceptable() *Error { return New(ClassNotAcceptable, nil) }

// TemporaryFailure is the generic 503 clients retry.
func TemporaryFailure() *Error { return New(ClassTemporaryFailure, nil) }

// NoFreeConductorWorker is the 503 when the conductor's worker pool is
// full.
func NoFreeConductorWorker() *Error { return New(ClassNoFreeConductorWorker, nil) }

// NodeChanged reports that path of node changed since the writer read it.
func NodeChanged(node, path string) *Error {
	return NewMessageKw(ClassNodeChanged, "Node "+node+" was changed by another request ("+path+") while this update was applied; please retry.", map[string]any{"code": 409})
}
