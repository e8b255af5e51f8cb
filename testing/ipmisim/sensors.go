package ipmisim

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openkeel/ironic/testing/await"
)

// SensorType is an IPMI sensor type code (IPMI 2.0 table 42-3).
type SensorType byte

// The analog sensor types the simulated BMC offers.
const (
	SensorTemperature SensorType = 0x01
	SensorVoltage     SensorType = 0x02
	SensorFan         SensorType = 0x04
)

// Entity IDs (IPMI 2.0 table 43-13) for Sensor.Entity.
const (
	EntityProcessor   byte = 0x03
	EntitySystemBoard byte = 0x07
	EntityPowerSupply byte = 0x0a
	EntityFan         byte = 0x1d
)

// Sensor is a threshold sensor of the simulated BMC: a Full Sensor Record
// in the SDR repository, which is what "ipmitool sdr -v" walks, and a
// reading ipmi_sim polls from a file so that a test can change it while
// the BMC runs (SetSensor).
type Sensor struct {
	Number   byte
	Name     string
	Type     SensorType
	Entity   byte
	Instance byte
	// Raw is the reading byte: degrees C, volts, or hundreds of RPM for
	// a fan (the record's M factor is 100).
	Raw byte
}

// unitAndM are the record's base unit (IPMI 2.0 table 43-15) and M factor
// per sensor type.
func (s Sensor) unitAndM() (unit, m byte) {
	switch s.Type {
	case SensorFan:
		return 18, 100 // RPM
	case SensorVoltage:
		return 4, 1 // Volts
	default:
		return 1, 1 // degrees C
	}
}

// sdr is the sensor's Full Sensor Record (IPMI 2.0 table 43-1): no
// thresholds, linear, reading = M × raw.
func (s Sensor) sdr(recordID int) []byte {
	unit, m := s.unitAndM()
	body := []byte{
		0x20, 0x00, s.Number, s.Entity, s.Instance,
		0x03,             // initialisation: events and scanning enabled
		0x00,             // capabilities: no thresholds, no hysteresis
		byte(s.Type),     // sensor type
		0x01,             // event/reading type: threshold
		0, 0, 0, 0, 0, 0, // event and reading masks
		0x00, unit, 0x00, // unsigned, base unit, no modifier
		0x00,    // linear
		m, 0x00, // M, tolerance 0
		0x00, 0x00, // B, accuracy
		0x00, 0x00, // accuracy, exponents
		0x00,                // no nominal or normal readings
		0, 0, 0, 0xff, 0x00, // nominal, normal max/min, sensor max/min
		0, 0, 0, 0, 0, 0, // thresholds
		0, 0, // hysteresis
		0, 0, 0, // reserved, OEM
		0xc0 | byte(len(s.Name)), // 8-bit ASCII id string
	}
	body = append(body, s.Name...)
	return append([]byte{byte(recordID), byte(recordID >> 8), 0x51, 0x01, byte(len(body))}, body...)
}

// sensorEmu is the emulator commands that add the sensors: each is polled
// from its file every 100 ms, with scanning on and events off.
func (b *BMC) sensorEmu(sensors []Sensor) string {
	var s strings.Builder
	for i, sn := range sensors {
		fmt.Fprintf(&s, "sensor_add 0x20 0 %d %d 0x01 poll 100 file %q\n", sn.Number, sn.Type, b.sensorFile(sn.Number))
		zeros := strings.Repeat("0", 15)
		fmt.Fprintf(&s, "sensor_set_event_support 0x20 0 %d disable scanning none %s %s %s %s\n", sn.Number, zeros, zeros, zeros, zeros)
		s.WriteString("main_sdr_add 0x20")
		for _, by := range sn.sdr(i + 1) {
			fmt.Fprintf(&s, " 0x%02x", by)
		}
		s.WriteString("\n")
	}
	return s.String()
}

func (b *BMC) sensorFile(number byte) string {
	return filepath.Join(b.dir, fmt.Sprintf("sensor-%d", number))
}

// SetSensor changes a sensor's raw reading and waits until the BMC
// answers it (ipmi_sim reads the file every 100 ms).
func (b *BMC) SetSensor(t testing.TB, number, raw byte) {
	t.Helper()
	must(t, os.WriteFile(b.sensorFile(number), []byte(strconv.Itoa(int(raw))+"\n"), 0o600))
	await.UntilReason(t, 10*time.Second, fmt.Sprintf("ipmi_sim's sensor %d to read %d", number, raw), func() (bool, string) {
		// Get Sensor Reading (NetFn sensor/event 0x04, command 0x2d):
		// the first byte answered is the raw reading.
		out, err := b.Ipmitool("raw", "0x04", "0x2d", fmt.Sprintf("0x%02x", number))
		if f := strings.Fields(out); err == nil && len(f) > 0 {
			if v, perr := strconv.ParseUint(f[0], 16, 8); perr == nil && byte(v) == raw {
				return true, ""
			}
		}
		return false, fmt.Sprintf("last answer %q, %v", out, err)
	})
}
