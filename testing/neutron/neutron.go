// Package neutron is a Neutron v2.0 fixture for tests: an HTTP server on
// 127.0.0.1 holding networks and ports in memory, speaking the ports and
// networks routes the network interfaces use, with a request log and
// fault injection.
package neutron

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
)

// Request is one logged call.
type Request struct {
	Method string
	Path   string
	Query  string
	Token  string
	// ServiceToken is the X-Service-Token sent along a user's token.
	ServiceToken string
	// RequestID is the X-OpenStack-Request-ID the caller sent.
	RequestID string
	Body      map[string]any
}

type fault struct {
	method, prefix string
	status         int
	remaining      int
}

// Fixture is the fake Neutron.
type Fixture struct {
	srv *httptest.Server

	mu       sync.Mutex
	networks map[string]map[string]any
	ports    map[string]map[string]any
	groups   map[string]map[string]any
	subnets  map[string]map[string]any
	agents   map[string]map[string]any
	// allocated counts the addresses given out, to keep them unique.
	allocated int
	log       []Request
	faults    []*fault
	token     string
	valid     func(token string) bool
}

// New starts the fixture; it stops with the test.
func New(t testing.TB) *Fixture {
	t.Helper()
	f := &Fixture{networks: map[string]map[string]any{}, ports: map[string]map[string]any{}, groups: map[string]map[string]any{}, subnets: map[string]map[string]any{}, agents: map[string]map[string]any{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

// URL is the endpoint (no /v2.0 suffix, as the service catalog gives it).
func (f *Fixture) URL() string { return f.srv.URL }

// RequireToken makes every call without this X-Auth-Token answer 401.
func (f *Fixture) RequireToken(token string) *Fixture {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.token = token
	return f
}

// ValidateTokens makes every call whose X-Auth-Token valid rejects
// answer 401, as Neutron's auth_token middleware does; pass an identity
// fixture's TokenValid to accept exactly the tokens it issued and that are
// still live.
func (f *Fixture) ValidateTokens(valid func(token string) bool) *Fixture {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.valid = valid
	return f
}

// Network adds a network and returns the fixture.
func (f *Fixture) Network(id, name string) *Fixture {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.networks[id] = map[string]any{"id": id, "name": name, "status": "ACTIVE", "admin_state_up": true, "mtu": float64(1500)}
	return f
}

// NetworkAttrs adds attributes (e.g. provider:physical_network,
// segments) to network id and returns the fixture.
func (f *Fixture) NetworkAttrs(id string, attrs map[string]any) *Fixture {
	f.mu.Lock()
	defer f.mu.Unlock()
	maps.Copy(f.networks[id], clone(attrs))
	return f
}

// Subnet adds a subnet of network with cidr and further attrs
// (gateway_ip, dns_nameservers, host_routes...) and returns the fixture.
func (f *Fixture) Subnet(id, network, cidr string, attrs map[string]any) *Fixture {
	f.mu.Lock()
	defer f.mu.Unlock()
	ipv := float64(4)
	if strings.Contains(cidr, ":") {
		ipv = 6
	}
	sn := map[string]any{"id": id, "network_id": network, "cidr": cidr, "ip_version": ipv,
		"gateway_ip": nil, "dns_nameservers": []any{}, "host_routes": []any{}, "segment_id": nil}
	maps.Copy(sn, clone(attrs))
	f.subnets[id] = sn
	return f
}

// Agent adds (or replaces) the L2 agent of host, alive or not, and
// returns the fixture.
func (f *Fixture) Agent(host string, alive bool) *Fixture {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.agents[host] = map[string]any{"id": "agent-" + host, "host": host, "alive": alive, "agent_type": "Baremetal Node"}
	return f
}

// SecurityGroup adds a security group and returns the fixture.
func (f *Fixture) SecurityGroup(id, name string) *Fixture {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.groups[id] = map[string]any{"id": id, "name": name}
	return f
}

// Port adds a port (e.g. a tenant VIF created by Nova) with attrs and
// returns the fixture; attrs must carry "id".
func (f *Fixture) Port(attrs map[string]any) *Fixture {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := newPort(attrs)
	f.ports[p["id"].(string)] = p
	return f
}

// Fail makes the next n calls whose method matches (empty = any) and whose
// path starts with prefix answer status; n < 0 means forever.
func (f *Fixture) Fail(method, prefix string, status, n int) *Fixture {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.faults = append(f.faults, &fault{method: method, prefix: prefix, status: status, remaining: n})
	return f
}

// GetPort is a copy of port id, or nil.
func (f *Fixture) GetPort(id string) map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	if p, ok := f.ports[id]; ok {
		return clone(p)
	}
	return nil
}

// Ports is a copy of every port, sorted by id.
func (f *Fixture) Ports() []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	ids := slices.Sorted(maps.Keys(f.ports))
	out := make([]map[string]any, 0, len(ids))
	for _, id := range ids {
		out = append(out, clone(f.ports[id]))
	}
	return out
}

// Requests is a copy of the request log.
func (f *Fixture) Requests() []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.log)
}

