package redfishbmc

import (
	"net/http"
	"slices"
	"strings"
)

// The chassis' Thermal and Power resources and the systems' Status.Health,
// which tests change while the service polls them: a fan slowing down, a
// CPU warming up, a power supply failing.

// Sensors are the chassis' readings and the health of its parts.
type Sensors struct {
	CPUCelsius     float64 `json:"cpu_celsius"`
	FanRPM         float64 `json:"fan_rpm"`
	PSUOutputWatts float64 `json:"psu_output_watts"`
	// CPUHealth, FanHealth and PSUHealth are Status.Health values (OK,
	// Warning, Critical).
	CPUHealth string `json:"cpu_health"`
	FanHealth string `json:"fan_health"`
	PSUHealth string `json:"psu_health"`
}

// defaultSensors is a healthy machine at rest.
var defaultSensors = Sensors{CPUCelsius: 45, FanRPM: 2400, PSUOutputWatts: 190, CPUHealth: "OK", FanHealth: "OK", PSUHealth: "OK"}

// sensorState is the BMC's sensors and the systems' health overrides.
type sensorState struct {
	readings *Sensors
	// systemHealth is Status.Health per system; "OK" when unset.
	systemHealth map[string]string
	// noSimpleStorage lists the systems that do not link SimpleStorage.
	noSimpleStorage map[string]bool
	// reads counts the Thermal resource's reads, for Drift.
	reads int
	drift float64
}

// SetSensors replaces the chassis' readings; the next read of Thermal
// and Power reports them.
func (b *BMC) SetSensors(s Sensors) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.sensors.readings = &s
}

// SensorReadings is what Thermal and Power report now (before drift).
func (b *BMC) SensorReadings() Sensors {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.currentSensors()
}

// DriftSensors makes the CPU temperature rise by celsius at every read
// of the Thermal resource, as a machine warming up under load.
func (b *BMC) DriftSensors(celsius float64) *BMC {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.sensors.drift = celsius
	return b
}

// SetSystemHealth sets a system's Status.Health ("OK", "Warning",
// "Critical"; "" leaves Health out, as a BMC that does not roll it up).
func (b *BMC) SetSystemHealth(id, health string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.sensors.systemHealth == nil {
		b.sensors.systemHealth = map[string]string{}
	}
	b.sensors.systemHealth[id] = health
	b.healthEvent(id, health)
}

func (b *BMC) currentSensors() Sensors {
	if b.sensors.readings == nil {
		return defaultSensors
	}
	return *b.sensors.readings
}

// systemStatus is a system's Status object.
func (b *BMC) systemStatus(id string) map[string]any {
	st := map[string]any{"State": "Enabled", "Health": "OK"}
	if h, ok := b.sensors.systemHealth[id]; ok {
		if h == "" {
			delete(st, "Health")
		} else {
			st["Health"] = h
		}
	}
	return st
}

// renderThermal is the chassis' Thermal resource; each read moves the
// CPU temperature by the drift.
func (b *BMC) renderThermal(path string) map[string]any {
	s := b.currentSensors()
	cpu := s.CPUCelsius + b.sensors.drift*float64(b.sensors.reads)
	b.sensors.reads++
	return map[string]any{"@odata.id": path, "@odata.type": "#Thermal.v1_7_0.Thermal", "Id": "Thermal", "Name": "Thermal",
		"Fans": []any{map[string]any{"MemberId": "Fan1", "Name": "Fan 1", "Reading": s.FanRPM, "ReadingUnits": "RPM",
			"MinReadingRange": 0, "MaxReadingRange": 5000, "PhysicalContext": "SystemBoard",
			"Status": map[string]any{"State": "Enabled", "Health": s.FanHealth}}},
		"Temperatures": []any{map[string]any{"MemberId": "CPU1", "Name": "CPU 1 Temp", "ReadingCelsius": cpu,
			"MinReadingRangeTemp": 0, "MaxReadingRangeTemp": 100, "PhysicalContext": "CPU", "SensorNumber": 5,
			"Status": map[string]any{"State": "Enabled", "Health": s.CPUHealth}}},
	}
}

// renderPower is the chassis' Power resource.
func (b *BMC) renderPower(path string) map[string]any {
	s := b.currentSensors()
	return map[string]any{"@odata.id": path, "@odata.type": "#Power.v1_6_0.Power", "Id": "Power", "Name": "Power",
		"PowerSupplies": []any{map[string]any{"MemberId": "0", "Name": "PSU 0", "PowerCapacityWatts": 800,
			"LineInputVoltage": 230, "LastPowerOutputWatts": s.PSUOutputWatts, "SerialNumber": "PSU-0001",
			"Status": map[string]any{"State": "Enabled", "Health": s.PSUHealth}}},
	}
}

// WithoutSimpleStorage makes a system link no SimpleStorage, as BMCs that
// only offer Storage with a resource per drive.
func (b *BMC) WithoutSimpleStorage(id string) *BMC {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.sensors.noSimpleStorage == nil {
		b.sensors.noSimpleStorage = map[string]bool{}
	}
	b.sensors.noSimpleStorage[id] = true
	return b
}

// sensorControlRoute is the control API's part for sensors and health
// (control.go): PUT /emulator/sensors and PUT /emulator/systems/<id>/health.
func (b *BMC) sensorControlRoute(r *http.Request, rest string, body []byte) (response, bool) {
	if r.Method != http.MethodPut {
		return response{}, false
	}
	if rest == "/sensors" {
		var s Sensors
		if resp, ok := decode(body, &s); !ok {
			return resp, true
		}
		b.SetSensors(s)
		return response{status: http.StatusNoContent}, true
	}
	id, ok := strings.CutSuffix(strings.TrimPrefix(rest, "/systems/"), "/health")
	if !ok || !strings.HasPrefix(rest, "/systems/") {
		return response{}, false
	}
	b.mu.Lock()
	_, known := b.systems[id]
	b.mu.Unlock()
	if !known {
		return notFound(rest), true
	}
	var req struct {
		Health string `json:"health"`
	}
	if resp, ok := decode(body, &req); !ok {
		return resp, true
	}
	if !slices.Contains([]string{"OK", "Warning", "Critical", ""}, req.Health) {
		return badRequest("Base.1.8.PropertyValueNotInList", "health %q is not OK, Warning, Critical or empty", req.Health), true
	}
	b.SetSystemHealth(id, req.Health)
	return response{status: http.StatusNoContent}, true
}
