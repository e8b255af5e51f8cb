package driver

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/pyfmt"
)

// IsClass reports whether err is (or wraps) an Ironic error of class or of
// a subclass of it.
func IsClass(err error, class errs.Class) bool { return errs.Is(err, class) }

// ErrDriverNotFound is upstream DriverNotFound for an unknown hardware type.
func ErrDriverNotFound(name string) *errs.Error {
	return errs.New(errs.ClassDriverNotFound, map[string]any{"driver_name": name})
}

// ErrDriverNotFoundInEntrypoint is raised at start-up when an enabled name
// has no implementation.
func ErrDriverNotFoundInEntrypoint(names []string, entrypoint string) *errs.Error {
	return errs.New(errs.ClassDriverNotFoundInEntrypoint, map[string]any{
		"names": strings.Join(names, ", "), "entrypoint": entrypoint,
	})
}

// ErrInterfaceNotFoundInEntrypoint is raised when a node names an
// implementation that is not enabled. valid is rendered as upstream renders
// a Python list, since the message reaches API clients unchanged, and
// sorted: upstream lists stevedore's extensions in entry-point order, which
// pbr writes sorted by name, not in the configured order.
func ErrInterfaceNotFoundInEntrypoint(iface string, kind Kind, valid []string) *errs.Error {
	return errs.New(errs.ClassInterfaceNotFoundInEntrypoint, map[string]any{
		"iface": iface, "entrypoint": kind.Entrypoint(), "valid": pyfmt.Repr(slices.Sorted(slices.Values(valid))),
	})
}

// ErrIncompatibleInterface is raised when the hardware type does not support
// the implementation. Upstream prints the Python object here; the
// implementation name is the closest stable equivalent.
func ErrIncompatibleInterface(kind Kind, impl, hardwareTypeClass string) *errs.Error {
	return errs.New(errs.ClassIncompatibleInterface, map[string]any{
		"interface_type": string(kind), "interface_impl": impl, "hardware_type": hardwareTypeClass,
	})
}

// ErrNoValidDefaultForInterface is raised when no default implementation can
// be computed. node may be empty.
func ErrNoValidDefaultForInterface(kind Kind, driverName, node string) *errs.Error {
	nodeInfo := ""
	if node != "" {
		nodeInfo = fmt.Sprintf(" node %s with", node)
	}
	return errs.New(errs.ClassNoValidDefaultForInterface, map[string]any{
		"node_info": nodeInfo, "driver": driverName, "interface_type": string(kind),
	})
}

// ErrUnsupportedDriverExtension is what upstream's base classes and the
// no-* implementations raise for an operation they do not provide.
func ErrUnsupportedDriverExtension(driverName string, kind Kind) *errs.Error {
	return errs.New(errs.ClassUnsupportedDriverExtension, map[string]any{"driver": driverName, "extension": string(kind)})
}

// Unsupported is ErrUnsupportedDriverExtension for the task's node, the form
// upstream's defaults use.
func Unsupported(task *Task, kind Kind) *errs.Error {
	name := ""
	if task != nil && task.Node != nil {
		name = task.Node.Driver
	}
	return ErrUnsupportedDriverExtension(name, kind)
}

// InvalidParameterValue is upstream's InvalidParameterValue.
func InvalidParameterValue(format string, a ...any) *errs.Error {
	return errs.NewMessage(errs.ClassInvalidParameterValue, fmt.Sprintf(format, a...))
}

// MissingParameterValue is upstream's MissingParameterValue.
func MissingParameterValue(format string, a ...any) *errs.Error {
	return errs.NewMessage(errs.ClassMissingParameterValue, fmt.Sprintf(format, a...))
}

// ErrNotImplemented is upstream's NotImplementedError from a driver method
// (e.g. noop management's sensor data); callers such as the sensor data
// periodic skip the node when they see it.
var ErrNotImplemented = errors.New("not implemented by this interface")
