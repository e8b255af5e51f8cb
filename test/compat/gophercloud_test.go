package compat

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/httpbasic"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/noauth"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/allocations"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/conductors"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/drivers"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/portgroups"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/ports"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/runbooks"
	"github.com/gophercloud/gophercloud/v2/openstack/utils"
	"github.com/gophercloud/gophercloud/v2/pagination"
	"golang.org/x/crypto/bcrypt"

	"github.com/openkeel/ironic/testing/await"
)

// metal3Version is the microversion Metal3's baremetal-operator pins as
// its baseline; it raises it per call for newer features (runbooks).
const metal3Version = "1.89"

// metal3Chosen is the microversion the operator settles on against a
// server: it reads the range from the versioned root with gophercloud and
// takes the newest of the versions whose features it knows (health 1.109,
// disable_power_off 1.95, virtual media GET 1.93) that the server has,
// else its baseline.
func metal3Chosen(t *testing.T, gc *gophercloud.ServiceClient) string {
	t.Helper()
	mv, err := utils.GetSupportedMicroversions(context.Background(), gc)
	if err != nil {
		t.Fatalf("supported microversions: %v", err)
	}
	if mv.MinMajor != 1 || mv.MinMinor != 1 || mv.MaxMajor != 1 {
		t.Fatalf("supported microversions: %+v", mv)
	}
	for _, minor := range []int{109, 95, 93} {
		if mv.MaxMinor >= minor {
			return fmt.Sprintf("1.%d", minor)
		}
	}
	return metal3Version
}

// gopherClient returns a noauth gophercloud client whose calls are counted.
func gopherClient(t *testing.T, base string) (*gophercloud.ServiceClient, *countingTransport) {
	t.Helper()
	sc, err := noauth.NewBareMetalNoAuth(noauth.EndpointOpts{IronicEndpoint: base + "/v1/"})
	if err != nil {
		t.Fatal(err)
	}
	ct := &countingTransport{next: http.DefaultTransport}
	sc.ProviderClient.HTTPClient = http.Client{Transport: ct, Timeout: 30 * time.Second}
	sc.Microversion = metal3Version
	return sc, ct
}

func must[T any](t *testing.T, what string) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return v
	}
}

func waitState(t *testing.T, gc *gophercloud.ServiceClient, id string, state nodes.ProvisionState) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := nodes.WaitForProvisionState(ctx, gc, id, state); err != nil {
		n, _ := nodes.Get(context.Background(), gc, id).Extract()
		t.Fatalf("node %s never reached %s: %v (node: %+v)", id, state, err, n)
	}
	// The state is saved before the worker lets go of the node; the next
	// request would meet NodeLocked (409), which gophercloud does not
	// retry and the operator requeues.
	eventually(t, func() (bool, string) {
		n, err := nodes.Get(ctx, gc, id).Extract()
		if err != nil {
			return false, err.Error()
		}
		return n.Reservation == "", n.Reservation
	})
}

func provision(t *testing.T, gc *gophercloud.ServiceClient, id string, opts nodes.ProvisionStateOpts, want nodes.ProvisionState) {
	t.Helper()
	if err := nodes.ChangeProvisionState(context.Background(), gc, id, opts).ExtractErr(); err != nil {
		t.Fatalf("provision %s -> %s: %v", id, opts.Target, err)
	}
	waitState(t, gc, id, want)
}

// The Metal3 way through the node API: enrol with a BMC address that
// points nowhere, list, patch, validate, power, boot device, traits, VIFs,
// provision with waiting, maintenance and delete. Every change made by
// gophercloud is checked with a plain HTTP client. The operator's baseline
// and the version it negotiates both walk the whole way.
func TestGophercloudNodes(t *testing.T) {
	eachServer(t, "", func(t *testing.T, s *server) {
		gc, _ := gopherClient(t, s.URL)
		chosen := metal3Chosen(t, gc)
		// Our maximum is past every feature the operator knows of.
		if chosen != "1.109" {
			t.Fatalf("the operator would choose %s", chosen)
		}
		for _, v := range []string{metal3Version, chosen} {
			t.Run(v, func(t *testing.T) { gophercloudNodes(t, s.URL, v) })
		}
	})
}

