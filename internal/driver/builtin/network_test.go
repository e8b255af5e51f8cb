package builtin

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/rpc"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store"
	"github.com/openkeel/ironic/internal/store/storetest"
	"github.com/openkeel/ironic/testing/keystone"
	fakeneutron "github.com/openkeel/ironic/testing/neutron"
)

const (
	provNet   = "11111111-1111-4111-8111-111111111111"
	cleanNet  = "22222222-2222-4222-8222-222222222222"
	tenantVIF = "33333333-3333-4333-8333-333333333333"
	imageID   = "44444444-4444-4444-8444-444444444444"
	otherImg  = "55555555-5555-4555-8555-555555555555"
)

// cloud is Keystone, Neutron and Glance fixtures wired through the
// catalog, with the conductor's service user.
type cloud struct {
	ks     *keystone.Fixture
	fn     *fakeneutron.Fixture
	glance *httptest.Server
	// glanceTokens are the tokens Glance saw.
	glanceTokens chan string
}

func newCloud(t *testing.T) *cloud {
	t.Helper()
	cl := &cloud{glanceTokens: make(chan string, 16)}
	cl.ks = keystone.New(t).Project("service").Project("other").
		User("ironic", "s3cret").Grant("ironic", "service", "service", "admin")
	cl.fn = fakeneutron.New(t).Network(provNet, "provisioning").Network(cleanNet, "cleaning").
		ValidateTokens(cl.ks.TokenValid).
		Port(map[string]any{"id": tenantVIF, "network_id": provNet, "mac_address": "fa:16:3e:00:00:01"})
	images := map[string]map[string]any{
		imageID:  {"id": imageID, "status": "active", "visibility": "private", "owner": cl.ks.ProjectID("service"), "size": 5.0, "disk_format": "raw", "container_format": "bare"},
		otherImg: {"id": otherImg, "status": "active", "visibility": "private", "owner": cl.ks.ProjectID("other"), "size": 5.0, "disk_format": "raw"},
	}
	cl.glance = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok := r.Header.Get("X-Auth-Token")
		select {
		case cl.glanceTokens <- tok:
		default:
		}
		if !cl.ks.TokenValid(tok) {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		id, file := strings.CutSuffix(strings.TrimPrefix(r.URL.Path, "/v2/images/"), "/file")
		img, ok := images[id]
		switch {
		case !ok:
			http.NotFound(w, r)
		case file:
			_, _ = w.Write([]byte("hello"))
		default:
			_ = json.NewEncoder(w).Encode(img)
		}
	}))
	t.Cleanup(cl.glance.Close)
	cl.ks.AddService("network", "neutron", "RegionOne", cl.fn.URL(), "internal", "public").
		AddService("image", "glance", "RegionOne", cl.glance.URL, "public")
	return cl
}

func credentials(ks *keystone.Fixture) map[string]string {
	return map[string]string{
		"auth_url": ks.URL(), "username": "ironic", "password": "s3cret", "project_name": "service",
		"user_domain_name": "Default", "project_domain_name": "Default",
	}
}

func (cl *cloud) config(t *testing.T, withNeutron bool) *config.Config {
	t.Helper()
	return cl.configWith(t, withNeutron, nil)
}

