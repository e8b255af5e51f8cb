package jsonrpc

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/keystoneauth"
	"github.com/openkeel/ironic/internal/rpc"
	"github.com/openkeel/ironic/internal/rpc/ovo"
)

// DefaultTimeout is upstream's default [json_rpc]timeout.
const DefaultTimeout = 120 * time.Second

// maxResponseBytes bounds what the client reads back from a conductor.
const maxResponseBytes = 128 << 20

// ClientOptions configure a Client.
type ClientOptions struct {
	// Port is used when the topic's host names none ([json_rpc]port).
	Port int
	// UseSSL selects https ([json_rpc]client_use_ssl or use_ssl).
	UseSSL bool
	// AuthStrategy is "noauth", "http_basic" or "keystone".
	AuthStrategy string
	// Keystone gives the token each call carries under keystone: the
	// session of [json_rpc]'s keystoneauth options, as upstream's client
	// loads them.
	Keystone *keystoneauth.Session
	// Username and Password are the http_basic credentials.
	Username, Password string
	// CAFile verifies the conductors' certificates; CertFile and KeyFile
	// are a client certificate; Insecure skips verification.
	CAFile, CertFile, KeyFile string
	Insecure                  bool
	// Timeout bounds a call; 0 is DefaultTimeout.
	Timeout time.Duration
	// Transport replaces the HTTP transport built from the TLS options.
	Transport http.RoundTripper
	// PinReleaseVersion is [DEFAULT]/pin_release_version: objects go at
	// its versions, calls under its RPC version cap, and update calls in
	// upstream's form, which needs Store.
	PinReleaseVersion string
	// Store reads the stored rows a pinned client compares updates with.
	Store StoredObjects
}

// ClientOptionsFromConfig reads the [json_rpc] client options.
func ClientOptionsFromConfig(cfg *config.Config) ClientOptions {
	var ks *keystoneauth.Session
	if AuthStrategy(cfg) == "keystone" {
		// Its configuration errors surface on the first call, as
		// upstream's session loads its plugin lazily.
		ks = keystoneauth.New(keystoneauth.SessionOptionsFromConfig(cfg, "json_rpc"))
	}
	return ClientOptions{
		Keystone:     ks,
		Port:         cfg.IntOf(config.JSONRPCPort),
		UseSSL:       cfg.BoolOf(config.JSONRPCClientUseSSL) || cfg.BoolOf(config.JSONRPCUseSSL),
		AuthStrategy: AuthStrategy(cfg),
		Username:     cfg.StringOf(config.JSONRPCUsername),
		Password:     cfg.StringOf(config.JSONRPCPassword),
		CAFile:       cfg.StringOf(config.JSONRPCCafile),
		CertFile:     cfg.StringOf(config.JSONRPCCertfile),
		KeyFile:      cfg.StringOf(config.JSONRPCKeyfile),
		Insecure:     cfg.BoolOf(config.JSONRPCInsecure),
		Timeout:      cfg.DurationOf(config.JSONRPCTimeout),

		PinReleaseVersion: cfg.StringOf(config.DefaultPinReleaseVersion),
	}
}

// Client calls conductors over JSON-RPC; it implements rpc.ConductorAPI,
// addressing the conductor named by each call's topic.
type Client struct {
	opts ClientOptions
	http *http.Client
	// codec encodes objects at the pinned versions; nil is unpinned.
	codec *ovo.Codec
	// sender, when set, carries the calls instead of HTTP.
	sender Sender
}

// Sender carries one call to the conductor of topic over another
// transport (oslo.messaging): params are what a JSON-RPC frame's params
// would hold (the kwargs, "context" and "rpc.version"), the answer is the
// call's JSON result. The generated methods and their encoding are the
// same whichever transport carries them.
type Sender interface {
	Send(ctx context.Context, topic, method string, params map[string]json.RawMessage, cast bool) (json.RawMessage, error)
}

// NewClientOver returns a Client whose calls go through s, with objects
// at the versions of opts' PinReleaseVersion (pinned updates read
// opts.Store); opts' HTTP settings are unused.
func NewClientOver(s Sender, opts ClientOptions) (*Client, error) {
	codec, err := ovo.NewCodec(opts.PinReleaseVersion)
	if err != nil {
		return nil, fmt.Errorf("rpc client: %w", err)
	}
	return &Client{opts: opts, sender: s, codec: codec}, nil
}

var _ rpc.ConductorAPI = (*Client)(nil)