func gophercloudNodes(t *testing.T, base, version string) {
	ctx := context.Background()
	gc, calls := gopherClient(t, base)
	gc.Microversion = version
	check := newRaw(t, base, "1.89")

	create := nodes.CreateOpts{
		Name:          "metal3-0",
		Driver:        "fake-hardware",
		ResourceClass: "baremetal",
		DriverInfo: map[string]any{
			"ipmi_address": "192.168.122.1", "ipmi_username": "admin", "ipmi_password": "secret",
		},
		Properties: map[string]any{"cpu_arch": "x86_64", "local_gb": 10},
		Extra:      map[string]any{"team": "a"},
	}
	// The same names in both versions' runs: every node goes at the end.
	var others []string
	n := must[*nodes.Node](t, "create")(nodes.Create(ctx, gc, create).Extract())
	if n.ProvisionState != "enroll" || n.Name != "metal3-0" || n.UUID == "" {
		t.Fatalf("created node: %+v", n)
	}
	seen := check.get("/v1/nodes/" + n.UUID)
	if di := seen["driver_info"].(map[string]any); di["ipmi_password"] != "******" || di["ipmi_address"] != "192.168.122.1" {
		t.Fatalf("driver_info seen by raw client: %v", di)
	}
	for i := 1; i < 5; i++ {
		opts := create
		opts.Name = fmt.Sprintf("metal3-%d", i)
		if i%2 == 0 {
			opts.ResourceClass = "gold"
		}
		others = append(others, must[*nodes.Node](t, "create "+opts.Name)(nodes.Create(ctx, gc, opts).Extract()).UUID)
	}

	// Pages of two: gophercloud follows the "next" links to the end.
	var names []string
	pages := 0
	err := nodes.List(gc, nodes.ListOpts{Limit: 2}).EachPage(ctx, func(_ context.Context, p pagination.Page) (bool, error) {
		pages++
		ns, err := nodes.ExtractNodes(p)
		for _, x := range ns {
			names = append(names, x.Name)
		}
		return true, err
	})
	if err != nil || len(names) != 5 || pages < 3 {
		t.Fatalf("paged list: %v, %d pages, names %v", err, pages, names)
	}
	all := must[pagination.Page](t, "list gold")(nodes.ListDetail(gc, nodes.ListOpts{ResourceClass: "gold"}).AllPages(ctx))
	gold := must[[]nodes.Node](t, "extract gold")(nodes.ExtractNodes(all))
	if len(gold) != 2 {
		t.Fatalf("resource_class=gold: %d nodes", len(gold))
	}
	for _, g := range gold {
		if g.ResourceClass != "gold" || g.Driver != "fake-hardware" {
			t.Fatalf("detail list item: %+v", g)
		}
	}
	enrolled := must[pagination.Page](t, "list enroll")(nodes.List(gc, nodes.ListOpts{
		ProvisionState: nodes.Enroll, Driver: "fake-hardware", Fields: []string{"uuid", "name"},
	}).AllPages(ctx))
	if got := must[[]nodes.Node](t, "extract")(nodes.ExtractNodes(enrolled)); len(got) != 5 {
		t.Fatalf("provision_state=enroll: %d nodes", len(got))
	}
	// The operator's busy-host scan asks for its fields as one element.
	busy := must[pagination.Page](t, "list busy")(nodes.List(gc, nodes.ListOpts{
		Fields: []string{"uuid,name,provision_state,boot_interface"},
	}).AllPages(ctx))
	for _, x := range must[[]nodes.Node](t, "extract")(nodes.ExtractNodes(busy)) {
		if x.UUID == "" || x.Name == "" || x.ProvisionState != "enroll" || x.BootInterface != "fake" || x.Driver != "" {
			t.Fatalf("fields=uuid,name,provision_state,boot_interface: %+v", x)
		}
	}

	// Patch operations: add, replace, remove.
	n = must[*nodes.Node](t, "update")(nodes.Update(ctx, gc, n.UUID, nodes.UpdateOpts{
		nodes.UpdateOperation{Op: nodes.AddOp, Path: "/extra/rack", Value: "r1"},
		nodes.UpdateOperation{Op: nodes.ReplaceOp, Path: "/properties/local_gb", Value: 20},
		nodes.UpdateOperation{Op: nodes.RemoveOp, Path: "/extra/team"},
		nodes.UpdateOperation{Op: nodes.AddOp, Path: "/instance_info", Value: map[string]any{"image_source": "http://127.0.0.1/img"}},
	}).Extract())
	seen = check.get("/v1/nodes/metal3-0")
	if ex := seen["extra"].(map[string]any); ex["rack"] != "r1" || ex["team"] != nil {
		t.Fatalf("extra after patch: %v", ex)
	}
	if p := seen["properties"].(map[string]any); p["local_gb"] != float64(20) {
		t.Fatalf("properties after patch: %v", p)
	}
	if ii := seen["instance_info"].(map[string]any); ii["image_source"] != "http://127.0.0.1/img" {
		t.Fatalf("instance_info after patch: %v", ii)
	}
	// A patch of a read-only field is refused with upstream's 400.
	err = nodes.Update(ctx, gc, n.UUID, nodes.UpdateOpts{
		nodes.UpdateOperation{Op: nodes.ReplaceOp, Path: "/provision_state", Value: "active"},
	}).Err
	if !gophercloud.ResponseCodeIs(err, http.StatusBadRequest) {
		t.Fatalf("patch of provision_state: want 400, got %v", err)
	}

	v := must[*nodes.NodeValidation](t, "validate")(nodes.Validate(ctx, gc, n.UUID).Extract())
	if !v.Power.Result || !v.Management.Result {
		t.Fatalf("validate: %+v", v)
	}

	// Maintenance.
	if err := nodes.SetMaintenance(ctx, gc, n.UUID, nodes.MaintenanceOpts{Reason: "bmc swap"}).ExtractErr(); err != nil {
		t.Fatalf("set maintenance: %v", err)
	}
	seen = check.get("/v1/nodes/" + n.UUID)
	if seen["maintenance"] != true || seen["maintenance_reason"] != "bmc swap" {
		t.Fatalf("maintenance: %v %v", seen["maintenance"], seen["maintenance_reason"])
	}
	in := must[pagination.Page](t, "list maintenance")(nodes.List(gc, nodes.ListOpts{Maintenance: true}).AllPages(ctx))
	if got := must[[]nodes.Node](t, "extract")(nodes.ExtractNodes(in)); len(got) != 1 || got[0].UUID != n.UUID {
		t.Fatalf("maintenance=true list: %+v", got)
	}
	if err := nodes.UnsetMaintenance(ctx, gc, n.UUID).ExtractErr(); err != nil {
		t.Fatalf("unset maintenance: %v", err)
	}
	if seen = check.get("/v1/nodes/" + n.UUID); seen["maintenance"] != false || seen["maintenance_reason"] != nil {
		t.Fatalf("after unset: %v %v", seen["maintenance"], seen["maintenance_reason"])
	}

	// The operator patches top-level fields with "add", which replaces
	// them; disable_power_off (1.95) then refuses every power off.
	if version != metal3Version {
		n = must[*nodes.Node](t, "update")(nodes.Update(ctx, gc, n.UUID, nodes.UpdateOpts{
			nodes.UpdateOperation{Op: nodes.AddOp, Path: "/disable_power_off", Value: true},
			nodes.UpdateOperation{Op: nodes.AddOp, Path: "/automated_clean", Value: false},
		}).Extract())
		recent := newRaw(t, base, version)
		if seen := recent.get("/v1/nodes/" + n.UUID + "?fields=disable_power_off,automated_clean"); seen["disable_power_off"] != true || seen["automated_clean"] != false {
			t.Fatalf("after add of top-level fields: %v", seen)
		}
		err := nodes.ChangePowerState(ctx, gc, n.UUID, nodes.PowerStateOpts{Target: nodes.PowerOff}).ExtractErr()
		var bad gophercloud.ErrUnexpectedResponseCode
		if !errors.As(err, &bad) || bad.Actual != http.StatusConflict || !strings.Contains(string(bad.Body), "Failed to set node power state to power off.") {
			t.Fatalf("power off with disable_power_off: want 409 (InvalidState) with upstream's faultstring, got %v", err)
		}
		n = must[*nodes.Node](t, "update")(nodes.Update(ctx, gc, n.UUID, nodes.UpdateOpts{
			nodes.UpdateOperation{Op: nodes.AddOp, Path: "/disable_power_off", Value: false},
		}).Extract())
		if n.DisablePowerOff {
			t.Fatalf("disable_power_off after reset: %+v", n)
		}
	}

	// Power.
	for _, target := range []nodes.TargetPowerState{nodes.PowerOn, nodes.PowerOff} {
		if err := nodes.ChangePowerState(ctx, gc, n.UUID, nodes.PowerStateOpts{Target: target}).ExtractErr(); err != nil {
			t.Fatalf("power %s: %v", target, err)
		}
		eventually(t, func() (bool, string) {
			ps := check.get("/v1/nodes/" + n.UUID)["power_state"]
			return ps == string(target), fmt.Sprint(ps)
		})
	}

	// Boot device.
	// Upstream's fake management supports PXE only and always reports
	// it, not persistent.
	if err := nodes.SetBootDevice(ctx, gc, n.UUID, nodes.BootDeviceOpts{BootDevice: "pxe", Persistent: true}).ExtractErr(); err != nil {
		t.Fatalf("set boot device: %v", err)
	}
	err = nodes.SetBootDevice(ctx, gc, n.UUID, nodes.BootDeviceOpts{BootDevice: "disk"}).ExtractErr()
	var bad gophercloud.ErrUnexpectedResponseCode
	if !errors.As(err, &bad) || bad.Actual != http.StatusBadRequest || !strings.Contains(string(bad.Body), `Invalid boot device disk specified.`) {
		t.Fatalf("unsupported boot device: want 400 with upstream's faultstring, got %v", err)
	}
	if bd := check.get("/v1/nodes/" + n.UUID + "/management/boot_device"); bd["boot_device"] != "pxe" || bd["persistent"] != false {
		t.Fatalf("boot device: %v", bd)
	}
	sup := must[[]string](t, "supported boot devices")(nodes.GetSupportedBootDevices(ctx, gc, n.UUID).Extract())
	if !slices.Equal(sup, []string{"pxe"}) {
		t.Fatalf("supported boot devices: %v", sup)
	}

	// Traits: set by the raw client, read back by gophercloud.
	if st, body, _ := check.do("PUT", "/v1/nodes/"+n.UUID+"/traits", map[string]any{"traits": []string{"CUSTOM_GPU", "HW_CPU_X86_VMX"}}); st != http.StatusNoContent {
		t.Fatalf("PUT traits: %d %v", st, body)
	}
	n = must[*nodes.Node](t, "get")(nodes.Get(ctx, gc, n.UUID).Extract())
	if slices.Sort(n.Traits); !slices.Equal(n.Traits, []string{"CUSTOM_GPU", "HW_CPU_X86_VMX"}) {
		t.Fatalf("traits: %v", n.Traits)
	}

	// No inventory before inspection: 404.
	if err := nodes.GetInventory(ctx, gc, n.UUID).Err; !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
		t.Fatalf("inventory of an uninspected node: want 404, got %v", err)
	}

	// Provisioning with waits, a VIF attached on the way.
	provision(t, gc, n.UUID, nodes.ProvisionStateOpts{Target: nodes.TargetManage}, nodes.Manageable)
	provision(t, gc, n.UUID, nodes.ProvisionStateOpts{Target: nodes.TargetProvide}, nodes.Available)
	port := must[*ports.Port](t, "port create")(ports.Create(ctx, gc, ports.CreateOpts{NodeUUID: n.UUID, Address: "52:54:00:00:00:01"}).Extract())
	if err := nodes.AttachVirtualInterface(ctx, gc, n.UUID, nodes.VirtualInterfaceOpts{ID: "vif-1"}).ExtractErr(); err != nil {
		t.Fatalf("attach vif: %v", err)
	}
	// The only network interface built is noop, which (as upstream's)
	// accepts attach and detach and keeps no record.
	if vifs := check.get("/v1/nodes/" + n.UUID + "/vifs")["vifs"].([]any); len(vifs) != 0 {
		t.Fatalf("vifs of a noop-network node: %v", vifs)
	}
	provision(t, gc, n.UUID, nodes.ProvisionStateOpts{
		Target:      nodes.TargetActive,
		ConfigDrive: nodes.ConfigDrive{MetaData: map[string]any{"uuid": "x"}, UserData: "#cloud-config"},
	}, nodes.Active)
	if seen = check.get("/v1/nodes/" + n.UUID); seen["target_provision_state"] != nil || seen["last_error"] != nil || seen["provision_updated_at"] == nil {
		t.Fatalf("active node: target %v, last_error %v, provision_updated_at %v", seen["target_provision_state"], seen["last_error"], seen["provision_updated_at"])
	}
	// Deleting an active node is refused.
	if err := nodes.Delete(ctx, gc, n.UUID).ExtractErr(); !gophercloud.ResponseCodeIs(err, http.StatusConflict) {
		t.Fatalf("delete of an active node: want 409, got %v", err)
	}
	if got := must[[]nodes.VIF](t, "list vifs")(nodes.ListVirtualInterfaces(ctx, gc, n.UUID).Extract()); len(got) != 0 {
		t.Fatalf("vifs: %v", got)
	}
	if err := nodes.DetachVirtualInterface(ctx, gc, n.UUID, "vif-1").ExtractErr(); err != nil {
		t.Fatalf("detach vif: %v", err)
	}
	provision(t, gc, n.UUID, nodes.ProvisionStateOpts{Target: nodes.TargetDeleted}, nodes.Available)
	// A verb not allowed from the current state answers 400.
	err = nodes.ChangeProvisionState(ctx, gc, n.UUID, nodes.ProvisionStateOpts{Target: nodes.TargetProvide}).ExtractErr()
	if !gophercloud.ResponseCodeIs(err, http.StatusBadRequest) {
		t.Fatalf("provide from available: want 400, got %v", err)
	}

	if err := ports.Delete(ctx, gc, port.UUID).ExtractErr(); err != nil {
		t.Fatalf("port delete: %v", err)
	}
	if err := nodes.Delete(ctx, gc, n.UUID).ExtractErr(); err != nil {
		t.Fatalf("node delete: %v", err)
	}
	if st, _, _ := check.do("GET", "/v1/nodes/"+n.UUID, nil); st != http.StatusNotFound {
		t.Fatalf("deleted node: GET answers %d", st)
	}
	for _, id := range others {
		if err := nodes.Delete(ctx, gc, id).ExtractErr(); err != nil {
			t.Fatalf("node delete: %v", err)
		}
	}
	if left := check.get("/v1/nodes")["nodes"].([]any); len(left) != 0 {
		t.Fatalf("nodes left: %v", left)
	}
	t.Logf("gophercloud at %s made %d calls, raw checks %d", version, calls.n.Load(), check.calls.n.Load())
}

