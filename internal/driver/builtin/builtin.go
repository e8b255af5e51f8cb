// Package builtin assembles the hardware types and every interface
// implementation this build carries, so that the service and the tests
// enable drivers from one list.
package builtin

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/openkeel/ironic/internal/agentclient"
	"github.com/openkeel/ironic/internal/auth"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/console/container"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/driver/agent"
	"github.com/openkeel/ironic/internal/driver/anaconda"
	"github.com/openkeel/ironic/internal/driver/ansible"
	"github.com/openkeel/ironic/internal/driver/fake"
	"github.com/openkeel/ironic/internal/driver/graphical"
	"github.com/openkeel/ironic/internal/driver/idrac"
	"github.com/openkeel/ironic/internal/driver/ipmi"
	"github.com/openkeel/ironic/internal/driver/network"
	"github.com/openkeel/ironic/internal/driver/network/ironicnetworking"
	"github.com/openkeel/ironic/internal/driver/noop"
	"github.com/openkeel/ironic/internal/driver/pxe"
	"github.com/openkeel/ironic/internal/driver/redfish"
	"github.com/openkeel/ironic/internal/driver/storage"
	"github.com/openkeel/ironic/internal/image"
	"github.com/openkeel/ironic/internal/keystoneauth"
	"github.com/openkeel/ironic/internal/neutron"
	"github.com/openkeel/ironic/internal/rpc"
)

// Options configure the implementations that take settings.
type Options struct {
	Fake    fake.Delays
	Redfish redfish.Options
	// RedfishBoot configures redfish-virtual-media (ISO building and
	// publishing under http_root).
	RedfishBoot redfish.BootOptions
	// Drac configures the idrac-redfish interfaces ([drac]).
	Drac idrac.Options
	// IPMI, when set, registers the ipmitool interfaces. Registering them
	// probes the ipmitool binary and fails without it, so, as upstream
	// loads only enabled entry points, they are left out unless enabled.
	IPMI *ipmi.Options
	// Ansible configures the ansible deploy interface ([ansible]).
	Ansible ansible.Options
	// Agent configures the agent-based deploy interfaces; a nil Client
	// gets upstream's defaults.
	Agent agent.Options
	// AgentInspect configures the agent inspect interface.
	AgentInspect agent.InspectOptions
	// AgentRescue configures the agent rescue interface; a nil Client
	// shares Agent's.
	AgentRescue agent.RescueOptions
	// AgentRAID configures the agent RAID interface; a nil Client shares
	// Agent's.
	AgentRAID agent.RAIDOptions
	// DirectImages configures how the direct deploy interface resolves,
	// caches and publishes images; nil leaves it without image services.
	DirectImages *agent.Images
	// PXE configures the pxe and ipxe boot interfaces.
	PXE pxe.Options
	// Ports is where the flat network and the PXE boot interfaces read
	// (and flat writes) the node's ports; the conductor's store.Store.
	// Without it they refuse to validate.
	Ports network.PortStore
	// Neutron configures the neutron network interface (client with the
	// [neutron] credentials); nil leaves neutron unregistered.
	Neutron *network.NeutronOptions
	// FlatNeutron, when true, has the flat interface use Neutron too (as
	// upstream); OptionsFromConfig sets it when [neutron] names an
	// identity service or an endpoint, else flat runs standalone.
	FlatNeutron bool
	// NeutronDHCP, when true, has the PXE boot interfaces send their DHCP
	// options to Neutron ([dhcp]/dhcp_provider neutron, with Neutron
	// configured as for FlatNeutron; standalone, no DHCP provider is
	// used, as upstream's "none"). PortSetupDelay is
	// [neutron]/port_setup_delay.
	NeutronDHCP    bool
	PortSetupDelay time.Duration
	// Graphical configures fake-graphical and redfish-graphical ([vnc]);
	// a nil Provider is the fake one. Its Redfish options are Redfish's.
	Graphical graphical.Options
	// Dnsmasq, with [dhcp]/dhcp_provider dnsmasq, is the provider writing
	// the PXE boot interfaces' DHCP options for a local dnsmasq; its
	// ports are Ports.
	Dnsmasq *pxe.Dnsmasq
	// Cinder is the cinder storage interface with its [cinder] client;
	// nil registers one that fails to reach Cinder.
	Cinder *storage.Cinder
	// IronicNetworking configures the ironic-networking interface.
	IronicNetworking ironicnetworking.Options
	// TraitBased is trait-based networking for the flat and neutron
	// interfaces, nil when [conductor]/enable_trait_based_networking is off.
	TraitBased *network.TraitBased
}

