package storage

import (
	"context"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/cinder"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	fakecinder "github.com/openkeel/ironic/testing/cinder"
)

const (
	nodeUUID = "1be26c0b-03f2-4d2e-ae87-c02d7f33c123"
	vol1     = "11111111-2222-4333-8444-555555555555"
	vol2     = "66666666-7777-4888-8999-aaaaaaaaaaaa"
)

func ptr[T any](v T) *T { return &v }

// volumes is a node's volume targets and connectors in memory, with the
// writes SetProperties makes.
type volumes struct {
	targets    []*model.VolumeTarget
	connectors []*model.VolumeConnector
}

func (v *volumes) DestroyAll(context.Context) error { v.targets = nil; return nil }
func (v *volumes) List(context.Context) ([]*model.VolumeTarget, error) {
	return v.targets, nil
}
func (v *volumes) Connectors(context.Context) ([]*model.VolumeConnector, error) {
	return v.connectors, nil
}
func (v *volumes) SetProperties(_ context.Context, id string, p map[string]any) error {
	for _, t := range v.targets {
		if *t.VolumeID == id {
			t.Properties = p
		}
	}
	return nil
}

type boot struct {
	driver.BootInterface
	caps []string
}

func (b boot) Capabilities() []string { return b.caps }

func target(uuid, typ string, bootIndex int, volumeID string) *model.VolumeTarget {
	return &model.VolumeTarget{UUID: uuid, VolumeType: ptr(typ), BootIndex: ptr(bootIndex), VolumeID: ptr(volumeID), Properties: map[string]any{}}
}

func connector(uuid, typ, id string) *model.VolumeConnector {
	return &model.VolumeConnector{UUID: uuid, Type: ptr(typ), ConnectorID: ptr(id)}
}

func newTask(v *volumes, caps string, bootCaps ...string) *driver.Task {
	n := &model.Node{UUID: nodeUUID, ProvisionState: states.Deploying, InstanceInfo: map[string]any{}, Properties: map[string]any{}}
	if caps != "" {
		n.Properties["capabilities"] = caps
	}
	return &driver.Task{Node: n, VolumeTargets: v, Driver: &driver.Interfaces{Boot: boot{caps: bootCaps}}, Log: slog.New(slog.DiscardHandler)}
}

func wantErr(t *testing.T, err error, class errs.Class, msg string) {
	t.Helper()
	e, ok := errs.As(err)
	if !ok || e.Class != class || e.Message != msg {
		t.Fatalf("error %v, want %s %q", err, class, msg)
	}
}

// Validation refuses what upstream's does, with its classes and words.
func TestCinderValidate(t *testing.T) {
	pre := "Failed to validate cinder storage interface for node " + nodeUUID + ". "
	ipxe := []string{"iscsi_volume_boot", "ipxe_boot"}
	for _, tc := range []struct {
		name     string
		vols     volumes
		caps     string
		bootCaps []string
		class    errs.Class
		msg      string
	}{
		{name: "iscsi boot volume", caps: "iscsi_boot:true", bootCaps: ipxe,
			vols: volumes{targets: []*model.VolumeTarget{target("t1", "iscsi", 0, vol1)}, connectors: []*model.VolumeConnector{connector("c1", "iqn", "iqn.x")}}},
		{name: "iqn without ipxe", caps: "iscsi_boot:true", bootCaps: []string{"pxe_boot"},
			vols:  volumes{connectors: []*model.VolumeConnector{connector("c1", "iqn", "iqn.x")}},
			class: errs.ClassInvalidParameterValue, msg: pre + "The [pxe]/ipxe_enabled option must be set to True or the boot interface must be set to ``ipxe`` to support network booting to an iSCSI volume."},
		{name: "wwpn without wwnn",
			vols:  volumes{connectors: []*model.VolumeConnector{connector("c1", "wwpn", "50:00"), connector("c2", "wwpn", "50:01"), connector("c3", "wwnn", "20:00")}},
			class: errs.ClassStorageError, msg: pre + "Cinder requires both wwnn and wwpn entries for FCoE connections. There must be a wwpn entry for every wwnn entry. There are 2 wwpn entries and 1 wwnn entries."},
		{name: "iscsi_boot without iqn", caps: "iscsi_boot:True", bootCaps: ipxe,
			class: errs.ClassInvalidParameterValue, msg: pre + "In order to enable the 'iscsi_boot' capability for the node, an associated volume_connector type must be valid for iSCSI (iqn)."},
		{name: "fibre_channel_boot without wwpn", caps: "fibre_channel_boot:yes",
			class: errs.ClassInvalidParameterValue, msg: pre + "In order to enable the 'fibre_channel_boot' capability for the node, an associated volume_connector type must be valid for Fibre Channel (wwpn, wwnn)."},
		{name: "iscsi boot target without capability", bootCaps: ipxe,
			vols:  volumes{targets: []*model.VolumeTarget{target("t1", "iscsi", 0, vol1)}, connectors: []*model.VolumeConnector{connector("c1", "iqn", "iqn.x")}},
			class: errs.ClassInvalidParameterValue, msg: pre + "Volume target t1 is configured for 'iscsi', however the capability 'iscsi_boot' is not set for the node."},
		{name: "iscsi data target without connector",
			vols:  volumes{targets: []*model.VolumeTarget{target("t2", "iscsi", 1, vol1)}},
			class: errs.ClassInvalidParameterValue, msg: pre + "Volume target t2 is configured for 'iscsi', however no iSCSI connectors are configured for the node."},
		{name: "fc target without wwpn", caps: "fibre_channel_boot:true",
			vols: volumes{targets: []*model.VolumeTarget{target("t3", "fibre_channel", 0, vol1)}, connectors: []*model.VolumeConnector{connector("c1", "wwpn", "50:00"), connector("c2", "wwnn", "20:00")}}},
		{name: "unknown type",
			vols:  volumes{targets: []*model.VolumeTarget{target("t4", "nfs", 1, vol1)}},
			class: errs.ClassInvalidParameterValue, msg: pre + "Volume target t4 is of an unknown type 'nfs'. Supported types: 'iscsi' or 'fibre_channel'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := (&Cinder{}).Validate(context.Background(), newTask(&tc.vols, tc.caps, tc.bootCaps...))
			if tc.class == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			wantErr(t, err, tc.class, tc.msg)
		})
	}
}

