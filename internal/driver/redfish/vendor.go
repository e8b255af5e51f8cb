package redfish

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/stmcginnis/gofish/common"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/pyfmt"
)

// Vendor is upstream RedfishVendorPassthru: eject_vmedia and the event
// subscription methods of the BMC's EventService.
type Vendor struct {
	driver.NoSteps
	core *core
}

var _ driver.VendorInterface = (*Vendor)(nil)

// sushyMediaTypes maps sushy's virtual media names, which the passthru
// takes, to Redfish MediaTypes.
var sushyMediaTypes = map[string]string{"cd": mediaCD, "dvd": mediaDVD, "floppy": mediaFloppy, "usb": mediaUSBStick}

// subscriptionFields are the EventDestination fields the passthru returns.
var subscriptionFields = []string{"Id", "Context", "Protocol", "Destination", "EventTypes"}

// Properties is empty, as upstream's.
func (v *Vendor) Properties() map[string]string { return map[string]string{} }

// Validate checks the arguments of the method called.
func (v *Vendor) Validate(ctx context.Context, task *driver.Task, method string, args map[string]any) error {
	switch method {
	case "eject_vmedia":
		return v.validateEject(ctx, task, args)
	case "create_subscription":
		return v.validateCreateSubscription(ctx, task, args)
	case "delete_subscription":
		if id, _ := args["id"].(string); id == "" {
			return driver.InvalidParameterValue("id can't be None")
		}
	}
	return nil
}

// validateEject is upstream _validate_eject_vmedia: a boot_device must be a
// media type of every virtual media device of the managers (sic: a BMC
// with a CD and a floppy drive accepts neither).
func (v *Vendor) validateEject(ctx context.Context, task *driver.Task, args map[string]any) error {
	dev, _ := args["boot_device"].(string)
	if dev == "" {
		return nil
	}
	sys, err := v.core.getSystem(ctx, task)
	if err != nil {
		return err
	}
	for _, m := range sys.links("ManagedBy") {
		var doc struct{ VirtualMedia common.Link }
		if err := sys.cl.getJSON(m, &doc); err != nil {
			return redfishError(err.Error())
		}
		if doc.VirtualMedia == "" {
			continue
		}
		devices, err := listVirtualMedia(sys.cl, doc.VirtualMedia.String())
		if err != nil {
			return redfishError(err.Error())
		}
		for _, d := range devices {
			if t, ok := sushyMediaTypes[dev]; !ok || !slices.Contains(d.MediaTypes, t) {
				return driver.InvalidParameterValue("Boot device %s is not a valid value ", dev)
			}
		}
	}
	return nil
}

func (v *Vendor) validateCreateSubscription(ctx context.Context, task *driver.Task, args map[string]any) error {
	if et, ok := args["EventTypes"]; ok && et != nil {
		allowed, err := v.eventTypes(ctx, task)
		if err != nil {
			return err
		}
		list, isList := et.([]any)
		valid := isList
		for _, t := range list {
			if s, ok := t.(string); !ok || !slices.Contains(allowed, s) {
				valid = false
			}
		}
		if !valid {
			return driver.InvalidParameterValue("EventTypes %s is not a valid value, allowed values %s", pyfmt.ReprJSON(et), pySet(allowed))
		}
	}
	if c, ok := args["Context"]; ok {
		if _, isStr := c.(string); !isStr {
			return driver.InvalidParameterValue("Context %s is not a valid string", pyfmt.StrJSON(c))
		}
	}
	if p, ok := args["Protocol"]; ok {
		if _, isStr := p.(string); !isStr {
			return driver.InvalidParameterValue("Protocol %s is not a string", pyfmt.StrJSON(p))
		}
	}
	if h, ok := args["HttpHeaders"]; ok && h != nil {
		if _, isList := h.([]any); !isList {
			return driver.InvalidParameterValue("HttpHeaders %s is not a list of headers", pyfmt.StrJSON(h))
		}
	}
	dest, _ := args["Destination"].(string)
	u, err := url.Parse(dest)
	if dest == "" || err != nil || u.Scheme == "" || u.Host == "" {
		return driver.InvalidParameterValue("Destination %s is not a valid URI", pyfmt.ReprJSON(args["Destination"]))
	}
	return nil
}

// pySet renders strings as Python's str() of a set.
func pySet(items []string) string {
	quoted := make([]string, 0, len(items))
	for _, s := range items {
		quoted = append(quoted, "'"+s+"'")
	}
	return "{" + strings.Join(quoted, ", ") + "}"
}