// OptionsFromConfig reads the implementations' sections of ironic.conf.
func OptionsFromConfig(c *config.Config) (Options, error) {
	ao := agentclient.OptionsFromConfig(c)
	o := Options{
		Fake: fake.Delays{
			BIOS: c.StringOf(config.FakeBIOSDelay), Boot: c.StringOf(config.FakeBootDelay),
			Deploy: c.StringOf(config.FakeDeployDelay), Firmware: c.StringOf(config.FakeFirmwareDelay),
			Inspect: c.StringOf(config.FakeInspectDelay), Management: c.StringOf(config.FakeManagementDelay),
			Power: c.StringOf(config.FakePowerDelay), RAID: c.StringOf(config.FakeRAIDDelay),
			Rescue: c.StringOf(config.FakeRescueDelay), Storage: c.StringOf(config.FakeStorageDelay),
			Vendor: c.StringOf(config.FakeVendorDelay),
		},
		Redfish:     redfish.OptionsFromConfig(c),
		RedfishBoot: redfish.BootOptionsFromConfig(c),
		Drac:        idrac.OptionsFromConfig(c),
		Graphical: graphical.Options{
			Provider:       container.NewLazy(container.OptionsFromConfig(c)),
			TokenTimeout:   time.Duration(c.IntOf(config.VNCTokenTimeout)) * time.Second,
			ExpireInterval: time.Duration(c.IntOf(config.VNCExpireConsoleSessionInterval)) * time.Second,
			PublicURL:      c.StringOf(config.VNCPublicURL),
		},
		Agent: agent.Options{
			Client:          agentclient.New(ao),
			DefaultBootMode: c.StringOf(config.DeployDefaultBootMode),
			// The client reads the two [agent] options for its lockdown
			// wait; the soft power off waits as long.
			PostDeployGetPowerStateRetries:       ao.PostDeployGetPowerStateRetries,
			PostDeployGetPowerStateRetryInterval: ao.PostDeployGetPowerStateRetryInterval,
			NeutronAgentPollInterval:             time.Duration(c.IntOf(config.AgentNeutronAgentPollInterval)) * time.Second,
			FastTrack: driver.FastTrack{
				Enabled: c.BoolOf(config.DeployFastTrack),
				Timeout: time.Duration(c.IntOf(config.DeployFastTrackTimeout)) * time.Second,
			},
			CleanParams: map[string]any{
				"agent_erase_devices_iterations":        c.IntOf(config.DeployShredRandomOverwriteIterations),
				"agent_erase_devices_zeroize":           c.BoolOf(config.DeployShredFinalOverwriteWithZeros),
				"agent_continue_if_secure_erase_failed": c.BoolOf(config.DeployContinueIfDiskSecureEraseFails),
				"agent_continue_if_ata_erase_failed":    c.BoolOf(config.DeployContinueIfDiskSecureEraseFails),
				"agent_enable_nvme_secure_erase":        c.BoolOf(config.DeployEnableNvmeSecureErase),
				"agent_enable_ata_secure_erase":         c.BoolOf(config.DeployEnableAtaSecureErase),
				"disk_erasure_concurrency":              c.IntOf(config.DeployDiskErasureConcurrency),
				"agent_erase_skip_read_only":            c.BoolOf(config.DeployEraseSkipReadOnly),
			},
			Autodetect: agent.AutodetectOptions{
				Candidates: c.ListOf(config.DefaultAutodetectDeployInterfaces),
				Enabled:    c.ListOf(config.DefaultEnabledDeployInterfaces),
			},
			Bootc: agent.BootcOptions{
				ImageServerUser:     c.StringOf(config.DeployImageServerUser),
				ImageServerPassword: c.StringOf(config.DeployImageServerPassword),
				OCIAuthConfig:       c.StringOf(config.OciAuthenticationConfig),
			},
			UnmanagedAgentBoot: !c.BoolOf(config.AgentManageAgentBoot),
		},
		AgentInspect: agent.InspectOptions{
			CallbackURL:    agent.InspectCallbackURL(c.StringOf(config.InspectorCallbackEndpointOverride), c.StringOf(config.ServiceCatalogEndpointOverride)),
			PowerOff:       c.BoolOf(config.InspectorPowerOff),
			PreCreatePorts: c.BoolOf(config.InspectorPreCreatePorts),
			APIURL:         c.StringOf(config.ServiceCatalogEndpointOverride),
			// A separate (i)PXE environment boots what ironic cannot.
			AllowUnmanagedBoot:            !c.BoolOf(config.InspectorRequireManagedBoot),
			ExtraKernelParams:             c.StringOf(config.InspectorExtraKernelParams),
			DisableKernelParameterParsing: c.BoolOf(config.ConductorDisableKernelParameterParsing),
			ForceDHCP:                     c.BoolOf(config.InspectorForceDHCP),
		},
		Ansible:     ansible.OptionsFromConfig(c),
		AgentRescue: agent.RescueOptions{HashAlgorithm: c.StringOf(config.ConductorRescuePasswordHashAlgorithm)},
	}
	// Images come over HTTP(S), from allowed local paths, or from Glance
	// with the service credentials of [glance]; as upstream, a missing
	// or wrong [glance] setting shows when a Glance image is used.
	imgOpts := image.OptionsFromConfig(c)
	glanceSess := keystoneauth.New(keystoneauth.OptionsFromConfig(c, "glance"))
	glanceSess.SetGlobalRequestID(globalRequestID)
	glance := &image.GlanceService{
		Auth: glanceSess.UserAuth(callerToken, true), Caller: glanceCaller,
		Client: glanceSess.Client(), Opts: imgOpts, ProjectID: glanceSess.ProjectID,
	}
	sources, err := image.NewSources(imgOpts, glance)
	if err != nil {
		return Options{}, fmt.Errorf("image sources: %w", err)
	}
	o.RedfishBoot.Fetcher = image.NewFetcher(sources, imgOpts)
	o.DirectImages = agent.ImagesFromConfig(c, sources, o.RedfishBoot.Fetcher, imgOpts)
	o.PXE = pxe.OptionsFromConfig(c)
	o.PXE.Fetcher = o.RedfishBoot.Fetcher
	if c.IsSetOf(config.DeployEraseDevicesPriority) {
		p := c.IntOf(config.DeployEraseDevicesPriority)
		o.Agent.ErasePriority = &p
	}
	if c.IsSetOf(config.DeployEraseDevicesMetadataPriority) {
		p := c.IntOf(config.DeployEraseDevicesMetadataPriority)
		o.Agent.EraseMetadataPriority = &p
	}
	if c.IsSetOf(config.DeployCreateConfigurationPriority) {
		p := c.IntOf(config.DeployCreateConfigurationPriority)
		o.AgentRAID.CreatePriority = &p
	}
	if c.IsSetOf(config.DeployDeleteConfigurationPriority) {
		p := c.IntOf(config.DeployDeleteConfigurationPriority)
		o.AgentRAID.DeletePriority = &p
	}
	neutronSess := keystoneauth.New(keystoneauth.OptionsFromConfig(c, "neutron"))
	neutronSess.SetGlobalRequestID(globalRequestID)
	o.Neutron = network.NeutronOptionsFromConfig(c,
		&neutron.Client{Auth: neutronSess.Auth, HTTP: neutronSess.Client()},
		&neutron.Client{Auth: neutronSess.UserAuth(callerToken, false), HTTP: neutronSess.Client()})
	o.Neutron.CallerRoles = func(ctx context.Context) []string { _, _, roles := caller(ctx); return roles }
	o.FlatNeutron = c.HasOf(config.NeutronAuthURL) || c.HasOf(config.NeutronEndpointOverride)
	o.NeutronDHCP = o.FlatNeutron && c.StringOf(config.DHCPDHCPProvider) == "neutron"
	if c.StringOf(config.DHCPDHCPProvider) == "dnsmasq" {
		o.Dnsmasq = &pxe.Dnsmasq{
			HostsDir:  c.StringOf(config.DnsmasqDHCPHostsdir),
			OptsDir:   c.StringOf(config.DnsmasqDHCPOptsdir),
			LeaseFile: c.StringOf(config.DnsmasqDHCPLeasefile),
		}
	}
	o.PortSetupDelay = time.Duration(c.IntOf(config.NeutronPortSetupDelay)) * time.Second
	o.Cinder = cinderStorage(c)
	o.IronicNetworking = ironicnetworking.OptionsFromConfig(c, slog.Default())
	if o.TraitBased, err = network.TraitBasedFromConfig(c); err != nil {
		return Options{}, err
	}
	if ipmiEnabled(c) {
		io, err := ipmi.OptionsFromConfig(c)
		if err != nil {
			return Options{}, fmt.Errorf("[ipmi] options: %w", err)
		}
		o.IPMI = &io
	}
	return o, nil
}

