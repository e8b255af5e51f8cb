package driver

import (
	"fmt"
	"slices"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
)

// Registry holds every hardware type and interface implementation this
// build knows, by name. It is filled once at start-up (each implementation
// package has a Register function) and only read afterwards.
type Registry struct {
	hardware  map[string]*HardwareType
	hwOrder   []string
	impls     map[Kind]map[string]Interface
	implOrder map[Kind][]string
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{
		hardware:  map[string]*HardwareType{},
		impls:     map[Kind]map[string]Interface{},
		implOrder: map[Kind][]string{},
	}
}

// AddHardwareType registers a hardware type declaration.
func (r *Registry) AddHardwareType(ht HardwareType) error {
	if ht.Name == "" {
		return fmt.Errorf("register hardware type: empty name")
	}
	if _, dup := r.hardware[ht.Name]; dup {
		return fmt.Errorf("register hardware type %q: already registered", ht.Name)
	}
	for k := range ht.Supported {
		if !k.Valid() {
			return fmt.Errorf("register hardware type %q: unknown interface kind %q", ht.Name, k)
		}
	}
	h := ht
	r.hardware[h.Name] = &h
	r.hwOrder = append(r.hwOrder, h.Name)
	return nil
}

// Register adds an implementation of kind under name. It checks that impl
// satisfies the Go interface of the kind and that every declared step has a
// handler, so a broken declaration fails at start-up, not mid-flow.
func (r *Registry) Register(kind Kind, name string, impl Interface) error {
	if !kind.Valid() {
		return fmt.Errorf("register %q: unknown interface kind %q", name, kind)
	}
	if name == "" || impl == nil {
		return fmt.Errorf("register %s interface: empty name or nil implementation", kind)
	}
	if _, dup := r.impls[kind][name]; dup {
		return fmt.Errorf("register %s interface %q: already registered", kind, name)
	}
	if !implements(kind, impl) {
		return fmt.Errorf("register %s interface %q: %T does not implement the %s interface", kind, name, impl, kind)
	}
	if err := checkSteps(impl); err != nil {
		return fmt.Errorf("register %s interface %q: %w", kind, name, err)
	}
	if r.impls[kind] == nil {
		r.impls[kind] = map[string]Interface{}
	}
	r.impls[kind][name] = impl
	r.implOrder[kind] = append(r.implOrder[kind], name)
	return nil
}

func checkSteps(impl Interface) error {
	specs := impl.Steps()
	if len(specs) == 0 {
		return nil
	}
	runner, ok := impl.(StepRunner)
	if !ok {
		return fmt.Errorf("declares steps but has no step handlers")
	}
	handlers := runner.StepHandlers()
	seen := map[string]bool{}
	for _, s := range specs {
		if !slices.Contains(StepKinds, s.Kind) {
			return fmt.Errorf("step %q: unknown step kind %q", s.Name, s.Kind)
		}
		key := string(s.Kind) + "/" + s.Name
		if seen[key] {
			return fmt.Errorf("step %q declared twice as %s step", s.Name, s.Kind)
		}
		seen[key] = true
		if handlers[s.Name] == nil {
			return fmt.Errorf("step %q has no handler", s.Name)
		}
		if s.Kind == StepDeploy && s.Priority < 0 {
			return fmt.Errorf("deploy step %q: priority must be >= 0", s.Name)
		}
	}
	return nil
}

// HardwareType returns a registered hardware type.
func (r *Registry) HardwareType(name string) (*HardwareType, bool) {
	h, ok := r.hardware[name]
	return h, ok
}

// HardwareTypeNames lists registered hardware types in registration order.
func (r *Registry) HardwareTypeNames() []string { return slices.Clone(r.hwOrder) }

// Implementation returns a registered implementation.
func (r *Registry) Implementation(kind Kind, name string) (Interface, bool) {
	impl, ok := r.impls[kind][name]
	return impl, ok
}

// Names lists the registered implementations of kind in registration order.
func (r *Registry) Names(kind Kind) []string { return slices.Clone(r.implOrder[kind]) }

// Settings are the [DEFAULT] options that decide what is enabled:
// enabled_hardware_types, enabled_<kind>_interfaces and
// default_<kind>_interface. A nil or empty enabled list for a kind means
// "computed from the enabled hardware types" (upstream's rule, used by the
// stock power and management options); an empty default means unset.
type Settings struct {
	EnabledHardwareTypes []string
	EnabledInterfaces    map[Kind][]string
	DefaultInterfaces    map[Kind]string
}

