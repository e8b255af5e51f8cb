// Package nova tells Nova of power state changes it did not ask for, as
// upstream's ironic/common/nova.py: a "power-update" external event for
// the instance on the node, posted to os-server-external-events at compute
// microversion 2.76 through a Keystone session built from [nova]. A
// failure is logged and reported to the caller as false; it never stops
// what the conductor was doing.
package nova

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/keystoneauth"
	"github.com/openkeel/ironic/internal/states"
)

const (
	// APIVersion is the compute API version the adapter asks for
	// (upstream NOVA_API_VERSION).
	APIVersion = "2.1"
	// Microversion is the one that introduced the power-update event
	// (upstream NOVA_API_MICROVERSION).
	Microversion = "2.76"
	// EventsPath is the external events resource under the versioned
	// endpoint.
	EventsPath = "/os-server-external-events"
)

// Power event tags.
const (
	TagPowerOn  = "POWER_ON"
	TagPowerOff = "POWER_OFF"
)

// Auth returns the token and the compute endpoint for one call.
type Auth func(ctx context.Context) (token, endpoint string, err error)

// Client posts power events to Nova. The zero value sends nothing.
type Client struct {
	// Enabled is [nova]/send_power_notifications.
	Enabled bool
	Auth    Auth
	// HTTP carries the session's TLS, timeout, token renewal and retries.
	HTTP *http.Client
	Log  *slog.Logger
}

// FromConfig builds the client from [nova]; globalID gives the request's
// global id (sent as X-OpenStack-Request-ID), nil for none.
func FromConfig(c *config.Config, log *slog.Logger, globalID func(context.Context) string) *Client {
	sess := keystoneauth.New(keystoneauth.OptionsFromConfig(c, "nova"))
	if globalID != nil {
		sess.SetGlobalRequestID(globalID)
	}
	return &Client{
		Enabled: c.BoolOf(config.NovaSendPowerNotifications),
		Auth:    sess.Auth,
		HTTP:    sess.Client(),
		Log:     log,
	}
}

// Event is one external event as Nova's API takes it.
type Event struct {
	Name       string `json:"name"`
	ServerUUID string `json:"server_uuid"`
	Tag        string `json:"tag"`
}

// PowerUpdate tells Nova that the instance serverUUID is now in
// powerState (power on or power off); it reports whether Nova accepted
// the event. Other states are not sent, as upstream.
func (c *Client) PowerUpdate(ctx context.Context, serverUUID, powerState string) bool {
	if c == nil || !c.Enabled {
		return false
	}
	log := c.Log
	if log == nil {
		log = slog.Default()
	}
	var tag string
	switch powerState {
	case states.PowerOn:
		tag = TagPowerOn
	case states.PowerOff:
		tag = TagPowerOff
	default:
		log.ErrorContext(ctx, "Invalid Power State "+powerState+".")
		return false
	}
	ev := Event{Name: "power-update", ServerUUID: serverUUID, Tag: tag}
	if err := c.send(ctx, ev); err != nil {
		log.WarnContext(ctx, "could not notify nova of a power state change", "server_uuid", serverUUID, "tag", tag, "error", err)
		return false
	}
	log.DebugContext(ctx, "nova accepted the power-update event", "server_uuid", serverUUID, "tag", tag)
	return true
}

// send posts ev and checks both the answer's status and the event's own
// code, since Nova answers 207 when some events of a batch failed.
func (c *Client) send(ctx context.Context, ev Event) error {
	if c.Auth == nil {
		return fmt.Errorf("no [nova] credentials configured")
	}
	token, endpoint, err := c.Auth(ctx)
	if err != nil {
		return fmt.Errorf("could not connect to Nova to send a power notification, please check configuration: %w", err)
	}
	body, err := json.Marshal(map[string][]Event{"events": {ev}})
	if err != nil {
		return fmt.Errorf("encode event: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, versioned(endpoint)+EventsPath, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("build request: %w", err)
	}
	if token != "" {
		req.Header.Set("X-Auth-Token", token)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	// keystoneauth sends a compute microversion in both headers.
	req.Header.Set("OpenStack-API-Version", "compute "+Microversion)
	req.Header.Set("X-OpenStack-Nova-API-Version", Microversion)
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("could not connect to Nova to send a power notification, please check configuration: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("read nova's answer: %w", err)
	}
	if resp.StatusCode >= 400 {
		return fmt.Errorf("nova answered %d: %s", resp.StatusCode, strings.TrimSpace(string(data)))
	}
	var out struct {
		Events []struct {
			Code   *int   `json:"code"`
			Status string `json:"status"`
		} `json:"events"`
	}
	if err := json.Unmarshal(data, &out); err != nil || len(out.Events) == 0 || out.Events[0].Code == nil {
		return fmt.Errorf("invalid answer from nova (%d): %s", resp.StatusCode, strings.TrimSpace(string(data)))
	}
	if code := *out.Events[0].Code; code >= 400 {
		return fmt.Errorf("nova event returned with failed status %d (%s)", code, out.Events[0].Status)
	}
	return nil
}

// versioned is the endpoint of compute API 2.1. keystoneauth finds it by
// version discovery; catalogs and endpoint_override name it directly in
// practice (".../v2.1", possibly followed by a project id), so only an
// unversioned endpoint gets the version appended.
func versioned(endpoint string) string {
	e := strings.TrimRight(endpoint, "/")
	for _, seg := range strings.Split(e, "/") {
		if seg == "v"+APIVersion {
			return e
		}
	}
	return e + "/v" + APIVersion
}