// eventually waits for cond, which says why it does not hold yet; the
// bound covers a server state change on a loaded machine.
func eventually(t *testing.T, cond func() (bool, string)) {
	t.Helper()
	await.UntilReason(t, 30*time.Second, "the server's state", cond)
}

// Ports, portgroups, allocations, drivers, conductors, runbooks and deploy
// templates as the operator uses them.
func TestGophercloudResources(t *testing.T) {
	eachServer(t, "", gophercloudResources)
}

func gophercloudResources(t *testing.T, s *server) {
	ctx := context.Background()
	gc, calls := gopherClient(t, s.URL)
	check := newRaw(t, s.URL, "1.92")

	n := must[*nodes.Node](t, "create")(nodes.Create(ctx, gc, nodes.CreateOpts{
		Name: "res-0", Driver: "fake-hardware", ResourceClass: "bm-small",
		DriverInfo: map[string]any{"ipmi_address": "192.168.122.1"},
	}).Extract())

	// Portgroup and a member port.
	pg := must[*portgroups.PortGroup](t, "portgroup create")(portgroups.Create(ctx, gc, portgroups.CreateOpts{
		NodeUUID: n.UUID, Name: "bond0", Address: "52:54:00:00:01:00", Mode: "active-backup",
	}).Extract())
	if seen := check.get("/v1/portgroups/bond0"); seen["uuid"] != pg.UUID || seen["node_uuid"] != n.UUID || seen["mode"] != "active-backup" {
		t.Fatalf("portgroup seen by raw client: %v", seen)
	}
	pxe := false
	p := must[*ports.Port](t, "port create")(ports.Create(ctx, gc, ports.CreateOpts{
		NodeUUID: n.UUID, Address: "52:54:00:00:01:01", PortGroupUUID: pg.UUID, PXEEnabled: &pxe,
		LocalLinkConnection: map[string]any{"switch_id": "aa:bb:cc:dd:ee:ff", "port_id": "Eth1"},
		PhysicalNetwork:     "physnet1",
	}).Extract())
	seen := check.get("/v1/ports/" + p.UUID)
	if seen["portgroup_uuid"] != pg.UUID || seen["pxe_enabled"] != false || seen["physical_network"] != "physnet1" {
		t.Fatalf("port seen by raw client: %v", seen)
	}
	p = must[*ports.Port](t, "port update")(ports.Update(ctx, gc, p.UUID, ports.UpdateOpts{
		ports.UpdateOperation{Op: ports.AddOp, Path: "/extra/label", Value: "nic1"},
	}).Extract())
	if ex := check.get("/v1/ports/" + p.UUID)["extra"].(map[string]any); ex["label"] != "nic1" {
		t.Fatalf("port extra after update: %v", ex)
	}
	byAddr := must[pagination.Page](t, "ports by address")(ports.ListDetail(gc, ports.ListOpts{Address: "52:54:00:00:01:01"}).AllPages(ctx))
	if got := must[[]ports.Port](t, "extract")(ports.ExtractPorts(byAddr)); len(got) != 1 || got[0].NodeUUID != n.UUID {
		t.Fatalf("ports by address: %+v", got)
	}
	pgs := must[pagination.Page](t, "portgroups by node")(portgroups.List(gc, portgroups.ListOpts{Node: n.UUID}).AllPages(ctx))
	if got := must[[]portgroups.PortGroup](t, "extract")(portgroups.ExtractPortGroups(pgs)); len(got) != 1 || got[0].Name != "bond0" {
		t.Fatalf("portgroups by node: %+v", got)
	}
	// A portgroup with ports cannot go.
	if err := portgroups.Delete(ctx, gc, pg.UUID).ExtractErr(); !gophercloud.ResponseCodeIs(err, http.StatusBadRequest) {
		t.Fatalf("delete of a portgroup with ports: want 400, got %v", err)
	}
	if err := ports.Delete(ctx, gc, p.UUID).ExtractErr(); err != nil {
		t.Fatalf("port delete: %v", err)
	}
	if err := portgroups.Delete(ctx, gc, pg.UUID).ExtractErr(); err != nil {
		t.Fatalf("portgroup delete: %v", err)
	}
	if st, _, _ := check.do("GET", "/v1/portgroups/"+pg.UUID, nil); st != http.StatusNotFound {
		t.Fatalf("deleted portgroup: %d", st)
	}

	// Allocation of an available node; upstream only picks nodes whose
	// power state is known, and fake power reports what was last set.
	if err := nodes.ChangePowerState(ctx, gc, n.UUID, nodes.PowerStateOpts{Target: nodes.PowerOff}).ExtractErr(); err != nil {
		t.Fatalf("power off: %v", err)
	}
	eventually(t, func() (bool, string) {
		ps := check.get("/v1/nodes/" + n.UUID)["power_state"]
		return ps == "power off", fmt.Sprint(ps)
	})
	provision(t, gc, n.UUID, nodes.ProvisionStateOpts{Target: nodes.TargetManage}, nodes.Manageable)
	provision(t, gc, n.UUID, nodes.ProvisionStateOpts{Target: nodes.TargetProvide}, nodes.Available)
	a := must[*allocations.Allocation](t, "allocation create")(allocations.Create(ctx, gc, allocations.CreateOpts{
		Name: "alloc-1", ResourceClass: "bm-small", CandidateNodes: []string{"res-0"},
	}).Extract())
	eventually(t, func() (bool, string) {
		got, err := allocations.Get(ctx, gc, a.UUID).Extract()
		if err != nil {
			return false, err.Error()
		}
		node := check.get("/v1/nodes/" + n.UUID)
		return got.State == "active" && got.NodeUUID == n.UUID, fmt.Sprintf("%+v; node power %v provision %v", got, node["power_state"], node["provision_state"])
	})
	if seen := check.get("/v1/nodes/" + n.UUID); seen["allocation_uuid"] != a.UUID {
		t.Fatalf("node allocation_uuid: %v", seen["allocation_uuid"])
	}
	if err := allocations.Delete(ctx, gc, a.UUID).ExtractErr(); err != nil {
		t.Fatalf("allocation delete: %v", err)
	}
	if seen := check.get("/v1/nodes/" + n.UUID); seen["allocation_uuid"] != nil {
		t.Fatalf("node allocation_uuid after delete: %v", seen["allocation_uuid"])
	}
	noMatch := must[*allocations.Allocation](t, "allocation create")(allocations.Create(ctx, gc, allocations.CreateOpts{ResourceClass: "bm-none"}).Extract())
	eventually(t, func() (bool, string) {
		got := check.get("/v1/allocations/" + noMatch.UUID)
		return got["state"] == "error" && got["last_error"] != nil, fmt.Sprint(got)
	})

	// Drivers and conductors.
	dp := must[pagination.Page](t, "drivers")(drivers.ListDrivers(gc, drivers.ListDriversOpts{Detail: true}).AllPages(ctx))
	ds := must[[]drivers.Driver](t, "extract")(drivers.ExtractDrivers(dp))
	if len(ds) != 1 || ds[0].Name != "fake-hardware" || len(ds[0].Hosts) != 1 || ds[0].DefaultPowerInterface != "fake" {
		t.Fatalf("drivers: %+v", ds)
	}
	d := must[*drivers.Driver](t, "driver")(drivers.GetDriverDetails(ctx, gc, "fake-hardware").Extract())
	if !slices.Contains(d.EnabledPowerInterfaces, "fake") {
		t.Fatalf("driver details: %+v", d)
	}
	props := must[*drivers.DriverProperties](t, "driver properties")(drivers.GetDriverProperties(ctx, gc, "fake-hardware").Extract())
	if props == nil {
		t.Fatal("no driver properties")
	}
	cp := must[pagination.Page](t, "conductors")(conductors.List(gc, conductors.ListOpts{Detail: true}).AllPages(ctx))
	cs := must[[]conductors.Conductor](t, "extract")(conductors.ExtractConductors(cp))
	if len(cs) != 1 || !cs[0].Alive || cs[0].Hostname != ds[0].Hosts[0] {
		t.Fatalf("conductors: %+v (driver hosts %v)", cs, ds[0].Hosts)
	}
	// Upstream registers a conductor with its enabled hardware types.
	t.Run("conductor lists its hardware types", func(t *testing.T) {
		c := must[*conductors.Conductor](t, "conductor")(conductors.Get(ctx, gc, cs[0].Hostname).Extract())
		if !slices.Equal(c.Drivers, []string{"fake-hardware"}) {
			t.Errorf("conductor drivers: %v", c.Drivers)
		}
	})

	// Runbooks need 1.92; the operator raises the version per call.
	rb := *gc
	rb.Microversion = "1.92"
	r := must[*runbooks.Runbook](t, "runbook create")(runbooks.Create(ctx, &rb, runbooks.CreateOpts{
		Name:  "CUSTOM_FW_UPDATE",
		Steps: []runbooks.Step{{Interface: nodes.InterfaceDeploy, Step: "erase_devices", Args: map[string]any{}, Order: 0}},
	}).Extract())
	if seen := check.get("/v1/runbooks/CUSTOM_FW_UPDATE"); seen["uuid"] != r.UUID {
		t.Fatalf("runbook seen by raw client: %v", seen)
	}
	r = must[*runbooks.Runbook](t, "runbook update")(runbooks.Update(ctx, &rb, r.UUID, runbooks.UpdateOpts{
		runbooks.UpdateOperation{Op: runbooks.AddOp, Path: "/extra/owner", Value: "ops"},
	}).Extract())
	if ex := check.get("/v1/runbooks/" + r.UUID)["extra"].(map[string]any); ex["owner"] != "ops" {
		t.Fatalf("runbook extra: %v", ex)
	}
	// Below 1.92 the resource does not exist.
	if err := runbooks.Get(ctx, gc, r.UUID).Err; !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
		t.Fatalf("runbook at 1.89: want 404, got %v", err)
	}
	if err := runbooks.Delete(ctx, &rb, r.UUID).ExtractErr(); err != nil {
		t.Fatalf("runbook delete: %v", err)
	}

	// Deploy templates: gophercloud has no package; the service client's
	// own verbs carry the microversion header.
	var dt map[string]any
	_, err := gc.Post(ctx, gc.ServiceURL("deploy_templates"), map[string]any{
		"name":  "CUSTOM_HYPERTHREADING_ON",
		"steps": []map[string]any{{"interface": "bios", "step": "apply_configuration", "args": map[string]any{"settings": []any{}}, "priority": 150}},
	}, &dt, &gophercloud.RequestOpts{OkCodes: []int{201}})
	if err != nil {
		t.Fatalf("deploy template create: %v", err)
	}
	if seen := check.get("/v1/deploy_templates/CUSTOM_HYPERTHREADING_ON"); seen["uuid"] != dt["uuid"] {
		t.Fatalf("deploy template seen by raw client: %v vs %v", seen, dt)
	}
	if _, err := gc.Delete(ctx, gc.ServiceURL("deploy_templates", dt["uuid"].(string)), nil); err != nil {
		t.Fatalf("deploy template delete: %v", err)
	}
	t.Logf("gophercloud made %d calls, raw checks %d", calls.n.Load(), check.calls.n.Load())
}

