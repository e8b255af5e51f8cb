package image

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// HTTPService reads images from web servers (upstream's HttpImageService).
type HTTPService struct {
	client  *http.Client
	timeout time.Duration
	user    string
	pass    string
	basic   bool
}

// NewHTTPService builds the client from the webserver options.
func NewHTTPService(opts Options) (*HTTPService, error) {
	timeout := opts.WebserverTimeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	verify, caFile := verifyCA(opts.WebserverVerifyCA)
	// Upstream's webserver_tls_minimum_version: TLS 1.3 unless the
	// operator allows 1.2 for older image servers.
	minTLS := uint16(tls.VersionTLS13)
	if opts.WebserverTLSMinVersion == "1.2" {
		minTLS = tls.VersionTLS12
	}
	tlsConf := &tls.Config{MinVersion: minTLS, InsecureSkipVerify: !verify} //nolint:gosec // operator's [DEFAULT]/webserver_verify_ca
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("webserver_verify_ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("webserver_verify_ca %s: no certificate found", caFile)
		}
		tlsConf.RootCAs = pool
	}
	// As requests' timeout, the limit applies to connecting and to each
	// wait for data, not to the whole transfer: images are large.
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:       tlsConf,
		TLSHandshakeTimeout:   timeout,
		ResponseHeaderTimeout: timeout,
		IdleConnTimeout:       90 * time.Second,
		MaxIdleConnsPerHost:   4,
	}
	return &HTTPService{
		client:  &http.Client{Transport: tr},
		timeout: timeout,
		user:    opts.ImageServerUser,
		pass:    opts.ImageServerPassword,
		basic:   opts.ImageServerBasicAuth,
	}, nil
}

func (s *HTTPService) newRequest(ctx context.Context, method, href string) (*http.Request, error) {
	// Upstream passes its arguments to verify_basic_auth_cred_format in
	// the wrong order: only a missing password is detected, it is
	// reported as image_server_user, and the user name stands where the
	// href should. The message is kept as upstream produces it.
	if s.basic && s.pass == "" {
		return nil, refValidationFailed(s.user, "Missing ['image_server_user'] fields from HTTP(S) basic auth config")
	}
	req, err := http.NewRequestWithContext(ctx, method, href, nil)
	if err != nil {
		return nil, err
	}
	if s.basic {
		req.SetBasicAuth(s.user, s.pass)
	}
	return req, nil
}

// validate is upstream's validate_href: a HEAD request following
// redirects that must answer 200 (403 is tolerated for a URL ending in /,
// a directory without an index).
func (s *HTTPService) validate(ctx context.Context, href string, secret bool) (*http.Response, error) {
	shown := href
	if secret {
		shown = "secreturl"
	}
	req, err := s.newRequest(ctx, http.MethodHead, href)
	if err != nil {
		if isErrsError(err) {
			return nil, err
		}
		return nil, refValidationFailed(shown, err.Error())
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, refValidationFailed(shown, err.Error())
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusForbidden && strings.HasSuffix(href, "/") {
		return resp, nil
	}
	if resp.StatusCode != http.StatusOK {
		return nil, refValidationFailed(shown, fmt.Sprintf("Got HTTP code %d instead of 200 in response to HEAD request.", resp.StatusCode))
	}
	return resp, nil
}

// Validate checks that href answers a HEAD request; secret hides the URL
// in the error message.
func (s *HTTPService) Validate(ctx context.Context, href string, secret bool) error {
	_, err := s.validate(ctx, href, secret)
	return err
}

// ValidateRedirect is Validate that also answers the URL the HEAD
// request ended at, after redirects (upstream records it as the image
// URL handed on).
func (s *HTTPService) ValidateRedirect(ctx context.Context, href string, secret bool) (string, error) {
	resp, err := s.validate(ctx, href, secret)
	if err != nil {
		return "", err
	}
	if resp.Request != nil && resp.Request.URL != nil {
		return resp.Request.URL.String(), nil
	}
	return href, nil
}

// Show returns the size (Content-Length, required) and modification time
// (Last-Modified) of the image.
func (s *HTTPService) Show(ctx context.Context, href string) (*Info, error) {
	resp, err := s.validate(ctx, href, false)
	if err != nil {
		return nil, err
	}
	cl := resp.Header.Get("Content-Length")
	if cl == "" {
		return nil, refValidationFailed(href, "Cannot determine image size as there is no Content-Length header specified in response to HEAD request.")
	}
	size, err := strconv.ParseInt(strings.TrimSpace(cl), 10, 64)
	if err != nil {
		return nil, refValidationFailed(href, "invalid literal for int() with base 10: '"+cl+"'")
	}
	info := &Info{Size: size, Properties: map[string]any{}}
	if lm := resp.Header.Get("Last-Modified"); lm != "" {
		// RFC 1123, RFC 850 and ANSI C forms, as upstream accepts.
		if t, err := http.ParseTime(lm); err == nil {
			info.UpdatedAt = t.UTC()
		}
	}
	info.NoCache = strings.Contains(resp.Header.Get("Cache-Control"), "no-store")
	return info, nil
}

// Download streams the image into dst. A server that stops sending for
// longer than the connection timeout fails the download.
func (s *HTTPService) Download(ctx context.Context, href string, dst io.Writer) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	req, err := s.newRequest(ctx, http.MethodGet, href)
	if err != nil {
		if isErrsError(err) {
			return err
		}
		return downloadFailed(href, err.Error())
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return downloadFailed(href, err.Error())
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return refValidationFailed(href, fmt.Sprintf("Got HTTP code %d instead of 200 in response to GET request.", resp.StatusCode))
	}
	body := &stallReader{r: resp.Body, timeout: s.timeout, cancel: cancel}
	defer body.stop()
	if _, err := io.Copy(dst, body); err != nil {
		if c := context.Cause(ctx); c != nil && errors.Is(c, errStalled) {
			err = c
		}
		return downloadFailed(href, err.Error())
	}
	return nil
}

// Get returns a small text document (a checksum file), upstream's
// HttpImageService.get.
func (s *HTTPService) Get(ctx context.Context, href string) (string, error) {
	req, err := s.newRequest(ctx, http.MethodGet, href)
	if err != nil {
		if isErrsError(err) {
			return "", err
		}
		return "", downloadFailed(href, err.Error())
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return "", downloadFailed(href, err.Error())
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", refValidationFailed(href, fmt.Sprintf("Got HTTP code %d instead of 200 in response to GET request.", resp.StatusCode))
	}
	// Checksum files are a few lines; the bound keeps a wrong URL (an
	// image) from filling memory.
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxChecksumFile))
	if err != nil {
		return "", downloadFailed(href, err.Error())
	}
	return string(data), nil
}

const maxChecksumFile = 16 << 20

var errStalled = errors.New("Timed out reading next chunk from webserver")

// stallReader cancels the transfer when no data arrives for timeout.
type stallReader struct {
	r       io.Reader
	timeout time.Duration
	cancel  context.CancelCauseFunc
	once    sync.Once
	timer   *time.Timer
}

func (s *stallReader) Read(p []byte) (int, error) {
	s.once.Do(func() {
		s.timer = time.AfterFunc(s.timeout, func() { s.cancel(errStalled) })
	})
	n, err := s.r.Read(p)
	if n > 0 {
		s.timer.Reset(s.timeout)
	}
	return n, err
}

func (s *stallReader) stop() {
	if s.timer != nil {
		s.timer.Stop()
	}
}
