// Package cinder is the part of Cinder's block storage v3 API that
// upstream's ironic/common/cinder.py uses through openstacksdk to attach a
// node's volumes: read a volume, the volume actions os-reserve,
// os-initialize_connection, os-attach, os-begin_detaching,
// os-terminate_connection and os-detach, and the volume metadata.
// Authentication is left to a provider (internal/keystoneauth's session),
// whose HTTP client renews the token when Cinder refuses it.
package cinder

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/keystoneauth"
)

// Volume statuses upstream's is_volume_available compares with.
const (
	StatusAvailable = "available"
	StatusInUse     = "in-use"
)

// Auth returns the token and the block storage endpoint (e.g.
// "http://cinder:8776/v3") for one call.
type Auth func(ctx context.Context) (token, endpoint string, err error)

// Client talks to Cinder.
type Client struct {
	Auth Auth
	HTTP *http.Client
	// ProjectID is the service credentials' project; upstream strips it
	// from an endpoint that carries it, as Cinder (3.67 and later)
	// refuses a project in the URL of a call with a service token.
	ProjectID func(ctx context.Context) (string, error)
}

// FromConfig builds the client from [cinder]; globalID gives the request's
// global id (sent as X-OpenStack-Request-ID), nil for none.
func FromConfig(c *config.Config, globalID func(context.Context) string) *Client {
	sess := keystoneauth.New(keystoneauth.OptionsFromConfig(c, "cinder"))
	if globalID != nil {
		sess.SetGlobalRequestID(globalID)
	}
	return &Client{Auth: sess.Auth, HTTP: sess.Client(), ProjectID: sess.ProjectID}
}

// Attachment is one entry of a volume's attachments.
type Attachment struct {
	ServerID     string `json:"server_id"`
	AttachmentID string `json:"attachment_id"`
	HostName     string `json:"host_name,omitempty"`
	Device       string `json:"device,omitempty"`
}

// Volume is what upstream reads of a volume.
type Volume struct {
	ID          string            `json:"id"`
	Status      string            `json:"status"`
	Multiattach bool              `json:"multiattach"`
	Attachments []Attachment      `json:"attachments"`
	Metadata    map[string]string `json:"metadata,omitempty"`
}

// Available is upstream is_volume_available.
func (v *Volume) Available() bool {
	return v.Status == StatusAvailable || (v.Status == StatusInUse && v.Multiattach)
}

// AttachmentFor is upstream _get_attachment_id: the attachment of the
// instance or the node (server_id is either), or "" when there is none.
func (v *Volume) AttachmentFor(ids ...string) (string, bool) {
	for _, a := range v.Attachments {
		for _, id := range ids {
			if id != "" && a.ServerID == id {
				return a.AttachmentID, true
			}
		}
	}
	return "", false
}

// Connector is the initiator's description Cinder's drivers read (ip,
// initiator, wwpns, wwnns, multipath, host).
type Connector map[string]any

// ConnectionInfo is os-initialize_connection's answer: the protocol
// (driver_volume_type, free-form) and the target's data.
type ConnectionInfo struct {
	DriverVolumeType string         `json:"driver_volume_type"`
	Data             map[string]any `json:"data"`
}

// Error is a failed call: either Cinder's answer (Status > 0) or a
// transport failure (Status 0).
type Error = keystoneauth.APIError

// IsNotFound reports whether err is Cinder answering 404.
func IsNotFound(err error) bool {
	return keystoneauth.IsStatus(err, service, http.StatusNotFound)
}

// service names Cinder in errors.
const service = "cinder"

// GetVolume reads volume id.
func (c *Client) GetVolume(ctx context.Context, id string) (*Volume, error) {
	var out struct {
		Volume Volume `json:"volume"`
	}
	if err := c.do(ctx, http.MethodGet, "/volumes/"+url.PathEscape(id), nil, &out); err != nil {
		return nil, err
	}
	return &out.Volume, nil
}

