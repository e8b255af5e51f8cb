package conductor

import (
	"context"
	"fmt"
	"strings"

	"github.com/openkeel/ironic/internal/conductor/task"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/rpc"
)

// VendorPassthru calls a node vendor method (upstream vendor_passthru):
// the method must exist and accept the HTTP method; the lock is made
// exclusive unless the method says otherwise; asynchronous methods run in
// a worker.
func (c *Conductor) VendorPassthru(ctx context.Context, _ string, args rpc.VendorPassthruArgs) (*rpc.VendorPassthruResult, error) {
	t, err := c.tasks.Acquire(ctx, args.NodeID, task.AcquireOptions{Shared: true, Purpose: "calling vendor passthru"})
	if err != nil {
		return nil, err
	}
	defer t.Release()
	vendor := t.Driver.Vendor
	route, ok := vendor.VendorRoutes()[args.DriverMethod]
	if !ok {
		return nil, errs.InvalidParameterValue("No handler for method " + args.DriverMethod)
	}
	httpMethod := strings.ToUpper(args.HTTPMethod)
	if !containsStr(route.HTTPMethods, httpMethod) {
		return nil, errs.InvalidParameterValue(fmt.Sprintf("The method %s does not support HTTP %s", args.DriverMethod, httpMethod))
	}
	if route.RequireExclusiveLock {
		if err := t.UpgradeLock(ctx, task.UpgradeOptions{}); err != nil {
			return nil, err
		}
	}
	info := args.Info
	if info == nil {
		info = map[string]any{}
	}
	if err := vendor.Validate(ctx, t.DriverTask(), args.DriverMethod, info); err != nil {
		return nil, err
	}
	if route.Async {
		t.SpawnAfter(c.spawner(), task.Work{Name: args.DriverMethod, Fn: func(ctx context.Context, t *task.Task) error {
			_, err := route.Func(ctx, t.DriverTask(), httpMethod, info)
			return err
		}})
		if err := t.End(); err != nil {
			return nil, err
		}
		return &rpc.VendorPassthruResult{Async: true, Attach: route.Attach}, nil
	}
	ret, err := route.Func(ctx, t.DriverTask(), httpMethod, info)
	if err != nil {
		if _, ok := errs.As(err); ok {
			return nil, err
		}
		return nil, errs.NewMessage(errs.ClassVendorPassthruException, err.Error())
	}
	return &rpc.VendorPassthruResult{Return: ret, Attach: route.Attach}, nil
}

// driverVendor returns the default vendor interface of a hardware type.
func (c *Conductor) driverVendor(driverName string) (driver.VendorInterface, error) {
	ht, err := c.drivers.HardwareType(driverName)
	if err != nil {
		return nil, err
	}
	name, err := c.drivers.DefaultInterface(ht, driver.KindVendor, "")
	if err != nil {
		return nil, err
	}
	impl, err := c.drivers.Interface(ht, driver.KindVendor, name)
	if err != nil {
		return nil, err
	}
	v, ok := impl.(driver.VendorInterface)
	if !ok {
		return nil, driver.ErrUnsupportedDriverExtension(driverName, driver.KindVendor)
	}
	return v, nil
}

// DriverVendorPassthru calls a driver (node-less) vendor method.
func (c *Conductor) DriverVendorPassthru(ctx context.Context, _ string, args rpc.DriverVendorPassthruArgs) (*rpc.VendorPassthruResult, error) {
	vendor, err := c.driverVendor(args.DriverName)
	if err != nil {
		return nil, err
	}
	route, ok := vendor.DriverRoutes()[args.DriverMethod]
	if !ok {
		return nil, errs.InvalidParameterValue("No handler for method " + args.DriverMethod)
	}
	httpMethod := strings.ToUpper(args.HTTPMethod)
	if !containsStr(route.HTTPMethods, httpMethod) {
		return nil, errs.InvalidParameterValue(fmt.Sprintf("The method %s does not support HTTP %s", args.DriverMethod, httpMethod))
	}
	if dv, ok := vendor.(driver.DriverValidator); ok {
		if err := dv.DriverValidate(ctx, args.DriverMethod, args.Info); err != nil {
			return nil, err
		}
	}
	if route.Async {
		if err := c.pool.Spawn(context.WithoutCancel(ctx), func(ctx context.Context) {
			if _, err := route.DriverFunc(ctx, httpMethod, args.Info); err != nil {
				c.log.ErrorContext(ctx, "asynchronous driver vendor passthru failed", "method", args.DriverMethod, "error", err)
			}
		}, true); err != nil {
			return nil, err
		}
		return &rpc.VendorPassthruResult{Async: true, Attach: route.Attach}, nil
	}
	ret, err := route.DriverFunc(ctx, httpMethod, args.Info)
	if err != nil {
		return nil, err
	}
	return &rpc.VendorPassthruResult{Return: ret, Attach: route.Attach}, nil
}

func routesDoc(routes map[string]driver.PassthruRoute) map[string]map[string]any {
	out := map[string]map[string]any{}
	for name, r := range routes {
		out[name] = map[string]any{
			"http_methods": r.HTTPMethods, "async": r.Async, "description": r.Description,
			"attach": r.Attach, "require_exclusive_lock": r.RequireExclusiveLock,
		}
	}
	return out
}

// GetNodeVendorPassthruMethods lists the node's vendor methods.
func (c *Conductor) GetNodeVendorPassthruMethods(ctx context.Context, _ string, nodeID string) (map[string]map[string]any, error) {
	t, err := c.tasks.Acquire(ctx, nodeID, task.AcquireOptions{Shared: true, Purpose: "listing vendor passthru methods"})
	if err != nil {
		return nil, err
	}
	defer t.Release()
	return routesDoc(t.Driver.Vendor.VendorRoutes()), nil
}

// GetDriverVendorPassthruMethods lists a driver's vendor methods.
func (c *Conductor) GetDriverVendorPassthruMethods(_ context.Context, _ string, driverName string) (map[string]map[string]any, error) {
	v, err := c.driverVendor(driverName)
	if err != nil {
		return nil, err
	}
	return routesDoc(v.DriverRoutes()), nil
}

// GetDriverProperties merges the driver_info properties of the hardware
// type's default interfaces (upstream get_driver_properties).
func (c *Conductor) GetDriverProperties(_ context.Context, _ string, driverName string) (map[string]string, error) {
	ht, err := c.drivers.HardwareType(driverName)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, kind := range driver.AllKinds {
		name, err := c.drivers.DefaultInterface(ht, kind, "")
		if err != nil {
			return nil, err
		}
		impl, err := c.drivers.Interface(ht, kind, name)
		if err != nil {
			return nil, err
		}
		for k, v := range impl.Properties() {
			out[k] = v
		}
	}
	return out, nil
}

// GetRAIDLogicalDiskProperties describes the fields of a logical disk in
// a RAID configuration (upstream get_raid_logical_disk_properties). The
// hardware type's default RAID interface is resolved for its errors only:
// every RAID interface, no-raid included, answers from the one schema.
func (c *Conductor) GetRAIDLogicalDiskProperties(_ context.Context, _ string, driverName string) (map[string]string, error) {
	ht, err := c.drivers.HardwareType(driverName)
	if err != nil {
		return nil, err
	}
	name, err := c.drivers.DefaultInterface(ht, driver.KindRAID, "")
	if err != nil {
		return nil, err
	}
	if _, err := c.drivers.Interface(ht, driver.KindRAID, name); err != nil {
		return nil, err
	}
	return driver.RAIDLogicalDiskProperties(), nil
}
