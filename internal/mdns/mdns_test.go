package mdns_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"maps"
	"net"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"

	hmdns "github.com/hashicorp/mdns"

	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/mdns"
)

// netnsEnv marks the test binary re-executed in a loopback-only network
// namespace.
const netnsEnv = "IRONIC_MDNS_NETNS"

// TestMain runs the package's tests inside a new network namespace with
// only loopback, multicast enabled on it, so that the mDNS responder and
// the lookups never reach the host's networks. Without unshare (not root,
// no util-linux) the tests that multicast are skipped, except on CI.
func TestMain(m *testing.M) {
	if os.Getenv(netnsEnv) != "" {
		os.Exit(m.Run())
	}
	unshare, err := exec.LookPath("unshare")
	if err == nil {
		err = exec.Command(unshare, "-n", "--", "true").Run()
	}
	if err != nil {
		if os.Getenv("CI") != "" {
			fmt.Fprintf(os.Stderr, "FAIL: mdns: CI needs a loopback-only network namespace: %v\n", err)
			os.Exit(1)
		}
		fmt.Fprintf(os.Stderr, "mdns: no network namespace (%v): multicast tests skip\n", err)
		os.Exit(m.Run())
	}
	setup := `ip link set lo up && ip link set lo multicast on && ip route add 224.0.0.0/4 dev lo && exec "$@"`
	child := exec.Command(unshare, append([]string{"-n", "--", "sh", "-c", setup, "sh", os.Args[0]}, os.Args[1:]...)...)
	child.Env = append(os.Environ(), netnsEnv+"=1")
	child.Stdout, child.Stderr = os.Stdout, os.Stderr
	if err := child.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "mdns: the namespace run failed: %v\n", err)
		os.Exit(1)
	}
	os.Exit(0)
}

func needNetns(t *testing.T) {
	t.Helper()
	if os.Getenv(netnsEnv) == "" {
		t.Skip("needs the loopback-only network namespace")
	}
}

