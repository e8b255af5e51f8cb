package cinder_test

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/cinder"
	fakecinder "github.com/openkeel/ironic/testing/cinder"
)

const vol = "0f1e2d3c-4b5a-4968-8776-655443322110"

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// The fixture keeps Cinder's status rules, settles attachments after its
// delay, and refuses what Cinder refuses, through the client.
func TestFixtureFollowsCinderStatuses(t *testing.T) {
	ctx := context.Background()
	clk := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	f := fakecinder.New(t).ISCSIVolume(vol).Settle(time.Second).Clock(clk.now).ValidateTokens(func(tok string) bool { return tok == "good" })
	c := &cinder.Client{Auth: func(context.Context) (string, string, error) { return "good", f.Endpoint(), nil }}
	if err := c.Reserve(ctx, vol); err != nil {
		t.Fatal(err)
	}
	if err := c.Reserve(ctx, vol); err == nil {
		t.Fatal("a reserved volume was reserved again")
	}
	info, err := c.InitializeConnection(ctx, vol, cinder.Connector{"initiator": "iqn.x", "host": "n"})
	if err != nil || info.DriverVolumeType != "iscsi" || info.Data["target_portal"] != "127.0.0.1:3260" {
		t.Fatalf("connection %+v, %v", info, err)
	}
	if _, err := c.InitializeConnection(ctx, vol, cinder.Connector{"wwpns": []string{"50:00"}}); err == nil {
		t.Fatal("an iSCSI connection without initiator was accepted")
	}
	if err := c.Attach(ctx, vol, "ironic_mountpoint", "server-1"); err != nil {
		t.Fatal(err)
	}
	v, err := c.GetVolume(ctx, vol)
	if err != nil || v.Status != "attaching" {
		t.Fatalf("volume before it settled %+v, %v", v, err)
	}
	if id, ok := v.AttachmentFor("other", "server-1"); !ok || id == "" {
		t.Fatalf("attachment of server-1 not found in %+v", v.Attachments)
	}
	if err := c.BeginDetaching(ctx, vol); err == nil {
		t.Fatal("a volume still attaching began detaching")
	}
	clk.add(time.Second)
	if v, _ = c.GetVolume(ctx, vol); v.Status != "in-use" || v.Available() {
		t.Fatalf("settled volume %+v", v)
	}
	f.FailNextOn(vol, "os-begin_detaching", http.StatusServiceUnavailable)
	if err := c.BeginDetaching(ctx, vol); err == nil {
		t.Fatal("injected fault not answered")
	}
	att, _ := v.AttachmentFor("server-1")
	for _, step := range []func() error{
		func() error { return c.BeginDetaching(ctx, vol) },
		func() error { return c.TerminateConnection(ctx, vol, cinder.Connector{"initiator": "iqn.x"}) },
		func() error { return c.Detach(ctx, vol, att) },
	} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	if s := f.Status(vol); s != "detaching" {
		t.Fatalf("status right after the detach %q", s)
	}
	clk.add(time.Second)
	if s := f.Status(vol); s != "available" {
		t.Fatalf("status after settling %q", s)
	}
	if _, err := c.GetVolume(ctx, "missing"); !cinder.IsNotFound(err) {
		t.Fatalf("missing volume: %v", err)
	}
	bad := &cinder.Client{Auth: func(context.Context) (string, string, error) { return "bad", f.Endpoint(), nil }}
	if _, err := bad.GetVolume(ctx, vol); err == nil {
		t.Fatal("an invalid token was accepted")
	}
	want := []string{"os-reserve", "os-reserve", "os-initialize_connection", "os-initialize_connection", "os-attach", "os-begin_detaching", "os-begin_detaching", "os-begin_detaching", "os-terminate_connection", "os-detach"}
	if got := f.Actions(vol); !slices.Equal(got, want) {
		t.Errorf("actions %v, want %v", got, want)
	}
}

// The client strips the service project from an endpoint that carries it,
// as upstream does for Cinder 3.67 and later.
func TestClientStripsProjectFromEndpoint(t *testing.T) {
	f := fakecinder.New(t).ISCSIVolume(vol)
	c := &cinder.Client{
		Auth:      func(context.Context) (string, string, error) { return "", f.Endpoint() + "/abc123", nil },
		ProjectID: func(context.Context) (string, error) { return "abc123", nil },
	}
	if v, err := c.GetVolume(context.Background(), vol); err != nil || v.ID != vol {
		t.Fatalf("volume %+v, %v", v, err)
	}
}
