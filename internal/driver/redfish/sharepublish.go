package redfish

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/image"
	"github.com/openkeel/ironic/internal/model"
)

// Transfer protocols of virtual media (upstream's TRANSPORT_*). HTTP is
// the default; the others are only used when driver_info's
// vmedia_transport_protocol asks for them.
const (
	transportHTTP = "HTTP"
	transportNFS  = "NFS"
	transportCIFS = "CIFS"
	transportSMB  = "SMB"
)

// Share is a file share the operator mounted on the conductor ([nfs] or
// [cifs]): images copied under SharePath are reached by the BMC under
// BaseURL, as upstream's NFSPublisher and CIFSPublisher publish them.
type Share struct {
	BaseURL, SharePath string
	// Username and Password are the CIFS credentials given to the BMC
	// with the image; NFS sends none.
	Username, Password string
}

func (s Share) configured() bool { return s.BaseURL != "" && s.SharePath != "" }

// SharesFromConfig reads [nfs] and [cifs].
func SharesFromConfig(c *config.Config) (nfs, cifs Share) {
	nfs = Share{BaseURL: c.StringOf(config.NfsBaseURL), SharePath: c.StringOf(config.NfsSharePath)}
	cifs = Share{
		BaseURL: c.StringOf(config.CifsBaseURL), SharePath: c.StringOf(config.CifsSharePath),
		Username: c.StringOf(config.CifsUsername), Password: c.StringOf(config.CifsPassword),
	}
	return nfs, cifs
}

// share is the share of a transfer protocol, false for HTTP(S).
func (o *BootOptions) share(protocol string) (Share, bool) {
	switch strings.ToUpper(protocol) {
	case transportNFS:
		return o.NFS, true
	case transportCIFS, transportSMB:
		return o.CIFS, true
	}
	return Share{}, false
}

// transportProtocols is upstream _detect_supported_transport_protocols:
// the protocols the virtual media devices taking CDs report (their
// TransferProtocolType, or InsertMedia's allowable values), upper-cased
// and sorted, HTTP always among them. A BMC that cannot be read for them
// is taken to support HTTP only.
func (m *Management) transportProtocols(ctx context.Context, task *driver.Task) []string {
	found := map[string]bool{transportHTTP: true}
	out := func() []string {
		list := make([]string, 0, len(found))
		for p := range found {
			list = append(list, p)
		}
		slices.Sort(list)
		return list
	}
	sys, err := m.core.getSystem(ctx, task)
	if err != nil {
		task.Logger().DebugContext(ctx, "cannot detect virtual media transfer protocols, defaulting to HTTP", "node", task.Node.UUID, "error", err)
		return out()
	}
	colls, viaSystem, err := vmediaCollections(sys)
	if err != nil {
		task.Logger().DebugContext(ctx, "cannot detect virtual media transfer protocols, defaulting to HTTP", "node", task.Node.UUID, "error", err)
		return out()
	}
	if viaSystem {
		colls = colls[:1]
	}
	for _, c := range colls {
		devices, err := listVirtualMedia(sys.cl, c)
		if err != nil {
			continue
		}
		for _, v := range devices {
			if !v.accepts(mediaCD) {
				continue
			}
			var reported []string
			switch t := v.TransferProtocolType.(type) {
			case string:
				reported = []string{t}
			case []any:
				for _, x := range t {
					reported = append(reported, fmt.Sprint(x))
				}
			}
			if v.Actions.Insert != nil {
				reported = append(reported, v.Actions.Insert.Protocols...)
			}
			for _, p := range reported {
				if p != "" {
					found[strings.ToUpper(p)] = true
				}
			}
		}
	}
	return out()
}

// selectTransport is upstream _select_transport_protocol: driver_info's
// vmedia_transport_protocol when the BMC supports it and its share is
// configured, else HTTP.
func (b *VirtualMediaBoot) selectTransport(ctx context.Context, task *driver.Task) (string, error) {
	n := task.Node
	override := strings.ToUpper(strField(n.DriverInfo, "vmedia_transport_protocol"))
	if override == "" {
		return transportHTTP, nil
	}
	supported := b.mgmt.transportProtocols(ctx, task)
	if !slices.Contains(supported, override) {
		return "", driver.InvalidParameterValue("Node %s requested transport protocol %s via driver_info, but BMC only supports %s.",
			n.UUID, override, pyStrList(supported))
	}
	if s, ok := b.opts.share(override); ok && !s.configured() {
		if override == transportNFS {
			return "", driver.InvalidParameterValue("NFS transport protocol requested for node %s but [nfs]base_url and [nfs]share_path are not both configured.", n.UUID)
		}
		return "", driver.InvalidParameterValue("CIFS transport protocol requested for node %s but [cifs]base_url and [cifs]share_path are not both configured.", n.UUID)
	}
	return override, nil
}

// pyStrList renders a list as Python's repr of a list of str does, as
// upstream's messages show it.
func pyStrList(l []string) string {
	q := make([]string, len(l))
	for i, s := range l {
		q[i] = "'" + s + "'"
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// insertParameters are the InsertMedia parameters besides the image:
// the protocol when driver_info chose one, and a CIFS share's
// credentials, as upstream's prepare_ramdisk passes them.
func (b *VirtualMediaBoot) insertParameters(n *model.Node, protocol string) map[string]any {
	extra := map[string]any{}
	if strField(n.DriverInfo, "vmedia_transport_protocol") != "" {
		extra["TransferProtocolType"] = protocol
	}
	if p := strings.ToUpper(protocol); p == transportCIFS || p == transportSMB {
		if b.opts.CIFS.Username != "" {
			extra["UserName"] = b.opts.CIFS.Username
		}
		if b.opts.CIFS.Password != "" {
			extra["Password"] = b.opts.CIFS.Password
		}
	}
	return extra
}

// publishFor publishes a built ISO where the node's transfer protocol
// needs it: on its share for NFS and CIFS (upstream prepare_iso_image),
// else as publish does.
func (o *BootOptions) publishFor(ctx context.Context, n *model.Node, src, name, nodeURL string) (string, error) {
	s, ok := o.share(n.InternalInfo().String(model.DIIVmediaTransportProtocol))
	if !ok {
		return o.publish(ctx, src, name, nodeURL)
	}
	return s.publish(src, name)
}

// publish is upstream NFSPublisher/CIFSPublisher.publish: a copy under
// the share's mount point, reached at base_url followed by the mount
// point's path.
func (s Share) publish(src, name string) (string, error) {
	if err := os.MkdirAll(s.SharePath, 0o755); err != nil {
		return "", fmt.Errorf("publish %s on the share: %w", name, err)
	}
	dest := filepath.Join(s.SharePath, name)
	if err := os.Remove(dest); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("publish %s on the share: %w", name, err)
	}
	if err := image.HardLinkOrCopy(src, dest); err != nil {
		return "", fmt.Errorf("publish %s on the share: %w", name, err)
	}
	return strings.TrimRight(s.BaseURL, "/") + "/" + strings.TrimLeft(s.SharePath, "/") + "/" + name, nil
}

// unpublishShared removes an image the node's transfer protocol put on a
// share (upstream cleanup_iso_image); a missing file is no error.
func (o *BootOptions) unpublishShared(n *model.Node, name string) error {
	s, ok := o.share(n.InternalInfo().String(model.DIIVmediaTransportProtocol))
	if !ok || s.SharePath == "" {
		return nil
	}
	if err := os.Remove(filepath.Join(s.SharePath, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove %s from the share: %w", name, err)
	}
	return nil
}
