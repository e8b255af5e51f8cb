// Package neutron is the small part of the Neutron v2.0 API the network
// interfaces need: ports (create, update, delete, show, list), networks
// (show, list), subnets (show), agents and security groups (list). Authentication is left to a
// provider (internal/keystoneauth's session), whose HTTP client renews
// the token when Neutron refuses it.
package neutron

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"

	"github.com/openkeel/ironic/internal/keystoneauth"
)

// Auth returns the token and the network endpoint (e.g.
// "http://neutron:9696") for one call.
type Auth func(ctx context.Context) (token, endpoint string, err error)

// Client talks to Neutron.
type Client struct {
	Auth Auth
	HTTP *http.Client
}

// Port is a Neutron port document; the binding attributes keep their API
// names because Neutron's extensions add and read them by those names.
type Port map[string]any

// ID is the port's id.
func (p Port) ID() string { s, _ := p["id"].(string); return s }

// Network is a Neutron network document.
type Network map[string]any

// ID is the network's id.
func (n Network) ID() string { s, _ := n["id"].(string); return s }

// Error is a failed call: either Neutron's answer (Status > 0) or a
// transport failure (Status 0).
type Error = keystoneauth.APIError

// service names Neutron in errors.
const service = "neutron"

// IsNotFound reports whether err is Neutron answering 404.
func IsNotFound(err error) bool { return IsStatus(err, http.StatusNotFound) }

// IsStatus reports whether err is Neutron answering one of codes.
func IsStatus(err error, codes ...int) bool { return keystoneauth.IsStatus(err, service, codes...) }

// CreatePort creates a port with attrs (network_id, mac_address,
// binding:* ...).
func (c *Client) CreatePort(ctx context.Context, attrs map[string]any) (Port, error) {
	var out struct {
		Port Port `json:"port"`
	}
	if err := c.do(ctx, http.MethodPost, "/v2.0/ports", map[string]any{"port": attrs}, &out); err != nil {
		return nil, err
	}
	return out.Port, nil
}

// UpdatePort changes attrs of port id.
func (c *Client) UpdatePort(ctx context.Context, id string, attrs map[string]any) (Port, error) {
	var out struct {
		Port Port `json:"port"`
	}
	if err := c.do(ctx, http.MethodPut, "/v2.0/ports/"+url.PathEscape(id), map[string]any{"port": attrs}, &out); err != nil {
		return nil, err
	}
	return out.Port, nil
}

// DeletePort deletes port id.
func (c *Client) DeletePort(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodDelete, "/v2.0/ports/"+url.PathEscape(id), nil, nil)
}

// ShowPort reads port id.
func (c *Client) ShowPort(ctx context.Context, id string) (Port, error) {
	var out struct {
		Port Port `json:"port"`
	}
	if err := c.do(ctx, http.MethodGet, "/v2.0/ports/"+url.PathEscape(id), nil, &out); err != nil {
		return nil, err
	}
	return out.Port, nil
}

// ListPorts lists ports matching filters; a filter with several values
// matches any of them, as Neutron's repeated query parameters do.
func (c *Client) ListPorts(ctx context.Context, filters url.Values) ([]Port, error) {
	var out struct {
		Ports []Port `json:"ports"`
	}
	if err := c.do(ctx, http.MethodGet, withQuery("/v2.0/ports", filters), nil, &out); err != nil {
		return nil, err
	}
	return out.Ports, nil
}

// ShowNetwork reads network id.
func (c *Client) ShowNetwork(ctx context.Context, id string) (Network, error) {
	var out struct {
		Network Network `json:"network"`
	}
	if err := c.do(ctx, http.MethodGet, "/v2.0/networks/"+url.PathEscape(id), nil, &out); err != nil {
		return nil, err
	}
	return out.Network, nil
}

// ListNetworks lists networks matching filters (id, name...).
func (c *Client) ListNetworks(ctx context.Context, filters url.Values) ([]Network, error) {
	var out struct {
		Networks []Network `json:"networks"`
	}
	if err := c.do(ctx, http.MethodGet, withQuery("/v2.0/networks", filters), nil, &out); err != nil {
		return nil, err
	}
	return out.Networks, nil
}

// ShowSubnet reads subnet id.
func (c *Client) ShowSubnet(ctx context.Context, id string) (map[string]any, error) {
	var out struct {
		Subnet map[string]any `json:"subnet"`
	}
	if err := c.do(ctx, http.MethodGet, "/v2.0/subnets/"+url.PathEscape(id), nil, &out); err != nil {
		return nil, err
	}
	return out.Subnet, nil
}

// ListAgents lists Neutron agents matching filters (host...).
func (c *Client) ListAgents(ctx context.Context, filters url.Values) ([]map[string]any, error) {
	var out struct {
		Agents []map[string]any `json:"agents"`
	}
	if err := c.do(ctx, http.MethodGet, withQuery("/v2.0/agents", filters), nil, &out); err != nil {
		return nil, err
	}
	return out.Agents, nil
}

// ListSecurityGroups lists security groups matching filters (id...).
func (c *Client) ListSecurityGroups(ctx context.Context, filters url.Values) ([]map[string]any, error) {
	var out struct {
		SecurityGroups []map[string]any `json:"security_groups"`
	}
	if err := c.do(ctx, http.MethodGet, withQuery("/v2.0/security-groups", filters), nil, &out); err != nil {
		return nil, err
	}
	return out.SecurityGroups, nil
}

func withQuery(path string, q url.Values) string {
	if len(q) == 0 {
		return path
	}
	return path + "?" + q.Encode()
}

func (c *Client) do(ctx context.Context, method, path string, body, out any) error {
	api := keystoneauth.JSONClient{Service: service, Auth: c.Auth, HTTP: c.HTTP, Fault: fault}
	return api.Do(ctx, method, path, body, out)
}

// fault reads Neutron's {"NeutronError": {"type", "message"}} body.
func fault(data []byte) (typ, message string) {
	var doc struct {
		NeutronError struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"NeutronError"`
	}
	if json.Unmarshal(data, &doc) != nil {
		return "", ""
	}
	return doc.NeutronError.Type, doc.NeutronError.Message
}
