package rpc

import (
	"context"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/rpc/hashring"
	"github.com/openkeel/ironic/internal/rpc/ringmgr"
)

type fakeConductors struct {
	d2c    map[string]map[string][]string
	online []string
}

func (f *fakeConductors) GetActiveHardwareTypeDict(context.Context, time.Duration) (map[string]map[string][]string, error) {
	return f.d2c, nil
}

func (f *fakeConductors) GetOnlineConductors(context.Context, time.Duration) ([]string, error) {
	return f.online, nil
}

func newRouter(f *fakeConductors, prefix string, pick int) *Router {
	rings := ringmgr.New(f, ringmgr.Options{PartitionExponent: 5, Algorithm: "md5", ResetInterval: 15 * time.Second})
	return NewRouter(RouterOptions{Rings: rings, Conductors: f, TopicPrefix: prefix, Host: "me:8089",
		IntN: func(n int) int { return min(pick, n-1) }})
}

func wantErr(t *testing.T, err error, class errs.Class, code int, msg string) {
	t.Helper()
	e, ok := errs.As(err)
	if !ok {
		t.Fatalf("error %v is not an Ironic error", err)
	}
	if e.Class != class || e.Code != code || e.Message != msg {
		t.Errorf("got %s %d %q, want %s %d %q", e.Class, e.Code, e.Message, class, code, msg)
	}
}

func TestGetTopicFor(t *testing.T) {
	hosts := []string{"c0:8089", "c1:8089", "c2:8089"}
	f := &fakeConductors{d2c: map[string]map[string][]string{"fake-hardware": {"rack1": hosts}}}
	ctx := context.Background()
	ring, err := hashring.New(hosts, 5, "md5")
	if err != nil {
		t.Fatal(err)
	}
	for _, prefix := range []string{"", ManagerTopic} {
		r := newRouter(f, prefix, 0)
		node := &model.Node{UUID: "1be26c0b-03f2-4d2e-ae87-c02d7f33c123", Driver: "fake-hardware", ConductorGroup: "rack1"}
		owner, _ := ring.Primary(node.UUID)
		topic, err := r.GetTopicFor(ctx, node)
		if err != nil {
			t.Fatal(err)
		}
		if topic != prefix+"."+owner {
			t.Errorf("topic %q, want %q", topic, prefix+"."+owner)
		}
		if HostFromTopic(topic) != owner {
			t.Errorf("HostFromTopic(%q) = %q, want %q", topic, HostFromTopic(topic), owner)
		}
	}

	r := newRouter(f, "", 0)
	_, err = r.GetConductorFor(ctx, &model.Node{UUID: "x", Driver: "ipmi", ConductorGroup: "rack1"})
	wantErr(t, err, "NoValidHost", 404, `No valid host was found. Reason: No conductor service registered which supports driver ipmi for conductor group "rack1". Ensure the driver is valid and enabled.`)
	_, err = r.GetConductorFor(ctx, &model.Node{UUID: "x", Driver: "fake-hardware"})
	wantErr(t, err, "NoValidHost", 404, `No valid host was found. Reason: No conductor service registered which supports driver fake-hardware for conductor group "". Ensure the driver is valid and enabled.`)

	none := newRouter(&fakeConductors{}, "", 0)
	_, err = none.GetTopicFor(ctx, &model.Node{UUID: "x", Driver: "fake-hardware"})
	wantErr(t, err, "TemporaryFailure", 503, "Resource temporarily unavailable, please retry.")
}

func TestRandomAndDriverTopics(t *testing.T) {
	ctx := context.Background()
	f := &fakeConductors{
		d2c:    map[string]map[string][]string{"redfish": {"": {"a:8089"}, "rack2": {"b:8089"}}},
		online: []string{"a:8089", "b:8089", "c:8089"},
	}
	r := newRouter(f, ManagerTopic, 2)
	topic, err := r.GetRandomTopic(ctx)
	if err != nil || topic != ManagerTopic+".c:8089" {
		t.Errorf("random topic %q, %v; want the third conductor", topic, err)
	}
	topic, err = r.GetTopicForDriver(ctx, "redfish")
	if err != nil || topic != ManagerTopic+".b:8089" {
		t.Errorf("driver topic %q, %v; want b from any group", topic, err)
	}
	_, err = r.GetTopicForDriver(ctx, "ipmi")
	wantErr(t, err, "DriverNotFound", 404, "The driver 'ipmi' is unknown.")
	if got := r.GetCurrentTopic(); got != ManagerTopic+".me:8089" {
		t.Errorf("current topic %q", got)
	}

	none := newRouter(&fakeConductors{}, "", 0)
	_, err = none.GetRandomTopic(ctx)
	wantErr(t, err, "TemporaryFailure", 503, "Resource temporarily unavailable, please retry.")
	_, err = none.GetTopicForDriver(ctx, "redfish")
	wantErr(t, err, "DriverNotFound", 404, "No conductors registered.")
}

func TestHostFromTopic(t *testing.T) {
	cases := map[string]string{
		".ironic-conductor-0.ironic-conductor:8089":           "ironic-conductor-0.ironic-conductor:8089",
		ManagerTopic + ".ironic-conductor-0.ironic-conductor": "ironic-conductor-0.ironic-conductor",
		"ironic.conductor_manager.c1":                         "c1",
		"bare":                                                "bare",
	}
	for topic, want := range cases {
		if got := HostFromTopic(topic); got != want {
			t.Errorf("HostFromTopic(%q) = %q, want %q", topic, got, want)
		}
	}
}
