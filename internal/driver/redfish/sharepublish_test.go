package redfish

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/testing/redfishbmc"
)

// driver_info vmedia_transport_protocol NFS or CIFS (upstream's
// NFSPublisher and CIFSPublisher): the built ISO lands under the share's
// mount point, not http_root, and the BMC is asked to insert the share's
// URL with the protocol, and for CIFS [cifs]'s credentials; clean up
// removes it from the share.
func TestVirtualMediaOnShares(t *testing.T) {
	needTool(t, "xorriso")
	for _, c := range []struct {
		protocol, base string
		user, password string
	}{
		{"NFS", "nfs://192.0.2.10/", "", ""},
		{"CIFS", "cifs://192.0.2.10", "ironic", "s3cret"},
	} {
		t.Run(c.protocol, func(t *testing.T) {
			mount := filepath.Join(t.TempDir(), "mnt", "images")
			e := newBootEnv(t, func(o *BootOptions) {
				o.NFS = Share{BaseURL: c.base, SharePath: mount}
				o.CIFS = Share{BaseURL: c.base, SharePath: mount, Username: "ironic", Password: "s3cret"}
			})
			e.node.DriverInfo["vmedia_transport_protocol"] = c.protocol
			must(t, e.boot.PrepareRamdisk(e.ctx, e.task, map[string]any{}))

			name := "boot-" + testNode + ".iso"
			if _, err := os.Stat(filepath.Join(mount, name)); err != nil {
				t.Fatalf("ISO not on the share: %v", err)
			}
			if _, err := os.Stat(filepath.Join(e.httpRoot, "redfish", name)); err == nil {
				t.Errorf("ISO published in http_root too")
			}
			got, ok := e.bmc.ManagerMedia("Cd")
			want := redfishbmc.InsertedMedia{
				Image:                "nfs://192.0.2.10" + mount + "/" + name,
				TransferProtocolType: c.protocol, UserName: c.user, Password: c.password,
			}
			if c.protocol == "CIFS" {
				want.Image = "cifs://192.0.2.10" + mount + "/" + name
			}
			if !ok || got != want {
				t.Errorf("BMC's CD: %+v (inserted %v), want %+v", got, ok, want)
			}
			if p := e.node.DriverInternalInfo["vmedia_transport_protocol"]; p != c.protocol {
				t.Errorf("driver_internal_info vmedia_transport_protocol = %v", p)
			}
			must(t, e.boot.CleanUpRamdisk(e.ctx, e.task))
			if _, err := os.Stat(filepath.Join(mount, name)); !os.IsNotExist(err) {
				t.Errorf("ISO left on the share after clean up: %v", err)
			}
		})
	}
}

// A protocol the BMC does not offer, or a share that is not configured,
// is refused as upstream refuses it, before anything is inserted.
func TestVirtualMediaShareRefusals(t *testing.T) {
	for name, c := range map[string]struct {
		protocol string
		nfs      Share
		want     string
	}{
		"not offered by the BMC": {"FTP", Share{}, "Node " + testNode + " requested transport protocol FTP via driver_info, but BMC only supports ['CIFS', 'HTTP', 'HTTPS', 'NFS']."},
		"share not configured":   {"nfs", Share{BaseURL: "nfs://192.0.2.10"}, "NFS transport protocol requested for node " + testNode + " but [nfs]base_url and [nfs]share_path are not both configured."},
	} {
		t.Run(name, func(t *testing.T) {
			e := newBootEnv(t, func(o *BootOptions) { o.NFS = c.nfs })
			e.node.DriverInfo["vmedia_transport_protocol"] = c.protocol
			err := e.boot.PrepareRamdisk(e.ctx, e.task, map[string]any{})
			if ie, ok := errs.As(err); !ok || ie.Class != errs.ClassInvalidParameterValue || ie.Message != c.want {
				t.Errorf("error %v, want InvalidParameterValue %q", err, c.want)
			}
			if _, ok := e.bmc.ManagerMedia("Cd"); ok {
				t.Error("media inserted after a refusal")
			}
		})
	}
}
