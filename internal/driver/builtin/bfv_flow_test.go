package builtin

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store"
	"github.com/openkeel/ironic/testing/await"
	fakecinder "github.com/openkeel/ironic/testing/cinder"
)

const (
	bfvVolume    = "5b0c7e1e-2d1a-4a55-9a3c-7f1f0b6c2e11"
	bfvTarget    = "6c1d8f2f-3e2b-4b66-8b4d-801a1c7d3f22"
	bfvConnector = "7d2e903a-4f3c-4c77-9c5e-912b2d8e4a33"
	bfvInitiator = "iqn.2004-06.org.example:bfv-node"
)

// waitState waits until the node is unlocked in state, showing where it
// is otherwise.
func (f *flow) waitState(n *model.Node, state string) *model.Node {
	f.t.Helper()
	var cur *model.Node
	await.UntilReason(f.t, 30*time.Second, "node in "+state, func() (bool, string) {
		cur = f.get(n)
		if strings.HasSuffix(cur.ProvisionState, " failed") {
			f.t.Fatalf("node %s: %s", cur.ProvisionState, deref(cur.LastError))
		}
		return cur.ProvisionState == state && cur.Reservation == nil,
			cur.ProvisionState + " → " + cur.TargetProvisionState + ", last_error " + deref(cur.LastError)
	})
	return cur
}

