package nova_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/nova"
	"github.com/openkeel/ironic/internal/requestctx"
	"github.com/openkeel/ironic/testing/keystone"
	fixture "github.com/openkeel/ironic/testing/nova"
)

const instance = "1be26c0b-03f2-4d2e-ae87-c02d7f33c123"

func load(t *testing.T, nova map[string]string) *config.Config {
	t.Helper()
	c, err := config.Load(config.LoadOptions{Overrides: map[string]map[string]string{"nova": nova}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The event reaches Nova through a Keystone session whose catalog names
// the compute endpoint, with the exact document and headers upstream's
// adapter sends.
func TestPowerUpdateThroughCatalog(t *testing.T) {
	n := fixture.New(t).Instance(instance)
	ks := keystone.New(t).Project("service").User("ironic", "s3cret").Grant("ironic", "service", "admin", "service")
	ks.AddService("compute", "nova", "RegionOne", n.Endpoint(), "internal", "public")
	n.ValidateTokens(ks.TokenValid)
	c := nova.FromConfig(load(t, map[string]string{
		"auth_url": ks.URL(), "username": "ironic", "password": "s3cret", "project_name": "service",
		"user_domain_name": "Default", "project_domain_name": "Default", "region_name": "RegionOne",
	}), nil, requestctx.GlobalRequestID)
	ctx := requestctx.WithGlobalRequestID(context.Background(), "req-7f0c5a1e-5b1c-4d7e-9a39-1c7d0e2b8f11")
	if !c.PowerUpdate(ctx, instance, "power off") {
		t.Fatalf("power-update not accepted: %+v", n.Requests())
	}
	reqs := n.Requests()
	if len(reqs) != 1 {
		t.Fatalf("requests %+v", reqs)
	}
	r := reqs[0]
	want := `{"events":[{"name":"power-update","server_uuid":"` + instance + `","tag":"POWER_OFF"}]}`
	if r.Method != http.MethodPost || r.Path != "/v2.1/os-server-external-events" || r.Body != want ||
		r.Microversion != "compute 2.76" || r.LegacyMicroversion != "2.76" || r.Token == "" ||
		r.RequestID != "req-7f0c5a1e-5b1c-4d7e-9a39-1c7d0e2b8f11" {
		t.Errorf("request %+v", r)
	}
}

func TestPowerUpdateOutcomes(t *testing.T) {
	for _, tc := range []struct {
		name     string
		state    string
		setup    func(*fixture.Fixture)
		override map[string]string
		want     bool
		calls    int
	}{
		{name: "power on", state: "power on", want: true, calls: 1},
		{name: "not a power state", state: "rebooting", calls: 0},
		{name: "disabled", state: "power on", override: map[string]string{"send_power_notifications": "false"}, calls: 0},
		{name: "unknown instance", state: "power on", setup: func(f *fixture.Fixture) {}, calls: 1},
		{name: "nova fails", state: "power on", setup: func(f *fixture.Fixture) { f.Instance(instance).FailNext(500) }, calls: 1},
		{name: "503 retried", state: "power on", setup: func(f *fixture.Fixture) { f.Instance(instance).FailNext(503) },
			override: map[string]string{"status_code_retries": "1", "status_code_retry_delay": "0.01"}, want: true, calls: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := fixture.New(t)
			if tc.setup != nil {
				tc.setup(f)
			} else {
				f.Instance(instance)
			}
			opts := map[string]string{"auth_type": "none", "endpoint_override": f.Endpoint()}
			for k, v := range tc.override {
				opts[k] = v
			}
			c := nova.FromConfig(load(t, opts), nil, nil)
			if got := c.PowerUpdate(context.Background(), instance, tc.state); got != tc.want {
				t.Errorf("PowerUpdate = %v, want %v (%+v)", got, tc.want, f.Requests())
			}
			if got := len(f.Requests()); got != tc.calls {
				t.Errorf("%d calls, want %d", got, tc.calls)
			}
		})
	}
}

// An unversioned endpoint_override gets the API version appended, as
// keystoneauth's discovery would find it.
func TestUnversionedEndpoint(t *testing.T) {
	f := fixture.New(t).Instance(instance)
	c := nova.FromConfig(load(t, map[string]string{"auth_type": "none", "endpoint_override": f.URL() + "/"}), nil, nil)
	if !c.PowerUpdate(context.Background(), instance, "power on") {
		t.Fatalf("not accepted: %+v", f.Requests())
	}
}

// Nova down: the call fails fast and reports false.
func TestNovaDown(t *testing.T) {
	f := fixture.New(t)
	url := f.Endpoint()
	f.Close()
	c := nova.FromConfig(load(t, map[string]string{"auth_type": "none", "endpoint_override": url}), nil, nil)
	if c.PowerUpdate(context.Background(), instance, "power on") {
		t.Fatal("accepted by a stopped Nova")
	}
}
