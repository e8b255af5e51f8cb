package apiutil

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/openkeel/ironic/internal/api/microversion"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/notify"
	"github.com/openkeel/ironic/internal/rpc"
	"github.com/openkeel/ironic/internal/store"
)

// NodeTopics chooses the conductor of a node (rpc.Router implements it).
type NodeTopics interface {
	GetTopicFor(ctx context.Context, node *model.Node) (string, error)
}

// NodeBound is what the handlers of a resource that belongs to a node
// need (ports, portgroups, volume connectors and targets): reads go to
// the store, changes through the conductor of the node, and policy is
// checked against the node.
type NodeBound struct {
	Store     store.Store
	Conductor rpc.ConductorAPI
	Topics    NodeTopics
	// Authorize checks a policy rule against the node a record belongs to
	// (nil node for rules without a target). A refusal of
	// "baremetal:node:get" conceals the record as not found. nil refuses
	// every rule.
	Authorize func(r *http.Request, rule string, node *model.Node) error
	// ListProject is check_port_list_policy's (check_volume_list_policy's)
	// answer for a resource: nil when the caller may list every record
	// ("baremetal:<resource>:list_all"), else the project whose nodes'
	// records it may list. nil refuses every listing.
	ListProject func(r *http.Request, resource string) (*string, error)
	// Notifier sends the API's versioned notifications about the
	// records; nil sends none.
	Notifier *notify.Notifier
}

// Notifications sends a resource's versioned notifications from the
// API, as upstream's emit_start_notification, handle_error_notification
// and emit_end_notification do; a nil Notifier sends none.
type Notifications struct {
	Notifier *notify.Notifier
}

// Notify sends baremetal.<object>.<action>.<status> with the payload
// built by payload (called only when the notification's level is sent),
// at ERROR level for an error status and INFO otherwise.
func (d Notifications) Notify(ctx context.Context, object, action string, status notify.Status, payload func(*notify.Notifier) notify.Object) {
	level := notify.LevelInfo
	if status == notify.StatusError {
		level = notify.LevelError
	}
	if !d.Notifier.Enabled(level) {
		return
	}
	d.Notifier.Emit(ctx, notify.Notification{Level: level, Object: object, Action: action, Status: status, Payload: payload(d.Notifier)})
}

// NotifyOutcome sends the end notification when err is nil, the error
// one otherwise.
func (d Notifications) NotifyOutcome(ctx context.Context, object, action string, err error, payload func(*notify.Notifier) notify.Object) {
	status := notify.StatusEnd
	if err != nil {
		status = notify.StatusError
	}
	d.Notify(ctx, object, action, status, payload)
}

// Notify is Notifications.Notify with the records' notifier.
func (d NodeBound) Notify(ctx context.Context, object, action string, status notify.Status, payload func(*notify.Notifier) notify.Object) {
	Notifications{d.Notifier}.Notify(ctx, object, action, status, payload)
}

// NotifyOutcome is Notifications.NotifyOutcome with the records'
// notifier.
func (d NodeBound) NotifyOutcome(ctx context.Context, object, action string, err error, payload func(*notify.Notifier) notify.Object) {
	Notifications{d.Notifier}.NotifyOutcome(ctx, object, action, err, payload)
}

// FailClosed is d with a nil Authorize refusing every rule and a nil
// ListProject refusing every listing.
func (d NodeBound) FailClosed() NodeBound {
	if d.Authorize == nil {
		d.Authorize = RefuseAll[*model.Node]
	}
	if d.ListProject == nil {
		d.ListProject = RefuseList
	}
	return d
}

// Topic is get_topic_for the node.
func (d NodeBound) Topic(ctx context.Context, n *model.Node) (string, error) {
	t, err := d.Topics.GetTopicFor(ctx, n)
	if err != nil {
		return "", fmt.Errorf("conductor for node %s: %w", n.UUID, err)
	}
	return t, nil
}

// NodeOf is the node of id, nil when there is none or it is gone.
func (d NodeBound) NodeOf(ctx context.Context, id *int64) (*model.Node, error) {
	if id == nil {
		return nil, nil
	}
	n, err := d.Store.GetNodeByID(ctx, *id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get node %d: %w", *id, err)
	}
	return n, nil
}

