// Package mdns publishes the Bare Metal API over multicast DNS, as
// upstream's ironic/common/mdns.py does when [conductor]/enable_mdns is
// set: the ramdisk (IPA) finds the API by looking up the "baremetal"
// instance of the _openstack._tcp.local. service type (RFC 6763 as the API
// SIG guideline clarifies it), with the URL's path and scheme in TXT
// properties when they cannot be derived. The responder is
// github.com/hashicorp/mdns.
package mdns

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	hmdns "github.com/hashicorp/mdns"

	"github.com/openkeel/ironic/internal/clock"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/keystoneauth"
)

// ServiceType is the DNS-SD service type every OpenStack service publishes
// under; the instance name is the service type of the catalog.
const ServiceType = "_openstack._tcp"

// Domain is the mDNS domain.
const Domain = "local."

// BaremetalService is the instance name the conductor publishes.
const BaremetalService = "baremetal"

// Options are the [mdns] options.
type Options struct {
	// Interfaces are the addresses of the interfaces to answer on
	// ([mdns]/interfaces); empty means every interface that is up and
	// can multicast.
	Interfaces []net.IP
	// RegistrationAttempts is how many times a responder that cannot start
	// is tried again ([mdns]/registration_attempts), 0.1 s doubling apart
	// as upstream's registration loop.
	RegistrationAttempts int
	// Params are TXT properties added to every published service
	// ([mdns]/params).
	Params map[string]string
	// Logger receives the responder's own messages at debug level.
	Logger *slog.Logger
}

// OptionsFromConfig reads [mdns]. An entry of interfaces that is not an
// IP address is an error, as oslo.config would not say it but zeroconf
// would fail on it.
func OptionsFromConfig(c *config.Config) (Options, error) {
	o := Options{
		RegistrationAttempts: c.IntOf(config.MdnsRegistrationAttempts),
		Params:               c.DictOf(config.MdnsParams),
	}
	for _, s := range c.ListOf(config.MdnsInterfaces) {
		ip := net.ParseIP(strings.TrimSpace(s))
		if ip == nil {
			return Options{}, fmt.Errorf("[mdns]/interfaces: %q is not an IP address", s)
		}
		o.Interfaces = append(o.Interfaces, ip)
	}
	return o, nil
}

// Publisher answers mDNS queries for the services it published until
// Close.
type Publisher struct {
	servers []*hmdns.Server
}

// Close stops answering. Upstream unregisters (a goodbye packet); the
// responder here only answers queries, so clients' caches expire the
// records after their TTL.
func (p *Publisher) Close() error {
	var errList []error
	for _, s := range p.servers {
		errList = append(errList, s.Shutdown())
	}
	p.servers = nil
	return errors.Join(errList...)
}

// PublishAPI is the conductor's _publish_endpoint: when
// [conductor]/enable_mdns is set, the API's URL (upstream's
// get_ironic_api_url: [service_catalog]/endpoint_override or the catalog)
// is published as the baremetal service, with ipa_debug when
// [DEFAULT]/debug is set so that the ramdisk logs verbosely too. It
// returns nil, nil when mDNS is off.
func PublishAPI(ctx context.Context, c *config.Config, logger *slog.Logger) (*Publisher, error) {
	if !c.BoolOf(config.ConductorEnableMdns) {
		return nil, nil
	}
	o, err := OptionsFromConfig(c)
	if err != nil {
		return nil, err
	}
	o.Logger = logger
	endpoint, err := keystoneauth.IronicAPIURL(ctx, keystoneauth.New(keystoneauth.ServiceCatalogOptions(c)))
	if err != nil {
		return nil, fmt.Errorf("mDNS: URL of the API: %w", err)
	}
	params := map[string]string{}
	if c.BoolOf(config.DefaultDebug) {
		params["ipa_debug"] = "True" // Python's str(True), as zeroconf renders it
	}
	return Publish(ctx, o, BaremetalService, endpoint, params)
}

// Publish is upstream's register_service: it answers for the instance
// service of ServiceType reaching endpoint, with o.Params, then params,
// then what the endpoint needs (path, protocol) as TXT properties.
// Failures are ServiceRegistrationFailure.
func Publish(ctx context.Context, o Options, service, endpoint string, params map[string]string) (*Publisher, error) {
	fail := func(err error) error {
		return errs.New(errs.ClassServiceRegistrationFailure, map[string]any{"service": service, "error": err.Error()})
	}
	ep, err := parseEndpoint(ctx, endpoint)
	if err != nil {
		return nil, fail(err)
	}
	props := map[string]string{}
	for k, v := range o.Params {
		props[k] = v
	}
	for k, v := range params {
		props[k] = v
	}
	for k, v := range ep.params {
		props[k] = v
	}
	host := ep.hostname
	if host == "" {
		// An address in the catalog gives the service record no host
		// name: zeroconf then names the instance itself as the server.
		host = service + "." + ServiceType + "." + Domain
	}
	zone, err := hmdns.NewMDNSService(service, ServiceType, Domain, host, ep.port, ep.addresses, txt(props))
	if err != nil {
		return nil, fail(err)
	}
	ifaces, err := interfaces(o.Interfaces)
	if err != nil {
		return nil, fail(err)
	}
	logger := o.Logger
	if logger == nil {
		logger = slog.Default()
	}
	p := &Publisher{}
	for _, iface := range ifaces {
		srv, err := startServer(ctx, o.RegistrationAttempts, &hmdns.Config{
			Zone:   zone,
			Iface:  iface,
			Logger: slog.NewLogLogger(logger.Handler(), slog.LevelDebug),
		})
		if err != nil {
			_ = p.Close()
			return nil, fail(fmt.Errorf("interface %s: %w", iface.Name, err))
		}
		p.servers = append(p.servers, srv)
	}
	logger.InfoContext(ctx, "published the API over mDNS", "service", service+"."+ServiceType+"."+Domain,
		"host", zone.HostName, "port", ep.port, "properties", props)
	return p, nil
}