func clone(m map[string]any) map[string]any {
	var out map[string]any
	b, _ := json.Marshal(m)
	_ = json.Unmarshal(b, &out)
	return out
}

func newPort(attrs map[string]any) map[string]any {
	p := map[string]any{
		"id": uuid.NewString(), "name": "", "admin_state_up": true, "status": "DOWN",
		"mac_address": "", "device_id": "", "device_owner": "", "fixed_ips": []any{},
		"binding:host_id": "", "binding:vnic_type": "normal", "binding:profile": map[string]any{},
	}
	maps.Copy(p, clone(attrs))
	return p
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func neutronError(w http.ResponseWriter, status int, typ, msg string) {
	writeJSON(w, status, map[string]any{"NeutronError": map[string]any{"type": typ, "message": msg, "detail": ""}})
}

func (f *Fixture) serve(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	if r.Body != nil {
		data, _ := io.ReadAll(r.Body)
		if len(data) > 0 {
			if err := json.Unmarshal(data, &body); err != nil {
				neutronError(w, http.StatusBadRequest, "HTTPBadRequest", "malformed JSON: "+err.Error())
				return
			}
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.log = append(f.log, Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Token: r.Header.Get("X-Auth-Token"), ServiceToken: r.Header.Get("X-Service-Token"),
		RequestID: r.Header.Get("X-OpenStack-Request-ID"), Body: body})
	for _, ft := range f.faults {
		if ft.remaining != 0 && (ft.method == "" || ft.method == r.Method) && strings.HasPrefix(r.URL.Path, ft.prefix) {
			if ft.remaining > 0 {
				ft.remaining--
			}
			neutronError(w, ft.status, "InjectedFault", fmt.Sprintf("injected fault %d", ft.status))
			return
		}
	}
	tok := r.Header.Get("X-Auth-Token")
	if (f.token != "" && tok != f.token) || (f.valid != nil && !f.valid(tok)) {
		writeJSON(w, http.StatusUnauthorized, map[string]any{"error": map[string]any{"code": 401, "message": "The request you have made requires authentication."}})
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/v2.0/")
	if !ok {
		neutronError(w, http.StatusNotFound, "HTTPNotFound", "no such route")
		return
	}
	coll, id, _ := strings.Cut(rest, "/")
	switch {
	case coll == "networks" && id == "" && r.Method == http.MethodGet:
		writeJSON(w, http.StatusOK, map[string]any{"networks": filter(f.networks, r)})
	case coll == "networks" && r.Method == http.MethodGet:
		n, ok := f.networks[id]
		if !ok {
			neutronError(w, http.StatusNotFound, "NetworkNotFound", fmt.Sprintf("Network %s could not be found.", id))
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"network": n})
	case coll == "subnets" && id != "" && r.Method == http.MethodGet:
		sn, ok := f.subnets[id]
		if !ok {
			neutronError(w, http.StatusNotFound, "SubnetNotFound", fmt.Sprintf("Subnet %s could not be found.", id))
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"subnet": sn})
	case coll == "agents" && id == "" && r.Method == http.MethodGet:
		writeJSON(w, http.StatusOK, map[string]any{"agents": filter(f.agents, r)})
	case coll == "security-groups" && id == "" && r.Method == http.MethodGet:
		writeJSON(w, http.StatusOK, map[string]any{"security_groups": filter(f.groups, r)})
	case coll == "ports" && id == "" && r.Method == http.MethodGet:
		writeJSON(w, http.StatusOK, map[string]any{"ports": filter(f.ports, r)})
	case coll == "ports" && id == "" && r.Method == http.MethodPost:
		f.createPort(w, body)
	case coll == "ports" && id != "":
		p, ok := f.ports[id]
		if !ok {
			neutronError(w, http.StatusNotFound, "PortNotFound", fmt.Sprintf("Port %s could not be found.", id))
			return
		}
		switch r.Method {
		case http.MethodGet:
			writeJSON(w, http.StatusOK, map[string]any{"port": p})
		case http.MethodPut:
			attrs, _ := body["port"].(map[string]any)
			if attrs == nil {
				neutronError(w, http.StatusBadRequest, "HTTPBadRequest", "Resource body required")
				return
			}
			if _, ok := attrs["id"]; ok {
				neutronError(w, http.StatusBadRequest, "HTTPBadRequest", "Cannot update read-only attribute id")
				return
			}
			// Neutron refuses to change the MAC of a bound port.
			if mac, ok := attrs["mac_address"]; ok && mac != p["mac_address"] {
				if host, _ := p["binding:host_id"].(string); host != "" {
					neutronError(w, http.StatusConflict, "PortBound", fmt.Sprintf("Unable to complete operation on port %s, port is already bound, port type: baremetal, old_mac %v, new_mac %v.", id, p["mac_address"], attrs["mac_address"]))
					return
				}
			}
			maps.Copy(p, attrs)
			f.allocate(p)
			if host, _ := p["binding:host_id"].(string); host != "" {
				p["status"] = "ACTIVE"
			} else {
				p["status"] = "DOWN"
			}
			writeJSON(w, http.StatusOK, map[string]any{"port": p})
		case http.MethodDelete:
			delete(f.ports, id)
			w.WriteHeader(http.StatusNoContent)
		default:
			neutronError(w, http.StatusMethodNotAllowed, "HTTPMethodNotAllowed", "method not allowed")
		}
	default:
		neutronError(w, http.StatusNotFound, "HTTPNotFound", "no such route")
	}
}

func (f *Fixture) createPort(w http.ResponseWriter, body map[string]any) {
	attrs, _ := body["port"].(map[string]any)
	if attrs == nil {
		neutronError(w, http.StatusBadRequest, "HTTPBadRequest", "Resource body required")
		return
	}
	net, _ := attrs["network_id"].(string)
	if _, ok := f.networks[net]; !ok {
		neutronError(w, http.StatusNotFound, "NetworkNotFound", fmt.Sprintf("Network %s could not be found.", net))
		return
	}
	if mac, _ := attrs["mac_address"].(string); mac != "" {
		for _, p := range f.ports {
			if p["network_id"] == net && p["mac_address"] == mac {
				neutronError(w, http.StatusConflict, "MacAddressInUse", fmt.Sprintf("Unable to complete operation for network %s. The mac address %s is in use.", net, mac))
				return
			}
		}
	}
	p := newPort(attrs)
	if _, ok := attrs["id"]; ok {
		p["id"] = uuid.NewString()
	}
	if _, ok := attrs["fixed_ips"]; !ok {
		// Neutron gives a new port an address on each subnet of its network.
		var ips []any
		for _, id := range slices.Sorted(maps.Keys(f.subnets)) {
			if f.subnets[id]["network_id"] == net {
				ips = append(ips, map[string]any{"subnet_id": id})
			}
		}
		p["fixed_ips"] = ips
	}
	f.allocate(p)
	f.ports[p["id"].(string)] = p
	writeJSON(w, http.StatusCreated, map[string]any{"port": p})
}

// allocate gives each fixed IP of p that names only its subnet the next
// free address of that subnet.
func (f *Fixture) allocate(p map[string]any) {
	ips, _ := p["fixed_ips"].([]any)
	if ips == nil {
		p["fixed_ips"] = []any{}
		return
	}
	for i, v := range ips {
		ip, _ := v.(map[string]any)
		if ip == nil || ip["ip_address"] != nil {
			continue
		}
		sn := f.subnets[fmt.Sprint(ip["subnet_id"])]
		if sn == nil {
			continue
		}
		prefix, err := netip.ParsePrefix(fmt.Sprint(sn["cidr"]))
		if err != nil {
			continue
		}
		f.allocated++
		addr := prefix.Masked().Addr()
		for range 9 + f.allocated {
			addr = addr.Next()
		}
		ips[i] = map[string]any{"subnet_id": ip["subnet_id"], "ip_address": addr.String()}
	}
}

// filter applies the query's field filters (repeated = any of) and drops
// everything but the requested fields when "fields" is given.
func filter(items map[string]map[string]any, r *http.Request) []map[string]any {
	q := r.URL.Query()
	fields := q["fields"]
	out := []map[string]any{}
	for _, id := range slices.Sorted(maps.Keys(items)) {
		it := items[id]
		match := true
		for k, vals := range q {
			if k == "fields" {
				continue
			}
			s, _ := it[k].(string)
			if !slices.Contains(vals, s) {
				match = false
				break
			}
		}
		if !match {
			continue
		}
		if len(fields) == 0 {
			out = append(out, it)
			continue
		}
		sub := map[string]any{}
		for _, k := range fields {
			if v, ok := it[k]; ok {
				sub[k] = v
			}
		}
		out = append(out, sub)
	}
	return out
}