// Reserve marks the volume as being attached (os-reserve).
func (c *Client) Reserve(ctx context.Context, id string) error {
	return c.action(ctx, id, "os-reserve", nil, nil)
}

// InitializeConnection gives Cinder the initiator and returns the
// target's connection information (os-initialize_connection).
func (c *Client) InitializeConnection(ctx context.Context, id string, conn Connector) (*ConnectionInfo, error) {
	var out struct {
		ConnectionInfo *ConnectionInfo `json:"connection_info"`
	}
	if err := c.action(ctx, id, "os-initialize_connection", map[string]any{"connector": conn}, &out); err != nil {
		return nil, err
	}
	if out.ConnectionInfo == nil {
		return nil, &Error{Service: service, Method: http.MethodPost, Path: "/volumes/" + id + "/action", Status: http.StatusOK, Message: "answer without connection_info"}
	}
	if out.ConnectionInfo.Data == nil {
		out.ConnectionInfo.Data = map[string]any{}
	}
	return out.ConnectionInfo, nil
}

// Attach completes the attachment to instance at mountpoint (os-attach).
func (c *Client) Attach(ctx context.Context, id, mountpoint, instance string) error {
	return c.action(ctx, id, "os-attach", map[string]any{"mountpoint": mountpoint, "instance_uuid": instance}, nil)
}

// BeginDetaching marks the volume as being detached (os-begin_detaching).
func (c *Client) BeginDetaching(ctx context.Context, id string) error {
	return c.action(ctx, id, "os-begin_detaching", nil, nil)
}

// TerminateConnection removes the initiator's access to the target
// (os-terminate_connection).
func (c *Client) TerminateConnection(ctx context.Context, id string, conn Connector) error {
	return c.action(ctx, id, "os-terminate_connection", map[string]any{"connector": conn}, nil)
}

// Detach completes the detachment of attachmentID (os-detach).
func (c *Client) Detach(ctx context.Context, id, attachmentID string) error {
	var att any
	if attachmentID != "" {
		att = attachmentID
	}
	return c.action(ctx, id, "os-detach", map[string]any{"attachment_id": att}, nil)
}

// SetMetadata sets metadata keys of the volume, keeping the others.
func (c *Client) SetMetadata(ctx context.Context, id string, md map[string]string) error {
	return c.do(ctx, http.MethodPost, "/volumes/"+url.PathEscape(id)+"/metadata", map[string]any{"metadata": md}, nil)
}

// action posts one volume action; a nil body is sent as JSON null, as
// openstacksdk does for the actions without arguments.
func (c *Client) action(ctx context.Context, id, name string, args any, out any) error {
	return c.do(ctx, http.MethodPost, "/volumes/"+url.PathEscape(id)+"/action", map[string]any{name: args}, out)
}

// endpoint is the session's endpoint without the project, as upstream's
// get_client strips it.
func (c *Client) endpoint(ctx context.Context, endpoint string) string {
	if c.ProjectID == nil {
		return endpoint
	}
	if pid, err := c.ProjectID(ctx); err == nil && pid != "" {
		endpoint = strings.Replace(endpoint, "/"+pid, "", 1)
	}
	return endpoint
}

func (c *Client) do(ctx context.Context, method, path string, body, out any) error {
	if c == nil {
		// A nil client is one without credentials.
		c = &Client{}
	}
	api := keystoneauth.JSONClient{Service: service, Auth: c.Auth, HTTP: c.HTTP, Endpoint: c.endpoint, Fault: fault}
	return api.Do(ctx, method, path, body, out)
}

// fault reads Cinder's {"<kind>": {"message", "code"}} fault body
// (badRequest, itemNotFound, ...); the kind is not kept.
func fault(data []byte) (typ, message string) {
	var doc map[string]struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(data, &doc) == nil {
		for _, f := range doc {
			if f.Message != "" {
				return "", f.Message
			}
		}
	}
	return "", ""
}
