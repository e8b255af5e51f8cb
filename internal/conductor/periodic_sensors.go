package conductor

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store"
)

// SensorReport is one node's sensor data as the sensor periodic sent it.
type SensorReport struct {
	NodeUUID, NodeName, InstanceUUID string
	// Driver is the node's hardware type, the <driver> of the event type
	// hardware.<driver>.metrics.
	Driver string
	// Data is the management interface's get_sensors_data, filtered by
	// [sensor_data]/data_types: sensor type → sensor id → fields.
	Data map[string]any
	Time time.Time
}

// sensorTimestamp is oslo.serialization's to_primitive form of a
// datetime, which is what the payload's timestamp is on the wire (the
// ironic-prometheus-exporter parses it back with this format).
const sensorTimestamp = "2006-01-02T15:04:05.000000"

// SendSensorData is upstream's _send_sensor_data periodic: with
// [sensor_data]/send_sensor_data it reads every mapped node's sensors
// (only deployed ones unless enable_for_undeployed_nodes) through its
// management interface, in at most [sensor_data]/workers conductor
// workers, waits for them up to wait_timeout, and sends each node's data
// as a hardware.<driver>.metrics notification.
func (c *Conductor) SendSensorData(ctx context.Context) {
	if c.cfg.BoolOf(config.SensorDataEnableForConductor) {
		c.sensorsConductor(ctx)
	}
	if !c.cfg.BoolOf(config.SensorDataEnableForNodes) {
		return
	}
	f := store.NodeFilter{}
	if !c.cfg.BoolOf(config.SensorDataEnableForUndeployedNodes) {
		active := states.Active
		f.ProvisionState = &active
	}
	started := c.clock.Now()
	nodes := c.iterNodes(ctx, f, "")
	queue := make(chan store.NodeSummary, len(nodes))
	for _, n := range nodes {
		queue <- n
	}
	close(queue)
	var wg sync.WaitGroup
	workers := min(c.cfg.IntOf(config.SensorDataWorkers), len(nodes))
	spawned := 0
	for ; spawned < workers; spawned++ {
		wg.Add(1)
		err := c.pool.Spawn(ctx, func(context.Context) {
			defer wg.Done()
			// The worker's context outlives the request; the periodic's
			// is what stops with the conductor, as upstream's
			// _shutdown event.
			for n := range queue {
				if ctx.Err() != nil {
					return
				}
				c.sensorsNode(ctx, n)
			}
		}, false)
		if err != nil {
			wg.Done()
			c.log.WarnContext(ctx, "there are no more conductor workers for the task of sending sensors data", "workers", spawned)
			break
		}
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	timer := time.NewTimer(c.cfg.DurationOf(config.SensorDataWaitTimeout))
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
		c.log.WarnContext(ctx, "workers for send sensors data did not complete", "workers", spawned)
	case <-ctx.Done():
	}
	runtime := c.clock.Now().Sub(started)
	c.log.DebugContext(ctx, "completed sending sensor data", "nodes", len(nodes), "workers", spawned, "seconds", runtime.Seconds())
	if runtime > 3*c.cfg.DurationOf(config.SensorDataInterval) {
		c.log.WarnContext(ctx, "the sensor data collection runtime is 3x the [sensor_data]interval setting; please consider tuning the [sensor_data]workers setting or adding additional conductors")
	}
}

// sensorsConductor is upstream's _sensors_conductor: the conductor's own
// metrics come from ironic-lib's metrics backend, which only its
// "collector" backend can read back. openkeel has no such backend (its
// metrics are on /metrics), so, as upstream's default noop backend, the
// read fails, is logged and nothing is sent.
func (c *Conductor) sensorsConductor(ctx context.Context) {
	c.log.ErrorContext(ctx, "an unknown error occurred while attempting to collect sensor data from within the conductor",
		"error", errs.New(errs.ClassMetricsNotSupported, nil).Error())
}

