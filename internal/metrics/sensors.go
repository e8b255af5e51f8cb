package metrics

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The node sensor series follow ironic-prometheus-exporter, upstream's
// separate service that turns the hardware.<driver>.metrics notifications
// into Prometheus files, so that dashboards built on it work against our
// /metrics with no exporter: the same series names (baremetal_*), label
// names and values, and the same choice of sensors. The help texts are
// ours. Unlike the exporter, which writes one file per node, the series of
// all nodes share one exposition, each series keeping its own label set.

// SensorReading is one node's sensor data as the conductor's sensor
// periodic sent it.
type SensorReading struct {
	NodeUUID, NodeName, InstanceUUID string
	// Driver is the node's hardware type (ipmi, redfish, idrac, …).
	Driver string
	// Data is the payload of the notification: sensor type → sensor id →
	// fields.
	Data map[string]any
	Time time.Time
}

// Sensors keeps the latest sensor reading of each node and exposes them.
type Sensors struct {
	mu     sync.Mutex
	latest map[string]SensorReading
	maxAge time.Duration
	now    func() time.Time
}

// NewSensors registers the sensor series on reg. A node's readings older
// than maxAge (zero: never) are dropped, so that a node deleted or no
// longer collected stops being reported.
func NewSensors(reg prometheus.Registerer, maxAge time.Duration) (*Sensors, error) {
	s := &Sensors{latest: map[string]SensorReading{}, maxAge: maxAge, now: time.Now}
	if err := reg.Register(s); err != nil {
		return nil, fmt.Errorf("register sensor metrics: %w", err)
	}
	return s, nil
}

// Observe records r as its node's latest reading. The data is read as
// the exporter reads it, decoded from the notification's JSON.
func (s *Sensors) Observe(r SensorReading) {
	b, err := json.Marshal(r.Data)
	if err != nil {
		return
	}
	r.Data = nil
	if err := json.Unmarshal(b, &r.Data); err != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.latest[r.NodeUUID] = r
}

// Describe sends nothing: the series and their label sets depend on what
// the BMCs report, so the collector is unchecked.
func (s *Sensors) Describe(chan<- *prometheus.Desc) {}

// Collect sends every node's series.
func (s *Sensors) Collect(ch chan<- prometheus.Metric) {
	s.mu.Lock()
	readings := make([]SensorReading, 0, len(s.latest))
	for id, r := range s.latest {
		if s.maxAge > 0 && s.now().Sub(r.Time) > s.maxAge {
			delete(s.latest, id)
			continue
		}
		readings = append(readings, r)
	}
	s.mu.Unlock()
	for _, r := range readings {
		for _, sr := range SensorSeries(r) {
			names := make([]string, 0, len(sr.Labels))
			for k := range sr.Labels {
				names = append(names, k)
			}
			sort.Strings(names)
			values := make([]string, len(names))
			for i, k := range names {
				values[i] = sr.Labels[k]
			}
			desc := prometheus.NewDesc(sr.Name, sensorHelp(sr.Name), names, nil)
			m, err := prometheus.NewConstMetric(desc, prometheus.GaugeValue, sr.Value, values...)
			if err != nil {
				// A label name the BMC made up that Prometheus refuses.
				m = prometheus.NewInvalidMetric(desc, err)
			}
			ch <- m
		}
	}
}

// SensorSample is one series of one node.
type SensorSample struct {
	Name   string
	Labels map[string]string
	Value  float64
}

// SensorSeries is what the exporter makes of one node's notification: the
// payload's timestamp, and the sensors as its ipmi parser (driver ipmi)
// or redfish parser (drivers redfish and idrac) reads them; other drivers
// get the timestamp only.
func SensorSeries(r SensorReading) []SensorSample {
	out := []SensorSample{timestampSample(r)}
	switch r.Driver {
	case "ipmi":
		out = append(out, ipmiSamples(r)...)
	case "redfish", "idrac":
		out = append(out, redfishSamples(r)...)
	}
	return out
}

// nodeLabels are node_name (left out when the node has none), node_uuid
// and instance_uuid, which is the node's UUID when no instance is there.
func nodeLabels(r SensorReading) map[string]string {
	l := map[string]string{"node_uuid": r.NodeUUID, "instance_uuid": r.InstanceUUID}
	if r.NodeName != "" {
		l["node_name"] = r.NodeName
	}
	if r.InstanceUUID == "" {
		l["instance_uuid"] = r.NodeUUID
	}
	return l
}

func timestampSample(r SensorReading) SensorSample {
	// The payload carries microseconds; the exporter keeps whole seconds.
	return SensorSample{Name: "baremetal_last_payload_timestamp_seconds", Labels: nodeLabels(r), Value: float64(r.Time.Unix())}
}

