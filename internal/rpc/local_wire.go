package rpc

import (
	"context"
	"encoding/json"
	"fmt"
)

// The API decodes bodies with json.Number so that integers keep their
// spelling; over JSON-RPC the conductor then sees what the wire carries
// (float64 numbers). The in-process transport sends the free-form
// arguments through the same encoding, so that drivers, steps and
// inspection hooks see the same values in every deployment mode.

// wire returns v as a JSON-RPC server would decode it.
func wire[T any](v T) (T, error) {
	var out T
	b, err := json.Marshal(v)
	if err != nil {
		return out, fmt.Errorf("encode RPC arguments: %w", err)
	}
	if err := json.Unmarshal(b, &out); err != nil {
		return out, fmt.Errorf("decode RPC arguments: %w", err)
	}
	return out, nil
}

// DoNodeDeploy passes the config drive and deploy steps as the wire would.
func (l *Local) DoNodeDeploy(ctx context.Context, topic, nodeID string, rebuild bool, configdrive any, deploySteps []map[string]any) error {
	cd, err := wire(configdrive)
	if err != nil {
		return err
	}
	steps, err := wire(deploySteps)
	if err != nil {
		return err
	}
	return l.ConductorAPI.DoNodeDeploy(ctx, topic, nodeID, rebuild, cd, steps)
}

// DoNodeClean passes the clean steps as the wire would.
func (l *Local) DoNodeClean(ctx context.Context, topic, nodeID string, cleanSteps []map[string]any, disableRamdisk bool) error {
	steps, err := wire(cleanSteps)
	if err != nil {
		return err
	}
	return l.ConductorAPI.DoNodeClean(ctx, topic, nodeID, steps, disableRamdisk)
}

// DoNodeService passes the service steps as the wire would.
func (l *Local) DoNodeService(ctx context.Context, topic, nodeID string, serviceSteps []map[string]any, disableRamdisk bool) error {
	steps, err := wire(serviceSteps)
	if err != nil {
		return err
	}
	return l.ConductorAPI.DoNodeService(ctx, topic, nodeID, steps, disableRamdisk)
}

// SetTargetRAIDConfig passes the RAID configuration as the wire would.
func (l *Local) SetTargetRAIDConfig(ctx context.Context, topic, nodeID string, targetRAIDConfig map[string]any) error {
	cfg, err := wire(targetRAIDConfig)
	if err != nil {
		return err
	}
	return l.ConductorAPI.SetTargetRAIDConfig(ctx, topic, nodeID, cfg)
}

// ContinueInspection passes the ramdisk's data as the wire would.
func (l *Local) ContinueInspection(ctx context.Context, topic, nodeID string, inventory, pluginData map[string]any) error {
	inv, err := wire(inventory)
	if err != nil {
		return err
	}
	pd, err := wire(pluginData)
	if err != nil {
		return err
	}
	return l.ConductorAPI.ContinueInspection(ctx, topic, nodeID, inv, pd)
}

// VifAttach passes the VIF as the wire would.
func (l *Local) VifAttach(ctx context.Context, topic, nodeID string, vifInfo map[string]any) error {
	vif, err := wire(vifInfo)
	if err != nil {
		return err
	}
	return l.ConductorAPI.VifAttach(ctx, topic, nodeID, vif)
}

// VendorPassthru passes the method's arguments as the wire would.
func (l *Local) VendorPassthru(ctx context.Context, topic string, args VendorPassthruArgs) (*VendorPassthruResult, error) {
	a, err := wire(args)
	if err != nil {
		return nil, err
	}
	return l.ConductorAPI.VendorPassthru(ctx, topic, a)
}

// DriverVendorPassthru passes the method's arguments as the wire would.
func (l *Local) DriverVendorPassthru(ctx context.Context, topic string, args DriverVendorPassthruArgs) (*VendorPassthruResult, error) {
	a, err := wire(args)
	if err != nil {
		return nil, err
	}
	return l.ConductorAPI.DriverVendorPassthru(ctx, topic, a)
}
