package driver

import (
	"errors"
	"fmt"
	"strings"
)

// Error is an Ironic exception raised by the driver layer: upstream's class
// name, its HTTP code and the formatted message. internal/errs did not yet
// export a constructor when this package was written, so the classes used
// here are kept local; Class and Code match ironic/common/exception.py so a
// caller can translate without loss.
type Error struct {
	Class   string
	Code    int
	Message string
}

func (e *Error) Error() string { return e.Message }

// parents maps each class raised here to its upstream base class, so that
// IsClass answers the way Python's isinstance would.
var parents = map[string]string{
	"DriverNotFound":                "NotFound",
	"DriverNotFoundInEntrypoint":    "DriverNotFound",
	"InterfaceNotFoundInEntrypoint": "InvalidParameterValue",
	"IncompatibleInterface":         "InvalidParameterValue",
	"NoValidDefaultForInterface":    "InvalidParameterValue",
	"MissingParameterValue":         "InvalidParameterValue",
	"InvalidParameterValue":         "Invalid",
	"UnsupportedDriverExtension":    "Invalid",
	"Invalid":                       "IronicException",
	"NotFound":                      "IronicException",
}

// IsClass reports whether err is (or wraps) an *Error of class or of a
// subclass of it.
func IsClass(err error, class string) bool {
	var e *Error
	if !errors.As(err, &e) {
		return false
	}
	for c := e.Class; c != ""; c = parents[c] {
		if c == class {
			return true
		}
	}
	return false
}

// ErrDriverNotFound is upstream DriverNotFound for an unknown hardware type.
func ErrDriverNotFound(name string) *Error {
	return &Error{Class: "DriverNotFound", Code: 404, Message: fmt.Sprintf(
		"Could not find the following driver(s) or hardware type(s): %s.", name)}
}

// ErrDriverNotFoundInEntrypoint is raised at start-up when an enabled name
// has no implementation.
func ErrDriverNotFoundInEntrypoint(names []string, entrypoint string) *Error {
	return &Error{Class: "DriverNotFoundInEntrypoint", Code: 404, Message: fmt.Sprintf(
		"Could not find the following items in the '%s' entrypoint: %s.",
		entrypoint, strings.Join(names, ", "))}
}

// ErrInterfaceNotFoundInEntrypoint is raised when a node names an
// implementation that is not enabled. valid is rendered as upstream renders
// a Python list, since the message reaches API clients unchanged.
func ErrInterfaceNotFoundInEntrypoint(iface string, kind Kind, valid []string) *Error {
	return &Error{Class: "InterfaceNotFoundInEntrypoint", Code: 400, Message: fmt.Sprintf(
		"Could not find the following interface in the '%s' entrypoint: %s. Valid interfaces are %s.",
		kind.Entrypoint(), iface, pyList(valid))}
}

// ErrIncompatibleInterface is raised when the hardware type does not support
// the implementation. Upstream prints the Python object here; the
// implementation name is the closest stable equivalent.
func ErrIncompatibleInterface(kind Kind, impl, hardwareTypeClass string) *Error {
	return &Error{Class: "IncompatibleInterface", Code: 400, Message: fmt.Sprintf(
		"%s interface implementation '%s' is not supported by hardware type %s.",
		kind, impl, hardwareTypeClass)}
}

// ErrNoValidDefaultForInterface is raised when no default implementation can
// be computed. node may be empty.
func ErrNoValidDefaultForInterface(kind Kind, driverName, node string) *Error {
	nodeInfo := ""
	if node != "" {
		nodeInfo = fmt.Sprintf(" node %s with", node)
	}
	return &Error{Class: "NoValidDefaultForInterface", Code: 400, Message: fmt.Sprintf(
		"For%s hardware type '%s', no default value found for %s interface could be determined. Please ensure the interfaces are enabled.",
		nodeInfo, driverName, kind)}
}

// ErrUnsupportedDriverExtension is what upstream's base classes and the
// no-* implementations raise for an operation they do not provide.
func ErrUnsupportedDriverExtension(driverName string, kind Kind) *Error {
	return &Error{Class: "UnsupportedDriverExtension", Code: 400, Message: fmt.Sprintf(
		"Driver %s does not support %s (disabled or not implemented).", driverName, kind)}
}

// Unsupported is ErrUnsupportedDriverExtension for the task's node, the form
// upstream's defaults use.
func Unsupported(task *Task, kind Kind) *Error {
	name := ""
	if task != nil && task.Node != nil {
		name = task.Node.Driver
	}
	return ErrUnsupportedDriverExtension(name, kind)
}

// InvalidParameterValue is upstream's InvalidParameterValue.
func InvalidParameterValue(format string, a ...any) *Error {
	return &Error{Class: "InvalidParameterValue", Code: 400, Message: fmt.Sprintf(format, a...)}
}

// MissingParameterValue is upstream's MissingParameterValue.
func MissingParameterValue(format string, a ...any) *Error {
	return &Error{Class: "MissingParameterValue", Code: 400, Message: fmt.Sprintf(format, a...)}
}

func pyList(items []string) string {
	quoted := make([]string, len(items))
	for i, s := range items {
		quoted[i] = "'" + s + "'"
	}
	return "[" + strings.Join(quoted, ", ") + "]"
}

// ErrNotImplemented is upstream's NotImplementedError from a driver method
// (e.g. noop management's sensor data); callers such as the sensor data
// periodic skip the node when they see it.
var ErrNotImplemented = errors.New("not implemented by this interface")