// healthValues are the exporter's status values.
var healthValues = map[string]float64{"OK": 0, "Warning": 1, "Critical": 2}

// redfishSamples: an enabled temperature sensor with a physical context
// and a reading gives baremetal_temp_<context>_celsius and
// baremetal_temperature_status; an enabled power supply, fan or drive
// with a known health gives baremetal_power_status, baremetal_fan_status
// or baremetal_drive_status. Labels are the node's, the system's Extra
// fields, every non-null sensor field but the readings, and sensor_id.
func redfishSamples(r SensorReading) []SensorSample {
	base := nodeLabels(r)
	if extra, ok := r.Data["Extra"].(map[string]any); ok {
		for k, v := range extra {
			k = strings.ToLower(k)
			if k == "uuid" {
				// Not to be confused with the node's and instance's.
				k = "redfish_system_uuid"
			}
			base[k] = pyStr(v)
		}
	}
	var out []SensorSample
	each := func(sensorType string, ignore []string, values func(map[string]any) map[string]*float64) {
		group, _ := r.Data[sensorType].(map[string]any)
		for _, id := range sortedKeys(group) {
			fields, ok := group[id].(map[string]any)
			if !ok {
				continue
			}
			if state, _ := fields["state"].(string); !strings.EqualFold(state, "enabled") {
				continue
			}
			vs := values(fields)
			if vs == nil {
				continue
			}
			labels := map[string]string{}
			for k, v := range base {
				labels[k] = v
			}
			for k, v := range fields {
				if v != nil && !contains(ignore, k) {
					labels[k] = pyStr(v)
				}
			}
			labels["sensor_id"] = id
			for name, v := range vs {
				if v != nil {
					out = append(out, SensorSample{Name: name, Labels: labels, Value: *v})
				}
			}
		}
	}
	health := func(name string) func(map[string]any) map[string]*float64 {
		return func(f map[string]any) map[string]*float64 {
			h, _ := f["health"].(string)
			v, ok := healthValues[h]
			if !ok {
				return nil
			}
			return map[string]*float64{name: &v}
		}
	}
	each("Temperature", []string{"reading_celsius"}, func(f map[string]any) map[string]*float64 {
		ctx, _ := f["physical_context"].(string)
		reading, ok := number(f["reading_celsius"])
		if ctx == "" || !ok {
			return nil
		}
		vs := map[string]*float64{"baremetal_temp_" + strings.ToLower(ctx) + "_celsius": &reading}
		if h, ok := healthValues[fmt.Sprint(f["health"])]; ok {
			vs["baremetal_temperature_status"] = &h
		}
		return vs
	})
	each("Power", []string{"last_power_output_watts", "line_input_voltage"}, health("baremetal_power_status"))
	each("Fan", []string{"reading", "reading_units"}, health("baremetal_fan_status"))
	each("Drive", nil, health("baremetal_drive_status"))
	return out
}

// ipmiCategory is how the exporter names the series of one IPMI sensor
// type.
type ipmiCategory struct {
	prefix, suffix string
	// ipmiFormat: a one-word reading is a discrete state (0h → 0, else 1).
	ipmiFormat  bool
	extractUnit bool
	special     string
}

var ipmiCategories = map[string]ipmiCategory{
	"management":  {prefix: "baremetal_", ipmiFormat: true},
	"temperature": {prefix: "baremetal_", suffix: "_celsius"},
	"system":      {prefix: "baremetal_system_", ipmiFormat: true},
	"current":     {prefix: "baremetal_"},
	"version":     {prefix: "baremetal_", ipmiFormat: true},
	"memory":      {prefix: "baremetal_", ipmiFormat: true, special: "memory"},
	"power":       {prefix: "baremetal_power_", ipmiFormat: true},
	"watchdog2":   {prefix: "baremetal_", ipmiFormat: true},
	"fan":         {prefix: "baremetal_", ipmiFormat: true, extractUnit: true, special: "fan"},
	"voltage":     {prefix: "baremetal_voltage_", ipmiFormat: true, extractUnit: true, special: "voltage"},
}

var (
	reFanName     = regexp.MustCompile(`fan\d*[a-z]*`)
	reParens      = regexp.MustCompile(`\(.*\)`)
	reVoltageName = regexp.MustCompile(`([\d+]v)|([\d+].[\d*]v)`)
	reDigits      = regexp.MustCompile(`\d+`)
	reNonWord     = regexp.MustCompile(`\W`)
	reUnderscores = regexp.MustCompile(`_+`)
	reNumber      = regexp.MustCompile(`(\d+(\.\d*)?|\.\d+)`)
)