// No image is written for a boot volume unless instance_info names one;
// external storage refuses a boot volume without iPXE.
func TestShouldWriteImageAndExternal(t *testing.T) {
	ctx := context.Background()
	v := &volumes{targets: []*model.VolumeTarget{target("t1", "iscsi", 0, vol1)}}
	task := newTask(v, "", "pxe_boot")
	if (&Cinder{}).ShouldWriteImage(ctx, task) || (External{}).ShouldWriteImage(ctx, task) {
		t.Error("an image would be written over a boot volume")
	}
	wantErr(t, (External{}).Validate(ctx, task), errs.ClassInvalidParameterValue,
		"Failed to validate external storage interface for node "+nodeUUID+". To support network booting to an iSCSI volume, the boot interface must be set to ``ipxe``.")
	task.Driver.Boot = boot{caps: []string{"ipxe_boot"}}
	if err := (External{}).Validate(ctx, task); err != nil {
		t.Errorf("external with iPXE: %v", err)
	}
	task.Node.InstanceInfo["image_source"] = "http://example.test/img"
	if !(&Cinder{}).ShouldWriteImage(ctx, task) {
		t.Error("an image_source is not written")
	}
	v.targets[0].BootIndex = ptr(1)
	delete(task.Node.InstanceInfo, "image_source")
	if !(External{}).ShouldWriteImage(ctx, task) {
		t.Error("a data volume stops the image from being written")
	}
}

func clientFor(f *fakecinder.Fixture) *cinder.Client {
	return &cinder.Client{Auth: func(context.Context) (string, string, error) { return "tok", f.Endpoint(), nil }}
}

