package node

import (
	"context"

	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/notify"
)

// notifyNode sends the API's baremetal.node.<action>.<status> notification
// (upstream's api/controllers/v1/notification_utils): create, update and
// delete carry NodeCRUDPayload with the node's chassis, maintenance_set
// NodePayload; an error status goes out at ERROR level, the others at
// INFO. It never fails the request.
func (h *handlers) notifyNode(ctx context.Context, n *model.Node, action string, status notify.Status) {
	level := notify.LevelInfo
	if status == notify.StatusError {
		level = notify.LevelError
	}
	if !h.Notifier.Enabled(level) || n == nil {
		return
	}
	var payload notify.Object
	if action == "maintenance_set" {
		payload = h.Notifier.NodePayload(n)
	} else {
		chassis := ""
		if n.ChassisID != nil {
			if c, err := h.Store.GetChassisByID(ctx, *n.ChassisID); err == nil {
				chassis = c.UUID
			}
		}
		payload = h.Notifier.NodeCRUDPayload(n, chassis)
	}
	h.Notifier.Emit(ctx, notify.Notification{Level: level, Object: "node", Action: action, Status: status, Payload: payload})
}

// notifyOutcome sends the end notification of a successful call with the
// node it answered, or the error notification with the node as sent.
func (h *handlers) notifyOutcome(ctx context.Context, sent, done *model.Node, action string, err error) {
	if err != nil {
		h.notifyNode(ctx, sent, action, notify.StatusError)
		return
	}
	h.notifyNode(ctx, done, action, notify.StatusEnd)
}