// ipmiMetricName is the exporter's metric_names for one sensor id, e.g.
// "Fan4B (0x43)" with reading "5000 RPM" → baremetal_fan_rpm.
func ipmiMetricName(c ipmiCategory, entry, reading string) string {
	var label string
	switch c.special {
	case "fan":
		e := reFanName.ReplaceAllString(strings.ToLower(entry), "fan")
		label = strings.Join(strings.Fields(reParens.ReplaceAllString(e, "")), "_")
	case "voltage":
		e := reVoltageName.ReplaceAllString(strings.ToLower(entry), "")
		words := strings.Fields(strings.ToLower(reDigits.ReplaceAllString(e, "")))
		label = strings.ReplaceAll(strings.Join(dropLast(words), "_"), "-", "_")
		// The exporter tests "label in prefix", a substring test.
		if strings.Contains(c.prefix, label) {
			label = ""
		}
	default:
		words := strings.Fields(strings.ToLower(reDigits.ReplaceAllString(entry, "")))
		label = strings.ReplaceAll(strings.Join(dropLast(words), "_"), "-", "_")
	}
	unit := ""
	if c.extractUnit && reading != "No Reading" {
		if f := strings.Fields(reading); len(f) > 1 {
			unit = "_" + strings.ToLower(f[len(f)-1])
		}
	}
	if c.special == "memory" && !strings.Contains(label, "mem") {
		label = "memory_" + label
	}
	name := reUnderscores.ReplaceAllString(reNonWord.ReplaceAllString(c.prefix+label+c.suffix+unit, "_"), "_")
	return strings.TrimLeft(name, "0123456789")
}

// ipmiValue is the exporter's extract_values for one reading; ok is false
// for "No Reading", "Disabled" and readings it cannot use.
func ipmiValue(c ipmiCategory, reading string) (float64, bool) {
	if reading == "No Reading" || reading == "Disabled" {
		return 0, false
	}
	f := strings.Fields(reading)
	if len(f) == 0 {
		return 0, false
	}
	if !c.ipmiFormat && !reNumber.MatchString(f[0]) {
		return 0, false
	}
	switch {
	case len(f) > 1:
		v, err := strconv.ParseFloat(f[0], 64)
		return v, err == nil
	case f[0] == "0h":
		return 0, true
	default:
		return 1, true
	}
}

// ipmiSamples: every sensor of a known type gives a series named from its
// id, labelled with the node's labels, entity_id, sensor_id and status
// (when the sensor has one).
func ipmiSamples(r SensorReading) []SensorSample {
	var out []SensorSample
	for _, typ := range sortedKeys(r.Data) {
		c, ok := ipmiCategories[strings.ToLower(typ)]
		if !ok {
			continue
		}
		group, _ := r.Data[typ].(map[string]any)
		for _, entry := range sortedKeys(group) {
			fields, _ := group[entry].(map[string]any)
			reading, _ := fields["Sensor Reading"].(string)
			v, ok := ipmiValue(c, reading)
			if !ok {
				continue
			}
			labels := nodeLabels(r)
			labels["entity_id"], _ = fields["Entity ID"].(string)
			labels["sensor_id"], _ = fields["Sensor ID"].(string)
			if status, _ := fields["Status"].(string); status != "" {
				labels["status"] = status
			}
			out = append(out, SensorSample{Name: ipmiMetricName(c, entry, reading), Labels: labels, Value: v})
		}
	}
	return out
}

// sensorHelp describes a series; one help per name, as a metric family
// needs.
func sensorHelp(name string) string {
	switch {
	case name == "baremetal_last_payload_timestamp_seconds":
		return "When the node's sensor data was last read, in seconds since the epoch."
	case strings.HasSuffix(name, "_status"):
		return "Sensor health from the node's sensor data: 0 OK, 1 Warning, 2 Critical (IPMI: the reading)."
	case strings.HasSuffix(name, "_celsius"):
		return "Temperature from the node's sensor data, in degrees Celsius."
	default:
		return "Reading of an IPMI sensor from the node's sensor data (a discrete state is 0 for 0h, else 1)."
	}
}

// pyStr is Python's str() of a JSON value, as the exporter's labels are.
func pyStr(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case string:
		return x
	case bool:
		if x {
			return "True"
		}
		return "False"
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	default:
		return fmt.Sprint(v)
	}
}

// number reads a numeric sensor field.
func number(v any) (float64, bool) {
	x, ok := v.(float64)
	return x, ok
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func dropLast(s []string) []string {
	if len(s) == 0 {
		return s
	}
	return s[:len(s)-1]
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