// NewClient returns a Client.
func NewClient(opts ClientOptions) (*Client, error) {
	switch opts.AuthStrategy {
	case "noauth", "http_basic":
	case "keystone":
		if opts.Keystone == nil {
			return nil, errors.New("json-rpc client: auth_strategy keystone needs a Keystone session")
		}
	default:
		return nil, fmt.Errorf("json-rpc client: auth_strategy %q is not supported, use keystone, http_basic or noauth", opts.AuthStrategy)
	}
	codec, err := ovo.NewCodec(opts.PinReleaseVersion)
	if err != nil {
		return nil, fmt.Errorf("json-rpc client: %w", err)
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Port == 0 {
		opts.Port = 8089
	}
	rt := opts.Transport
	if rt == nil {
		tcfg, err := clientTLS(opts)
		if err != nil {
			return nil, err
		}
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.TLSClientConfig = tcfg
		rt = t
	}
	return &Client{opts: opts, http: &http.Client{Transport: rt, Timeout: opts.Timeout}, codec: codec}, nil
}

func clientTLS(opts ClientOptions) (*tls.Config, error) {
	c := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: opts.Insecure}
	if opts.CAFile != "" {
		pem, err := os.ReadFile(opts.CAFile)
		if err != nil {
			return nil, fmt.Errorf("json-rpc client: read CA file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("json-rpc client: no certificate in CA file %s", opts.CAFile)
		}
		c.RootCAs = pool
	}
	if opts.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(opts.CertFile, opts.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("json-rpc client: load client certificate: %w", err)
		}
		c.Certificates = []tls.Certificate{cert}
	}
	return c, nil
}

// URL returns the endpoint of the conductor a topic addresses: its host,
// with [json_rpc]port unless the host carries its own (conductors register
// as host:port since RPC 1.58).
func (c *Client) URL(topic string) string {
	host, port := splitHostPort(rpc.HostFromTopic(topic))
	if port == 0 {
		port = c.opts.Port
	}
	scheme := "http"
	if c.opts.UseSSL {
		scheme = "https"
	}
	return scheme + "://" + net.JoinHostPort(host, strconv.Itoa(port)) + "/"
}

// splitHostPort reads "host", "host:port", "[v6]", "[v6]:port" or a bare
// IPv6 address, as oslo's parse_host_port.
func splitHostPort(s string) (string, int) {
	if h, p, err := net.SplitHostPort(s); err == nil {
		if n, err := strconv.Atoi(p); err == nil {
			return h, n
		}
		return h, 0
	}
	return strings.TrimSuffix(strings.TrimPrefix(s, "["), "]"), 0
}

// call sends method with kwargs to the conductor of topic and decodes its
// result into out (nil to discard it).
func (c *Client) call(ctx context.Context, topic, method, version string, kwargs, out any) error {
	return c.request(ctx, topic, method, version, kwargs, out, false)
}

// cast sends method without an id: the conductor answers 204 and reports
// no error.
func (c *Client) cast(ctx context.Context, topic, method, version string, kwargs any) error {
	return c.request(ctx, topic, method, version, kwargs, nil, true)
}

func (c *Client) request(ctx context.Context, topic, method, version string, kwargs, out any, cast bool) error {
	if !c.codec.CanSendVersion(version) {
		// Upstream's client refuses too (a RuntimeError, a 500 at its
		// API): the pinned release's conductors lack the method.
		return errs.NewMessage(errs.ClassIronicException, fmt.Sprintf(
			"Cannot send RPC request: requested version %s, maximum allowed version is %s", version, c.codec.RPCVersionCap()))
	}
	params, err := encodeParams(ctx, version, kwargs)
	if err != nil {
		return fmt.Errorf("json-rpc %s: %w", method, err)
	}
	if c.sender != nil {
		return c.send(ctx, topic, method, params, out, cast)
	}
	frame := map[string]any{"jsonrpc": "2.0", "method": method, "params": params}
	if !cast {
		id := ""
		if rc := rpc.RequestContextFrom(ctx); rc != nil {
			id = rc.RequestID
		}
		if id == "" {
			id = uuid.NewString()
		}
		frame["id"] = id
	}
	body, err := json.Marshal(frame)
	if err != nil {
		return fmt.Errorf("json-rpc %s: encode request: %w", method, err)
	}
	url := c.URL(topic)
	resp, err := c.post(ctx, url, body, method)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return transportError(ctx, fmt.Errorf("json-rpc %s to %s: read response: %w", method, url, err))
	}
	if resp.StatusCode >= 300 {
		err := fmt.Errorf("json-rpc %s to %s: HTTP %d: %s", method, url, resp.StatusCode, bytes.TrimSpace(data))
		if retryableStatus(resp.StatusCode) {
			return errs.Unavailable(err)
		}
		return err
	}
	if cast {
		return nil
	}
	var r response
	if err := json.Unmarshal(data, &r); err != nil {
		return fmt.Errorf("json-rpc %s to %s: decode response: %w", method, url, err)
	}
	if r.Error != nil {
		return decodeError(r.Error)
	}
	if out != nil && !isNull(r.Result) {
		if err := json.Unmarshal(r.Result, out); err != nil {
			return fmt.Errorf("json-rpc %s to %s: decode result: %w", method, url, err)
		}
	}
	return nil
}