// sensorsNode is one node of upstream's _sensors_nodes_task: under a
// shared lock, skip it in maintenance, validate the management interface
// and read its sensors; every failure is logged and the node skipped.
func (c *Conductor) sensorsNode(ctx context.Context, n store.NodeSummary) {
	report, err := c.readSensors(ctx, n.UUID)
	switch {
	case err == nil:
	case errors.Is(err, driver.ErrNotImplemented) || errs.Is(err, errs.ClassUnsupportedDriverExtension):
		// Debug only: in fleets mixing drivers with and without sensor
		// data, a warning per node and pass is noise (upstream bug
		// 2047709).
		c.log.DebugContext(ctx, "get_sensors_data is not implemented for the driver", "node", n.UUID, "driver", n.Driver)
		return
	case errs.Is(err, errs.ClassFailedToParseSensorData):
		c.log.WarnContext(ctx, "during get_sensors_data, could not parse sensor data", "node", n.UUID, "error", err)
		return
	case errs.Is(err, errs.ClassFailedToGetSensorData):
		c.log.WarnContext(ctx, "during get_sensors_data, could not get sensor data", "node", n.UUID, "error", err)
		return
	case errs.Is(err, errs.ClassNodeNotFound):
		c.log.WarnContext(ctx, "during send_sensor_data, node was not found and presumed deleted by another process", "node", n.UUID)
		return
	default:
		c.log.WarnContext(ctx, "failed to get sensor data", "node", n.UUID, "error", err)
		return
	}
	if report == nil || len(report.Data) == 0 {
		return
	}
	eventType := "hardware." + report.Driver + ".metrics"
	c.sensors.Info(ctx, eventType, map[string]any{
		"message_id":    uuid.NewString(),
		"instance_uuid": strOrNil(report.InstanceUUID),
		"node_uuid":     report.NodeUUID,
		"node_name":     strOrNil(report.NodeName),
		"timestamp":     report.Time.UTC().Format(sensorTimestamp),
		"event_type":    eventType + ".update",
		"payload":       report.Data,
	})
	if c.observeSensors != nil {
		c.observeSensors(*report)
	}
}

// readSensors reads one node's sensors under its shared lock; a nil
// report without error is a node skipped for maintenance.
func (c *Conductor) readSensors(ctx context.Context, nodeUUID string) (*SensorReport, error) {
	t, err := c.acquire(ctx, nodeUUID, "getting sensors data", true)
	if err != nil {
		return nil, err
	}
	defer t.Release()
	if t.Node.Maintenance {
		t.Log().DebugContext(ctx, "skipping sending sensors data for node in maintenance mode")
		return nil, nil
	}
	mgmt := t.Driver.Management
	if mgmt == nil {
		return nil, driver.ErrNotImplemented
	}
	if err := mgmt.Validate(ctx, t.DriverTask()); err != nil {
		return nil, err
	}
	data, err := mgmt.GetSensorsData(ctx, t.DriverTask())
	if err != nil {
		return nil, err
	}
	r := &SensorReport{
		NodeUUID: t.Node.UUID, Driver: t.Node.Driver, Data: c.filterSensorTypes(data), Time: c.clock.Now(),
	}
	if t.Node.Name != nil {
		r.NodeName = *t.Node.Name
	}
	if t.Node.InstanceUUID != nil {
		r.InstanceUUID = *t.Node.InstanceUUID
	}
	return r, nil
}

// filterSensorTypes keeps the sensor types [sensor_data]/data_types names
// (case-insensitively); "ALL" keeps everything.
func (c *Conductor) filterSensorTypes(data map[string]any) map[string]any {
	allowed := map[string]bool{}
	for _, t := range c.cfg.ListOf(config.SensorDataDataTypes) {
		allowed[strings.ToLower(t)] = true
	}
	if allowed["all"] {
		return data
	}
	out := map[string]any{}
	for k, v := range data {
		if allowed[strings.ToLower(k)] {
			out[k] = v
		}
	}
	return out
}

func strOrNil(s string) any {
	if s == "" {
		return nil
	}
	return s
}
