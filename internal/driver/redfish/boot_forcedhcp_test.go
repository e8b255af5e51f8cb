package redfish

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/openkeel/ironic/internal/image"
	"github.com/openkeel/ironic/internal/states"
)

// With [inspector]/force_dhcp the virtual media ISO of a node being
// inspected carries no static network data, so that the ramdisk takes
// DHCP on every interface, as upstream's prepare_deploy_iso; other
// operations, and inspection without the option, still get it.
func TestVirtualMediaInspectionForceDHCP(t *testing.T) {
	needTool(t, "xorriso")
	for _, tc := range []struct {
		state     string
		forceDHCP bool
		wantData  bool
	}{
		{states.Inspecting, true, false},
		{states.InspectWait, true, false},
		{states.Inspecting, false, true},
		{states.Deploying, true, true},
	} {
		e := newBootEnv(t, func(o *BootOptions) { o.InspectionForceDHCP = tc.forceDHCP })
		e.node.ProvisionState = tc.state
		e.node.NetworkData = map[string]any{"links": []any{map[string]any{"id": "eth0", "type": "phy"}}}
		must(t, e.boot.PrepareRamdisk(e.ctx, e.task, nil))
		status, iso := httpGet(t, e.srvURL+"/redfish/boot-"+testNode+".iso")
		if status != http.StatusOK {
			t.Fatalf("%s force_dhcp %v: GET ISO: %d", tc.state, tc.forceDHCP, status)
		}
		isoPath := filepath.Join(t.TempDir(), "i.iso")
		must(t, os.WriteFile(isoPath, iso, 0o644))
		data, err := image.ReadISOFile(e.ctx, isoPath, "/openstack/latest/network_data.json")
		if got := err == nil && len(data) > 0; got != tc.wantData {
			t.Errorf("%s force_dhcp %v: network_data.json on the ISO = %v (%v), want %v", tc.state, tc.forceDHCP, got, err, tc.wantData)
		}
	}
}