// VendorRoutes declares upstream's passthru methods.
func (v *Vendor) VendorRoutes() map[string]driver.PassthruRoute {
	return map[string]driver.PassthruRoute{
		"eject_vmedia": {
			HTTPMethods: []string{"POST"}, Async: true, RequireExclusiveLock: true,
			Description: "Eject a virtual media device. If no device is provided then all attached devices will be " +
				"ejected. Optional arguments: 'boot_device' - the boot device to eject, either 'cd', 'dvd', 'usb', or 'floppy'",
			Func: func(ctx context.Context, task *driver.Task, _ string, args map[string]any) (any, error) {
				dev, _ := args["boot_device"].(string)
				return nil, v.ejectVMedia(ctx, task, dev)
			},
		},
		"create_subscription": {
			HTTPMethods: []string{"POST"}, RequireExclusiveLock: true,
			Description: "Creates a subscription on a node. Required argument: a dictionary of {'Destination': 'destination_url'}",
			Func: func(ctx context.Context, task *driver.Task, _ string, args map[string]any) (any, error) {
				return v.createSubscription(ctx, task, args)
			},
		},
		"delete_subscription": {
			HTTPMethods: []string{"DELETE"}, RequireExclusiveLock: true,
			Description: "Delete a subscription on a node. Required argument: a dictionary of {'id': 'subscription_bmc_id'}",
			Func: func(ctx context.Context, task *driver.Task, _ string, args map[string]any) (any, error) {
				id, _ := args["id"].(string)
				return nil, v.deleteSubscription(ctx, task, id)
			},
		},
		"get_all_subscriptions": {
			HTTPMethods: []string{"GET"}, RequireExclusiveLock: true,
			Description: "Returns all subscriptions on the node.",
			Func: func(ctx context.Context, task *driver.Task, _ string, _ map[string]any) (any, error) {
				return v.allSubscriptions(ctx, task)
			},
		},
		"get_subscription": {
			HTTPMethods: []string{"GET"}, RequireExclusiveLock: true,
			Description: "Get a subscription on the node. Required argument: a dictionary of {'id': 'subscription_bmc_id'}",
			Func: func(ctx context.Context, task *driver.Task, _ string, args map[string]any) (any, error) {
				id, _ := args["id"].(string)
				return v.subscription(ctx, task, id)
			},
		},
	}
}

// DriverRoutes is empty: no driver passthru.
func (v *Vendor) DriverRoutes() map[string]driver.PassthruRoute { return nil }

// ejectVMedia is upstream redfish_boot.eject_vmedia as the passthru calls
// it: the media of the given sushy device type, or all, are ejected from
// the managers' (or the system's) virtual media.
func (v *Vendor) ejectVMedia(ctx context.Context, task *driver.Task, dev string) error {
	mediaType := ""
	if dev != "" {
		t, ok := sushyMediaTypes[dev]
		if !ok {
			return driver.InvalidParameterValue("Boot device %s is not a valid value ", dev)
		}
		mediaType = t
	}
	sys, err := v.core.getSystem(ctx, task)
	if err != nil {
		return err
	}
	colls, _, err := vmediaCollections(sys)
	if err != nil {
		return redfishError(err.Error())
	}
	for _, c := range colls {
		devices, err := listVirtualMedia(sys.cl, c)
		if err != nil {
			return redfishError(err.Error())
		}
		for _, d := range devices {
			if !d.Inserted || (mediaType != "" && !slices.Contains(d.MediaTypes, mediaType)) {
				continue
			}
			if d.Actions.Eject == nil || d.Actions.Eject.Target == "" {
				return redfishError(fmt.Sprintf("The action #VirtualMedia.EjectMedia is missing from the resource %s", d.path))
			}
			resp, err := sys.cl.Post(d.Actions.Eject.Target, map[string]any{})
			if err != nil {
				return redfishError(errText(err))
			}
			_ = resp.Body.Close()
			task.Logger().Info("virtual media ejected", "node", task.Node.UUID, "device", d.Name)
		}
	}
	return nil
}

// eventService reads the EventService: its subscription types and the
// Subscriptions collection.
func (v *Vendor) eventService(ctx context.Context, task *driver.Task) (types []string, subscriptions string, cl *client, err error) {
	err = v.core.withConnection(ctx, task, func(c *client, _ DriverInfo) error {
		var root struct{ EventService common.Link }
		if err := c.getJSON(c.c.info.RootPrefix, &root); err != nil {
			return err
		}
		if root.EventService == "" {
			return fmt.Errorf("The attribute EventService is missing from the resource %s", c.c.info.RootPrefix)
		}
		var svc struct {
			EventTypesForSubscription []string
			Subscriptions             common.Link
		}
		if err := c.getJSON(root.EventService.String(), &svc); err != nil {
			return err
		}
		types, subscriptions, cl = svc.EventTypesForSubscription, svc.Subscriptions.String(), c
		return nil
	})
	return types, subscriptions, cl, err
}

