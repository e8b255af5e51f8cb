package redfish

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/stmcginnis/gofish/common"
)

// maxResponseBytes bounds what a BMC may send in one answer.
const maxResponseBytes = 16 << 20

// HTTPError is a Redfish error answer (sushy's HTTPError and subclasses);
// its message has sushy's form because upstream's messages embed it.
type HTTPError struct {
	Method string
	URL    string
	Status int
	// Code is the Redfish error code, Detail its most severe message.
	Code    string
	Detail  string
	extInfo json.RawMessage
	noJSON  bool
}

func (e *HTTPError) Error() string {
	if e.Status == http.StatusNotFound {
		return fmt.Sprintf("Resource %s not found", e.URL)
	}
	errText := "unknown error"
	if !e.noJSON {
		d := e.Detail
		if d == "" {
			d = "unknown error."
		}
		errText = e.Code + ": " + d
	}
	ext := "None"
	if len(e.extInfo) > 0 && string(e.extInfo) != "null" {
		ext = string(e.extInfo)
	}
	return fmt.Sprintf("HTTP %s %s returned code %d. %s Extended information: %s", e.Method, e.URL, e.Status, errText, ext)
}

// isAccess reports a 401/403 (sushy AccessError).
func (e *HTTPError) isAccess() bool {
	return e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden
}

