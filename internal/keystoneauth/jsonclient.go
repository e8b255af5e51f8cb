package keystoneauth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// maxJSONAnswer bounds what a JSON answer may take in memory.
const maxJSONAnswer = 8 << 20

// JSONClient calls an OpenStack service's JSON API with the token and
// endpoint a Session's Auth gives (Cinder, Neutron): the body goes as
// JSON, the answer comes back decoded. The service's error documents
// differ, so turning a failure into the service's own error is left to
// Failed.
type JSONClient struct {
	// Service starts the errors the client makes itself ("cinder").
	Service string
	// Auth returns the token ("" sends none) and the endpoint; nil means
	// no credentials are configured.
	Auth func(ctx context.Context) (token, endpoint string, err error)
	// HTTP is the session's client (token renewal, TLS, retries); nil is
	// http.DefaultClient.
	HTTP *http.Client
	// Endpoint, when set, rewrites the endpoint (without its trailing
	// slash) before the path is appended.
	Endpoint func(ctx context.Context, endpoint string) string
	// Failed is the service's error for a call that failed: in transport
	// (status 0, err says why) or by an answer of 300 or more (status and
	// the answer's body).
	Failed func(method, path string, status int, body []byte, err error) error
}

// Do sends method path with body (nil for none) and decodes a non-empty
// answer into out (nil to drop it).
func (c *JSONClient) Do(ctx context.Context, method, path string, body, out any) error {
	if c.Auth == nil {
		return c.Failed(method, path, 0, nil, errors.New("no "+c.Service+" credentials configured"))
	}
	token, endpoint, err := c.Auth(ctx)
	if err != nil {
		return fmt.Errorf("%s credentials: %w", c.Service, err)
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("%s %s %s: encode body: %w", c.Service, method, path, err)
		}
		rd = bytes.NewReader(b)
	}
	endpoint = strings.TrimRight(endpoint, "/")
	if c.Endpoint != nil {
		endpoint = c.Endpoint(ctx, endpoint)
	}
	req, err := http.NewRequestWithContext(ctx, method, endpoint+path, rd)
	if err != nil {
		return c.Failed(method, path, 0, nil, err)
	}
	if token != "" {
		req.Header.Set("X-Auth-Token", token)
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return c.Failed(method, path, 0, nil, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxJSONAnswer))
	if err != nil {
		return c.Failed(method, path, 0, nil, fmt.Errorf("read answer: %w", err))
	}
	if resp.StatusCode >= 300 {
		return c.Failed(method, path, resp.StatusCode, data, nil)
	}
	if out == nil || len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s %s %s: decode answer: %w", c.Service, method, path, err)
	}
	return nil
}
