package apiutil

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/openkeel/ironic/internal/api/collection"
	"github.com/openkeel/ironic/internal/api/microversion"
	"github.com/openkeel/ironic/internal/api/middleware"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/store"
)

var (
	logicalNameRe = regexp.MustCompile(`(?i)^[A-Z0-9\-._~]+$`)
	// The pre-1.10 node name rule, kept by upstream for old clients.
	hostnameSafeRe = regexp.MustCompile(`^[a-z0-9]([a-z0-9\-]{0,61}[a-z0-9])?(\.[a-z0-9\-_]{0,62}[a-z0-9])*\.?$`)
)

// pyDollar strips the one trailing newline Python's "$" lets through, so
// the regexps above answer as upstream's re.match does.
func pyDollar(s string) string { return strings.TrimSuffix(s, "\n") }

// IsValidLogicalName is utils.is_valid_logical_name: RFC 3986 unreserved
// characters only, at most 255 characters.
func IsValidLogicalName(name string) bool {
	return len([]rune(name)) <= 255 && logicalNameRe.MatchString(pyDollar(name))
}

// IsHostnameSafe is utils.is_hostname_safe, the node name rule before 1.10.
func IsHostnameSafe(name string) bool { return hostnameSafeRe.MatchString(pyDollar(name)) }

// IsValidLogicalNameAt is api_utils.is_valid_logical_name: the rule the
// version v applies to names.
func IsValidLogicalNameAt(name string, v microversion.Version) bool {
	if v.Minor < microversion.Minor10UnrestrictedNodeName {
		return IsHostnameSafe(name)
	}
	return IsValidLogicalName(name)
}

// IsValidNodeName is api_utils.is_valid_node_name: a valid name that is
// not a UUID.
func IsValidNodeName(name string, v microversion.Version) bool {
	return IsValidLogicalNameAt(name, v) && !collection.IsUUIDLike(name)
}

// UUIDOrName is args.uuid_or_name: 400 "Expected UUID or name for <arg>:
// <value>" unless value is a logical name or UUID.
func UUIDOrName(arg, value string) error {
	// The UUID first: it is the usual identifier, and cheaper to tell
	// than a name (a regular expression).
	if !collection.IsUUIDLike(value) && !IsValidLogicalName(value) {
		return errs.InvalidParameterValue(fmt.Sprintf("Expected UUID or name for %s: %s", arg, value))
	}
	return nil
}

// NodeGetter is the part of the store a node lookup needs.
type NodeGetter interface {
	GetNodeByUUID(ctx context.Context, uuid string) (*model.Node, error)
	GetNodeByName(ctx context.Context, name string) (*model.Node, error)
}

// GetNode is api_utils.get_rpc_node: a UUID-like ident is looked up as a
// UUID; from 1.5 a valid name as a name (an invalid one is 400
// InvalidUuidOrName); before 1.5 anything else is 404 NodeNotFound, as
// Juno answered.
func GetNode(ctx context.Context, s NodeGetter, ident string, v microversion.Version) (*model.Node, error) {
	var n *model.Node
	var err error
	switch {
	case collection.IsUUIDLike(ident):
		n, err = s.GetNodeByUUID(ctx, ident)
	case !microversion.AllowNodeLogicalNames.Allows(v):
		return nil, errs.NodeNotFound(ident)
	case !IsValidLogicalNameAt(ident, v):
		return nil, errs.New(errs.ClassInvalidUuidOrName, map[string]any{"name": ident})
	default:
		n, err = s.GetNodeByName(ctx, ident)
	}
	if errors.Is(err, store.ErrNotFound) {
		return nil, errs.NodeNotFound(ident)
	}
	if err != nil {
		return nil, fmt.Errorf("get node %s: %w", ident, err)
	}
	return n, nil
}

// GetNodeWithSuffix is get_rpc_node_with_suffix: GetNode, then, when the
// JSON extension middleware stripped ".json" from the path (below 1.91)
// and ident names no node, the node named ident+".json".
func GetNodeWithSuffix(ctx context.Context, s NodeGetter, ident string, v microversion.Version) (*model.Node, error) {
	n, err := GetNode(ctx, s, ident, v)
	if errs.Is(err, errs.ClassNodeNotFound) && middleware.HasJSONSuffix(ctx) {
		return GetNode(ctx, s, ident+".json", v)
	}
	return n, err
}
