package store

import (
	"errors"
	"fmt"
)

// Sentinels for errors.Is; the typed errors below match them and carry the
// details the API layer needs to render Ironic's error classes.
var (
	// ErrNotFound: NodeNotFound, PortNotFound, ChassisNotFound…
	ErrNotFound = errors.New("not found")
	// ErrDuplicate: NodeAlreadyExists, DuplicateName, MACAlreadyExists,
	// InstanceAssociated…
	ErrDuplicate = errors.New("already exists")
	// ErrNodeLocked: NodeLocked (409), retried by task managers.
	ErrNodeLocked = errors.New("node locked")
	// ErrNodeNotLocked: NodeNotLocked, releasing a node nobody holds.
	ErrNodeNotLocked = errors.New("node not locked")
	// ErrMarkerNotFound: MarkerNotFound, a pagination marker that names no
	// row.
	ErrMarkerNotFound = errors.New("marker not found")
	// ErrInvalidParameter: InvalidParameterValue (bad sort key, too many
	// traits, an attempt to change a UUID…).
	ErrInvalidParameter = errors.New("invalid parameter")
	// ErrNotEmpty: ChassisNotEmpty, PortgroupNotEmpty.
	ErrNotEmpty = errors.New("not empty")
	// ErrConductorAlreadyRegistered: ConductorAlreadyRegistered.
	ErrConductorAlreadyRegistered = errors.New("conductor already registered")
	// ErrConflict: a compare-and-swap update found the row changed.
	ErrConflict = errors.New("concurrent update")
	// ErrNodeAssociated: NodeAssociated, a node already running another
	// instance.
	ErrNodeAssociated = errors.New("node associated with an instance")
	// ErrDuplicateNodeOnLookup: DuplicateNodeOnLookup, port addresses
	// matching several nodes. Such an error is also ErrNotFound, as
	// upstream's class derives from NodeNotFound.
	ErrDuplicateNodeOnLookup = errors.New("several nodes match")
)

// Kinds of record, as used in NotFoundError.Kind and DuplicateError.Kind.
const (
	KindNode      = "node"
	KindPort      = "port"
	KindPortgroup = "portgroup"
	KindChassis   = "chassis"
	KindConductor = "conductor"
	KindInstance  = "instance"
	KindNodeTrait = "node trait"
	KindNodeTag   = "node tag"
	KindHWIface   = "conductor hardware interface"

	KindAllocation        = "allocation"
	KindDeployTemplate    = "deploy template"
	KindRunbook           = "runbook"
	KindRunbookTrait      = "runbook trait"
	KindVolumeConnector   = "volume connector"
	KindVolumeTarget      = "volume target"
	KindNodeHistory       = "node history record"
	KindNodeInventory     = "node inventory"
	KindBIOSSetting       = "BIOS setting"
	KindFirmwareComponent = "firmware component"
	KindInspectionRule    = "inspection rule"
)

// NotFoundError says no Kind is identified by Ident (an id, UUID, name or
// address, as the caller gave it).
type NotFoundError struct {
	Kind  string
	Ident string
	// Node is set for records looked up within a node (traits, tags, BIOS
	// settings, firmware components): that node's id.
	Node string
	// Runbook is set for runbook traits: the runbook's id.
	Runbook string
}

func (e *NotFoundError) Error() string {
	if e.Node != "" {
		return fmt.Sprintf("%s %s not found on node %s", e.Kind, e.Ident, e.Node)
	}
	if e.Runbook != "" {
		return fmt.Sprintf("%s %s not found on runbook %s", e.Kind, e.Ident, e.Runbook)
	}
	return fmt.Sprintf("%s %s not found", e.Kind, e.Ident)
}

// Is makes errors.Is(err, ErrNotFound) true.
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }

// DuplicateError says a unique column already holds Value. Field is the
// upstream column name: for nodes "uuid" (NodeAlreadyExists), "name"
// (DuplicateName), "instance_uuid" (InstanceAssociated); for ports and
// portgroups "address" (MACAlreadyExists), "name", "uuid".
type DuplicateError struct {
	Kind  string
	Field string
	Value string
	// Node is the node UUID when Field is instance_uuid (InstanceAssociated
	// names the node).
	Node string
}

