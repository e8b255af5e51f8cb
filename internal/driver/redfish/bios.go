package redfish

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/stmcginnis/gofish/common"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
)

// BIOS is upstream RedfishBIOS: BIOS attributes through the system's Bios
// resource and its @Redfish.Settings object, with the attribute registry.
type BIOS struct {
	core *core
}

var (
	_ driver.BIOSInterface = (*BIOS)(nil)
	_ driver.StepRunner    = (*BIOS)(nil)
)

var applyConfigurationArgs = map[string]driver.ArgInfo{
	"settings": driver.Required("A list of BIOS settings to be applied"),
}

// Properties are the common redfish driver_info properties.
func (b *BIOS) Properties() map[string]string { return Properties() }

// Validate checks driver_info.
func (b *BIOS) Validate(_ context.Context, task *driver.Task) error {
	_, err := ParseDriverInfo(task.Node, &b.core.opts)
	return err
}

// Steps declares apply_configuration and factory_reset as clean, deploy
// and service steps that need no ramdisk.
func (b *BIOS) Steps() []driver.StepSpec {
	var out []driver.StepSpec
	for _, name := range []string{"apply_configuration", "factory_reset"} {
		var args map[string]driver.ArgInfo
		if name == "apply_configuration" {
			args = applyConfigurationArgs
		}
		out = append(out,
			driver.CleanStep(name, 0).WithArgs(args).WithRequiresRamdisk(false),
			driver.DeployStep(name, 0).WithArgs(args),
			driver.ServiceStep(name).WithArgs(args).WithRequiresRamdisk(false))
	}
	return out
}

// StepHandlers maps the declared steps to their implementations.
func (b *BIOS) StepHandlers() map[string]driver.StepFunc {
	return map[string]driver.StepFunc{
		"apply_configuration": func(ctx context.Context, task *driver.Task, args map[string]any) (string, error) {
			settings, err := settingsArg(args["settings"])
			if err != nil {
				return "", err
			}
			return b.ApplyConfiguration(ctx, task, settings)
		},
		"factory_reset": func(ctx context.Context, task *driver.Task, _ map[string]any) (string, error) {
			return b.FactoryReset(ctx, task)
		},
	}
}

func settingsArg(v any) ([]map[string]any, error) {
	list, ok := v.([]any)
	if !ok {
		if typed, ok := v.([]map[string]any); ok {
			return typed, nil
		}
		return nil, driver.InvalidParameterValue("settings must be a list of BIOS settings, got %v", v)
	}
	out := make([]map[string]any, 0, len(list))
	for _, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			return nil, driver.InvalidParameterValue("each BIOS setting must be a dictionary with name and value, got %v", item)
		}
		out = append(out, m)
	}
	return out, nil
}

// biosDoc is the part of the Bios resource the interface reads.
type biosDoc struct {
	ODataID           string `json:"@odata.id"`
	AttributeRegistry string
	Attributes        map[string]any
	Settings          struct {
		SettingsObject      common.Link
		SupportedApplyTimes []string
	} `json:"@Redfish.Settings"`
	Actions struct {
		ResetBios struct {
			Target string `json:"target"`
		} `json:"#Bios.ResetBios"`
	}
}

// errNoBios marks a system without a Bios resource (sushy's
// MissingAttributeError).
var errNoBios = fmt.Errorf("the system has no Bios resource")

func (b *BIOS) readBios(ctx context.Context, task *driver.Task) (*system, *biosDoc, error) {
	sys, err := b.core.getSystem(ctx, task)
	if err != nil {
		return nil, nil, err
	}
	path := sys.rawLink("Bios")
	if path == "" {
		return sys, nil, errNoBios
	}
	var doc biosDoc
	if err := sys.cl.getJSON(path, &doc); err != nil {
		return sys, nil, redfishError(err.Error())
	}
	if doc.Attributes == nil {
		return sys, nil, errNoBios
	}
	return sys, &doc, nil
}

// BIOSSettings reads the current BIOS attributes with their registry
// fields, as upstream cache_bios_settings builds the rows of
// bios_settings. A registry that cannot be read leaves the registry fields
// empty.
func (b *BIOS) BIOSSettings(ctx context.Context, task *driver.Task) ([]model.BIOSSetting, error) {
	sys, doc, err := b.readBios(ctx, task)
	if err == errNoBios {
		msg := fmt.Sprintf("Cannot fetch BIOS attributes for node %s, BIOS settings are not supported.", task.Node.UUID)
		task.Logger().Error(msg)
		return nil, errs.NewMessage(errs.ClassUnsupportedDriverExtension, msg)
	}
	if err != nil {
		return nil, err
	}
	registry, err := attributeRegistry(sys.cl, doc.AttributeRegistry)
	if err != nil {
		task.Logger().Info("cannot get BIOS registry attributes", "node", task.Node.UUID, "error", err)
	}
	names := make([]string, 0, len(doc.Attributes))
	for k := range doc.Attributes {
		names = append(names, k)
	}
	slices.Sort(names)
	out := make([]model.BIOSSetting, 0, len(names))
	for _, name := range names {
		s := model.BIOSSetting{NodeID: task.Node.ID, Name: name}
		if v := doc.Attributes[name]; v != nil {
			str := pyStr(v)
			s.Value = &str
		}
		if r, ok := registry[name]; ok {
			r.apply(&s)
		}
		out = append(out, s)
	}
	return out, nil
}