// Retrieve is the policy half of check_port_policy_and_retrieve (and of
// the portgroup and volume ones) once the record was read: the node of
// nodeID must be visible, else notFound() conceals the record; then rule.
// It answers the node (nil when gone).
func (d NodeBound) Retrieve(r *http.Request, rule string, nodeID *int64, notFound func() error) (*model.Node, error) {
	n, err := d.NodeOf(r.Context(), nodeID)
	if err != nil {
		return nil, err
	}
	if err := d.Authorize(r, "baremetal:node:get", n); err != nil {
		if errs.Status(err) == http.StatusForbidden {
			return nil, notFound()
		}
		return nil, err
	}
	if err := d.Authorize(r, rule, n); err != nil {
		return nil, err
	}
	return n, nil
}

// ListScope is the project a listing of resource is limited to (nil for
// every record); without a ListProject hook the listing is refused.
func (d NodeBound) ListScope(r *http.Request, resource string) (*string, error) {
	if d.ListProject == nil {
		return RefuseList(r, resource)
	}
	return d.ListProject(r, resource)
}

// ParentNode is the visibility check of a listing under a node:
// upstream looks the parent up by UUID only (missing() when there is no
// such node) and conceals a node the caller may not see as NodeNotFound.
func (d NodeBound) ParentNode(r *http.Request, ident string, missing func() error) (*model.Node, error) {
	n, err := d.Store.GetNodeByUUID(r.Context(), ident)
	if errors.Is(err, store.ErrNotFound) {
		return nil, missing()
	}
	if err != nil {
		return nil, fmt.Errorf("get node %s: %w", ident, err)
	}
	if err := d.Authorize(r, "baremetal:node:get", n); err != nil {
		return nil, errs.NodeNotFound(ident)
	}
	return n, nil
}

// CreationNode is replace_node_uuid_with_id for a creation: the node of
// nodeUUID, concealed (nil) when the caller may not see it, after rule is
// checked against it. A nil node is the caller's to refuse in its words.
func (d NodeBound) CreationNode(r *http.Request, rule, nodeUUID string) (*model.Node, error) {
	n, err := d.Store.GetNodeByUUID(r.Context(), nodeUUID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("get node %s: %w", nodeUUID, err)
	}
	if n != nil && d.Authorize(r, "baremetal:node:get", n) != nil {
		n = nil
	}
	if err := d.Authorize(r, rule, n); err != nil {
		return nil, err
	}
	return n, nil
}

// LinkNode is authorize_node_link: the node a patch moves a record to
// (value, a UUID or name) must be visible and have orig's owner, else one
// message whether or not it exists.
func (d NodeBound) LinkNode(r *http.Request, v microversion.Version, orig *model.Node, value any) (*model.Node, error) {
	bad := errs.NewMessage(errs.ClassInvalid, fmt.Sprintf("Unable to apply the requested node_uuid '%s'. Requested value was invalid.", PyStr(value)))
	s, _ := value.(string)
	n, err := GetNode(r.Context(), d.Store, s, v)
	if err != nil {
		return nil, bad
	}
	if err := d.Authorize(r, "baremetal:node:get", n); err != nil {
		return nil, bad
	}
	var origOwner *string
	if orig != nil {
		origOwner = orig.Owner
	}
	if model.Deref(origOwner) != model.Deref(n.Owner) || (origOwner == nil) != (n.Owner == nil) {
		return nil, bad
	}
	return n, nil
}

// OnNode runs call with the topic of the conductor of node, the node of
// a record whose NodeID is nodeID; a record whose node is gone is
// NodeNotFound of that ID.
func (d NodeBound) OnNode(ctx context.Context, node *model.Node, nodeID *int64, call func(topic string) error) error {
	if node == nil {
		return errs.NodeNotFound(fmt.Sprint(model.Deref(nodeID)))
	}
	topic, err := d.Topic(ctx, node)
	if err != nil {
		return err
	}
	return call(topic)
}
