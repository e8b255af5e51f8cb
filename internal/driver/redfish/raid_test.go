package redfish

import (
	"context"
	"slices"
	"testing"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/testing/redfishbmc"
)

const tib = int64(1) << 40

func newRAIDEnv(t *testing.T) (*env, *RAID) {
	t.Helper()
	e := newMgmtEnv(t, redfishbmc.PowerState(redfishbmc.On), redfishbmc.RAIDController(
		redfishbmc.RAIDDrive{ID: "d1", CapacityBytes: tib, MediaType: "HDD", Protocol: "SAS"},
		redfishbmc.RAIDDrive{ID: "d2", CapacityBytes: tib, MediaType: "HDD", Protocol: "SAS"},
		redfishbmc.RAIDDrive{ID: "d3", CapacityBytes: 2 * tib, MediaType: "SSD", Protocol: "SATA"},
		redfishbmc.RAIDDrive{ID: "d4", CapacityBytes: 2 * tib, MediaType: "SSD", Protocol: "SATA"},
	))
	e.node.ProvisionState = states.Cleaning
	return e, &RAID{core: e.core}
}

func TestRAIDCreateAndDelete(t *testing.T) {
	e, r := newRAIDEnv(t)
	e.node.TargetRAIDConfig = map[string]any{"logical_disks": []any{
		map[string]any{"raid_level": "1", "size_gb": float64(100), "is_root_volume": true,
			"physical_disks": []any{"d1", "d2"}},
		map[string]any{"raid_level": "0", "size_gb": "MAX", "physical_disks": []any{"d3", "d4"}},
	}}
	step := driver.NewStep(driver.KindRAID, driver.CleanStep("create_configuration", 0))
	state, err := driver.ExecuteStep(context.Background(), e.task, r, step)
	must(t, err)
	if state != "" {
		t.Fatalf("state %q, want synchronous completion", state)
	}
	vols := e.bmc.RAIDVolumesOf("sys-1")
	if len(vols) != 2 {
		t.Fatalf("volumes %+v", vols)
	}
	v1, v0 := vols[0], vols[1]
	if v1.RAIDType != "RAID1" || v1.VolumeType != "Mirrored" || v1.CapacityBytes != 100*gib ||
		!slices.Equal(v1.Drives, []string{"d1", "d2"}) {
		t.Fatalf("RAID1 volume %+v", v1)
	}
	// MAX: whole 64 MiB stripes of the smaller drive, times two data drives.
	stripe := int64(64 << 20)
	if want := (2 * tib / stripe) * stripe * 2; v0.RAIDType != "RAID0" || v0.VolumeType != "NonRedundant" ||
		v0.CapacityBytes != want || !slices.Equal(v0.Drives, []string{"d3", "d4"}) {
		t.Fatalf("RAID0 volume %+v, want %d bytes", v0, want)
	}
	lds, _ := e.node.RAIDConfig["logical_disks"].([]any)
	if len(lds) != 2 || lds[0].(map[string]any)["raid_level"] != "1" || lds[0].(map[string]any)["size_gb"] != int64(100) ||
		lds[1].(map[string]any)["raid_level"] != "0" || lds[1].(map[string]any)["controller"] != "1" {
		t.Fatalf("raid_config %v", e.node.RAIDConfig)
	}

	state, err = r.DeleteConfiguration(e.ctx, e.task)
	must(t, err)
	if state != "" || len(e.bmc.RAIDVolumesOf("sys-1")) != 0 {
		t.Fatalf("state %q, volumes left %+v", state, e.bmc.RAIDVolumesOf("sys-1"))
	}
	if lds, _ := e.node.RAIDConfig["logical_disks"].([]any); len(lds) != 0 {
		t.Fatalf("raid_config after delete %v", e.node.RAIDConfig)
	}
}

