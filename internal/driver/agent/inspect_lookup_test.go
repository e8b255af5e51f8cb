package agent

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"testing"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/model"
)

// fakeResolver answers from a table and records every name asked, so a
// test proves which names would have gone to DNS.
type fakeResolver struct {
	mu    sync.Mutex
	hosts map[string][]string
	asked []string
}

func (r *fakeResolver) LookupHost(_ context.Context, host string) ([]string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.asked = append(r.asked, host)
	if ips, ok := r.hosts[host]; ok {
		return ips, nil
	}
	return nil, errors.New("no such host")
}

func TestCacheLookupAddresses(t *testing.T) {
	cases := []struct {
		name      string
		info      map[string]any
		hosts     map[string][]string
		want      []any
		wantAsked []string
	}{
		{
			name: "IP literals are not resolved, loopback left out",
			info: map[string]any{
				"redfish_address": "https://192.0.2.20:8443/redfish",
				"ipmi_address":    "[2001:db8::5]",
				"other_address":   "127.0.0.1",
				"ipmi_username":   "admin",
			},
			want: []any{"192.0.2.20", "2001:db8::5"},
		},
		{
			name:      "a host name adds itself and its non-loopback IPs",
			info:      map[string]any{"redfish_address": "https://bmc-7.lab:443"},
			hosts:     map[string][]string{"bmc-7.lab": {"192.0.2.7", "127.0.1.1"}},
			want:      []any{"192.0.2.7", "bmc-7.lab"},
			wantAsked: []string{"bmc-7.lab"},
		},
		{
			name:      "an unresolvable name is skipped",
			info:      map[string]any{"ipmi_address": "gone.lab", "redfish_address": "http://192.0.2.1"},
			want:      []any{"192.0.2.1"},
			wantAsked: []string{"gone.lab"},
		},
		{
			name:      "localhost itself is not kept",
			info:      map[string]any{"ipmi_address": "localhost"},
			hosts:     map[string][]string{"localhost": {"127.0.0.1", "::1"}},
			wantAsked: []string{"localhost"},
		},
		{
			name: "ipmi addresses are useless under bridging",
			info: map[string]any{"ipmi_address": "192.0.2.3", "ipmi_transit_address": "0x20", "ipmi_bridging": "single"},
		},
		{
			name: "non-string and empty values are ignored",
			info: map[string]any{"ipmi_address": "", "redfish_address": 7.0},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := &fakeResolver{hosts: tc.hosts}
			i := NewInspect(InspectOptions{Resolver: r})
			n := &model.Node{DriverInfo: tc.info, DriverInternalInfo: map[string]any{lookupCacheKey: []any{"stale"}}}
			i.cacheLookupAddresses(context.Background(), &driver.Task{Node: n})
			got, ok := n.DriverInternalInfo[lookupCacheKey]
			if tc.want == nil {
				if ok {
					t.Fatalf("cache %v, want it removed", got)
				}
			} else if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("cache %v, want %v", got, tc.want)
			}
			if !reflect.DeepEqual(r.asked, tc.wantAsked) {
				t.Fatalf("resolver asked %v, want %v", r.asked, tc.wantAsked)
			}
		})
	}
}