func (e *DuplicateError) Error() string {
	return fmt.Sprintf("%s with %s %q already exists", e.Kind, e.Field, e.Value)
}

// Is makes errors.Is(err, ErrDuplicate) true.
func (e *DuplicateError) Is(target error) bool { return target == ErrDuplicate }

// NodeLockedError says Node (a UUID) is reserved by Host.
type NodeLockedError struct {
	Node string
	Host string
}

func (e *NodeLockedError) Error() string {
	return fmt.Sprintf("node %s is locked by host %s, please retry after the current operation is completed", e.Node, e.Host)
}

// Is makes errors.Is(err, ErrNodeLocked) true.
func (e *NodeLockedError) Is(target error) bool { return target == ErrNodeLocked }

// NodeNotLockedError says Node (a UUID) has no reservation to release.
type NodeNotLockedError struct{ Node string }

func (e *NodeNotLockedError) Error() string {
	return fmt.Sprintf("node %s found not to be locked on release", e.Node)
}

// Is makes errors.Is(err, ErrNodeNotLocked) true.
func (e *NodeNotLockedError) Is(target error) bool { return target == ErrNodeNotLocked }

// MarkerNotFoundError says a list marker names no row.
type MarkerNotFoundError struct{ Marker string }

func (e *MarkerNotFoundError) Error() string {
	return fmt.Sprintf("marker %s could not be found", e.Marker)
}

// Is makes errors.Is(err, ErrMarkerNotFound) true.
func (e *MarkerNotFoundError) Is(target error) bool { return target == ErrMarkerNotFound }

// InvalidParameterError says why a request to the store was refused.
type InvalidParameterError struct{ Msg string }

func (e *InvalidParameterError) Error() string { return e.Msg }

// Is makes errors.Is(err, ErrInvalidParameter) true.
func (e *InvalidParameterError) Is(target error) bool { return target == ErrInvalidParameter }

// NotEmptyError says Kind Ident still has members (nodes, ports).
type NotEmptyError struct {
	Kind  string
	Ident string
}

func (e *NotEmptyError) Error() string {
	return fmt.Sprintf("%s %s is not empty", e.Kind, e.Ident)
}

// Is makes errors.Is(err, ErrNotEmpty) true.
func (e *NotEmptyError) Is(target error) bool { return target == ErrNotEmpty }

// ConductorAlreadyRegisteredError says an online conductor holds Hostname.
type ConductorAlreadyRegisteredError struct{ Hostname string }

func (e *ConductorAlreadyRegisteredError) Error() string {
	return fmt.Sprintf("conductor %s already registered", e.Hostname)
}

// Is makes errors.Is(err, ErrConductorAlreadyRegistered) true.
func (e *ConductorAlreadyRegisteredError) Is(target error) bool {
	return target == ErrConductorAlreadyRegistered
}

// ConflictError says a conditional update of Kind Ident found the row no
// longer in the expected state.
type ConflictError struct {
	Kind  string
	Ident string
	Msg   string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("%s %s changed concurrently: %s", e.Kind, e.Ident, e.Msg)
}

// Is makes errors.Is(err, ErrConflict) true.
func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

// NodeAssociatedError says Node (a UUID) already runs Instance, so an
// allocation cannot take it.
type NodeAssociatedError struct {
	Node     string
	Instance string
}

func (e *NodeAssociatedError) Error() string {
	return fmt.Sprintf("node %s is associated with instance %s", e.Node, e.Instance)
}

// Is makes errors.Is(err, ErrNodeAssociated) true.
func (e *NodeAssociatedError) Is(target error) bool { return target == ErrNodeAssociated }

// DuplicateNodeOnLookupError says the port Addresses belong to more than
// one node.
type DuplicateNodeOnLookupError struct{ Addresses []string }

func (e *DuplicateNodeOnLookupError) Error() string {
	return fmt.Sprintf("multiple nodes with port addresses %v were found", e.Addresses)
}

// Is makes errors.Is true for ErrDuplicateNodeOnLookup and ErrNotFound.
func (e *DuplicateNodeOnLookupError) Is(target error) bool {
	return target == ErrDuplicateNodeOnLookup || target == ErrNotFound
}
