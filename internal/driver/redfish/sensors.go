package redfish

import (
	"context"
	"encoding/json"
	"fmt"
	"path"

	"github.com/stmcginnis/gofish/common"

	"github.com/openkeel/ironic/internal/driver"
)

// status is a Redfish Status object.
type status struct {
	State  *string
	Health *string
}

func (s status) into(m map[string]any) {
	m["state"] = s.State
	m["health"] = s.Health
}

// GetSensorsData reports the first chassis' fans, temperatures and power
// supplies and the SimpleStorage drives, keyed and named as upstream's
// sensor data (the fields are sushy's attribute names, null when the BMC
// does not report them). A missing part is logged and left empty.
func (m *Management) GetSensorsData(ctx context.Context, task *driver.Task) (map[string]any, error) {
	sys, err := m.core.getSystem(ctx, task)
	if err != nil {
		return nil, err
	}
	out := map[string]any{
		"Extra": map[string]any{"Manufacturer": sys.Manufacturer, "Model": sys.Model, "UUID": sys.UUID},
	}
	fans, temps, power := map[string]any{}, map[string]any{}, map[string]any{}
	if chassis := sys.links("Chassis"); len(chassis) > 0 {
		if err := readChassisSensors(sys.cl, chassis[0], fans, temps, power); err != nil {
			task.Logger().Debug("failed reading chassis sensors", "node", task.Node.UUID, "error", err)
		}
	}
	// SimpleStorage has the drives inline; Storage, which needs a read
	// per drive, is only read without it, as upstream.
	drives := map[string]any{}
	switch {
	case sys.rawLink("SimpleStorage") != "":
		if err := readSimpleStorage(sys, drives); err != nil {
			task.Logger().Debug("failed reading simple storage", "node", task.Node.UUID, "error", err)
		}
	case sys.rawLink("Storage") != "":
		if err := readStorageDrives(sys, drives); err != nil {
			task.Logger().Debug("failed reading drive information", "node", task.Node.UUID, "error", err)
		}
	}
	out["Fan"], out["Temperature"], out["Power"], out["Drive"] = fans, temps, power, drives
	return out, nil
}

func readChassisSensors(cl *client, path string, fans, temps, power map[string]any) error {
	var ch struct {
		ID      string      `json:"Id"`
		Thermal common.Link `json:"Thermal"`
		Power   common.Link `json:"Power"`
	}
	if err := cl.getJSON(path, &ch); err != nil {
		return err
	}
	if ch.Thermal != "" {
		var th struct {
			Fans []struct {
				MemberID        *string `json:"MemberId"`
				MaxReadingRange *float64
				MinReadingRange *float64
				Reading         *float64
				ReadingUnits    *string
				SerialNumber    *string
				PhysicalContext *string
				Status          status
			}
			Temperatures []struct {
				MemberID            *string `json:"MemberId"`
				MaxReadingRangeTemp *float64
				MinReadingRangeTemp *float64
				ReadingCelsius      *float64
				PhysicalContext     *string
				SensorNumber        *int
				Status              status
			}
		}
		if err := cl.getJSON(ch.Thermal.String(), &th); err != nil {
			return err
		}
		for _, f := range th.Fans {
			s := map[string]any{
				"identity": f.MemberID, "max_reading_range": f.MaxReadingRange, "min_reading_range": f.MinReadingRange,
				"reading": f.Reading, "reading_units": f.ReadingUnits, "serial_number": f.SerialNumber,
				"physical_context": f.PhysicalContext,
			}
			f.Status.into(s)
			fans[fmt.Sprintf("%s@%s", pyOptionalPtr(f.MemberID), ch.ID)] = s
		}
		for _, t := range th.Temperatures {
			s := map[string]any{
				"identity": t.MemberID, "max_reading_range_temp": t.MaxReadingRangeTemp,
				"min_reading_range_temp": t.MinReadingRangeTemp, "reading_celsius": t.ReadingCelsius,
				"physical_context": t.PhysicalContext, "sensor_number": t.SensorNumber,
			}
			t.Status.into(s)
			temps[fmt.Sprintf("%s@%s", pyOptionalPtr(t.MemberID), ch.ID)] = s
		}
	}
	if ch.Power != "" {
		var pw struct {
			ID            string `json:"Id"`
			PowerSupplies []struct {
				MemberID             *string `json:"MemberId"`
				PowerCapacityWatts   *float64
				LineInputVoltage     *float64
				LastPowerOutputWatts *float64
				SerialNumber         *string
				Status               status
			}
		}
		if err := cl.getJSON(ch.Power.String(), &pw); err != nil {
			return err
		}
		for _, p := range pw.PowerSupplies {
			s := map[string]any{
				"power_capacity_watts": p.PowerCapacityWatts, "line_input_voltage": p.LineInputVoltage,
				"last_power_output_watts": p.LastPowerOutputWatts, "serial_number": p.SerialNumber,
			}
			p.Status.into(s)
			power[fmt.Sprintf("%s:%s@%s", pyOptionalPtr(p.MemberID), pw.ID, ch.ID)] = s
		}
	}
	return nil
}

// readSimpleStorage collects the drives of every SimpleStorage; devices
// without a capacity (backplanes, enclosures) are not drives.
func readSimpleStorage(sys *system, drives map[string]any) error {
	var link common.Link
	if err := json.Unmarshal(sys.raw["SimpleStorage"], &link); err != nil || link == "" {
		return nil
	}
	coll, err := common.GetCollection(sys.cl, link.String())
	if err != nil {
		return err
	}
	for _, member := range coll.ItemLinks {
		var ss struct {
			ID      string `json:"Id"`
			Devices []struct {
				Name          *string
				Model         *string
				CapacityBytes *float64
				Status        status
			}
		}
		if err := sys.cl.getJSON(member, &ss); err != nil {
			return err
		}
		for _, d := range ss.Devices {
			if d.CapacityBytes == nil || *d.CapacityBytes == 0 {
				continue
			}
			s := map[string]any{"name": d.Name, "model": d.Model, "capacity_bytes": int64(*d.CapacityBytes)}
			d.Status.into(s)
			// Some BMCs report only Health: a drive with health is on.
			if d.Status.State == nil && d.Status.Health != nil {
				s["state"] = "Enabled"
			}
			drives[fmt.Sprintf("%s:%s@%s", pyOptionalPtr(d.Name), ss.ID, path.Base(sys.ODataID))] = s
		}
	}
	return nil
}

// readStorageDrives collects the drives of every Storage resource, each
// read from its own link.
func readStorageDrives(sys *system, drives map[string]any) error {
	storages, err := readStorageMembers(sys)
	if err != nil {
		return err
	}
	for _, st := range storages {
		for _, d := range st.drives {
			s := map[string]any{"name": d.Name, "model": d.Model, "capacity_bytes": d.size()}
			state, health := d.Status["State"], d.Status["Health"]
			s["state"], s["health"] = state, health
			// Some BMCs report only Health: a drive with health is on.
			if state == nil && health != nil {
				s["state"] = "Enabled"
			}
			drives[fmt.Sprintf("%s:%s@%s", pyStrAny(d.Name), st.ID, path.Base(sys.ODataID))] = s
		}
	}
	return nil
}

// pyStrAny is Python's str() of a JSON string or null.
func pyStrAny(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	if v == nil {
		return "None"
	}
	return fmt.Sprint(v)
}

func pyOptionalPtr(s *string) string {
	if s == nil {
		return "None"
	}
	return *s
}