// cleanList drops empty entries and duplicates, keeping first occurrences,
// as upstream's factories do (with a warning) when loading enabled lists.
func cleanList(in []string) []string {
	var out []string
	for _, s := range in {
		if s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// EffectiveEnabled is the enabled list of kind: the configured list, or when
// it is empty the first supported implementation of each enabled hardware
// type, in hardware type order, without duplicates.
func EffectiveEnabled(kind Kind, configured []string, enabledHW []*HardwareType) []string {
	if out := cleanList(configured); len(out) > 0 {
		return out
	}
	var out []string
	for _, h := range enabledHW {
		if sup := h.Supported[kind]; len(sup) > 0 && !slices.Contains(out, sup[0]) {
			out = append(out, sup[0])
		}
	}
	return out
}

// GetInterfaceName checks that name may be used as the kind interface of a
// node of hardware type ht, given the enabled implementation names
// (upstream driver_factory.get_interface without the instantiation).
func GetInterfaceName(ht *HardwareType, kind Kind, name string, enabled []string) error {
	if !slices.Contains(enabled, name) {
		return ErrInterfaceNotFoundInEntrypoint(name, kind, enabled)
	}
	if !ht.AnyInterface && !ht.Supports(kind, name) {
		return ErrIncompatibleInterface(kind, name, ht.ClassName)
	}
	return nil
}

// DefaultInterface computes the default implementation of kind for ht
// (upstream driver_factory.default_interface): the configured default when
// set (it must be enabled, and supported unless ht accepts anything),
// otherwise the first supported implementation that is enabled. driverName
// and node only shape the error message; node may be empty.
func DefaultInterface(ht *HardwareType, kind Kind, enabled []string, configuredDefault, driverName, node string) (string, error) {
	if driverName == "" {
		driverName = ht.ClassName
	}
	if configuredDefault != "" {
		if err := GetInterfaceName(ht, kind, configuredDefault, enabled); err != nil {
			if IsClass(err, errs.ClassIncompatibleInterface) {
				return "", ErrNoValidDefaultForInterface(kind, driverName, node)
			}
			return "", err
		}
		return configuredDefault, nil
	}
	for _, name := range ht.Supported[kind] {
		if slices.Contains(enabled, name) {
			return name, nil
		}
	}
	return "", ErrNoValidDefaultForInterface(kind, driverName, node)
}

// Drivers is the registry seen through the configuration: the enabled
// hardware types and implementations and the configured defaults. It is
// what the conductor and the API consult (upstream's driver factories).
type Drivers struct {
	reg      *Registry
	hw       []*HardwareType
	enabled  map[Kind][]string
	defaults map[Kind]string
}

// Build applies settings to the registry. As upstream's factories do when
// they load, it fails with DriverNotFoundInEntrypoint when an enabled hardware
// type or implementation is unknown.
func (r *Registry) Build(s Settings) (*Drivers, error) {
	d := &Drivers{reg: r, enabled: map[Kind][]string{}, defaults: map[Kind]string{}}
	var missing []string
	for _, name := range cleanList(s.EnabledHardwareTypes) {
		h, ok := r.hardware[name]
		if !ok {
			missing = append(missing, name)
			continue
		}
		d.hw = append(d.hw, h)
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("load hardware types: %w", ErrDriverNotFoundInEntrypoint(missing, HardwareTypesEntrypoint))
	}
	for _, kind := range AllKinds {
		enabled := EffectiveEnabled(kind, s.EnabledInterfaces[kind], d.hw)
		missing = nil
		for _, name := range enabled {
			if _, ok := r.impls[kind][name]; !ok {
				missing = append(missing, name)
			}
		}
		if len(missing) > 0 {
			return nil, fmt.Errorf("load %s interfaces: %w", kind, ErrDriverNotFoundInEntrypoint(missing, kind.Entrypoint()))
		}
		d.enabled[kind] = enabled
		d.defaults[kind] = s.DefaultInterfaces[kind]
	}
	return d, nil
}

// HardwareInterface is one row the conductor registers in
// conductor_hardware_interfaces.
type HardwareInterface struct {
	HardwareType  string
	InterfaceType Kind
	InterfaceName string
	Default       bool
}

// HardwareInterfaces computes, for every enabled hardware type and kind,
// the enabled and supported implementations and which is the default. It
// fails as upstream's conductor start-up does when a default cannot be
// computed or a configured default is not enabled.
func (d *Drivers) HardwareInterfaces() ([]HardwareInterface, error) {
	var rows []HardwareInterface
	for _, h := range d.hw {
		supported := d.EnabledSupported(h)
		for _, kind := range AllKinds {
			def, err := d.DefaultInterface(h, kind, "")
			if err != nil {
				return nil, fmt.Errorf("register hardware type %s: %w", h.Name, err)
			}
			for _, name := range supported[kind] {
				rows = append(rows, HardwareInterface{
					HardwareType: h.Name, InterfaceType: kind, InterfaceName: name, Default: name == def,
				})
			}
		}
	}
	return rows, nil
}

// EnabledHardwareTypes lists the enabled hardware types in configured order.
func (d *Drivers) EnabledHardwareTypes() []*HardwareType { return slices.Clone(d.hw) }

// Enabled lists the enabled implementations of kind.
func (d *Drivers) Enabled(kind Kind) []string { return slices.Clone(d.enabled[kind]) }

// HardwareType returns an enabled hardware type, or DriverNotFound.
func (d *Drivers) HardwareType(name string) (*HardwareType, error) {
	for _, h := range d.hw {
		if h.Name == name {
			return h, nil
		}
	}
	return nil, ErrDriverNotFound(name)
}

// EnabledSupported lists, per kind, the enabled implementations ht supports
// (upstream enabled_supported_interfaces), in enabled order.
func (d *Drivers) EnabledSupported(ht *HardwareType) map[Kind][]string {
	out := map[Kind][]string{}
	for _, kind := range AllKinds {
		var names []string
		for _, name := range d.enabled[kind] {
			if ht.Supports(kind, name) {
				names = append(names, name)
			}
		}
		out[kind] = names
	}
	return out
}

// DefaultInterface is the default implementation of kind for ht.
func (d *Drivers) DefaultInterface(ht *HardwareType, kind Kind, node string) (string, error) {
	return DefaultInterface(ht, kind, d.enabled[kind], d.defaults[kind], ht.Name, node)
}

// Interface returns the implementation name of kind for a node of ht,
// checking it is enabled and supported (upstream get_interface).
func (d *Drivers) Interface(ht *HardwareType, kind Kind, name string) (Interface, error) {
	if err := GetInterfaceName(ht, kind, name, d.enabled[kind]); err != nil {
		return nil, err
	}
	return d.reg.impls[kind][name], nil
}

// CheckAndUpdateNodeInterfaces validates the node's interface fields (and
// their instance_info overrides) and fills the unset ones with defaults,
// without saving. It reports whether the node changed.
func (d *Drivers) CheckAndUpdateNodeInterfaces(node *model.Node) (bool, error) {
	ht, err := d.HardwareType(node.Driver)
	if err != nil {
		return false, err
	}
	changed := false
	for _, kind := range AllKinds {
		setDefault := true
		if name, ok := instanceInfoInterface(node, kind); ok {
			if err := GetInterfaceName(ht, kind, name, d.enabled[kind]); err != nil {
				return false, err
			}
			setDefault = false
		}
		if name := NodeInterface(node, kind); name != "" {
			if err := GetInterfaceName(ht, kind, name, d.enabled[kind]); err != nil {
				return false, err
			}
			setDefault = false
		}
		if setDefault {
			name, err := d.DefaultInterface(ht, kind, node.UUID)
			if err != nil {
				return false, err
			}
			SetNodeInterface(node, kind, name)
			changed = true
		}
	}
	return changed, nil
}

// ForNode resolves the node's implementations (upstream
// build_driver_for_task): interfaces are checked and defaulted, then each
// kind takes the instance_info override or the node's field.
func (d *Drivers) ForNode(node *model.Node) (*Interfaces, error) {
	ht, err := d.HardwareType(node.Driver)
	if err != nil {
		return nil, err
	}
	if _, err := d.CheckAndUpdateNodeInterfaces(node); err != nil {
		return nil, err
	}
	out := &Interfaces{HardwareType: ht.Name}
	for _, kind := range AllKinds {
		name, ok := instanceInfoInterface(node, kind)
		if !ok {
			name = NodeInterface(node, kind)
		}
		impl, err := d.Interface(ht, kind, name)
		if err != nil {
			return nil, err
		}
		out.set(kind, name, impl)
	}
	return out, nil
}

// instanceInfoInterface returns instance_info["<kind>_interface"] when it is
// set to a name; upstream lets it override the node's field per deployment.
func instanceInfoInterface(node *model.Node, kind Kind) (string, bool) {
	v, ok := node.InstanceInfo[string(kind)+"_interface"]
	if !ok || v == nil {
		return "", false
	}
	s, ok := v.(string)
	if !ok {
		return fmt.Sprint(v), true
	}
	return s, true
}

// NodeInterface returns the node's <kind>_interface field.
func NodeInterface(n *model.Node, kind Kind) string {
	if p := nodeField(n, kind); p != nil {
		return *p
	}
	return ""
}

// SetNodeInterface sets the node's <kind>_interface field.
func SetNodeInterface(n *model.Node, kind Kind, name string) {
	if p := nodeField(n, kind); p != nil {
		*p = name
	}
}

func nodeField(n *model.Node, kind Kind) *string {
	switch kind {
	case KindBIOS:
		return &n.BIOSInterface
	case KindBoot:
		return &n.BootInterface
	case KindConsole:
		return &n.ConsoleInterface
	case KindDeploy:
		return &n.DeployInterface
	case KindFirmware:
		return &n.FirmwareInterface
	case KindInspect:
		return &n.InspectInterface
	case KindManagement:
		return &n.ManagementInterface
	case KindNetwork:
		return &n.NetworkInterface
	case KindPower:
		return &n.PowerInterface
	case KindRAID:
		return &n.RAIDInterface
	case KindRescue:
		return &n.RescueInterface
	case KindStorage:
		return &n.StorageInterface
	case KindVendor:
		return &n.VendorInterface
	}
	return nil
}
