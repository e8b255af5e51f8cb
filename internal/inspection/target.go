// Package inspection processes the data an inspection brings back: the
// hooks of [inspector]/hooks (upstream ironic/drivers/modules/inspector/
// hooks) and the inspection rules engine (upstream
// ironic/common/inspection_rules).
package inspection

import (
	"context"

	"github.com/openkeel/ironic/internal/model"
)

// Target is the node being inspected, held under an exclusive lock by the
// caller, with the writes hooks and rules make besides the node row.
// Changes to Node are saved by the caller.
type Target interface {
	Node() *model.Node
	Ports(ctx context.Context) ([]*model.Port, error)
	// CreatePort returns an error of class MACAlreadyExists when another
	// port has the address.
	CreatePort(ctx context.Context, p *model.Port) error
	UpdatePort(ctx context.Context, p *model.Port) error
	DeletePort(ctx context.Context, p *model.Port) error
	AddTrait(ctx context.Context, name string) error
	// RemoveTrait returns an error of class NodeTraitNotFound when the
	// node lacks it.
	RemoveTrait(ctx context.Context, name string) error
	// StoredInventory returns the inventory data of the node's stored
	// inspection data; found is false when there is none.
	StoredInventory(ctx context.Context) (inventory map[string]any, found bool, err error)
}
