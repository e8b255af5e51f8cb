package keystoneauth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
)

// maxJSONAnswer bounds what a JSON answer may take in memory.
const maxJSONAnswer = 8 << 20

// APIError is a failed call of a JSONClient: either the service's answer
// (Status > 0) or a transport failure (Status 0).
type APIError struct {
	// Service names the service ("cinder") in the text.
	Service      string
	Method, Path string
	Status       int
	// Type and Message are what the service's fault document says (Type
	// only where it names one), else Message is the answer's text.
	Type, Message string
	Err           error
}

func (e *APIError) Error() string {
	if e.Status == 0 {
		return fmt.Sprintf("%s %s %s: connection failed: %v", e.Service, e.Method, e.Path, e.Err)
	}
	if e.Type != "" {
		return fmt.Sprintf("%s %s %s: %d %s: %s", e.Service, e.Method, e.Path, e.Status, e.Type, e.Message)
	}
	return fmt.Sprintf("%s %s %s: %d: %s", e.Service, e.Method, e.Path, e.Status, e.Message)
}

func (e *APIError) Unwrap() error { return e.Err }

// IsStatus reports whether err is service answering one of codes.
func IsStatus(err error, service string, codes ...int) bool {
	var e *APIError
	if !errors.As(err, &e) || e.Service != service || e.Status == 0 {
		return false
	}
	return slices.Contains(codes, e.Status)
}

// JSONClient calls an OpenStack service's JSON API with the token and
// endpoint a Session's Auth gives (Cinder, Neutron): the body goes as
// JSON, the answer comes back decoded, a failure is an *APIError.
type JSONClient struct {
	// Service starts the errors ("cinder").
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
	// Fault reads the service's fault document, the body of an answer
	// of 300 or more; a message of "" keeps the answer's text.
	Fault func(body []byte) (typ, message string)
}

// failed is the error of a call that failed in transport.
func (c *JSONClient) failed(method, path string, err error) error {
	return &APIError{Service: c.Service, Method: method, Path: path, Err: err}
}

// Do sends method path with body (nil for none) and decodes a non-empty
// answer into out (nil to drop it).
func (c *JSONClient) Do(ctx context.Context, method, path string, body, out any) error {
	if c.Auth == nil {
		return c.failed(method, path, errors.New("no "+c.Service+" credentials configured"))
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
		return c.failed(method, path, err)
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
		return c.failed(method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxJSONAnswer))
	if err != nil {
		return c.failed(method, path, fmt.Errorf("read answer: %w", err))
	}
	if resp.StatusCode >= 300 {
		e := &APIError{Service: c.Service, Method: method, Path: path, Status: resp.StatusCode, Message: strings.TrimSpace(string(data))}
		if c.Fault != nil {
			if typ, msg := c.Fault(data); msg != "" {
				e.Type, e.Message = typ, msg
			}
		}
		return e
	}
	if out == nil || len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s %s %s: decode answer: %w", c.Service, method, path, err)
	}
	return nil
}