func loadConf(t *testing.T, overrides map[string]map[string]string) *config.Config {
	t.Helper()
	c, err := config.Load(config.LoadOptions{Overrides: overrides})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// query asks once for the instances of _openstack._tcp.local. on
// loopback, as the ramdisk does on its network, and returns the one named
// instance if it answered within the query's window.
func query(t *testing.T, instance string) *hmdns.ServiceEntry {
	t.Helper()
	lo, err := net.InterfaceByName("lo")
	if err != nil {
		t.Fatal(err)
	}
	// The library sends without blocking: a buffer keeps every answer.
	entries := make(chan *hmdns.ServiceEntry, 16)
	err = hmdns.Query(&hmdns.QueryParam{
		Service: mdns.ServiceType, Domain: "local", Interface: lo, Entries: entries,
		Timeout: 300 * time.Millisecond, DisableIPv6: true, Logger: log.New(io.Discard, "", 0),
	})
	if err != nil {
		t.Fatalf("mDNS query: %v", err)
	}
	close(entries)
	for e := range entries {
		if e.Name == instance+"."+mdns.ServiceType+"."+mdns.Domain {
			return e
		}
	}
	return nil
}

// lookup queries until the instance answers, as the ramdisk retries its
// lookup (a loaded machine may miss one window).
func lookup(t *testing.T, instance string) *hmdns.ServiceEntry {
	t.Helper()
	for range 20 {
		if e := query(t, instance); e != nil {
			return e
		}
	}
	t.Fatalf("no answer for %s.%s.%s", instance, mdns.ServiceType, mdns.Domain)
	return nil
}

// With [conductor]/enable_mdns the API's URL is published as upstream's
// conductor publishes it: the baremetal instance of _openstack._tcp.local.
// at the URL's address and port, with [mdns]/params, ipa_debug under
// [DEFAULT]/debug and the scheme of a non-default port as TXT properties;
// a lookup on the network finds it, and after Close no longer does.
func TestPublishAPIAnswersLookups(t *testing.T) {
	needNetns(t)
	conf := loadConf(t, map[string]map[string]string{
		"DEFAULT":         {"debug": "true", "auth_strategy": "noauth"},
		"conductor":       {"enable_mdns": "true"},
		"mdns":            {"interfaces": "127.0.0.1", "params": "region:lab1,rack:r7"},
		"service_catalog": {"endpoint_override": "http://127.0.0.1:6385"},
	})
	p, err := mdns.PublishAPI(context.Background(), conf, nil)
	if err != nil {
		t.Fatal(err)
	}
	e := lookup(t, mdns.BaremetalService)
	if e.Port != 6385 || !e.AddrV4.Equal(net.IPv4(127, 0, 0, 1)) {
		t.Errorf("service at %v:%d, want 127.0.0.1:6385", e.AddrV4, e.Port)
	}
	if e.Host != "baremetal._openstack._tcp.local." {
		t.Errorf("server %q: an address endpoint names the instance as the server, as zeroconf", e.Host)
	}
	want := []string{"ipa_debug=True", "protocol=http", "rack=r7", "region=lab1"}
	got := slices.Sorted(slices.Values(e.InfoFields))
	if !slices.Equal(got, want) {
		t.Errorf("TXT properties %q, want %q", got, want)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if e := query(t, mdns.BaremetalService); e != nil {
		t.Errorf("answered after Close: %+v", e)
	}
}

// An endpoint on its scheme's default port with a path publishes the path
// and no protocol, under the endpoint's host name.
func TestPublishNamedEndpointWithPath(t *testing.T) {
	needNetns(t)
	p, err := mdns.Publish(context.Background(), mdns.Options{Interfaces: []net.IP{net.IPv4(127, 0, 0, 1)}, RegistrationAttempts: 1},
		"baremetal", "https://localhost/baremetal", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	e := lookup(t, "baremetal")
	if e.Port != 443 || e.Host != "localhost." || !slices.Equal(e.InfoFields, []string{"path=/baremetal"}) {
		t.Errorf("entry host %q port %d TXT %q; want localhost., 443, [path=/baremetal]", e.Host, e.Port, e.InfoFields)
	}
}

// Publishing is off unless enable_mdns; bad [mdns] values and endpoints
// fail as upstream's ServiceRegistrationFailure and start nothing.
func TestPublishRefusals(t *testing.T) {
	off, err := mdns.PublishAPI(context.Background(), loadConf(t, nil), nil)
	if off != nil || err != nil {
		t.Errorf("enable_mdns unset: %v, %v; want nothing published", off, err)
	}
	bad := loadConf(t, map[string]map[string]string{"conductor": {"enable_mdns": "true"}, "mdns": {"interfaces": "eth0"}})
	if _, err := mdns.PublishAPI(context.Background(), bad, nil); err == nil {
		t.Error("[mdns]/interfaces naming no address: published")
	}
	for name, c := range map[string]struct {
		o        mdns.Options
		endpoint string
	}{
		"address no interface has":   {mdns.Options{Interfaces: []net.IP{net.ParseIP("192.0.2.77")}, RegistrationAttempts: 1}, "http://127.0.0.1:6385"},
		"endpoint without host":      {mdns.Options{RegistrationAttempts: 1}, "http:///v1"},
		"host that does not resolve": {mdns.Options{RegistrationAttempts: 1}, "http://no-such-host.invalid:6385"},
	} {
		t.Run(name, func(t *testing.T) {
			p, err := mdns.Publish(context.Background(), c.o, "baremetal", c.endpoint, nil)
			e, ok := errs.As(err)
			if p != nil || !ok || e.Class != errs.ClassServiceRegistrationFailure {
				t.Errorf("published %v, err %v; want ServiceRegistrationFailure", p, err)
			}
		})
	}
}

// zeroconfLookup is the lookup of python-zeroconf, the library the
// ramdisk's agent finds the API with: the baremetal service's port,
// addresses, TXT properties and server as it resolves them.
const zeroconfLookup = `
import json, zeroconf
zc = zeroconf.Zeroconf(interfaces=['127.0.0.1'])
try:
    info = zc.get_service_info('_openstack._tcp.local.', 'baremetal._openstack._tcp.local.', timeout=10000)
    print(json.dumps(info and {'port': info.port, 'addresses': info.parsed_addresses(), 'server': info.server,
        'properties': {k.decode(): v.decode() for k, v in info.properties.items()}}))
finally:
    zc.close()
`

// The agent's own library finds what PublishAPI publishes.
func TestZeroconfFindsAPI(t *testing.T) {
	needNetns(t)
	if err := exec.Command("/usr/bin/python3", "-c", "import zeroconf").Run(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("python3-zeroconf is needed on CI: %v", err)
		}
		t.Skipf("python3-zeroconf not installed: %v", err)
	}
	conf := loadConf(t, map[string]map[string]string{
		"DEFAULT":         {"auth_strategy": "noauth"},
		"conductor":       {"enable_mdns": "true"},
		"mdns":            {"interfaces": "127.0.0.1", "params": "region:lab1"},
		"service_catalog": {"endpoint_override": "https://127.0.0.1:8443/baremetal"},
	})
	p, err := mdns.PublishAPI(context.Background(), conf, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	out, err := exec.Command("/usr/bin/python3", "-c", zeroconfLookup).Output()
	if err != nil {
		t.Fatalf("python-zeroconf lookup: %v", err)
	}
	var got struct {
		Port       int
		Addresses  []string
		Server     string
		Properties map[string]string
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("python-zeroconf answered %q: %v", out, err)
	}
	want := map[string]string{"path": "/baremetal", "protocol": "https", "region": "lab1"}
	if got.Port != 8443 || !slices.Equal(got.Addresses, []string{"127.0.0.1"}) || got.Server != "baremetal._openstack._tcp.local." ||
		!maps.Equal(got.Properties, want) {
		t.Errorf("python-zeroconf resolved %+v; want port 8443 at 127.0.0.1, server baremetal._openstack._tcp.local., properties %v", got, want)
	}
}
