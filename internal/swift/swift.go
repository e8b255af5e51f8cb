// Package swift is the part of the Swift v1 object-store API Ironic's
// SwiftAPI (ironic/common/swift.py) uses: containers created on demand,
// objects uploaded (with openstacksdk's checksum metadata when uploading
// a file), listed, read and deleted, the account's temporary URL key, and
// temporary URLs signed with it. The session of the [swift] section
// authenticates the calls and finds the object-store endpoint in the
// service catalog.
package swift

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/md5"  //nolint:gosec // openstacksdk's x-sdk-md5 metadata, not a security check
	"crypto/sha1" //nolint:gosec // Swift's tempurl middleware signs with HMAC-SHA1
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/keystoneauth"
)

// Auth returns the token and the account endpoint (the catalog's
// object-store URL, e.g. "http://swift:8080/v1/AUTH_<project>") for one
// call.
type Auth func(ctx context.Context) (token, endpoint string, err error)

// Client talks to Swift.
type Client struct {
	Auth Auth
	HTTP *http.Client
	// Now is the clock temporary URLs expire by; nil is time.Now.
	Now func() time.Time
}

// New is the client of a session (upstream's SwiftAPI over
// get_swift_session).
func New(s *keystoneauth.Session) *Client {
	return &Client{Auth: s.Auth, HTTP: s.Client()}
}

// FromConfig is the client of the [swift] section's session. As upstream
// loads the plugin lazily, a wrong [swift] setting shows on first use.
func FromConfig(c *config.Config) *Client {
	return New(keystoneauth.New(keystoneauth.OptionsFromConfig(c, "swift")))
}

// The metadata openstacksdk records on uploaded files (its
// _OBJECT_MD5_KEY and _OBJECT_SHA256_KEY) and compares to skip uploading
// an unchanged object again.
const (
	md5Header    = "X-Object-Meta-X-Sdk-Md5"
	sha256Header = "X-Object-Meta-X-Sdk-Sha256"
)

// HTTPError is an answer Swift refused a call with, worded as
// openstacksdk's HttpException.
type HTTPError struct {
	Method, URL string
	Status      int
	Body        string
}

func (e *HTTPError) Error() string {
	kind := "Client"
	if e.Status >= 500 {
		kind = "Server"
	}
	msg := fmt.Sprintf("%d: %s Error for url: %s", e.Status, kind, e.URL)
	if body := strings.TrimSpace(e.Body); body != "" {
		msg += ", " + body
	}
	return msg
}

// operationError is upstream's SwiftOperationError.
func operationError(operation string, err error) error {
	return errs.New(errs.ClassSwiftOperationError, map[string]any{"operation": operation, "error": err.Error()})
}

func (c *Client) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// do sends one call to the account endpoint plus path (already escaped,
// "" for the account itself) and answers the response with its body
// read. Any status outside 2xx is an *HTTPError.
func (c *Client) do(ctx context.Context, method, path string, hdr http.Header, body []byte) (*http.Response, []byte, error) {
	if body == nil {
		return c.send(ctx, method, path, hdr, nil, 0)
	}
	open := func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return c.send(ctx, method, path, hdr, open, int64(len(body)))
}