// CacheBIOSSettings reads the settings; storing them in bios_settings is
// the conductor's part (through BIOSSettings), as the driver layer has no
// store.
func (b *BIOS) CacheBIOSSettings(ctx context.Context, task *driver.Task) error {
	_, err := b.BIOSSettings(ctx, task)
	return err
}

// pyStr renders an attribute value as upstream's str() does for the
// bios_settings value column.
func pyStr(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case bool:
		if x {
			return "True"
		}
		return "False"
	case float64:
		if x == float64(int64(x)) {
			return strconv.FormatInt(int64(x), 10)
		}
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	data, _ := json.Marshal(v)
	return string(data)
}

// registryEntry is one AttributeRegistry attribute.
type registryEntry struct {
	AttributeName   string
	Type            *string
	ReadOnly        *bool
	ResetRequired   *bool
	Unique          *bool
	LowerBound      *int64
	UpperBound      *int64
	MinLength       *int
	MaxLength       *int
	Value           []map[string]any
	AllowableValues []string `json:"-"`
}

func (r registryEntry) apply(s *model.BIOSSetting) {
	s.AttributeType, s.ReadOnly, s.ResetRequired, s.Unique = r.Type, r.ReadOnly, r.ResetRequired, r.Unique
	s.LowerBound, s.UpperBound, s.MinLength, s.MaxLength = r.LowerBound, r.UpperBound, r.MinLength, r.MaxLength
	if r.Value != nil {
		// Upstream keeps ValueName, else DisplayValueName, of each value.
		vals := []string{}
		for _, v := range r.Value {
			if n, ok := v["ValueName"].(string); ok {
				vals = append(vals, n)
			} else if n, ok := v["DisplayValueName"].(string); ok {
				vals = append(vals, n)
			}
		}
		s.AllowableValues = vals
	}
}

// attributeRegistry finds the registry named by the Bios resource in the
// service's Registries and reads its attributes by name.
func attributeRegistry(cl *client, name string) (map[string]registryEntry, error) {
	if name == "" {
		return nil, fmt.Errorf("the Bios resource names no AttributeRegistry")
	}
	var root struct{ Registries common.Link }
	if err := cl.getJSON(cl.c.info.RootPrefix, &root); err != nil {
		return nil, err
	}
	if root.Registries == "" {
		return nil, fmt.Errorf("the service has no Registries")
	}
	coll, err := common.GetCollection(cl, root.Registries.String())
	if err != nil {
		return nil, err
	}
	for _, p := range coll.ItemLinks {
		var file struct {
			Registry string
			Location []struct {
				Language string
				URI      string `json:"Uri"`
			}
		}
		if err := cl.getJSON(p, &file); err != nil {
			return nil, err
		}
		if file.Registry != name {
			continue
		}
		for _, loc := range file.Location {
			if loc.URI == "" || (loc.Language != "" && loc.Language != "en") {
				continue
			}
			var reg struct {
				RegistryEntries struct{ Attributes []registryEntry }
			}
			if err := cl.getJSON(loc.URI, &reg); err != nil {
				return nil, err
			}
			out := make(map[string]registryEntry, len(reg.RegistryEntries.Attributes))
			for _, a := range reg.RegistryEntries.Attributes {
				out[a.AttributeName] = a
			}
			return out, nil
		}
	}
	return nil, fmt.Errorf("no registry %s found", name)
}

// FactoryReset is the factory_reset step: ResetBios and a reboot; on the
// second call, after the reboot, the flags are cleared.
func (b *BIOS) FactoryReset(ctx context.Context, task *driver.Task) (string, error) {
	n := task.Node
	_, doc, err := b.readBios(ctx, task)
	if err == errNoBios {
		msg := fmt.Sprintf("Redfish BIOS factory reset failed for node %s, because BIOS settings are not supported.", n.UUID)
		task.Logger().Error(msg)
		return "", redfishError(msg)
	}
	if err != nil {
		return "", err
	}
	if biosRebootRequested(n) {
		task.Logger().Debug("post factory reset BIOS configuration", "node", n.UUID, "attributes", doc.Attributes)
		clearBiosFlags(n)
		return "", nil
	}
	target := doc.Actions.ResetBios.Target
	if target == "" {
		target = doc.ODataID + "/Actions/Bios.ResetBios"
	}
	return b.requestThenReboot(ctx, task, "factory reset", func(cl *client) (*http.Response, error) {
		return cl.Post(target, map[string]any{})
	}, nil)
}