func TestRAIDAssignsDrivesWithoutNamedDisks(t *testing.T) {
	e, r := newRAIDEnv(t)
	_, err := r.ApplyConfiguration(e.ctx, e.task, map[string]any{"logical_disks": []any{
		map[string]any{"raid_level": "1", "size_gb": float64(500), "is_root_volume": true, "disk_type": "ssd"},
	}}, true, false, false)
	must(t, err)
	vols := e.bmc.RAIDVolumesOf("sys-1")
	if len(vols) != 1 || vols[0].RAIDType != "RAID1" || !slices.Equal(vols[0].Drives, []string{"d3", "d4"}) {
		t.Fatalf("volumes %+v", vols)
	}
}

func TestRAIDImpossibleConfigurations(t *testing.T) {
	for _, tc := range []struct {
		name  string
		ld    map[string]any
		class errs.Class
		msg   string
	}{
		{"max without drives", map[string]any{"raid_level": "0", "size_gb": "MAX"}, "InvalidParameterValue",
			"create_configuration called with invalid target_raid_configuration for node " + testNode +
				". 'physical_disks' is missing from logical_disk while 'size_gb'='MAX' was requested: " +
				"{'raid_level': '0', 'size_gb': 'MAX'}"},
		{"too big", map[string]any{"raid_level": "1", "size_gb": float64(2048), "physical_disks": []any{"d1", "d2"}},
			"RedfishError", "Redfish exception occurred. Error: The physical disk space (1099511627776 bytes) is not " +
				"enough for the size of the logical disk (2199023255552 bytes)"},
		{"too few drives", map[string]any{"raid_level": "5", "size_gb": float64(10), "physical_disks": []any{"d1"}},
			"RedfishError", "Redfish exception occurred. Error: The number of physical drives (1) is too few for the " +
				"required number of overhead drives (1)"},
		{"unknown level", map[string]any{"raid_level": "7", "size_gb": float64(10), "physical_disks": []any{"d1"}},
			"RedfishError", `Redfish exception occurred. Error: Cannot calculate spans for RAID level "7"`},
		{"no match", map[string]any{"raid_level": "1", "size_gb": float64(4096)},
			"RedfishError", "Redfish exception occurred. Error: failed to find matching physical disks for all logical disks"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, r := newRAIDEnv(t)
			e.node.TargetRAIDConfig = map[string]any{"logical_disks": []any{tc.ld}}
			_, err := r.CreateConfiguration(e.ctx, e.task, true, true, false)
			wantClass(t, err, tc.class, tc.msg)
			if v := e.bmc.RAIDVolumesOf("sys-1"); len(v) != 0 {
				t.Fatalf("volumes created %+v", v)
			}
		})
	}
}

func TestRAIDValidateRejectsSCSI(t *testing.T) {
	e, r := newRAIDEnv(t)
	err := r.ValidateRAIDConfig(e.ctx, e.task, map[string]any{"logical_disks": []any{
		map[string]any{"raid_level": "1", "size_gb": float64(10), "interface_type": "scsi"}}})
	wantClass(t, err, "InvalidParameterValue", "interface type `scsi` not supported by Redfish RAID")
}

// The base schema comes first, so a bad document is worded as jsonschema
// words it even when it also has a SCSI disk.
func TestRAIDValidateAppliesTheSchemaFirst(t *testing.T) {
	e, r := newRAIDEnv(t)
	for _, tc := range []struct {
		cfg map[string]any
		msg string
	}{
		{map[string]any{"logical_disks": []any{}}, "RAID config validation error: [] should be non-empty"},
		{map[string]any{"logical_disks": []any{map[string]any{"raid_level": "7", "size_gb": float64(10), "interface_type": "scsi"}}},
			"RAID config validation error: '7' is not one of ['JBOD', '0', '1', '2', '5', '6', '1+0', '5+0', '6+0']"},
		{map[string]any{"logical_disks": []any{map[string]any{"size_gb": float64(10)}}}, "RAID config validation error: 'raid_level' is a required property"},
	} {
		wantClass(t, r.ValidateRAIDConfig(e.ctx, e.task, tc.cfg), "InvalidParameterValue", tc.msg)
	}
}