func newHTTPError(method, url string, status int, body []byte) *HTTPError {
	e := &HTTPError{Method: method, URL: url, Status: status, Code: "Base.1.0.GeneralError"}
	var doc struct {
		Error *struct {
			Code    string          `json:"code"`
			Message string          `json:"message"`
			ExtInfo json.RawMessage `json:"@Message.ExtendedInfo"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		e.noJSON = true
		return e
	}
	if doc.Error == nil {
		return e
	}
	if doc.Error.Code != "" {
		e.Code = doc.Error.Code
	}
	e.Detail = doc.Error.Message
	e.extInfo = doc.Error.ExtInfo
	var infos []struct{ Message, Severity, MessageId string }
	if json.Unmarshal(doc.Error.ExtInfo, &infos) == nil {
		for _, sev := range []string{"Critical", "Warning"} {
			for _, m := range infos {
				if m.Severity == sev && m.Message != "" {
					e.Detail = m.Message
					goto done
				}
			}
		}
	}
done:
	return e
}

// ConnectionError is a transport failure (sushy ConnectionError).
// Permanent ones (a scheme the client cannot speak, a TLS handshake that
// cannot succeed, a certificate that does not verify) would fail the same
// way on every attempt, so the caller does not retry them.
type ConnectionError struct {
	URL       string
	Err       error
	Permanent bool
}

func newConnectionError(url string, err error) *ConnectionError {
	return &ConnectionError{URL: url, Err: err, Permanent: permanentTransport(err)}
}

func (e *ConnectionError) Error() string {
	return fmt.Sprintf("Unable to connect to %s. Error: %v", e.URL, e.Err)
}

func (e *ConnectionError) Unwrap() error { return e.Err }

// conn is one authenticated connection to a BMC, shared by every
// operation on nodes with the same address and credentials. Requests take
// their context from the caller through bind.
type conn struct {
	info DriverInfo
	opts *Options
	hc   *http.Client
	// tr is hc's transport before any wrapping, whose idle connections
	// closeIdle drops (a wrapper need not pass that on).
	tr  *http.Transport
	log *slog.Logger

	mu sync.Mutex
	// token and sessionURI are the current session, if any; basic is set
	// once basic authentication is in use.
	token      string
	sessionURI string
	basic      bool
	sessionOK  bool
	// systems is the Systems collection path, once known.
	systems string
}

func newConn(info DriverInfo, opts *Options, log *slog.Logger) (*conn, error) {
	tlsConf, err := tlsConfig(info)
	if err != nil {
		return nil, err
	}
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: opts.ConnectTimeout}).DialContext,
		TLSClientConfig:       tlsConf,
		TLSHandshakeTimeout:   opts.ConnectTimeout,
		ResponseHeaderTimeout: opts.ReadTimeout,
		// Field studies (sushy's) show BMCs choking on long-lived
		// connections: every request gets its own.
		DisableKeepAlives: true,
	}
	var rt http.RoundTripper = tr
	if opts.WrapTransport != nil {
		rt = opts.WrapTransport(tr)
	}
	c := &conn{info: info, opts: opts, hc: &http.Client{Transport: rt}, tr: tr, log: log}
	if info.Username == "" && info.Password == "" {
		c.basic = true
	}
	if info.AuthType == "basic" {
		c.basic = true
	}
	return c, nil
}

func tlsConfig(info DriverInfo) (*tls.Config, error) {
	conf := &tls.Config{MinVersion: tls.VersionTLS12}
	switch info.TLSMinimum {
	case "1.1":
		conf.MinVersion = tls.VersionTLS11
	case "1.3":
		conf.MinVersion = tls.VersionTLS13
	}
	switch info.VerifyCA {
	case "true", "":
	case "false":
		conf.InsecureSkipVerify = true
	default:
		pool, err := loadCAs(info.VerifyCA)
		if err != nil {
			return nil, err
		}
		conf.RootCAs = pool
	}
	return conf, nil
}

// loadCAs reads a CA bundle file, or every file of a CA directory.
func loadCAs(path string) (*x509.CertPool, error) {
	pool := x509.NewCertPool()
	files := []string{path}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		entries, err := os.ReadDir(path)
		if err != nil {
			return nil, fmt.Errorf("read CA directory %s: %w", path, err)
		}
		files = files[:0]
		for _, e := range entries {
			if !e.IsDir() {
				files = append(files, filepath.Join(path, e.Name()))
			}
		}
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("read CA bundle: %w", err)
		}
		pool.AppendCertsFromPEM(data)
	}
	return pool, nil
}

// bind returns a gofish client whose requests use ctx.
func (c *conn) bind(ctx context.Context) *client { return &client{c: c, ctx: ctx} }

// request sends one request: it authenticates first if needed, retries
// 5xx answers to GETs and the "not ready yet" answers as sushy's
// connector does, and logs in again once when a session is refused with a
// 401. A transport error is returned at once, as sushy raises it: the
// caller's connection attempts are the only retry of those.
func (c *conn) request(ctx context.Context, method, path string, payload any, headers map[string]string) (*http.Response, error) {
	var body []byte
	if payload != nil {
		var err error
		if body, err = json.Marshal(payload); err != nil {
			return nil, fmt.Errorf("encode %s %s: %w", method, path, err)
		}
	}
	if err := c.ensureAuth(ctx); err != nil {
		return nil, err
	}
	reauthed := false
	serverRetries := c.opts.ServerSideRetries
	for {
		resp, respBody, err := c.send(ctx, method, path, body, headers, true)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode < 400 {
			resp.Body = io.NopCloser(bytes.NewReader(respBody))
			return resp, nil
		}
		herr := newHTTPError(method, c.displayURL(path), resp.StatusCode, respBody)
		switch {
		case herr.isAccess() && !reauthed && c.usingSession():
			c.log.Warn("redfish session refused, logging in again", "address", c.info.SafeAddress(), "status", herr.Status)
			reauthed = true
			c.dropSession()
			if err := c.ensureAuth(ctx); err != nil {
				return nil, err
			}
			continue
		case herr.Status >= 500 && serverRetries > 0 && (method == http.MethodGet || retriableMessage(herr)):
			serverRetries--
			c.log.Warn("redfish server side error, retrying", "method", method, "url", c.displayURL(path),
				"status", herr.Status, "retries_left", serverRetries)
			if err := c.opts.clock().Sleep(ctx, c.opts.ServerSideRetriesDelay); err != nil {
				return nil, err
			}
			continue
		case herr.Status == http.StatusBadRequest && method != http.MethodGet && serverRetries > 0 && retriableMessage(herr):
			serverRetries--
			if err := c.opts.clock().Sleep(ctx, c.opts.ServerSideRetriesDelay); err != nil {
				return nil, err
			}
			continue
		}
		return nil, herr
	}
}

// retriableMessage is sushy's list of "BMC not ready yet" answers.
func retriableMessage(e *HTTPError) bool {
	s := e.Error()
	return strings.Contains(s, "SYS518") || (strings.Contains(s, "iLO") && strings.Contains(s, "InvalidOperationForSystemState"))
}

func (c *conn) url(path string) string {
	if strings.HasPrefix(path, "http://") || strings.HasPrefix(path, "https://") {
		// Credentials go to the configured BMC only: an absolute link
		// keeps its path and loses its host.
		if u, err := url.Parse(path); err == nil {
			path = u.RequestURI()
		}
	}
	if !strings.HasPrefix(path, "/") {
		path = strings.TrimSuffix(c.info.RootPrefix, "/") + "/" + path
	}
	return c.info.Address + path
}

// displayURL is url without the userinfo an address may carry, for
// messages and logs.
func (c *conn) displayURL(path string) string {
	full := c.url(path)
	return c.info.SafeAddress() + strings.TrimPrefix(full, c.info.Address)
}

// send performs one HTTP exchange; auth says whether to attach the
// connection's credentials. A transport error is not retried here: sushy
// (as Ironic uses it up to 2025.1) raises ConnectionError at once and
// leaves retrying to [redfish]connection_attempts, so that a BMC that does
// not answer releases the node after attempts × interval, not after a
// retry loop nested in every attempt.
func (c *conn) send(ctx context.Context, method, path string, body []byte, headers map[string]string, auth bool) (*http.Response, []byte, error) {
	u := c.url(path)
	if scheme, _, _ := strings.Cut(u, "://"); !strings.EqualFold(scheme, "http") && !strings.EqualFold(scheme, "https") {
		return nil, nil, &ConnectionError{URL: c.displayURL(path), Err: fmt.Errorf("unsupported protocol scheme %q", scheme), Permanent: true}
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, nil, &ConnectionError{URL: c.displayURL(path), Err: err, Permanent: true}
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("OData-Version", "4.0")
	req.Header.Set("Accept-Encoding", "identity")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		if k != "" && v != "" {
			req.Header.Set(k, v)
		}
	}
	if auth {
		c.authorize(req)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, nil, newConnectionError(c.displayURL(path), err)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	_ = resp.Body.Close()
	if err != nil {
		return nil, nil, newConnectionError(c.displayURL(path), err)
	}
	return resp, data, nil
}

// permanentTransport reports the transport errors no retry can fix:
// certificate problems, and a TLS handshake with a peer that does not
// speak TLS (a plain-HTTP BMC given an https address) or refuses every
// version and cipher offered.
func permanentTransport(err error) bool {
	var unknown x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	var verify *tls.CertificateVerificationError
	var record tls.RecordHeaderError
	if errors.As(err, &unknown) || errors.As(err, &hostname) || errors.As(err, &invalid) ||
		errors.As(err, &verify) || errors.As(err, &record) || errors.Is(err, http.ErrSchemeMismatch) {
		return true
	}
	// crypto/tls reports an alert the peer sent during the handshake
	// (protocol version, handshake failure, bad certificate) as a
	// "remote error" of an unexported type.
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "remote error"
}

func (c *conn) authorize(req *http.Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.token != "":
		req.Header.Set("X-Auth-Token", c.token)
	case c.basic && (c.info.Username != "" || c.info.Password != ""):
		req.SetBasicAuth(c.info.Username, c.info.Password)
	}
}

func (c *conn) usingSession() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.token != ""
}

func (c *conn) dropSession() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.token, c.sessionURI = "", ""
}

// ensureAuth establishes a session when the auth type asks for one: with
// "auto", a BMC that cannot give a session is used with basic
// authentication, unless sessions worked before (then a failure is real).
func (c *conn) ensureAuth(ctx context.Context) error {
	c.mu.Lock()
	need := !c.basic && c.token == ""
	c.mu.Unlock()
	if !need {
		return nil
	}
	err := c.login(ctx)
	if err == nil {
		return nil
	}
	if c.info.AuthType != "auto" {
		return err
	}
	var cerr *ConnectionError
	if errors.As(err, &cerr) {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sessionOK {
		return err
	}
	c.log.Warn("falling back to basic authentication: no redfish session could be established",
		"address", c.info.SafeAddress(), "error", err)
	c.basic = true
	return nil
}

// login creates a session through the SessionService named by the service
// root.
func (c *conn) login(ctx context.Context) error {
	resp, data, err := c.send(ctx, http.MethodGet, c.info.RootPrefix, nil, nil, false)
	if err != nil {
		return err
	}
	if resp.StatusCode >= 400 {
		return newHTTPError(http.MethodGet, c.displayURL(c.info.RootPrefix), resp.StatusCode, data)
	}
	var root struct {
		Links struct {
			Sessions common.Link
		}
		SessionService common.Link
	}
	if err := json.Unmarshal(data, &root); err != nil {
		return fmt.Errorf("decode service root: %w", err)
	}
	sessions := root.Links.Sessions.String()
	if sessions == "" {
		if root.SessionService == "" {
			return fmt.Errorf("the service root of %s offers no SessionService", c.info.SafeAddress())
		}
		sessions = root.SessionService.String() + "/Sessions"
	}
	body, err := json.Marshal(map[string]string{"UserName": c.info.Username, "Password": c.info.Password})
	if err != nil {
		return fmt.Errorf("encode session request: %w", err)
	}
	resp, data, err = c.send(ctx, http.MethodPost, sessions, body, nil, false)
	if err != nil {
		return err
	}
	if resp.StatusCode >= 400 {
		return newHTTPError(http.MethodPost, c.displayURL(sessions), resp.StatusCode, data)
	}
	token := resp.Header.Get("X-Auth-Token")
	if token == "" {
		return fmt.Errorf("no X-Auth-Token returned from %s when establishing a session", c.info.SafeAddress())
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.token, c.sessionURI, c.sessionOK = token, resp.Header.Get("Location"), true
	return nil
}

// logout deletes the session at the BMC, best effort: BMCs limit how many
// sessions may exist.
func (c *conn) logout(ctx context.Context) {
	c.mu.Lock()
	uri := c.sessionURI
	c.mu.Unlock()
	if uri == "" {
		return
	}
	if _, _, err := c.send(ctx, http.MethodDelete, uri, nil, nil, true); err != nil {
		c.log.Debug("redfish session logout failed", "address", c.info.SafeAddress(), "error", err)
	}
	c.dropSession()
}

// client is a conn bound to a context, in the form gofish resources use.
type client struct {
	c   *conn
	ctx context.Context
}

var _ common.Client = (*client)(nil)

func (cl *client) Get(url string) (*http.Response, error) { return cl.GetWithHeaders(url, nil) }
func (cl *client) GetWithHeaders(url string, h map[string]string) (*http.Response, error) {
	return cl.c.request(cl.ctx, http.MethodGet, url, nil, h)
}
func (cl *client) Post(url string, payload any) (*http.Response, error) {
	return cl.PostWithHeaders(url, payload, nil)
}
func (cl *client) PostWithHeaders(url string, payload any, h map[string]string) (*http.Response, error) {
	return cl.c.request(cl.ctx, http.MethodPost, url, payload, h)
}
func (cl *client) PostMultipart(url string, _ map[string]io.Reader) (*http.Response, error) {
	return nil, fmt.Errorf("multipart POST to %s is not supported", url)
}
func (cl *client) PostMultipartWithHeaders(url string, _ map[string]io.Reader, _ map[string]string) (*http.Response, error) {
	return nil, fmt.Errorf("multipart POST to %s is not supported", url)
}
func (cl *client) Patch(url string, payload any) (*http.Response, error) {
	return cl.PatchWithHeaders(url, payload, nil)
}
func (cl *client) PatchWithHeaders(url string, payload any, h map[string]string) (*http.Response, error) {
	return cl.c.request(cl.ctx, http.MethodPatch, url, payload, h)
}
func (cl *client) Put(url string, payload any) (*http.Response, error) {
	return cl.PutWithHeaders(url, payload, nil)
}
func (cl *client) PutWithHeaders(url string, payload any, h map[string]string) (*http.Response, error) {
	return cl.c.request(cl.ctx, http.MethodPut, url, payload, h)
}
func (cl *client) Delete(url string) (*http.Response, error) { return cl.DeleteWithHeaders(url, nil) }
func (cl *client) DeleteWithHeaders(url string, h map[string]string) (*http.Response, error) {
	return cl.c.request(cl.ctx, http.MethodDelete, url, nil, h)
}

// getJSON reads a resource into v.
func (cl *client) getJSON(path string, v any) error {
	resp, err := cl.Get(path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		return fmt.Errorf("decode %s: %w", path, err)
	}
	return nil
}

// closeIdle releases the connection's transport.
func (c *conn) closeIdle() { c.tr.CloseIdleConnections() }

// requestTimeout bounds one logout at eviction.
const requestTimeout = 10 * time.Second
