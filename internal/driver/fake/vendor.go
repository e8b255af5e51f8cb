package fake

import (
	"context"
	"fmt"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/pyfmt"
	"github.com/openkeel/ironic/internal/states"
)

// VendorA is upstream FakeVendorA: one node passthru method. Upstream
// registers no entry point for it; it exists to test vendor composition.
type VendorA struct {
	driver.NoSteps
	delay delay
}

var _ driver.VendorInterface = (*VendorA)(nil)

// Properties are upstream's A1/A2 keys.
func (v *VendorA) Properties() map[string]string {
	return map[string]string{"A1": "A1 description. Required.", "A2": "A2 description. Optional."}
}

// Validate requires bar for first_method.
func (v *VendorA) Validate(_ context.Context, _ *driver.Task, method string, args map[string]any) error {
	if method == "first_method" && !pyfmt.Truthy(args["bar"]) {
		return driver.MissingParameterValue("Parameter 'bar' not passed to method 'first_method'.")
	}
	return nil
}

// VendorRoutes declares first_method.
func (v *VendorA) VendorRoutes() map[string]driver.PassthruRoute {
	return map[string]driver.PassthruRoute{
		"first_method": {
			HTTPMethods: []string{"POST"}, Async: true, RequireExclusiveLock: true,
			Description: "Test if the value of bar is baz",
			Func:        v.barEquals("baz"),
		},
	}
}

// DriverRoutes is empty.
func (v *VendorA) DriverRoutes() map[string]driver.PassthruRoute { return nil }

func (v *VendorA) barEquals(want string) driver.PassthruFunc {
	return barEquals(v.delay, want)
}

// VendorB is upstream FakeVendorB, registered as vendor "fake": passthru
// methods with each combination of async and locking, plus log_passthrough
// (also an automated clean step of priority 1 and a service step) and
// trigger_servicewait (a service step that waits).
type VendorB struct {
	delay delay
}

var (
	_ driver.VendorInterface = (*VendorB)(nil)
	_ driver.StepRunner      = (*VendorB)(nil)
)

// Properties are upstream's B1/B2 keys.
func (v *VendorB) Properties() map[string]string {
	return map[string]string{"B1": "B1 description. Required.", "B2": "B2 description. Required."}
}

// Steps declares log_passthrough (clean priority 1; service without
// ramdisk) and trigger_servicewait (service).
func (v *VendorB) Steps() []driver.StepSpec {
	return []driver.StepSpec{
		driver.CleanStep("log_passthrough", 1),
		driver.ServiceStep("log_passthrough").WithRequiresRamdisk(false),
		driver.ServiceStep("trigger_servicewait"),
	}
}

// StepHandlers maps the declared steps.
func (v *VendorB) StepHandlers() map[string]driver.StepFunc {
	return map[string]driver.StepFunc{
		"log_passthrough": func(ctx context.Context, t *driver.Task, args map[string]any) (string, error) {
			_, err := v.logPassthrough(ctx, t, "", args)
			return "", err
		},
		"trigger_servicewait": func(context.Context, *driver.Task, map[string]any) (string, error) {
			return states.ServiceWait, nil
		},
	}
}

// Validate requires bar for the three bar methods.
func (v *VendorB) Validate(_ context.Context, _ *driver.Task, method string, args map[string]any) error {
	switch method {
	case "second_method", "third_method_sync", "fourth_method_shared_lock":
		if !pyfmt.Truthy(args["bar"]) {
			return driver.MissingParameterValue("Parameter 'bar' not passed to method '%s'.", method)
		}
	}
	return nil
}

// VendorRoutes declares upstream's four node passthru methods.
func (v *VendorB) VendorRoutes() map[string]driver.PassthruRoute {
	return map[string]driver.PassthruRoute{
		"second_method": {
			HTTPMethods: []string{"POST"}, Async: true, RequireExclusiveLock: true,
			Description: "Test if the value of bar is kazoo", Func: barEquals(v.delay, "kazoo"),
		},
		"third_method_sync": {
			HTTPMethods: []string{"POST"}, Async: false, RequireExclusiveLock: true,
			Description: "Test if the value of bar is meow", Func: barEquals(v.delay, "meow"),
		},
		"fourth_method_shared_lock": {
			HTTPMethods: []string{"POST"}, Async: true, RequireExclusiveLock: false,
			Description: "Test if the value of bar is woof", Func: barEquals(v.delay, "woof"),
		},
		"log_passthrough": {
			HTTPMethods: []string{"POST"}, Async: true, RequireExclusiveLock: true,
			Description: "Test pass-through to wait.", Func: v.logPassthrough,
		},
	}
}

// DriverRoutes is empty.
func (v *VendorB) DriverRoutes() map[string]driver.PassthruRoute { return nil }

func (v *VendorB) logPassthrough(ctx context.Context, t *driver.Task, _ string, args map[string]any) (any, error) {
	t.Logger().Debug("test passthrough method called", "node", nodeUUID(t), "args", fmt.Sprint(args))
	return nil, v.delay.sleep(ctx)
}

func barEquals(d delay, want string) driver.PassthruFunc {
	return func(ctx context.Context, _ *driver.Task, _ string, args map[string]any) (any, error) {
		if err := d.sleep(ctx); err != nil {
			return nil, err
		}
		bar, _ := args["bar"].(string)
		return bar == want, nil
	}
}

func nodeUUID(t *driver.Task) string {
	if t == nil || t.Node == nil {
		return ""
	}
	return t.Node.UUID
}