// Attaching sends the connector built from the node's connectors and
// stores Cinder's connection data on the targets; a failure half way
// detaches what was attached and answers StorageError.
func TestCinderAttach(t *testing.T) {
	ctx := context.Background()
	f := fakecinder.New(t).ISCSIVolume(vol1).ISCSIVolume(vol2)
	v := &volumes{
		targets:    []*model.VolumeTarget{target("t1", "iscsi", 0, vol1), target("t2", "iscsi", 1, vol2)},
		connectors: []*model.VolumeConnector{connector("c1", "iqn", "iqn.init"), connector("c2", "ip", "192.0.2.5"), connector("c3", "mac", "52:54:00:00:00:01")},
	}
	c := &Cinder{Volumes: clientFor(f)}
	f.FailNext("os-attach", http.StatusInternalServerError)
	f.FailNext("os-attach", http.StatusInternalServerError) // nothing to undo: the first volume was not attached
	err := c.AttachVolumes(ctx, newTask(v, "iscsi_boot:true"))
	e, ok := errs.As(err)
	if !ok || e.Class != errs.ClassStorageError || !strings.HasPrefix(e.Message, "Failed to inform cinder that the attachment for volume "+vol1+" for node "+nodeUUID+" has been completed: ") {
		t.Fatalf("attach with Cinder failing: %v", err)
	}
	f2 := fakecinder.New(t).ISCSIVolume(vol1).ISCSIVolume(vol2)
	c.Volumes = clientFor(f2)
	f2.FailNextOn(vol1, "os-attach", http.StatusInternalServerError)
	v.targets[0], v.targets[1] = v.targets[1], v.targets[0]
	// vol2 attaches, vol1 fails: vol2 is detached again.
	if err := c.AttachVolumes(ctx, newTask(v, "")); err == nil {
		t.Fatal("attach succeeded with Cinder failing")
	}
	if got := f2.Actions(vol2); !slices.Equal(got, []string{"os-reserve", "os-initialize_connection", "os-attach", "os-begin_detaching", "os-terminate_connection", "os-detach"}) {
		t.Errorf("actions on the attached volume %v", got)
	}
	f3 := fakecinder.New(t).ISCSIVolume(vol1).ISCSIVolume(vol2)
	c.Volumes = clientFor(f3)
	if err := c.AttachVolumes(ctx, newTask(v, "")); err != nil {
		t.Fatal(err)
	}
	for _, r := range f3.Requests() {
		if r.Action == "os-initialize_connection" {
			conn := r.Args["connector"].(map[string]any)
			if conn["initiator"] != "iqn.init" || conn["ip"] != "192.0.2.5" || conn["host"] != nodeUUID || conn["multipath"] != true {
				t.Errorf("connector %v", conn)
			}
		}
	}
	for _, vt := range v.targets {
		if vt.Properties["target_iqn"] != "iqn.2010-10.org.openstack:volume-"+*vt.VolumeID || vt.Properties["ironic_volume_uuid"] != *vt.VolumeID {
			t.Errorf("target %s properties %v", vt.UUID, vt.Properties)
		}
	}
	if md := f3.Metadata(vol1)["ironic_node_"+nodeUUID]; !strings.HasPrefix(md, `{"instance_uuid": "`+nodeUUID+`", "last_seen": "`) || !strings.HasSuffix(md, `", "last_action": "attached"}`) {
		t.Errorf("metadata %q", md)
	}
	// Attaching again skips the attached volumes.
	if err := c.AttachVolumes(ctx, newTask(v, "")); err != nil {
		t.Fatal(err)
	}
	if got := f3.Actions(vol1); len(got) != 3 {
		t.Errorf("actions after a second attach %v", got)
	}
}

// A connector set without an iqn, wwpn or wwnn cannot attach anything.
func TestCinderConnectorNeedsInitiator(t *testing.T) {
	v := &volumes{targets: []*model.VolumeTarget{target("t1", "iscsi", 0, vol1)}, connectors: []*model.VolumeConnector{connector("c1", "ip", "192.0.2.5")}}
	wantErr(t, (&Cinder{}).AttachVolumes(context.Background(), newTask(v, "")), errs.ClassStorageError,
		"Insufficient or incompatible volume connection records for node "+nodeUUID+". Valid connector types: wwpn, wwnn, iqn")
}

// Detaching is retried [cinder]/action_retries times; a node being torn
// down fails when Cinder keeps refusing, an active one (powered off to
// detach) goes on.
func TestCinderDetachRetries(t *testing.T) {
	ctx := context.Background()
	f := fakecinder.New(t).ISCSIVolume(vol1)
	v := &volumes{targets: []*model.VolumeTarget{target("t1", "iscsi", 0, vol1)}, connectors: []*model.VolumeConnector{connector("c1", "iqn", "iqn.init")}}
	c := &Cinder{Volumes: clientFor(f), ActionRetries: 2}
	task := newTask(v, "")
	if err := c.AttachVolumes(ctx, task); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		f.FailNext("os-begin_detaching", http.StatusServiceUnavailable)
	}
	task.Node.ProvisionState = states.Deleting
	err := c.DetachVolumes(ctx, task)
	e, ok := errs.As(err)
	if !ok || e.Class != errs.ClassStorageError || !strings.HasPrefix(e.Message, "Failed to request detach for volume "+vol1+" from cinder for node "+nodeUUID+": ") {
		t.Fatalf("detach with Cinder failing: %v", err)
	}
	if got := f.Actions(vol1)[3:]; !slices.Equal(got, []string{"os-begin_detaching", "os-begin_detaching", "os-begin_detaching"}) {
		t.Errorf("actions of the failed detachment %v, want 3 attempts", got)
	}
	// An active node tolerates the refusal and completes the detachment.
	f.FailNext("os-begin_detaching", http.StatusServiceUnavailable)
	task.Node.ProvisionState = states.Active
	if err := c.DetachVolumes(ctx, task); err != nil {
		t.Fatalf("detach of an active node: %v", err)
	}
	if len(f.Attachments(vol1)) != 0 {
		t.Errorf("still attached: %v", f.Attachments(vol1))
	}
}