// ApplyConfiguration is the apply_configuration step: the settings are
// PATCHed to the @Redfish.Settings object (applied on reset when the BMC
// supports it) and the node reboots; on the second call the BIOS
// attributes are checked against what was requested.
func (b *BIOS) ApplyConfiguration(ctx context.Context, task *driver.Task, settings []map[string]any) (string, error) {
	n := task.Node
	sys, doc, err := b.readBios(ctx, task)
	if err == errNoBios {
		msg := fmt.Sprintf("Redfish BIOS factory reset failed for node %s, because BIOS settings are not supported.", n.UUID)
		task.Logger().Error(msg)
		return "", redfishError(msg)
	}
	if err != nil {
		return "", err
	}
	if biosRebootRequested(n) {
		requested := requestedBiosAttrs(n)
		clearBiosFlags(n)
		return "", checkBiosAttrs(task, doc.Attributes, doc.pending(sys), requested)
	}
	attrs := make(map[string]any, len(settings))
	for _, s := range settings {
		name, ok := s["name"].(string)
		if !ok {
			return "", driver.InvalidParameterValue("BIOS setting %v has no name", s)
		}
		attrs[name] = s["value"]
	}
	registry, err := attributeRegistry(sys.cl, doc.AttributeRegistry)
	if err != nil {
		task.Logger().Info("cannot get BIOS registry attributes, settings are sent unchecked", "node", n.UUID, "error", err)
	}
	if err := convertBiosSettings(n.UUID, attrs, registry); err != nil {
		task.Logger().Error(err.Error())
		return "", err
	}
	// A request that changes nothing (a client re-sending the same
	// settings) needs no reboot, as upstream checks.
	if biosAttrsMatch(attrs, doc.Attributes, doc.pending(sys)) {
		task.Logger().Info("all requested BIOS settings already match the current values, skipping apply and reboot",
			"node", n.UUID)
		return "", nil
	}
	task.Logger().Debug("apply BIOS configuration", "node", n.UUID, "settings", settings)
	body := map[string]any{"Attributes": attrs}
	if slices.Contains(doc.Settings.SupportedApplyTimes, "OnReset") {
		body["@Redfish.SettingsApplyTime"] = map[string]any{"ApplyTime": "OnReset"}
	}
	target := doc.Settings.SettingsObject.String()
	if target == "" {
		target = doc.ODataID
	}
	return b.requestThenReboot(ctx, task, "apply configuration", func(cl *client) (*http.Response, error) {
		return cl.Patch(target, body)
	}, attrs)
}

// requestThenReboot sends a BIOS change, which the BMC applies at the
// next reset, then records what was asked (attrs, nil for a factory
// reset) and reboots; the step ends when it is called again after the
// reboot. op names the change in the error upstream reports.
func (b *BIOS) requestThenReboot(ctx context.Context, task *driver.Task, op string, send func(*client) (*http.Response, error), attrs map[string]any) (string, error) {
	n := task.Node
	if err := b.core.withConnection(ctx, task, func(cl *client, _ DriverInfo) error {
		resp, err := send(cl)
		if err != nil {
			return err
		}
		return resp.Body.Close()
	}); err != nil {
		msg := fmt.Sprintf("Redfish BIOS %s failed for node %s. Error: %s", op, n.UUID, errText(err))
		task.Logger().Error(msg)
		return "", redfishError(msg)
	}
	if err := requireExclusive(task); err != nil {
		return "", err
	}
	setBiosRebootRequested(n, attrs)
	return rebootToFinishStep(ctx, task)
}

// errText is the message of a BMC error without our RedfishError wrapping.
func errText(err error) string {
	if e, ok := errs.As(err); ok && e.Class == errs.ClassRedfishError {
		return strings.TrimPrefix(e.Message, "Redfish exception occurred. Error: ")
	}
	return err.Error()
}

// checkBiosAttrs is upstream's verification after the reboot
// (_get_unapplied_bios_attrs): every requested attribute must now have its
// value, and, on BMCs whose pending area lists only what changed, must no
// longer be pending; the step fails with upstream's last_error otherwise.
func checkBiosAttrs(task *driver.Task, current, pending, requested map[string]any) error {
	names := unappliedBiosAttrs(current, pending, requested)
	var notUpdated []string
	for _, k := range names {
		notUpdated = append(notUpdated, fmt.Sprintf("%s: %s", pyRepr(k), pyRepr(requested[k])))
	}
	if len(notUpdated) == 0 {
		task.Logger().Debug("verification of BIOS settings successful", "node", task.Node.UUID)
		return nil
	}
	attrs := "{" + strings.Join(notUpdated, ", ") + "}"
	task.Logger().Error(fmt.Sprintf("Redfish BIOS apply_configuration step failed for node %s. Attributes %s are not updated.",
		task.Node.UUID, attrs))
	return redfishError(fmt.Sprintf("Redfish BIOS apply_configuration step failed. Attributes %s are not updated.", attrs))
}

// pyRepr renders a JSON value as Python's repr does in upstream messages.
func pyRepr(v any) string {
	switch x := v.(type) {
	case string:
		return "'" + x + "'"
	case nil:
		return "None"
	}
	return pyStr(v)
}
