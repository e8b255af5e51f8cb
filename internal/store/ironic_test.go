package store

import (
	"errors"
	"fmt"
	"testing"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
)

func TestIronicClasses(t *testing.T) {
	cases := []struct {
		err   error
		rec   any
		class errs.Class
		msg   string
	}{
		{&DuplicateError{Kind: KindNode, Field: "name", Value: "n1"}, nil, "DuplicateName", "A node with name n1 already exists."},
		{&DuplicateError{Kind: KindNode, Field: "instance_uuid", Value: "i-1", Node: "n-2"}, nil, "InstanceAssociated",
			"Instance i-1 is already associated with a node, it cannot be associated with this other node n-2"},
		{&DuplicateError{Kind: KindPort, Field: "address", Value: "52:54:00:00:00:01"}, nil, "MACAlreadyExists",
			"A port with MAC address 52:54:00:00:00:01 already exists."},
		{&DuplicateError{Kind: KindPortgroup, Field: "address", Value: "52:54:00:00:00:02"}, nil, "PortgroupMACAlreadyExists",
			"A portgroup with MAC address 52:54:00:00:00:02 already exists."},
		{&DuplicateError{Kind: KindPortgroup, Field: "name", Value: "pg"}, nil, "PortgroupDuplicateName", "A portgroup with name pg already exists."},
		{&DuplicateError{Kind: KindVolumeConnector, Field: "type", Value: "iqn"}, &model.VolumeConnector{Type: model.Ptr("iqn"), ConnectorID: model.Ptr("iqn.x")},
			"VolumeConnectorTypeAndIdAlreadyExists", "A volume connector with type iqn and connector ID iqn.x already exists."},
		{&DuplicateError{Kind: KindVolumeTarget, Field: "node_id"}, &model.VolumeTarget{BootIndex: model.Ptr(0)},
			"VolumeTargetBootIndexAlreadyExists", "A volume target with boot index '0' for the same node already exists."},
		{fmt.Errorf("wrapped: %w", &NotEmptyError{Kind: KindPortgroup, Ident: "pg-1"}), nil, "PortgroupNotEmpty",
			"Cannot complete the requested action because portgroup pg-1 contains ports."},
		{&NotEmptyError{Kind: KindChassis, Ident: "c-1"}, nil, "ChassisNotEmpty", ""},
		{&DuplicateError{Kind: KindAllocation, Field: "name", Value: "a1"}, nil, "AllocationDuplicateName", "An allocation with name a1 already exists."},
		{&DuplicateError{Kind: KindRunbook, Field: "name", Value: "CUSTOM_RB"}, nil, "RunbookDuplicateName", ""},
	}
	for _, c := range cases {
		var e *errs.Error
		if !errors.As(Ironic(c.err, c.rec), &e) || e.Class != c.class || (c.msg != "" && e.Message != c.msg) {
			t.Errorf("Ironic(%v) = %v, want %s %q", c.err, e, c.class, c.msg)
		}
	}
	plain := errors.New("disk full")
	if Ironic(plain, nil) != plain {
		t.Error("an unknown error was changed")
	}
}