func (v *Vendor) eventTypes(ctx context.Context, task *driver.Task) ([]string, error) {
	types, _, _, err := v.eventService(ctx, task)
	if err != nil {
		return nil, redfishError(err.Error())
	}
	return types, nil
}

func filterSubscription(doc map[string]any) map[string]any {
	out := map[string]any{}
	for _, k := range subscriptionFields {
		if val, ok := doc[k]; ok {
			out[k] = val
		}
	}
	return out
}

// createSubscription is upstream create_subscription: the subscription
// the BMC created, read back, with its common fields.
func (v *Vendor) createSubscription(ctx context.Context, task *driver.Task, args map[string]any) (any, error) {
	payload := map[string]any{"Destination": args["Destination"], "Protocol": "Redfish", "Context": "",
		"EventTypes": []any{"Alert"}}
	for _, k := range []string{"Protocol", "Context", "EventTypes"} {
		if val, ok := args[k]; ok {
			payload[k] = val
		}
	}
	if h, ok := args["HttpHeaders"].([]any); ok && len(h) > 0 {
		payload["HttpHeaders"] = h
	}
	var out map[string]any
	_, subs, cl, err := v.eventService(ctx, task)
	if err == nil {
		err = func() error {
			resp, err := cl.Post(subs, payload)
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			loc := resp.Header.Get("Location")
			if loc == "" {
				return json.NewDecoder(resp.Body).Decode(&out)
			}
			if u, err := url.Parse(loc); err == nil && u.IsAbs() {
				loc = u.RequestURI()
			}
			return cl.getJSON(loc, &out)
		}()
	}
	if err != nil {
		// Upstream logs the payload, HttpHeaders and all; they may carry
		// credentials, so they are left out here.
		msg := fmt.Sprintf("Failed to create subscription on node %s. Subscription destination: %v. Error: %s",
			task.Node.UUID, payload["Destination"], errText(err))
		task.Logger().Error(msg)
		return nil, redfishError(msg)
	}
	return filterSubscription(out), nil
}

// subscriptionPath is the member path of a subscription id; some BMCs
// leave the trailing slash out of the collection path.
func subscriptionPath(collection, id string) string {
	if strings.HasSuffix(collection, "/") {
		return collection + id
	}
	return collection + "/" + id
}

func (v *Vendor) deleteSubscription(ctx context.Context, task *driver.Task, id string) error {
	_, subs, cl, err := v.eventService(ctx, task)
	if err == nil {
		var resp *http.Response
		path := subscriptionPath(subs, id)
		var doc map[string]any
		if err = cl.getJSON(path, &doc); err == nil {
			if resp, err = cl.Delete(path); err == nil {
				_ = resp.Body.Close()
			}
		}
	}
	if err != nil {
		msg := fmt.Sprintf("Redfish delete_subscription failed for subscription %s on node %s. Error: %s",
			id, task.Node.UUID, errText(err))
		task.Logger().Error(msg)
		return errs.New(errs.ClassRedfishError, map[string]any{"error": msg, "code": 404})
	}
	task.Logger().Debug("deleted subscription", "id", id, "node", task.Node.UUID)
	return nil
}

func (v *Vendor) allSubscriptions(ctx context.Context, task *driver.Task) (any, error) {
	var out map[string]any
	_, subs, cl, err := v.eventService(ctx, task)
	if err == nil {
		err = cl.getJSON(subs, &out)
	}
	if err != nil {
		msg := fmt.Sprintf("Redfish get_subscriptions failed for node %s. Error: %s", task.Node.UUID, errText(err))
		task.Logger().Error(msg)
		return nil, redfishError(msg)
	}
	return out, nil
}

func (v *Vendor) subscription(ctx context.Context, task *driver.Task, id string) (any, error) {
	var out map[string]any
	_, subs, cl, err := v.eventService(ctx, task)
	if err == nil {
		err = cl.getJSON(subscriptionPath(subs, id), &out)
	}
	if err != nil {
		msg := fmt.Sprintf("Redfish get_subscription failed for subscription %s on node %s. Error: %s",
			id, task.Node.UUID, errText(err))
		task.Logger().Error(msg)
		return nil, redfishError(msg)
	}
	return filterSubscription(out), nil
}