// send hands a call to c.sender and decodes its result into out.
func (c *Client) send(ctx context.Context, topic, method string, params map[string]json.RawMessage, out any, cast bool) error {
	raw, err := c.sender.Send(ctx, topic, method, params, cast)
	if err != nil || cast || out == nil || isNull(raw) {
		return err
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("%s to %s: decode result: %w", method, topic, err)
	}
	return nil
}

// post sends one frame. Under keystone it carries the session's token; a
// token the conductor refuses (401: revoked, or expired early) is dropped
// and the frame sent once more with a new one.
func (c *Client) post(ctx context.Context, url string, body []byte, method string) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return nil, fmt.Errorf("json-rpc %s to %s: %w", method, url, err)
		}
		req.Header.Set("Content-Type", "application/json")
		token := ""
		switch c.opts.AuthStrategy {
		case "http_basic":
			req.SetBasicAuth(c.opts.Username, c.opts.Password)
		case "keystone":
			if token, err = c.opts.Keystone.Token(ctx); err != nil {
				return nil, transportError(ctx, fmt.Errorf("json-rpc %s to %s: keystone token: %w", method, url, err))
			}
			req.Header.Set("X-Auth-Token", token)
		}
		resp, err := c.http.Do(req)
		if err != nil {
			return nil, transportError(ctx, fmt.Errorf("json-rpc %s to %s: %w", method, url, err))
		}
		if resp.StatusCode == http.StatusUnauthorized && token != "" && attempt == 0 && c.opts.Keystone.Invalidate(token) {
			resp.Body.Close()
			continue
		}
		return resp, nil
	}
}

// transportError classifies a failure to get a conductor's answer. A
// conductor that is down, restarting, unreachable or that died before
// finishing its answer (connection refused or reset, EOF mid-answer, a
// name that no longer resolves, the call's timeout) is a fault the caller
// may retry: errs.Unavailable, a 503 with Retry-After, as clients retry
// 503 and not 500. The call may have run on the conductor before it died;
// a retry then meets the state it left, as it would after upstream's
// messaging timeout. Two failures are not retryable: the caller giving up
// (its context canceled, e.g. the API client disconnected), which stays a
// context error, and TLS verification failures, which are configuration
// errors no retry cures.
func transportError(ctx context.Context, err error) error {
	if errors.Is(ctx.Err(), context.Canceled) {
		return err
	}
	var (
		unknownCA   x509.UnknownAuthorityError
		invalidCert x509.CertificateInvalidError
		hostname    x509.HostnameError
		verify      *tls.CertificateVerificationError
		plainHTTP   tls.RecordHeaderError
	)
	if errors.As(err, &unknownCA) || errors.As(err, &invalidCert) || errors.As(err, &hostname) ||
		errors.As(err, &verify) || errors.As(err, &plainHTTP) {
		return err
	}
	return errs.Unavailable(err)
}

// retryableStatus reports whether an HTTP status in front of the JSON-RPC
// server (the conductor's listener while it shuts down, or a proxy between
// API and conductor) says the conductor cannot answer now.
func retryableStatus(code int) bool {
	return code == http.StatusBadGateway || code == http.StatusServiceUnavailable || code == http.StatusGatewayTimeout
}

// encodeParams flattens kwargs (a struct with json tags) into the params
// object and adds the caller's context and the RPC version.
func encodeParams(ctx context.Context, version string, kwargs any) (map[string]json.RawMessage, error) {
	params := map[string]json.RawMessage{}
	if kwargs != nil {
		raw, err := json.Marshal(kwargs)
		if err != nil {
			return nil, fmt.Errorf("encode arguments: %w", err)
		}
		if err := json.Unmarshal(raw, &params); err != nil {
			return nil, fmt.Errorf("encode arguments: %w", err)
		}
	}
	rc := rpc.RequestContextFrom(ctx)
	if rc == nil {
		rc = &rpc.RequestContext{}
	}
	raw, err := json.Marshal(rc)
	if err != nil {
		return nil, fmt.Errorf("encode context: %w", err)
	}
	params["context"] = raw
	if version != "" {
		params["rpc.version"], _ = json.Marshal(version)
	}
	return params, nil
}

// AuthStrategy is the effective [json_rpc] authentication strategy.
func AuthStrategy(cfg *config.Config) string {
	if s := cfg.StringOf(config.JSONRPCAuthStrategy); s != "" {
		return s
	}
	return cfg.StringOf(config.DefaultAuthStrategy)
}