// configWith is config with extra options over it.
func (cl *cloud) configWith(t *testing.T, withNeutron bool, extra map[string]map[string]string) *config.Config {
	t.Helper()
	neutronSec := map[string]string{"provisioning_network": provNet, "cleaning_network": "cleaning"}
	if withNeutron {
		for k, v := range credentials(cl.ks) {
			neutronSec[k] = v
		}
	}
	over := map[string]map[string]string{
		"DEFAULT": minimal(map[string]string{
			"enabled_network_interfaces": "flat,neutron,noop",
			"default_network_interface":  "flat",
		}),
		"neutron": neutronSec,
		"glance":  credentials(cl.ks),
	}
	for sec, opts := range extra {
		if over[sec] == nil {
			over[sec] = map[string]string{}
		}
		maps.Copy(over[sec], opts)
	}
	c, err := config.Load(config.LoadOptions{Overrides: over})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

type netFixture struct {
	st    store.Store
	task  *driver.Task
	ports []*model.Port
}

func ptr[T any](v T) *T { return &v }

// node is a fake-hardware node using networkInterface with two ports on
// switch ports Eth1/1 and Eth1/2, the second not PXE enabled.
func node(t *testing.T, c *config.Config, networkInterface string) *netFixture {
	t.Helper()
	ctx := context.Background()
	st := store.New(storetest.Backends(t)[0].DB)
	n, err := st.CreateNode(ctx, &model.Node{Driver: "fake-hardware", NetworkInterface: networkInterface, ProvisionState: states.Manageable})
	if err != nil {
		t.Fatal(err)
	}
	fx := &netFixture{st: st}
	for i, mac := range []string{"52:54:00:aa:bb:01", "52:54:00:aa:bb:02"} {
		p, err := st.CreatePort(ctx, &model.Port{Address: ptr(mac), NodeID: &n.ID, PXEEnabled: ptr(i == 0),
			LocalLinkConnection: map[string]any{"switch_id": "aa:bb:cc:dd:ee:ff", "port_id": "Eth1/" + string(rune('1'+i))}})
		if err != nil {
			t.Fatal(err)
		}
		fx.ports = append(fx.ports, p)
	}
	d, err := DriversWithPorts(c, st)
	if err != nil {
		t.Fatal(err)
	}
	ifaces, err := d.ForNode(n)
	if err != nil {
		t.Fatal(err)
	}
	if ifaces.Names[driver.KindNetwork] != networkInterface {
		t.Fatalf("node network interface %q, want %q", ifaces.Names[driver.KindNetwork], networkInterface)
	}
	fx.task = &driver.Task{Node: n, Driver: ifaces}
	return fx
}

func (fx *netFixture) info(t *testing.T, i int) map[string]any {
	t.Helper()
	p, err := fx.st.GetPortByID(context.Background(), fx.ports[i].ID)
	if err != nil {
		t.Fatal(err)
	}
	return p.InternalInfo
}

// asAdmin is ctx of an API call by an admin (without a token to pass on).
func asAdmin(ctx context.Context) context.Context {
	return rpc.WithRequestContext(ctx, &rpc.RequestContext{Roles: []string{"admin"}})
}

func wantNetErr(t *testing.T, err error, class errs.Class, msg string) {
	t.Helper()
	if !errs.Is(err, class) || !strings.Contains(err.Error(), msg) {
		t.Fatalf("error = %v, want %s containing %q", err, class, msg)
	}
}

func lli(t *testing.T, p map[string]any) []any {
	t.Helper()
	prof, _ := p["binding:profile"].(map[string]any)
	l, _ := prof["local_link_information"].([]any)
	return l
}

func TestNeutronInterfaceFromConfig(t *testing.T) {
	ctx := context.Background()
	cl := newCloud(t)
	fx := node(t, cl.config(t, true), "neutron")
	net, uuid := fx.task.Driver.Network, fx.task.Node.UUID
	if err := net.Validate(asAdmin(ctx), fx.task); err != nil {
		t.Fatal(err)
	}

	// Provisioning: one Neutron port for the PXE-enabled port, bound to
	// the node on its switch port.
	if err := net.AddProvisioningNetwork(ctx, fx.task); err != nil {
		t.Fatal(err)
	}
	var prov map[string]any
	for _, p := range cl.fn.Ports() {
		if p["network_id"] == provNet && p["id"] != tenantVIF {
			prov = p
		}
	}
	if l := lli(t, prov); prov == nil || prov["binding:host_id"] != uuid || prov["binding:vnic_type"] != "baremetal" ||
		prov["mac_address"] != "52:54:00:aa:bb:01" || len(l) != 1 || l[0].(map[string]any)["port_id"] != "Eth1/1" || prov["status"] != "ACTIVE" {
		t.Fatalf("provisioning port %v", prov)
	}
	if fx.info(t, 0)["provisioning_vif_port_id"] != prov["id"] {
		t.Fatalf("internal_info %v", fx.info(t, 0))
	}
	if err := net.RemoveProvisioningNetwork(ctx, fx.task); err != nil {
		t.Fatal(err)
	}
	if cl.fn.GetPort(prov["id"].(string)) != nil || fx.info(t, 0)["provisioning_vif_port_id"] != nil {
		t.Fatal("provisioning port not removed")
	}

	// Cleaning resolves its network by name.
	if err := net.AddCleaningNetwork(ctx, fx.task); err != nil {
		t.Fatal(err)
	}
	id, _ := fx.info(t, 0)["cleaning_vif_port_id"].(string)
	if p := cl.fn.GetPort(id); p == nil || p["network_id"] != cleanNet || p["binding:host_id"] != uuid {
		t.Fatalf("cleaning port %v", p)
	}
	if err := net.RemoveCleaningNetwork(ctx, fx.task); err != nil {
		t.Fatal(err)
	}
	if cl.fn.GetPort(id) != nil {
		t.Fatal("cleaning port not removed")
	}

	// Tenant VIF: attach seeds the host, deployment binds the switch port,
	// detach on an active node unbinds and resets the MAC.
	if err := net.VifAttach(ctx, fx.task, map[string]any{"id": tenantVIF}); err != nil {
		t.Fatal(err)
	}
	if p := cl.fn.GetPort(tenantVIF); p["binding:host_id"] != uuid || p["mac_address"] != "52:54:00:aa:bb:01" || len(lli(t, p)) != 0 {
		t.Fatalf("attached VIF %v", p)
	}
	if err := net.ConfigureTenantNetworks(ctx, fx.task); err != nil {
		t.Fatal(err)
	}
	p := cl.fn.GetPort(tenantVIF)
	if l := lli(t, p); p["binding:host_id"] != uuid || p["binding:vnic_type"] != "baremetal" || len(l) != 1 || l[0].(map[string]any)["switch_id"] != "aa:bb:cc:dd:ee:ff" {
		t.Fatalf("tenant port %v", p)
	}
	fx.task.Node.ProvisionState = states.Active
	if err := net.VifDetach(ctx, fx.task, tenantVIF); err != nil {
		t.Fatal(err)
	}
	if p := cl.fn.GetPort(tenantVIF); p["binding:host_id"] != "" || p["mac_address"] != nil || fx.info(t, 0)["tenant_vif_port_id"] != nil {
		t.Fatalf("detached VIF %v", p)
	}
	// One authentication served every call, each with that token.
	if n := cl.ks.Authentications(); n != 1 {
		t.Fatalf("authentications = %d", n)
	}
	for _, r := range cl.fn.Requests() {
		if !cl.ks.TokenValid(r.Token) {
			t.Fatalf("%s %s with an invalid token", r.Method, r.Path)
		}
	}
}

func TestNeutronFailuresAreNetworkErrors(t *testing.T) {
	ctx := context.Background()
	cl := newCloud(t)
	fx := node(t, cl.config(t, true), "neutron")
	net, uuid := fx.task.Driver.Network, fx.task.Node.UUID
	cl.fn.Fail(http.MethodPost, "/v2.0/ports", http.StatusInternalServerError, 1)
	wantNetErr(t, net.AddProvisioningNetwork(ctx, fx.task), "NetworkError", "Failed to create neutron ports for node's "+uuid+" ports "+fx.ports[0].UUID+".")
	cl.fn.Fail(http.MethodGet, "/v2.0/ports", http.StatusServiceUnavailable, 1)
	wantNetErr(t, net.RemoveProvisioningNetwork(ctx, fx.task), "NetworkError", "Could not get given network VIF for "+uuid+" from neutron, possible network issue.")
	if err := net.VifAttach(ctx, fx.task, map[string]any{"id": tenantVIF}); err != nil {
		t.Fatal(err)
	}
	cl.fn.Fail(http.MethodPut, "/v2.0/ports/", http.StatusInternalServerError, 1)
	wantNetErr(t, net.ConfigureTenantNetworks(ctx, fx.task), "NetworkError", "Could not add public network VIF "+tenantVIF+" to node "+uuid+", possible network issue.")
	cl.fn.Fail(http.MethodPut, "/v2.0/ports/", http.StatusInternalServerError, 1)
	wantNetErr(t, net.UnconfigureTenantNetworks(ctx, fx.task), "NetworkError", "Unable to clear binding profile for neutron port "+tenantVIF+". Error:")
	wantNetErr(t, net.VifAttach(ctx, fx.task, map[string]any{"id": "66666666-6666-4666-8666-666666666666"}), "InvalidParameterValue", "Neutron port 66666666-6666-4666-8666-666666666666 was not found")
}

func TestNeutronTokenRenewal(t *testing.T) {
	ctx := context.Background()
	cl := newCloud(t)
	fx := node(t, cl.config(t, true), "neutron")
	net := fx.task.Driver.Network
	if err := net.Validate(asAdmin(ctx), fx.task); err != nil {
		t.Fatal(err)
	}
	// Neutron refuses the revoked token; the session authenticates again
	// and the call goes through.
	cl.ks.RevokeUserTokens("ironic")
	if err := net.Validate(asAdmin(ctx), fx.task); err != nil {
		t.Fatal(err)
	}
	if n := cl.ks.Authentications(); n != 2 {
		t.Fatalf("authentications after revocation = %d", n)
	}
	// Keystone's clock passes the token's expiry while the conductor's
	// has not: Neutron answers 401 and the session renews again.
	cl.ks.Advance(2 * time.Hour)
	if err := net.AddProvisioningNetwork(ctx, fx.task); err != nil {
		t.Fatal(err)
	}
	if n := cl.ks.Authentications(); n != 3 {
		t.Fatalf("authentications after expiry = %d", n)
	}
	// While Keystone refuses the service user the token cannot be
	// renewed and Neutron's 401 is the answer; once Keystone is back the
	// next call authenticates.
	cl.ks.RevokeUserTokens("ironic")
	cl.ks.Fail(http.StatusUnauthorized)
	err := net.Validate(asAdmin(ctx), fx.task)
	wantNetErr(t, err, "NetworkError", "Could not retrieve network: neutron GET /v2.0/networks/cleaning: 401")
	// With the token dropped, the refusal comes from Keystone itself and
	// keeps its class, as upstream raises it before calling Neutron.
	err = net.Validate(asAdmin(ctx), fx.task)
	wantNetErr(t, err, "KeystoneUnauthorized", "Not authorized in Keystone.")
	cl.ks.Heal()
	if err := net.Validate(asAdmin(ctx), fx.task); err != nil {
		t.Fatal(err)
	}
}

func TestFlatWithNeutron(t *testing.T) {
	ctx := context.Background()
	cl := newCloud(t)
	fx := node(t, cl.config(t, true), "flat")
	net, uuid := fx.task.Driver.Network, fx.task.Node.UUID
	if err := net.Validate(ctx, fx.task); err != nil {
		t.Fatal(err)
	}
	wantNetErr(t, net.AddProvisioningNetwork(ctx, fx.task), "NetworkError", "Failed to bind any flat network ports for node "+uuid)
	if err := net.VifAttach(ctx, fx.task, map[string]any{"id": tenantVIF}); err != nil {
		t.Fatal(err)
	}
	if err := net.AddProvisioningNetwork(ctx, fx.task); err != nil {
		t.Fatal(err)
	}
	if p := cl.fn.GetPort(tenantVIF); p["binding:host_id"] != uuid || p["binding:vnic_type"] != "baremetal" || p["mac_address"] != "52:54:00:aa:bb:01" {
		t.Fatalf("flat bound port %v", p)
	}
	if err := net.RemoveProvisioningNetwork(ctx, fx.task); err != nil {
		t.Fatal(err)
	}
	if p := cl.fn.GetPort(tenantVIF); p["binding:host_id"] != "" || p["mac_address"] != nil {
		t.Fatalf("flat unbound port %v", p)
	}
	// Flat plugs the node into the cleaning network like neutron does.
	if err := net.AddCleaningNetwork(ctx, fx.task); err != nil {
		t.Fatal(err)
	}
	id, _ := fx.info(t, 0)["cleaning_vif_port_id"].(string)
	if p := cl.fn.GetPort(id); p == nil || p["network_id"] != cleanNet || p["binding:host_id"] != uuid {
		t.Fatalf("flat cleaning port %v", p)
	}
	if err := net.RemoveCleaningNetwork(ctx, fx.task); err != nil {
		t.Fatal(err)
	}
	if cl.fn.GetPort(id) != nil {
		t.Fatal("flat cleaning port not removed")
	}
}

// Without [neutron] credentials flat is standalone and never calls
// Neutron, while neutron refuses as upstream's keystoneauth loading does.
func TestStandaloneFlat(t *testing.T) {
	ctx := context.Background()
	cl := newCloud(t)
	c := cl.config(t, false)
	fx := node(t, c, "flat")
	net := fx.task.Driver.Network
	for _, hook := range []func(context.Context, *driver.Task) error{net.Validate, net.AddProvisioningNetwork, net.AddCleaningNetwork, net.ConfigureTenantNetworks} {
		if err := hook(ctx, fx.task); err != nil {
			t.Fatal(err)
		}
	}
	if err := net.VifAttach(ctx, fx.task, map[string]any{"id": tenantVIF}); err != nil || fx.info(t, 0)["tenant_vif_port_id"] != tenantVIF {
		t.Fatalf("standalone attach: %v", err)
	}
	if n := len(cl.fn.Requests()); n != 0 {
		t.Fatalf("standalone flat made %d Neutron calls", n)
	}
	nfx := node(t, c, "neutron")
	// Only an admin's validation looks at Neutron, as upstream.
	if err := nfx.task.Driver.Network.Validate(ctx, nfx.task); err != nil {
		t.Fatalf("validation without an admin caller: %v", err)
	}
	err := nfx.task.Driver.Network.Validate(asAdmin(ctx), nfx.task)
	wantNetErr(t, err, "ConfigInvalid", "Invalid configuration file. Auth plugin requires parameters which were not given: auth_url")
}

func TestGlanceImagesWithServiceToken(t *testing.T) {
	ctx := context.Background()
	cl := newCloud(t)
	o, err := OptionsFromConfig(cl.config(t, false))
	if err != nil {
		t.Fatal(err)
	}
	svc, err := o.PXE.Fetcher.Sources.For(imageID)
	if err != nil {
		t.Fatal(err)
	}
	info, err := svc.Show(ctx, "glance://"+imageID)
	if err != nil {
		t.Fatal(err)
	}
	if info.ID != imageID || info.Size != 5 || info.DiskFormat != "raw" {
		t.Fatalf("image %+v", info)
	}
	var buf bytes.Buffer
	if err := svc.Download(ctx, imageID, &buf); err != nil || buf.String() != "hello" {
		t.Fatalf("download %q, %v", buf.String(), err)
	}
	tok := <-cl.glanceTokens
	if !cl.ks.TokenValid(tok) {
		t.Fatal("Glance called without a service token")
	}
	// A private image of another project is not the conductor's.
	_, err = svc.Show(ctx, otherImg)
	wantNetErr(t, err, "ImageNotFound", "Image "+otherImg+" could not be found.")
	// Glance refusing a revoked token makes the session renew it.
	cl.ks.RevokeUserTokens("ironic")
	if _, err := svc.Show(ctx, imageID); err != nil {
		t.Fatal(err)
	}
	if n := cl.ks.Authentications(); n != 2 {
		t.Fatalf("authentications = %d", n)
	}
}

// A VIF attach requested by Nova runs with the caller's token: reads go
// out with it (and the service token as X-Service-Token), port changes
// with the service's own token, as upstream.
func TestVifAttachOnBehalfOfTheCaller(t *testing.T) {
	cl := newCloud(t)
	cl.ks.Project("demo").User("nova-user", "pw").Grant("nova-user", "demo", "member")
	fx := node(t, cl.config(t, true), "neutron")
	userTok := cl.ks.Token("nova-user", "demo")
	ctx := rpc.WithRequestContext(context.Background(), &rpc.RequestContext{AuthToken: userTok, ProjectID: cl.ks.ProjectID("demo"),
		RequestID: "req-local", GlobalRequestID: "req-4e1d7a2c-9d5b-4a43-8c1e-2b5f0c9a7d11"})
	if err := fx.task.Driver.Network.VifAttach(ctx, fx.task, map[string]any{"id": tenantVIF}); err != nil {
		t.Fatal(err)
	}
	var reads, writes int
	for _, r := range cl.fn.Requests() {
		if r.RequestID != "req-4e1d7a2c-9d5b-4a43-8c1e-2b5f0c9a7d11" {
			t.Errorf("%s %s: X-OpenStack-Request-ID %q", r.Method, r.Path, r.RequestID)
		}
		switch r.Method {
		case http.MethodGet:
			if r.Token != userTok || !cl.ks.TokenValid(r.ServiceToken) || r.ServiceToken == userTok {
				t.Errorf("GET %s: token user=%v service=%v", r.Path, r.Token == userTok, r.ServiceToken != "")
			}
			reads++
		case http.MethodPut:
			if r.Token == userTok || !cl.ks.TokenValid(r.Token) || r.ServiceToken != "" {
				t.Errorf("PUT %s not with the service token", r.Path)
			}
			writes++
		}
	}
	if reads == 0 || writes == 0 {
		t.Fatalf("reads %d writes %d", reads, writes)
	}
	if p := cl.fn.GetPort(tenantVIF); p["binding:host_id"] != fx.task.Node.UUID {
		t.Fatalf("attached VIF %v", p)
	}
}
