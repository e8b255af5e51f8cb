package ipa

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Microversions IPA gates its calls on (ironic_api_client.py).
var (
	minIronicVersion      = [2]int{1, 31}
	agentVersionVersion   = [2]int{1, 36}
	agentTokenVersion     = [2]int{1, 62}
	agentVerifyCAVersion  = [2]int{1, 68}
	maxKnownIronicVersion = agentVerifyCAVersion
	versionHeader         = "X-OpenStack-Ironic-API-Version"
)

// IronicClient sends what IPA sends to the Ironic API: version discovery,
// lookup and heartbeat, with IPA's headers and microversions.
type IronicClient struct {
	// BaseURL is the Ironic API root (ipa-api-url).
	BaseURL string
	// HTTP is the client to use; nil means http.DefaultClient.
	HTTP *http.Client
	// Version pins the API version instead of asking GET / (IPA's
	// ironic_api_version option).
	Version [2]int
	// Token is the agent token learnt at lookup (or pre-generated).
	Token string

	discovered [2]int
}

// APIError is a non-success answer, with IPA's error text
// ("Error <code>: <faultstring>").
type APIError struct {
	Status int
	Text   string
}

func (e *APIError) Error() string { return e.Text }

func less(a, b [2]int) bool { return a[0] < b[0] || a[0] == b[0] && a[1] < b[1] }

func minVersion(a, b [2]int) [2]int {
	if less(a, b) {
		return a
	}
	return b
}

func (c *IronicClient) http() *http.Client {
	if c.HTTP == nil {
		return http.DefaultClient
	}
	return c.HTTP
}

func (c *IronicClient) request(ctx context.Context, method, path string, body any, version *[2]int) (*http.Response, []byte, error) {
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return nil, nil, fmt.Errorf("ipa: encode %s body: %w", path, err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(c.BaseURL, "/")+path, rd)
	if err != nil {
		return nil, nil, fmt.Errorf("ipa: %s %s: %w", method, path, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if version != nil {
		req.Header.Set(versionHeader, fmt.Sprintf("%d.%d", version[0], version[1]))
	}
	resp, err := c.http().Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("ipa: %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, nil, fmt.Errorf("ipa: %s %s: read: %w", method, path, err)
	}
	return resp, data, nil
}

// APIVersion is IPA's _get_ironic_api_version: the pinned version, or
// default_version.version of GET /, or 1.31 when that fails.
func (c *IronicClient) APIVersion(ctx context.Context) [2]int {
	if c.Version != [2]int{} {
		return c.Version
	}
	if c.discovered != [2]int{} {
		return c.discovered
	}
	resp, data, err := c.request(ctx, http.MethodGet, "/", nil, nil)
	if err != nil || resp.StatusCode != http.StatusOK {
		return minIronicVersion
	}
	var root struct {
		DefaultVersion struct {
			Version string `json:"version"`
		} `json:"default_version"`
	}
	if json.Unmarshal(data, &root) != nil {
		return minIronicVersion
	}
	major, minor, ok := strings.Cut(root.DefaultVersion.Version, ".")
	ma, err1 := strconv.Atoi(major)
	mi, err2 := strconv.Atoi(minor)
	if !ok || err1 != nil || err2 != nil {
		return minIronicVersion
	}
	c.discovered = [2]int{ma, mi}
	return c.discovered
}

// errorText is IPA's _error_from_response.
func errorText(status int, data []byte) string {
	text := string(data)
	var body map[string]any
	if json.Unmarshal(data, &body) == nil {
		var inner any = body
		if em, ok := body["error_message"]; ok {
			inner = em
		}
		if s, ok := inner.(string); ok {
			var m map[string]any
			if json.Unmarshal([]byte(s), &m) == nil {
				inner = m
			} else {
				inner = map[string]any{}
			}
		}
		if m, ok := inner.(map[string]any); ok {
			if fs, _ := m["faultstring"].(string); fs != "" {
				text = fs
			} else if t, _ := m["title"].(string); t != "" {
				text = t
			}
		}
	}
	return fmt.Sprintf("Error %d: %s", status, text)
}

// Lookup is GET /v1/lookup?addresses=<macs>[&node_uuid=] at
// min(server, 1.62). It returns the decoded answer ({"node": …,
// "config": {"agent_token": …, …}}); any status but 200 is an *APIError.
func (c *IronicClient) Lookup(ctx context.Context, macs []string, nodeUUID string) (map[string]any, error) {
	q := url.Values{"addresses": {strings.Join(macs, ",")}}
	if nodeUUID != "" {
		q.Set("node_uuid", nodeUUID)
	}
	v := minVersion(c.APIVersion(ctx), agentTokenVersion)
	resp, data, err := c.request(ctx, http.MethodGet, "/v1/lookup?"+q.Encode(), nil, &v)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, &APIError{Status: resp.StatusCode, Text: errorText(resp.StatusCode, data)}
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("ipa: lookup answer: %w", err)
	}
	if cfg, ok := out["config"].(map[string]any); ok {
		if tok, ok := cfg["agent_token"].(string); ok && tok != "******" && c.Token == "" {
			c.Token = tok
		}
	}
	return out, nil
}

// Heartbeat is POST /v1/heartbeat/<uuid> as IPA sends it: callback_url
// always, agent_token from 1.62, agent_version from 1.36, agent_verify_ca
// (when caPEM is set) from 1.68, at min(server, 1.68). Anything but 202 is
// an *APIError (409 is what IPA retries sooner).
func (c *IronicClient) Heartbeat(ctx context.Context, nodeUUID, callbackURL, caPEM string) error {
	api := c.APIVersion(ctx)
	data := map[string]any{"callback_url": callbackURL}
	if !less(api, agentTokenVersion) {
		data["agent_token"] = c.Token
	}
	if !less(api, agentVersionVersion) {
		data["agent_version"] = Version
	}
	if !less(api, agentVerifyCAVersion) && caPEM != "" {
		data["agent_verify_ca"] = caPEM
	}
	v := minVersion(maxKnownIronicVersion, api)
	resp, body, err := c.request(ctx, http.MethodPost, "/v1/heartbeat/"+url.PathEscape(nodeUUID), data, &v)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusAccepted {
		return &APIError{Status: resp.StatusCode, Text: errorText(resp.StatusCode, body)}
	}
	return nil
}