// caller is the API caller a conductor call is made for: the RPC request
// context, or the API's own when API and conductor share the process.
func caller(ctx context.Context) (token, systemScope string, roles []string) {
	if rc := rpc.RequestContextFrom(ctx); rc != nil {
		return rc.AuthToken, rc.SystemScope, rc.Roles
	}
	if a := auth.FromContext(ctx); a != nil {
		return a.AuthToken, a.SystemScope, a.Roles
	}
	return "", "", nil
}

// globalRequestID is upstream's context.global_id: the global request id
// the caller sent, else the request's own.
func globalRequestID(ctx context.Context) string {
	rc := rpc.RequestContextFrom(ctx)
	if rc == nil {
		return ""
	}
	if rc.GlobalRequestID != "" {
		return rc.GlobalRequestID
	}
	return rc.RequestID
}

// callerToken is the caller's token for calls to Neutron and Glance on
// their behalf.
func callerToken(ctx context.Context) (string, bool) {
	tok, system, _ := caller(ctx)
	return tok, system != ""
}

// glanceCaller is what upstream's image availability rules read of the
// caller.
func glanceCaller(ctx context.Context) (userToken, admin bool) {
	tok, _, roles := caller(ctx)
	return tok != "", slices.Contains(roles, "admin")
}

// ipmiEnabled tells whether any enabled_*_interfaces option names an
// ipmitool implementation (ipmitool, ipmitool-socat, intel-ipmitool).
func ipmiEnabled(c *config.Config) bool {
	for _, k := range driver.AllKinds {
		for _, name := range c.List("DEFAULT", "enabled_"+string(k)+"_interfaces") {
			if strings.Contains(name, "ipmitool") {
				return true
			}
		}
	}
	return false
}

