package neutron_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"testing"

	"github.com/openkeel/ironic/internal/neutron"
	fixture "github.com/openkeel/ironic/testing/neutron"
)

const netID = "3f4a6a4e-1b7e-4b3e-9d0e-0a1b2c3d4e5f"

func client(f *fixture.Fixture) *neutron.Client {
	return &neutron.Client{Auth: func(context.Context) (string, string, error) { return "tok", f.URL(), nil }}
}

func TestPortLifecycle(t *testing.T) {
	ctx := context.Background()
	f := fixture.New(t).Network(netID, "provision").RequireToken("tok")
	c := client(f)
	p, err := c.CreatePort(ctx, map[string]any{"network_id": netID, "mac_address": "52:54:00:00:00:01", "binding:vnic_type": "baremetal"})
	if err != nil {
		t.Fatal(err)
	}
	if p.ID() == "" || p["binding:vnic_type"] != "baremetal" {
		t.Fatalf("created %v", p)
	}
	llc := []any{map[string]any{"switch_id": "aa:bb:cc:dd:ee:ff", "port_id": "Eth1/1"}}
	if _, err := c.UpdatePort(ctx, p.ID(), map[string]any{"binding:host_id": "node-1", "binding:profile": map[string]any{"local_link_information": llc}}); err != nil {
		t.Fatal(err)
	}
	got, err := c.ShowPort(ctx, p.ID())
	if err != nil {
		t.Fatal(err)
	}
	prof, _ := got["binding:profile"].(map[string]any)
	if got["binding:host_id"] != "node-1" || prof == nil || len(prof["local_link_information"].([]any)) != 1 {
		t.Fatalf("shown %v", got)
	}
	list, err := c.ListPorts(ctx, url.Values{"network_id": {netID}, "mac_address": {"52:54:00:00:00:01", "52:54:00:00:00:09"}})
	if err != nil || len(list) != 1 || list[0].ID() != p.ID() {
		t.Fatalf("list = %v, %v", list, err)
	}
	if list, _ := c.ListPorts(ctx, url.Values{"network_id": {"other"}}); len(list) != 0 {
		t.Fatalf("filter ignored: %v", list)
	}
	n, err := c.ShowNetwork(ctx, netID)
	if err != nil || n.ID() != netID || n["name"] != "provision" {
		t.Fatalf("network %v, %v", n, err)
	}
	if err := c.DeletePort(ctx, p.ID()); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ShowPort(ctx, p.ID()); !neutron.IsNotFound(err) {
		t.Fatalf("after delete: %v", err)
	}
	if reqs := f.Requests(); len(reqs) != 8 || reqs[0].Method != http.MethodPost || reqs[0].Token != "tok" {
		t.Fatalf("log %+v", reqs)
	}
}

func TestErrors(t *testing.T) {
	ctx := context.Background()
	f := fixture.New(t).Network(netID, "provision").Fail(http.MethodPost, "/v2.0/ports", http.StatusInternalServerError, 1)
	c := client(f)
	_, err := c.CreatePort(ctx, map[string]any{"network_id": netID})
	var ne *neutron.Error
	if !errors.As(err, &ne) || ne.Status != 500 || ne.Type != "InjectedFault" {
		t.Fatalf("fault: %v", err)
	}
	if _, err := c.CreatePort(ctx, map[string]any{"network_id": netID}); err != nil {
		t.Fatalf("fault not one-shot: %v", err)
	}
	if _, err := c.CreatePort(ctx, map[string]any{"network_id": "missing"}); !neutron.IsNotFound(err) {
		t.Fatalf("unknown network: %v", err)
	}
	bad := &neutron.Client{Auth: func(context.Context) (string, string, error) { return "", "http://127.0.0.1:1", nil }}
	if _, err := bad.ShowNetwork(ctx, netID); !errors.As(err, &ne) || ne.Status != 0 {
		t.Fatalf("connection failure: %v", err)
	}
}
