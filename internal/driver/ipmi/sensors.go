package ipmi

import (
	"strings"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/pyfmt"
)

// sensorTypeKeys are the three "Sensor Type" fields "sdr -v" prints; the
// first word of the one present is the sensor type.
var sensorTypeKeys = []string{"Sensor Type (Analog)", "Sensor Type (Discrete)", "Sensor Type (Threshold)"}

// processSensor is upstream _process_sensor: "key : value" lines of one
// record, skipping ipmitool's "<<" debug lines and lines with more or
// fewer than one colon.
func processSensor(record string) map[string]string {
	out := map[string]string{}
	for _, field := range strings.Split(record, "\n") {
		if field == "" || strings.HasPrefix(field, "<<") {
			continue
		}
		kv := strings.Split(field, ":")
		if len(kv) != 2 {
			continue
		}
		out[strings.TrimSpace(kv[0])] = strings.TrimSpace(kv[1])
	}
	return out
}

// parseSensorsData is upstream _parse_ipmi_sensors_data: records are
// separated by blank lines, grouped by sensor type and keyed by Sensor ID;
// records without a Sensor Reading are left out.
func parseSensorsData(nodeUUID, data string) (map[string]any, error) {
	out := map[string]any{}
	if data == "" {
		return out, nil
	}
	for _, record := range strings.Split(data, "\n\n") {
		sensor := processSensor(record)
		if len(sensor) == 0 {
			continue
		}
		typ, typed := findType(sensor)
		if !typed {
			// Upstream passes a (message, dict) tuple as the error, so the
			// message shows the tuple's repr.
			return nil, errs.New(errs.ClassFailedToParseSensorData, map[string]any{
				"node": nodeUUID,
				"error": "(" + pyfmt.Repr("parse ipmi sensor data failed, unknown sensor type data: %(sensors_data)s") +
					", {'sensors_data': " + pyfmt.Repr(toAny(sensor)) + "})",
			})
		}
		if _, ok := sensor["Sensor Reading"]; !ok {
			continue
		}
		sensorType, _, _ := strings.Cut(typ, " ")
		group, _ := out[sensorType].(map[string]any)
		if group == nil {
			group = map[string]any{}
			out[sensorType] = group
		}
		group[sensor["Sensor ID"]] = toAny(sensor)
	}
	if len(out) == 0 {
		return nil, errs.New(errs.ClassFailedToParseSensorData, map[string]any{
			"node":  nodeUUID,
			"error": "parse ipmi sensor data failed, get nothing with input data: " + data,
		})
	}
	return out, nil
}

func findType(sensor map[string]string) (string, bool) {
	for _, k := range sensorTypeKeys {
		if v, ok := sensor[k]; ok {
			return v, true
		}
	}
	return "", false
}

func toAny(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