// startServer starts the responder, trying again as upstream retries its
// registration: attempts in all, 0.1 s apart and doubling.
func startServer(ctx context.Context, attempts int, cfg *hmdns.Config) (*hmdns.Server, error) {
	delay := 100 * time.Millisecond
	for attempt := 1; ; attempt++ {
		srv, err := hmdns.NewServer(cfg)
		if err == nil {
			return srv, nil
		}
		if attempt >= attempts {
			return nil, err
		}
		if serr := clock.Sleep(ctx, delay); serr != nil {
			return nil, fmt.Errorf("%w (while retrying after: %v)", serr, err)
		}
		delay *= 2
	}
}

// txt renders properties as TXT strings, sorted so the record is stable.
func txt(props map[string]string) []string {
	out := make([]string, 0, len(props))
	for k, v := range props {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// interfaces returns the interfaces holding the addresses, or every
// interface that is up and can multicast when there are none.
func interfaces(addrs []net.IP) ([]*net.Interface, error) {
	all, err := net.Interfaces()
	if err != nil {
		return nil, fmt.Errorf("list network interfaces: %w", err)
	}
	var out []*net.Interface
	if len(addrs) == 0 {
		for i := range all {
			if all[i].Flags&net.FlagUp != 0 && all[i].Flags&net.FlagMulticast != 0 {
				out = append(out, &all[i])
			}
		}
		if len(out) == 0 {
			return nil, errors.New("no interface is up and multicast-capable")
		}
		return out, nil
	}
	for _, ip := range addrs {
		iface, err := holding(all, ip)
		if err != nil {
			return nil, err
		}
		out = append(out, iface)
	}
	return out, nil
}

// holding is the interface that has ip.
func holding(all []net.Interface, ip net.IP) (*net.Interface, error) {
	for i := range all {
		addrs, err := all[i].Addrs()
		if err != nil {
			return nil, fmt.Errorf("addresses of %s: %w", all[i].Name, err)
		}
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
				return &all[i], nil
			}
		}
	}
	return nil, fmt.Errorf("no interface has the address %s", ip)
}

// endpointInfo is what a service record says of an endpoint.
type endpointInfo struct {
	addresses []net.IP
	// hostname is the endpoint's host name with a trailing dot, or empty
	// when the endpoint names an address.
	hostname string
	port     int
	params   map[string]string
}

// parseEndpoint is upstream's _parse_endpoint: the endpoint's addresses,
// host and port, and as properties its path (unless empty or "/") and
// scheme (unless the port is the scheme's default).
func parseEndpoint(ctx context.Context, endpoint string) (endpointInfo, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return endpointInfo{}, fmt.Errorf("endpoint %q: %w", endpoint, err)
	}
	host := u.Hostname()
	if host == "" {
		return endpointInfo{}, fmt.Errorf("endpoint %q has no host", endpoint)
	}
	port := 80
	if u.Scheme == "https" {
		port = 443
	}
	if p := u.Port(); p != "" {
		if port, err = strconv.Atoi(p); err != nil {
			return endpointInfo{}, fmt.Errorf("endpoint %q: port: %w", endpoint, err)
		}
	}
	info := endpointInfo{port: port, params: map[string]string{}}
	found, err := net.DefaultResolver.LookupIPAddr(ctx, host)
	if err != nil {
		return endpointInfo{}, fmt.Errorf("could not resolve hostname %s: %w", host, err)
	}
	for _, a := range found {
		if !containsIP(info.addresses, a.IP) {
			info.addresses = append(info.addresses, a.IP)
		}
	}
	if len(info.addresses) == 0 {
		return endpointInfo{}, fmt.Errorf("no suitable addresses found for %s", host)
	}
	if net.ParseIP(host) == nil {
		info.hostname = strings.TrimSuffix(host, ".") + "."
	}
	if u.Path != "" && u.Path != "/" {
		info.params["path"] = u.Path
	}
	if !(port == 80 && u.Scheme == "http") && !(port == 443 && u.Scheme == "https") {
		info.params["protocol"] = u.Scheme
	}
	return info, nil
}

func containsIP(ips []net.IP, ip net.IP) bool {
	for _, x := range ips {
		if x.Equal(ip) {
			return true
		}
	}
	return false
}