// A node whose root is an iSCSI volume deploys through the direct deploy
// and the cinder storage interface without an image written or an agent
// booted: Cinder attaches the volume (reserve, initialize_connection with
// the node's IQN, attach), the target keeps the connection data, and the
// node's iPXE configuration boots the target with sanboot. Undeploying
// detaches the volume in Cinder and forgets the target.
func TestBootFromVolumeDeploy(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	httpRoot, images := filepath.Join(dir, "http"), filepath.Join(dir, "images")
	if err := os.MkdirAll(images, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"vmlinuz", "initrd"} {
		if err := os.WriteFile(filepath.Join(images, name), []byte(name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f := newFlowWith(t, map[string]map[string]string{
		"DEFAULT": {"enabled_boot_interfaces": "fake,ipxe", "enabled_storage_interfaces": "cinder,external,noop"},
		"pxe":     {"tftp_root": filepath.Join(dir, "tftp"), "tftp_server": "192.0.2.1", "tftp_master_path": filepath.Join(dir, "master")},
		"deploy":  {"http_root": httpRoot, "http_url": "http://127.0.0.1:8080"},
		// The service credentials are [neutron]'s, as operators share
		// them through auth_section. A detachment that meets the volume
		// still attaching is retried a second later, when Cinder's volume
		// manager has finished.
		"cinder":    {"auth_section": "neutron", "action_retry_interval": "1"},
		"conductor": {"file_url_allowed_paths": images, "automated_clean": "false"},
	})
	cf := fakecinder.New(t).ISCSIVolume(bfvVolume).ValidateTokens(f.cl.ks.TokenValid).Settle(300 * time.Millisecond)
	f.cl.ks.AddService("volumev3", "cinder", "RegionOne", cf.Endpoint(), "internal", "public")

	n, _ := f.node("flat")
	cur := f.get(n)
	cur.BootInterface, cur.StorageInterface, cur.ProvisionState = "ipxe", "cinder", states.Available
	cur.Properties = map[string]any{"capabilities": "iscsi_boot:true"}
	cur.DriverInfo = map[string]any{"deploy_kernel": "file://" + filepath.Join(images, "vmlinuz"), "deploy_ramdisk": "file://" + filepath.Join(images, "initrd")}
	if _, err := f.st.UpdateNode(ctx, cur, "boot_interface", "storage_interface", "provision_state", "properties", "driver_info"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.CreateVolumeConnector(ctx, &model.VolumeConnector{UUID: bfvConnector, NodeID: &n.ID, Type: ptr("iqn"), ConnectorID: ptr(bfvInitiator)}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.CreateVolumeTarget(ctx, &model.VolumeTarget{UUID: bfvTarget, NodeID: &n.ID, VolumeType: ptr("iscsi"), BootIndex: ptr(0), VolumeID: ptr(bfvVolume), Properties: map[string]any{}}); err != nil {
		t.Fatal(err)
	}

	// The instance's VIF carries the DHCP options that send iPXE to the
	// node's configuration.
	const vif = "aaaaaaaa-9999-4999-8999-999999999999"
	f.cl.fn.Port(map[string]any{"id": vif, "network_id": provNet, "fixed_ips": []any{map[string]any{"ip_address": "192.0.2.21"}}})
	if err := f.api.VifAttach(ctx, "", n.UUID, map[string]any{"id": vif}); err != nil {
		t.Fatal(err)
	}
	if err := f.api.DoNodeDeploy(ctx, "", n.UUID, false, nil, nil); err != nil {
		t.Fatal(err)
	}
	active := f.waitState(n, states.Active)
	if active.PowerState != states.PowerOn {
		t.Errorf("power state %q", active.PowerState)
	}
	if got := active.DriverInternalInfo["boot_from_volume"]; got != bfvTarget {
		t.Errorf("driver_internal_info boot_from_volume = %v", got)
	}
	if got, want := cf.Actions(bfvVolume), []string{"os-reserve", "os-initialize_connection", "os-attach"}; !slices.Equal(got, want) {
		t.Errorf("Cinder actions at deployment %v, want %v", got, want)
	}
	for _, r := range cf.Requests() {
		if r.Action == "os-initialize_connection" {
			conn, _ := r.Args["connector"].(map[string]any)
			if conn["initiator"] != bfvInitiator || conn["host"] != n.UUID {
				t.Errorf("connector %v", conn)
			}
		}
	}
	if atts := cf.Attachments(bfvVolume); !slices.Equal(atts, []string{n.UUID}) {
		t.Errorf("attachments %v", atts)
	}
	vt, err := f.st.GetVolumeTargetByUUID(ctx, bfvTarget)
	if err != nil {
		t.Fatal(err)
	}
	iqn := "iqn.2010-10.org.openstack:volume-" + bfvVolume
	if vt.Properties["target_iqn"] != iqn || vt.Properties["ironic_volume_uuid"] != bfvVolume {
		t.Errorf("target properties %v", vt.Properties)
	}
	cfg, err := os.ReadFile(filepath.Join(httpRoot, n.UUID, "config"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"\ngoto boot_iscsi\n", "\n:boot_iscsi\nimgfree\n", "\nset initiator-iqn " + bfvInitiator + "\n",
		"\nsanhook --drive 0x80 iscsi:127.0.0.1::3260:1:" + iqn + " || goto fail_iscsi_retry\n",
		"\nset username chap-5b0c7e1e\n", "\nsanboot --no-describe || goto fail_iscsi_retry\n",
	} {
		if !strings.Contains(string(cfg), want) {
			t.Errorf("iPXE configuration lacks %q:\n%s", want, cfg)
		}
	}
	if _, err := os.Stat(filepath.Join(httpRoot, n.UUID, "deploy_kernel")); !os.IsNotExist(err) {
		t.Errorf("the deploy ramdisk was prepared for a boot from volume: %v", err)
	}

	if err := f.api.DoNodeTearDown(ctx, "", n.UUID); err != nil {
		t.Fatal(err)
	}
	f.waitState(n, states.Available)
	acts := cf.Actions(bfvVolume)
	if i := slices.Index(acts, "os-detach"); i < 0 || !slices.Contains(acts[3:i], "os-terminate_connection") {
		t.Errorf("Cinder actions at tear down %v", acts[3:])
	}
	if atts := cf.Attachments(bfvVolume); len(atts) != 0 {
		t.Errorf("attachments after tear down %v", atts)
	}
	await.Until(t, 10*time.Second, "volume available again", func() bool { return cf.Status(bfvVolume) == "available" })
	if md := cf.Metadata(bfvVolume)["ironic_node_"+n.UUID]; !strings.Contains(md, `"last_action": "detached"`) {
		t.Errorf("volume metadata %q", md)
	}
	if vts, err := f.st.ListVolumeTargets(ctx, store.VolumeFilter{NodeID: &n.ID}, store.ListOptions{}); err != nil || len(vts) != 0 {
		t.Errorf("volume targets after tear down %v, %v", vts, err)
	}
}
