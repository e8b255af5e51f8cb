package pxe

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net"
	"os"
	"strconv"
	"strings"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
)

// prepareVolumeInstance is upstream prepare_instance_pxe_config for a
// node booting from an iSCSI volume: the DHCP options, the configuration
// (written with the volume's options unless one is there) switched to
// its boot_iscsi entry, and a persistent network boot.
func (b *Boot) prepareVolumeInstance(ctx context.Context, task *driver.Task, vol *model.VolumeTarget) error {
	n := task.Node
	if err := b.updateDHCP(ctx, task); err != nil {
		return err
	}
	cfg := b.configPath(n)
	if _, err := os.Stat(cfg); errors.Is(err, fs.ErrNotExist) {
		opts, err := b.volumeOptions(ctx, task, vol)
		if err != nil {
			return err
		}
		if err := b.writeConfig(ctx, task, opts); err != nil {
			return err
		}
	} else if err != nil {
		return fmt.Errorf("boot configuration of node %s: %w", n.UUID, err)
	}
	if err := b.switchConfig(n, "boot_iscsi"); err != nil {
		return err
	}
	if n.ProvisionState == states.Active || n.ProvisionState == states.Adopting {
		return nil
	}
	return b.setNetworkBoot(ctx, task, true)
}

// volumeOptions is upstream build_pxe_config_options for a boot from
// volume with iPXE: get_volume_pxe_options (the boot volume's iSCSI URL
// and CHAP credentials, the initiator's IQN, the other iSCSI targets)
// over the instance's service options.
func (b *Boot) volumeOptions(ctx context.Context, task *driver.Task, vol *model.VolumeTarget) (map[string]any, error) {
	o, err := b.instanceOptions(task.Node, nil)
	if err != nil {
		return nil, err
	}
	if vol.VolumeType == nil || !strings.Contains(*vol.VolumeType, "iscsi") {
		// Upstream has no Fibre Channel boot through iPXE either.
		return o, nil
	}
	props := vol.Properties
	if v, ok := props["auth_username"]; ok {
		o["username"] = v
	}
	if v, ok := props["auth_password"]; ok {
		o["password"] = v
	}
	var iqn any
	conns, err := task.VolumeTargets.Connectors(ctx)
	if err != nil {
		return nil, err
	}
	// The last iqn connector wins, as upstream's loop leaves it.
	for _, vc := range conns {
		if vc.Type != nil && *vc.Type == "iqn" && vc.ConnectorID != nil {
			iqn = *vc.ConnectorID
		}
	}
	o["iscsi_boot_url"], o["iscsi_initiator_iqn"] = iscsiURL(props), iqn
	vts, err := task.VolumeTargets.List(ctx)
	if err != nil {
		return nil, err
	}
	// Upstream's template numbers these drives with enumerate(), which
	// its sandboxed Jinja does not define, so a second iSCSI target fails
	// its rendering; here each gets the BIOS drive number that template
	// means, from 0x81 on.
	var extra []map[string]any
	for _, vt := range vts {
		if vt.BootIndex != nil && *vt.BootIndex == 0 || vt.VolumeType == nil || !strings.Contains(*vt.VolumeType, "iscsi") {
			continue
		}
		extra = append(extra, map[string]any{
			"url": iscsiURL(vt.Properties), "username": vt.Properties["auth_username"],
			"password": vt.Properties["auth_password"], "drive": fmt.Sprintf("0x%x", 129+len(extra)),
		})
	}
	o["iscsi_volumes"], o["boot_from_volume"] = extra, true
	return o, nil
}

// property is upstream's __get_property: key's value (the first when a
// list), else the first of key+"s".
func property(props map[string]any, key string) any {
	first := func(v any) any {
		if l, ok := v.([]any); ok {
			if len(l) == 0 {
				return ""
			}
			return l[0]
		}
		return v
	}
	if v, ok := props[key]; ok {
		if p := first(v); p != "" {
			return p
		}
	}
	if v, ok := props[key+"s"]; ok {
		return first(v)
	}
	return ""
}

// iscsiURL is upstream's __generate_iscsi_url: iPXE's
// iscsi:<host>::<port>:<lun in hex>:<iqn>, one per portal of a multipath
// target, separated by spaces.
func iscsiURL(props map[string]any) string {
	iqn, lun := property(props, "target_iqn"), property(props, "target_lun")
	if portals, ok := props["target_portals"].([]any); ok {
		urls := make([]string, 0, len(portals))
		for _, p := range portals {
			urls = append(urls, formatPortal(fmt.Sprint(p), iqn, lun))
		}
		return strings.Join(urls, " ")
	}
	return formatPortal(fmt.Sprint(property(props, "target_portal")), iqn, lun)
}

// formatPortal splits host and port as oslo's parse_host_port does (an
// IPv6 address in brackets, no port when none is given).
func formatPortal(portal string, iqn, lun any) string {
	host, port := portal, ""
	if h, p, err := net.SplitHostPort(portal); err == nil {
		host, port = h, p
	} else {
		host = strings.Trim(portal, "[]")
	}
	return fmt.Sprintf("iscsi:%s::%s:%s:%v", host, port, hexLUN(lun), iqn)
}

// hexLUN renders the LUN as Python's %x does with an integer.
func hexLUN(lun any) string {
	switch v := lun.(type) {
	case float64:
		if v == math.Trunc(v) {
			return strconv.FormatInt(int64(v), 16)
		}
	case int:
		return strconv.FormatInt(int64(v), 16)
	case int64:
		return strconv.FormatInt(v, 16)
	case string:
		if i, err := strconv.ParseInt(v, 10, 64); err == nil {
			return strconv.FormatInt(i, 16)
		}
	}
	return fmt.Sprint(lun)
}