// Registry returns the stock hardware types with every implementation
// registered.
func Registry(o Options) (*driver.Registry, error) {
	r := driver.NewRegistry()
	for _, h := range driver.StockHardwareTypes() {
		if err := r.AddHardwareType(h); err != nil {
			return nil, fmt.Errorf("hardware type %s: %w", h.Name, err)
		}
	}
	if err := fake.Register(r, o.Fake); err != nil {
		return nil, fmt.Errorf("fake interfaces: %w", err)
	}
	if err := noop.Register(r); err != nil {
		return nil, fmt.Errorf("no-op interfaces: %w", err)
	}
	if err := storage.Register(r, o.Cinder); err != nil {
		return nil, fmt.Errorf("storage interfaces: %w", err)
	}
	redfishBoot := o.RedfishBoot
	if o.Ports != nil && redfishBoot.Ports == nil {
		redfishBoot.Ports, redfishBoot.CurrentVIF = o.Ports, network.CurrentVIF
	}
	if err := redfish.Register(r, o.Redfish, redfishBoot); err != nil {
		return nil, fmt.Errorf("redfish interfaces: %w", err)
	}
	if err := idrac.Register(r, o.Redfish, redfishBoot, o.Drac); err != nil {
		return nil, fmt.Errorf("idrac interfaces: %w", err)
	}
	graphicalOpts := o.Graphical
	graphicalOpts.Redfish = o.Redfish
	if err := graphical.Register(r, graphicalOpts); err != nil {
		return nil, fmt.Errorf("graphical console interfaces: %w", err)
	}
	if err := agent.Register(r, o.Agent); err != nil {
		return nil, fmt.Errorf("agent interfaces: %w", err)
	}
	if err := ansible.Register(r, o.Ansible, o.Agent); err != nil {
		return nil, fmt.Errorf("ansible interfaces: %w", err)
	}
	if o.DirectImages != nil {
		if err := agent.ConfigureDirectImages(r, o.DirectImages); err != nil {
			return nil, fmt.Errorf("direct deploy images: %w", err)
		}
	}
	// After the direct interface's images: anaconda resolves the image
	// through it.
	if err := anaconda.Register(r, o.Agent); err != nil {
		return nil, err
	}
	inspectOpts := o.AgentInspect
	// [deploy]/fast_track is one setting for deployment, cleaning and
	// inspection alike.
	inspectOpts.FastTrack = o.Agent.FastTrack
	if pc, ok := o.Ports.(agent.PortCreator); ok && inspectOpts.Ports == nil {
		inspectOpts.Ports = pc
	}
	if err := agent.RegisterInspect(r, inspectOpts); err != nil {
		return nil, fmt.Errorf("agent inspect interface: %w", err)
	}
	rescueOpts := o.AgentRescue
	if rescueOpts.Client == nil {
		rescueOpts.Client = o.Agent.Client
	}
	if err := agent.RegisterRescue(r, rescueOpts); err != nil {
		return nil, fmt.Errorf("agent rescue interface: %w", err)
	}
	raidOpts := o.AgentRAID
	if raidOpts.Client == nil {
		raidOpts.Client = o.Agent.Client
	}
	if err := agent.RegisterRAID(r, raidOpts); err != nil {
		return nil, fmt.Errorf("agent raid interface: %w", err)
	}
	if err := agent.RegisterPower(r, agent.PowerOptions{Client: o.Agent.Client, FastTrack: o.Agent.FastTrack}); err != nil {
		return nil, fmt.Errorf("agent power interface: %w", err)
	}
	pxeOpts := o.PXE
	if o.Ports != nil {
		pxeOpts.Ports = o.Ports
	}
	switch {
	case o.Dnsmasq != nil && o.Ports != nil:
		d := *o.Dnsmasq
		d.Ports = o.Ports
		pxeOpts.DHCP = &d
	case o.NeutronDHCP && o.Neutron != nil && o.Ports != nil:
		pxeOpts.DHCP = &network.DHCP{Ports: o.Ports, Neutron: o.Neutron, PortSetupDelay: o.PortSetupDelay}
	}
	if err := pxe.Register(r, pxeOpts); err != nil {
		return nil, fmt.Errorf("pxe interfaces: %w", err)
	}
	var flatNeutron *network.NeutronOptions
	if o.FlatNeutron {
		flatNeutron = o.Neutron
	}
	if err := network.Register(r, o.Ports, flatNeutron, o.TraitBased); err != nil {
		return nil, fmt.Errorf("network interfaces: %w", err)
	}
	if o.Neutron != nil {
		if err := network.RegisterNeutron(r, o.Ports, o.Neutron, o.TraitBased); err != nil {
			return nil, fmt.Errorf("network interfaces: %w", err)
		}
	}
	if err := ironicnetworking.Register(r, o.Ports, o.IronicNetworking); err != nil {
		return nil, fmt.Errorf("network interfaces: %w", err)
	}
	if o.IPMI != nil {
		if err := ipmi.Register(r, *o.IPMI); err != nil {
			return nil, fmt.Errorf("ipmitool interfaces: %w", err)
		}
	}
	return r, nil
}

// Drivers builds the registry from c and enables what its enabled_* and
// default_* options say.
// Without a port store the interfaces that read a node's ports cannot
// (see DriversWithPorts).
func Drivers(c *config.Config) (*driver.Drivers, error) { return DriversWithPorts(c, nil) }

// DriversWithPorts is Drivers for a conductor: the flat network and PXE
// boot interfaces read the node's ports from ports (its store.Store); nil
// leaves them without one.
func DriversWithPorts(c *config.Config, ports network.PortStore) (*driver.Drivers, error) {
	o, err := OptionsFromConfig(c)
	if err != nil {
		return nil, err
	}
	o.Ports = ports
	r, err := Registry(o)
	if err != nil {
		return nil, err
	}
	d, err := r.Build(driver.SettingsFromConfig(c))
	if err != nil {
		return nil, fmt.Errorf("enabled drivers: %w", err)
	}
	return d, nil
}