// send is do with the request body opened by open (nil for none), size
// bytes long; it is opened again when the call is repeated.
func (c *Client) send(ctx context.Context, method, path string, hdr http.Header, open func() (io.ReadCloser, error), size int64) (*http.Response, []byte, error) {
	tok, endpoint, err := c.Auth(ctx)
	if err != nil {
		return nil, nil, err
	}
	u := strings.TrimRight(endpoint, "/") + path
	var rd io.ReadCloser
	if open != nil {
		if rd, err = open(); err != nil {
			return nil, nil, fmt.Errorf("swift %s %s: %w", method, u, err)
		}
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		if rd != nil {
			rd.Close()
		}
		return nil, nil, fmt.Errorf("swift %s %s: %w", method, u, err)
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	if tok != "" {
		req.Header.Set("X-Auth-Token", tok)
	}
	if open != nil {
		// Swift needs the length of a PUT, an empty object included.
		req.ContentLength = size
		req.GetBody = open
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("swift %s %s: %w", method, u, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, nil, fmt.Errorf("swift %s %s: read the answer: %w", method, u, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp, data, &HTTPError{Method: method, URL: u, Status: resp.StatusCode, Body: string(data)}
	}
	return resp, data, nil
}

func notFound(err error) bool {
	he, ok := err.(*HTTPError)
	return ok && he.Status == http.StatusNotFound
}

func objectPath(container, obj string) string {
	return "/" + url.PathEscape(container) + "/" + escapeObject(obj)
}

// escapeObject keeps the slashes of pseudo-directories in object names.
func escapeObject(obj string) string {
	parts := strings.Split(obj, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return strings.Join(parts, "/")
}

// CreateContainer is openstacksdk's create_container: nothing is sent
// when the container exists, else it is created private (no ACL).
func (c *Client) CreateContainer(ctx context.Context, container string) error {
	p := "/" + url.PathEscape(container)
	_, _, err := c.do(ctx, http.MethodHead, p, nil, nil)
	if err == nil {
		return nil
	}
	if !notFound(err) {
		return operationError("put container", err)
	}
	if _, _, err := c.do(ctx, http.MethodPut, p, nil, []byte{}); err != nil {
		return operationError("put container", err)
	}
	return nil
}

// CreateObject is upstream's create_object: the container is created if
// needed and data, the content of a file, is uploaded with headers (e.g.
// X-Delete-After) and openstacksdk's checksum metadata. As openstacksdk,
// an existing object with the same checksums is left as it is.
func (c *Client) CreateObject(ctx context.Context, container, obj string, data []byte, headers map[string]string) error {
	m := md5.Sum(data) //nolint:gosec // see md5Header
	s := sha256.Sum256(data)
	open := func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
	return c.createObject(ctx, container, obj, open, int64(len(data)), hex.EncodeToString(m[:]), hex.EncodeToString(s[:]), headers)
}

// CreateObjectFromFile is CreateObject with the file at path, streamed
// rather than held in memory (ISO images). Unlike openstacksdk, a file
// over Swift's 5 GiB object limit is not split into segments.
func (c *Client) CreateObjectFromFile(ctx context.Context, container, obj, path string, headers map[string]string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("upload %s: %w", path, err)
	}
	defer f.Close()
	hm, hs := md5.New(), sha256.New() //nolint:gosec // see md5Header
	size, err := io.Copy(io.MultiWriter(hm, hs), f)
	if err != nil {
		return fmt.Errorf("upload %s: %w", path, err)
	}
	open := func() (io.ReadCloser, error) { return os.Open(path) }
	return c.createObject(ctx, container, obj, open, size, hex.EncodeToString(hm.Sum(nil)), hex.EncodeToString(hs.Sum(nil)), headers)
}

func (c *Client) createObject(ctx context.Context, container, obj string, open func() (io.ReadCloser, error), size int64, sumMD5, sumSHA string, headers map[string]string) error {
	if err := c.CreateContainer(ctx, container); err != nil {
		return err
	}
	resp, _, err := c.do(ctx, http.MethodHead, objectPath(container, obj), nil, nil)
	switch {
	case err == nil:
		if resp.Header.Get(md5Header) == sumMD5 && resp.Header.Get(sha256Header) == sumSHA {
			return nil
		}
	case !notFound(err):
		return operationError("put object", err)
	}
	hdr := http.Header{}
	for k, v := range headers {
		hdr.Set(k, v)
	}
	hdr.Set(md5Header, sumMD5)
	hdr.Set(sha256Header, sumSHA)
	if _, _, err := c.send(ctx, http.MethodPut, objectPath(container, obj), hdr, open, size); err != nil {
		return operationError("put object", err)
	}
	return nil
}

// CreateObjectFromData is upstream's create_object_from_data: the
// container is created if needed and data uploaded as the object, with
// no checksum metadata.
func (c *Client) CreateObjectFromData(ctx context.Context, container, obj string, data []byte) error {
	if err := c.CreateContainer(ctx, container); err != nil {
		return err
	}
	if _, _, err := c.do(ctx, http.MethodPut, objectPath(container, obj), nil, data); err != nil {
		return operationError("put object", err)
	}
	return nil
}

// GetObject is upstream's get_object: the object's content. A missing
// object is SwiftObjectNotFoundError (a SwiftOperationError).
func (c *Client) GetObject(ctx context.Context, container, obj string) ([]byte, error) {
	_, data, err := c.do(ctx, http.MethodGet, objectPath(container, obj), nil, nil)
	if notFound(err) {
		return nil, errs.New(errs.ClassSwiftObjectNotFoundError, map[string]any{"obj": obj, "container": container, "operation": "get object"})
	}
	if err != nil {
		return nil, operationError("get object", err)
	}
	return data, nil
}

// ListObjects is openstacksdk's list_objects of a whole container: the
// names of its objects, page after page (each starting after the last
// name of the one before) until Swift answers an empty one.
func (c *Client) ListObjects(ctx context.Context, container string) ([]string, error) {
	var names []string
	marker := ""
	for {
		q := url.Values{"format": {"json"}}
		if marker != "" {
			q.Set("marker", marker)
		}
		_, data, err := c.do(ctx, http.MethodGet, "/"+url.PathEscape(container)+"?"+q.Encode(), nil, nil)
		if err != nil {
			return nil, operationError("list objects", err)
		}
		var page []struct {
			Name string `json:"name"`
		}
		if len(bytes.TrimSpace(data)) > 0 {
			if err := json.Unmarshal(data, &page); err != nil {
				return nil, operationError("list objects", fmt.Errorf("listing of container %s: %w", container, err))
			}
		}
		if len(page) == 0 {
			return names, nil
		}
		for _, o := range page {
			names = append(names, o.Name)
		}
		marker = page[len(page)-1].Name
	}
}

// DeleteObject is upstream's delete_object: a missing object is
// SwiftObjectNotFoundError, any other failure SwiftOperationError.
func (c *Client) DeleteObject(ctx context.Context, container, obj string) error {
	_, _, err := c.do(ctx, http.MethodDelete, objectPath(container, obj), nil, nil)
	if notFound(err) {
		return errs.New(errs.ClassSwiftObjectNotFoundError, map[string]any{"obj": obj, "container": container, "operation": "delete object"})
	}
	if err != nil {
		return operationError("delete object", err)
	}
	return nil
}

// TempURLKey is openstacksdk's get_temp_url_key for the account: its
// second key when set (the one being rotated in), else its first; ""
// when it has none.
func (c *Client) TempURLKey(ctx context.Context) (string, error) {
	resp, _, err := c.do(ctx, http.MethodHead, "", nil, nil)
	if err != nil {
		return "", operationError("head account", err)
	}
	if k := resp.Header.Get("X-Account-Meta-Temp-Url-Key-2"); k != "" {
		return k, nil
	}
	return resp.Header.Get("X-Account-Meta-Temp-Url-Key"), nil
}

// TempURL is upstream's get_temp_url: a URL anyone can GET the object
// with for timeout, signed with the account's key.
func (c *Client) TempURL(ctx context.Context, container, obj string, timeout time.Duration) (string, error) {
	_, endpoint, err := c.Auth(ctx)
	if err != nil {
		return "", err
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return "", fmt.Errorf("swift endpoint %q: %w", endpoint, err)
	}
	key, err := c.TempURLKey(ctx)
	if err != nil {
		return "", err
	}
	if key == "" {
		return "", errs.MissingParameterValue("Swift temporary URLs require a shared secret to be created. You must provide pre-generate the key on the project used to access Swift.")
	}
	path := strings.TrimRight(u.Path, "/") + "/" + container + "/" + obj
	expires := c.now().Add(timeout).Unix()
	return u.Scheme + "://" + u.Host + SignTempURL(key, http.MethodGet, path, expires), nil
}

// SignTempURL is openstacksdk's generate_temp_url for an absolute expiry:
// path (/v1/<account>/<container>/<object>) with the HMAC-SHA1 signature
// of method, expiry and path, and the expiry, as Swift's tempurl
// middleware checks them.
func SignTempURL(key, method, path string, expires int64) string {
	exp := strconv.FormatInt(expires, 10)
	return path + "?temp_url_sig=" + TempURLSignature(key, method, path, expires) + "&temp_url_expires=" + exp
}

// TempURLSignature is the hex HMAC-SHA1 of "<METHOD>\n<expires>\n<path>".
func TempURLSignature(key, method, path string, expires int64) string {
	mac := hmac.New(sha1.New, []byte(key))
	mac.Write([]byte(strings.ToUpper(method) + "\n" + strconv.FormatInt(expires, 10) + "\n" + path))
	return hex.EncodeToString(mac.Sum(nil))
}