// The HTTP basic client Metal3 uses when Ironic has auth_strategy =
// http_basic: right credentials pass, wrong or missing ones get 401.
func TestGophercloudHTTPBasic(t *testing.T) {
	hash, err := bcrypt.GenerateFromPassword([]byte("s3cret"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	users := filepath.Join(t.TempDir(), "htpasswd")
	if err := os.WriteFile(users, []byte("metal3:"+string(hash)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	eachServer(t, fmt.Sprintf("[DEFAULT]\nauth_strategy = http_basic\nhttp_basic_auth_user_file = %s\n", users), gophercloudHTTPBasic)
}

func gophercloudHTTPBasic(t *testing.T, s *server) {
	ctx := context.Background()
	calls := &countingTransport{next: http.DefaultTransport}
	basic := func(user, pw string) *gophercloud.ServiceClient {
		sc, err := httpbasic.NewBareMetalHTTPBasic(httpbasic.EndpointOpts{
			IronicEndpoint: s.URL + "/v1/", IronicUser: user, IronicUserPassword: pw,
		})
		if err != nil {
			t.Fatal(err)
		}
		// The credentials travel as a header of the service client, not
		// in the transport: counting the calls keeps them.
		sc.ProviderClient.HTTPClient = http.Client{Transport: calls, Timeout: 30 * time.Second}
		sc.Microversion = metal3Version
		return sc
	}
	gc := basic("metal3", "s3cret")
	n := must[*nodes.Node](t, "create")(nodes.Create(ctx, gc, nodes.CreateOpts{
		Name: "basic-0", Driver: "fake-hardware", DriverInfo: map[string]any{"ipmi_address": "192.168.122.1"},
	}).Extract())
	if got := must[*nodes.Node](t, "get")(nodes.Get(ctx, gc, "basic-0").Extract()); got.UUID != n.UUID {
		t.Fatalf("get by name: %+v", got)
	}
	if err := nodes.Get(ctx, basic("metal3", "wrong"), n.UUID).Err; !gophercloud.ResponseCodeIs(err, http.StatusUnauthorized) {
		t.Fatalf("wrong password: want 401, got %v", err)
	}
	anon, anonCalls := gopherClient(t, s.URL)
	if err := nodes.Get(ctx, anon, n.UUID).Err; !gophercloud.ResponseCodeIs(err, http.StatusUnauthorized) {
		t.Fatalf("no credentials: want 401, got %v", err)
	}
	// The version document stays public.
	check := newRaw(t, s.URL, "")
	if st, _, _ := check.do("GET", "/", nil); st != http.StatusOK {
		t.Fatalf("GET / without credentials: %d", st)
	}
	t.Logf("gophercloud made %d calls with HTTP basic, %d without; raw checks %d", calls.n.Load(), anonCalls.n.Load(), check.calls.n.Load())
}
