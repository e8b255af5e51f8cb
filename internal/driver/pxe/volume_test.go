package pxe

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/model"
)

// volumes is a node's volume targets and connectors in memory.
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

// ipxeISCSI is what upstream's ipxe_config.template renders (Jinja2 3.1,
// as upstreamOutput says) for node 1be26c0b-... booting from an iSCSI
// volume: get_volume_pxe_options with target_iqn
// "iqn.2010-10.org.openstack:volume-1", target_portal "127.0.0.1:3260",
// target_lun 1, auth_username "chap-user", auth_password "chap-pass", the
// initiator "iqn.2004-06.org.example:node1" and no other target, over
// aki_path "no_kernel", ari_path "no_ramdisk", pxe_append_params
// "nofb vga=normal", tftp_server "192.0.2.1", ipxe_timeout 0; then
// switched to boot_iscsi by switch_pxe_config.
const ipxeISCSI = `#!ipxe

set attempts:int32 10
set i:int32 0

goto boot_iscsi

:deploy
imgfree
kernel  selinux=0 troubleshoot=0 text nofb vga=normal BOOTIF=${mac} initrd=deploy_ramdisk || goto retry

initrd  || goto retry
boot

:retry
iseq ${i} ${attempts} && goto fail ||
inc i
echo No response, retrying in ${i} seconds.
sleep ${i}
goto boot_iscsi

:fail
echo Failed to get a response after ${attempts} attempts
echo Powering off in 30 seconds.
sleep 30
poweroff

:boot_anaconda
imgfree
kernel no_kernel text nofb vga=normal inst.ks= inst.stage2= initrd=ramdisk || goto boot_anaconda
initrd no_ramdisk || goto boot_anaconda
boot

:boot_ramdisk
imgfree
kernel no_kernel root=/dev/ram0 text nofb vga=normal  initrd=ramdisk || goto boot_ramdisk
initrd no_ramdisk || goto boot_ramdisk
boot

:boot_iscsi
imgfree
set username chap-user
set password chap-pass
set initiator-iqn iqn.2004-06.org.example:node1
sanhook --drive 0x80 iscsi:127.0.0.1::3260:1:iqn.2010-10.org.openstack:volume-1 || goto fail_iscsi_retry


sanboot --no-describe || goto fail_iscsi_retry

:fail_iscsi_retry
echo Failed to attach iSCSI volume(s), retrying in 10 seconds.
sleep 10
goto boot_iscsi

:boot_whole_disk
sanboot --no-describe || exit 0`

func bootVolumeEnv(t *testing.T, extra bool) (*env, *volumes) {
	t.Helper()
	e := newEnv(t, "uefi")
	v := &volumes{
		targets: []*model.VolumeTarget{{UUID: "vt-boot", VolumeType: ptr("iscsi"), BootIndex: ptr(0), VolumeID: ptr("1"),
			Properties: map[string]any{"target_iqn": "iqn.2010-10.org.openstack:volume-1", "target_portal": "127.0.0.1:3260",
				"target_lun": 1.0, "auth_username": "chap-user", "auth_password": "chap-pass"}}},
		connectors: []*model.VolumeConnector{{UUID: "vc", Type: ptr("iqn"), ConnectorID: ptr("iqn.2004-06.org.example:node1")}},
	}
	if extra {
		v.targets = append(v.targets, &model.VolumeTarget{UUID: "vt-data", VolumeType: ptr("iscsi"), BootIndex: ptr(1), VolumeID: ptr("2"),
			Properties: map[string]any{"target_iqn": "iqn.2010-10.org.openstack:volume-2", "target_portals": []any{"[fd00::1]:3260", "127.0.0.2:3260"},
				"target_luns": []any{10.0, 10.0}, "auth_username": "u2", "auth_password": "p2"}})
	}
	e.task.VolumeTargets = v
	e.node.InternalInfo().Set(model.DIIBootFromVolume, "vt-boot")
	e.node.InstanceInfo = map[string]any{}
	return e, v
}

// An iPXE node booting from an iSCSI volume gets upstream's boot_iscsi
// configuration and boots from the network persistently.
func TestPrepareInstanceBootFromISCSIVolume(t *testing.T) {
	e, _ := bootVolumeEnv(t, false)
	if err := NewIPXE(e.opts).PrepareInstance(context.Background(), e.task); err != nil {
		t.Fatal(err)
	}
	cfg, err := os.ReadFile(filepath.Join(e.http, e.node.UUID, "config"))
	if err != nil {
		t.Fatal(err)
	}
	sameText(t, "config", string(cfg), ipxeISCSI)
	if n := len(e.mgmt.calls); n == 0 || e.mgmt.calls[n-1] != (bootCall{"pxe", true}) {
		t.Errorf("boot device calls %v", e.mgmt.calls)
	}
}

// Further iSCSI targets are hooked as the next BIOS drives, one URL per
// portal of a multipath target. (Upstream's template means this but
// fails to render it: its sandbox has no enumerate().)
func TestPrepareInstanceBootFromVolumeExtraTargets(t *testing.T) {
	e, _ := bootVolumeEnv(t, true)
	if err := NewIPXE(e.opts).PrepareInstance(context.Background(), e.task); err != nil {
		t.Fatal(err)
	}
	cfg, err := os.ReadFile(filepath.Join(e.http, e.node.UUID, "config"))
	if err != nil {
		t.Fatal(err)
	}
	want := "sanhook --drive 0x80 iscsi:127.0.0.1::3260:1:iqn.2010-10.org.openstack:volume-1 || goto fail_iscsi_retry\n" +
		"set username u2\nset password p2\n" +
		"sanhook --drive 0x81 iscsi:fd00::1::3260:a:iqn.2010-10.org.openstack:volume-2 iscsi:127.0.0.2::3260:a:iqn.2010-10.org.openstack:volume-2 || goto fail_iscsi_retry\n" +
		"set username chap-user\nset password chap-pass\nsanboot --no-describe || goto fail_iscsi_retry\n"
	if !strings.Contains(string(cfg), want) {
		t.Errorf("config:\n%s\nwant it to contain:\n%s", cfg, want)
	}
}

// The pxe interface cannot boot a volume: a node with one boots from its
// disk as any local boot.
func TestPXEIgnoresBootVolume(t *testing.T) {
	e, _ := bootVolumeEnv(t, false)
	if err := NewPXE(e.opts).PrepareInstance(context.Background(), e.task); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(e.tftp, e.node.UUID, "config")); !os.IsNotExist(err) {
		t.Errorf("a PXE configuration was written: %v", err)
	}
}
