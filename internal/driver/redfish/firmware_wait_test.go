package redfish

import (
	"testing"
	"time"

	"github.com/openkeel/ironic/testing/redfishbmc"
)

// Issue 23: an update of a component of no known type (upstream's
// _setup_default_update_monitoring) waits the node's
// firmware_update_unresponsive_bmc_wait, else [redfish]/
// firmware_update_wait_unresponsive_bmc, before its reboot; a wait the
// update names is kept.
func TestFirmwareDefaultComponentWait(t *testing.T) {
	bmc := redfishbmc.New(t).System("sys-1", redfishbmc.PowerState(redfishbmc.On)).WithBMCFirmwareVersion("5.0").
		FirmwareImage(fwBMCImage, "bmc", "6.0")
	e, f := newFirmwareEnv(t, bmc, func(o *Options) { o.FirmwareUpdateWaitUnresponsiveBMC = 42 * time.Second })
	for _, tc := range []struct {
		driverInfo any
		given      any
		want       int
	}{
		{nil, nil, 42},
		{"17", nil, 17},
		{float64(0), nil, 42},
		{nil, float64(5), 5},
	} {
		delete(e.node.DriverInfo, "firmware_update_unresponsive_bmc_wait")
		if tc.driverInfo != nil {
			e.node.DriverInfo["firmware_update_unresponsive_bmc_wait"] = tc.driverInfo
		}
		upd := map[string]any{"component": "raid:0", "url": fwBMCImage}
		if tc.given != nil {
			upd["wait"] = tc.given
		}
		must(t, f.executeUpdate(e.ctx, e.task, []map[string]any{upd}))
		got, _ := jsonInt(fwUpdates(e.node)[0]["wait"])
		if got != tc.want || e.node.DriverInternalInfo["cleaning_reboot"] != true {
			t.Errorf("driver_info %v, given %v: wait %v (reboot %v), want %d", tc.driverInfo, tc.given, fwUpdates(e.node)[0]["wait"],
				e.node.DriverInternalInfo["cleaning_reboot"], tc.want)
		}
	}
}
