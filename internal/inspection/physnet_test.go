package inspection_test

import (
	"context"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/inspection"
	"github.com/openkeel/ironic/internal/model"
)

func TestPhysicalNetworkHook(t *testing.T) {
	lower := strings.Replace(ipaInventory, "52:54:00:AA:BB:01", "52:54:00:aa:bb:01", 1)
	cases := []struct {
		name    string
		inv     string
		cidrs   []string
		current string
		want    string // physnet of eth0's port, "" for none
		wantErr string
	}{
		{name: "IPv4 mapping", inv: lower, cidrs: []string{"10.10.10.0/24:physnet_a", "192.0.2.0/24:physnet_b"}, want: "physnet_b"},
		{name: "scoped IPv6 address", inv: lower, cidrs: []string{"fe80::/64:physnet_ll"}, want: "physnet_ll"},
		{name: "first matching network", inv: lower, cidrs: []string{"192.0.2.0/25:first", "192.0.2.0/24:second"}, want: "first"},
		{name: "repeated network keeps its place", inv: lower, cidrs: []string{"192.0.2.0/24:a", "192.0.2.0/25:x", "192.0.2.0/24:b"}, want: "b"},
		{name: "IPv4 before IPv6", inv: lower, cidrs: []string{"fe80::/64:physnet_ll", "192.0.2.0/24:physnet_v4"}, want: "physnet_v4"},
		{name: "bare address", inv: lower, cidrs: []string{"192.0.2.10:host"}, want: "host"},
		{name: "no mapping keeps the port", inv: lower, cidrs: []string{"10.0.0.0/8:x"}, current: "old", want: "old"},
		{name: "replaces another physnet", inv: lower, cidrs: []string{"192.0.2.0/24:new"}, current: "old", want: "new"},
		// The port is looked up with the inventory's MAC as written.
		{name: "upper-case inventory MAC", inv: ipaInventory, cidrs: []string{"192.0.2.0/24:physnet_b"}},
		{name: "host bits set", inv: lower, cidrs: []string{"192.0.2.1/24:a"}, wantErr: unexpected("ValueError", nodeUUID, "192.0.2.1/24 has host bits set")},
		{name: "no physnet", inv: lower, cidrs: []string{"192.0.2.0/24"}, wantErr: unexpected("IndexError", nodeUUID, "list index out of range")},
		{name: "not a network", inv: lower, cidrs: []string{"2001:db8::/64"}, wantErr: unexpected("ValueError", nodeUUID, "'2001:db8:' does not appear to be an IPv4 or IPv6 network")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tg := newTarget()
			mac, id := "52:54:00:aa:bb:01", tg.node.ID
			p := &model.Port{Address: &mac, NodeID: &id}
			if c.current != "" {
				p.PhysicalNetwork = &c.current
			}
			if err := tg.CreatePort(context.Background(), p); err != nil {
				t.Fatal(err)
			}
			o := inspection.DefaultHookOptions()
			o.PhysicalNetworkCIDRMap = c.cidrs
			err := runHooks(t, tg, "validate-interfaces,physical-network", o, decode(t, c.inv), map[string]any{})
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != c.wantErr {
				t.Fatalf("error =\n%s\nwant\n%s", got, c.wantErr)
			}
			physnet := ""
			if pn := tg.ports[0].PhysicalNetwork; pn != nil {
				physnet = *pn
			}
			if c.wantErr == "" && physnet != c.want {
				t.Errorf("physical_network = %q, want %q", physnet, c.want)
			}
		})
	}
}
