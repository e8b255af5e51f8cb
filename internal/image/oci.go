package image

import (
	"context"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/openkeel/ironic/internal/errs"
)

// The media types upstream's OCI client asks for (oci_registry.py).
const (
	MediaOCIManifest = "application/vnd.oci.image.manifest.v1+json"
	MediaOCIIndex    = "application/vnd.oci.image.index.v1+json"
	mediaOCIEmpty    = "application/vnd.oci.empty.v1+json"
)

// OCIService reads oci:// images from an OCI container registry (upstream's
// OciImageService over oci_registry.OciClient). Show and Download take a
// reference to a specific manifest (oci://host/path@sha256:…); Identify
// chooses one from a tag's artifact index.
type OCIService struct {
	client  *http.Client
	timeout time.Duration
	// fallback is [oci]/permit_fallback_to_http_transport: a registry
	// that fails the TLS handshake is asked again over plain HTTP.
	fallback bool
	// secureCDN is [oci]/secure_cdn_registries: the hosts a blob
	// redirect may take the Authorization header to.
	secureCDN []string
	// authConfig is [oci]/authentication_config, a file of pre-shared
	// tokens by registry host.
	authConfig string
	log        *slog.Logger
}

// OCIAuth is a user's pull credentials (upstream's auth_data:
// instance_info/image_pull_secret, or the image server's user/password).
type OCIAuth struct {
	Username, Password string
}

// NewOCIService builds the registry client: TLS verified as [oci]/verify_ca
// says, [DEFAULT]/webserver_verify_ca when it is unset.
func NewOCIService(opts Options) (*OCIService, error) {
	timeout := opts.WebserverTimeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	v := opts.WebserverVerifyCA
	if opts.OCIVerifyCA != nil {
		v = *opts.OCIVerifyCA
	}
	verify, caFile := verifyCA(v)
	tlsConf := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: !verify} //nolint:gosec // operator's [oci]/verify_ca
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("[oci]verify_ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("[oci]verify_ca %s: no certificate found", caFile)
		}
		tlsConf.RootCAs = pool
	}
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:       tlsConf,
		TLSHandshakeTimeout:   timeout,
		ResponseHeaderTimeout: timeout,
		IdleConnTimeout:       90 * time.Second,
	}
	return &OCIService{
		// Redirects are followed by hand: where they lead decides whether
		// the Authorization header goes along (check_redirect_trusted).
		client:     &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		timeout:    timeout,
		fallback:   opts.OCIPermitHTTPFallback,
		secureCDN:  opts.OCISecureCDNRegistries,
		authConfig: opts.OCIAuthConfig,
		log:        slog.Default(),
	}, nil
}

// ociRef is an oci:// reference split as upstream's _image_to_url and
// _image_tag_from_url split it.
type ociRef struct {
	href, host string
	// image is the repository path with its leading slash.
	image string
	// tag is the tag, or the digest of an @ reference ("latest" when
	// none is given).
	tag    string
	digest string
}

func parseOCIRef(href string) (ociRef, error) {
	s := href
	if !strings.Contains(s, "://") {
		s = "oci://" + s
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return ociRef{}, refValidationFailed(href, "Not a valid OCI container registry URL.")
	}
	r := ociRef{href: href, host: u.Host}
	switch p := u.Path; {
	case strings.Contains(p, "@"):
		i := strings.LastIndex(p, "@")
		r.image, r.tag, r.digest = p[:i], p[i+1:], p[i+1:]
	case strings.Contains(p, ":"):
		i := strings.LastIndex(p, ":")
		r.image, r.tag = p[:i], p[i+1:]
	default:
		r.image, r.tag = p, "latest"
	}
	return r, nil
}

// specific is upstream's _validate_url_is_specific: Show and Download need
// a manifest digest of a known algorithm and length.
func (r ociRef) specific() error {
	if r.digest == "" {
		return errs.New(errs.ClassOciImageNotSpecific, map[string]any{"image_ref": r.href})
	}
	algo, value, ok := strings.Cut(r.digest, ":")
	if !ok {
		return refValidationFailed(r.href, "Lacking required digest value")
	}
	want := map[string]int{"sha256": 64, "sha512": 128}[strings.ToLower(algo)]
	if want == 0 {
		return errs.New(errs.ClassOciImageNotSpecific, map[string]any{"image_ref": r.href})
	}
	if len(value) != want {
		// Upstream's spelling of "length" is kept: clients may match it.
		return refValidationFailed(r.href, "Manifest digest length incorrect and does not match the expected lenngth of the algorithm.")
	}
	return nil
}

// ociSession is one workflow's client state, as upstream's OciClient
// instance: the Authorization header once authenticated, and the scheme
// once a registry was found to speak plain HTTP.
type ociSession struct {
	s      *OCIService
	ref    ociRef
	auth   *OCIAuth
	header string
	scheme string
	// reauths counts re-authentications after a token expired.
	reauths int
}

func (s *OCIService) session(r ociRef, auth *OCIAuth) *ociSession {
	return &ociSession{s: s, ref: r, auth: auth, scheme: "https"}
}

func (c *ociSession) url(path string) string {
	return c.scheme + "://" + c.ref.host + "/v2" + path
}

// get asks the registry; a TLS failure is asked again over HTTP when
// [oci]/permit_fallback_to_http_transport allows it, and then stays HTTP.
func (c *ociSession) get(ctx context.Context, path, accept string) (*http.Response, error) {
	resp, err := c.do(ctx, c.url(path), accept, c.header)
	if err != nil && c.scheme == "https" && isTLSFailure(err) && c.s.fallback {
		c.s.log.ErrorContext(ctx, "Error encountered while attempting to access an OCI registry utilizing HTTPS. Will retry with HTTP.", "error", err)
		c.scheme = "http"
		resp, err = c.do(ctx, c.url(path), accept, c.header)
	}
	return resp, err
}

func (c *ociSession) do(ctx context.Context, u, accept, authz string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	if authz != "" {
		req.Header.Set("Authorization", authz)
	}
	return c.s.client.Do(req)
}

// isTLSFailure is what requests raises as SSLError: a handshake that
// failed, including a server that answers plain HTTP (which Go's client
// reports by that sentence, as http.Client does not export its error).
func isTLSFailure(err error) bool {
	var rec tls.RecordHeaderError
	var cert *tls.CertificateVerificationError
	var unknown x509.UnknownAuthorityError
	return errors.As(err, &rec) || errors.As(err, &cert) || errors.As(err, &unknown) ||
		strings.Contains(err.Error(), "server gave HTTP response to HTTPS client") || strings.Contains(err.Error(), "tls: ")
}

var (
	wwwAuthType = regexp.MustCompile(`^([A-Za-z]*) `)
	wwwRealm    = regexp.MustCompile(`realm="(.*?)"`)
	wwwService  = regexp.MustCompile(`service="(.*?)"`)
	wwwError    = regexp.MustCompile(`error="(.*?)"`)
)

// authenticate is upstream's OciClient.authenticate: the registry's /v2/
// answers 200 (no authentication) or 401 with its challenge; a Bearer
// challenge is answered with a token from its realm for this repository's
// pull scope (asked with the user's credentials, or a pre-shared token of
// [oci]/authentication_config for the realm's host, or none), a Basic one
// with the user's credentials.
func (c *ociSession) authenticate(ctx context.Context) error {
	c.header = ""
	resp, err := c.get(ctx, "/", "")
	if err != nil {
		return downloadFailed(c.ref.href, err.Error())
	}
	drain(resp)
	if resp.StatusCode == http.StatusOK {
		return nil
	}
	if resp.StatusCode != http.StatusUnauthorized {
		return c.statusError(resp, c.url("/"))
	}
	challenge := resp.Header.Get("Www-Authenticate")
	if challenge == "" {
		return refValidationFailed(c.ref.href, "Unknown authentication method for headers")
	}
	m := wwwAuthType.FindStringSubmatch(challenge)
	if m == nil {
		return refValidationFailed(c.ref.href, "Unknown www-authenticate value: "+challenge)
	}
	user, pass := "", ""
	if c.auth != nil {
		user, pass = c.auth.Username, c.auth.Password
	}
	var token string
	switch strings.ToLower(m[1]) {
	case "bearer":
		token, err = c.bearerToken(ctx, challenge, user, pass)
		if err != nil {
			return err
		}
	case "basic":
		if user == "" || pass == "" {
			return errs.New(errs.ClassImageServiceAuthenticationRequired, map[string]any{"image_ref": c.ref.href})
		}
		basic := "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
		resp, err := c.do(ctx, c.url("/"), "", basic)
		if err != nil {
			return downloadFailed(c.ref.href, err.Error())
		}
		drain(resp)
		if resp.StatusCode >= 400 {
			return c.statusError(resp, c.url("/"))
		}
		token = base64.StdEncoding.EncodeToString([]byte(user + ":" + pass))
	default:
		return refValidationFailed(c.ref.href, "Unknown www-authenticate value: "+challenge)
	}
	c.header = m[1] + " " + token
	return nil
}

// bearerToken is upstream's get_bearer_token.
func (c *ociSession) bearerToken(ctx context.Context, challenge, user, pass string) (string, error) {
	var realm, service string
	if m := wwwRealm.FindStringSubmatch(challenge); m != nil {
		realm = m[1]
	}
	if m := wwwService.FindStringSubmatch(challenge); m != nil {
		service = m[1]
	}
	ru, err := url.Parse(realm)
	if err != nil || realm == "" {
		return "", refValidationFailed(c.ref.href, "Unknown www-authenticate value: "+challenge)
	}
	q := ru.Query()
	if service != "" {
		q.Set("service", service)
	}
	q.Set("scope", "repository:"+strings.TrimPrefix(c.ref.image, "/")+":pull")
	ru.RawQuery = q.Encode()
	authz := ""
	switch {
	case user != "":
		authz = "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
	case pass != "":
		// A pre-shared token given as the password.
		authz = "Basic " + base64.StdEncoding.EncodeToString([]byte(":"+pass))
	default:
		if t := c.s.configuredToken(ru.Host); t != "" {
			authz = "Basic " + base64.StdEncoding.EncodeToString([]byte(":"+t))
		}
	}
	resp, err := c.do(ctx, ru.String(), "", authz)
	if err != nil {
		return "", downloadFailed(c.ref.href, err.Error())
	}
	defer drain(resp)
	if resp.StatusCode >= 400 {
		return "", c.statusError(resp, ru.String())
	}
	var body struct {
		Token string `json:"token"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&body); err != nil || body.Token == "" {
		return "", refValidationFailed(c.ref.href, "Invalid auth response, no token provide")
	}
	return body.Token, nil
}

// configuredToken is upstream's get_token_from_config: the "auth" of host in
// [oci]/authentication_config ({"auths": {host: {"auth": …}}}); a file that
// cannot be read is logged, not fatal.
func (s *OCIService) configuredToken(host string) string {
	if s.authConfig == "" {
		return ""
	}
	raw, err := os.ReadFile(s.authConfig)
	if err != nil {
		s.log.Error("Failed to load pre-shared authentication token data", "error", err)
		return ""
	}
	var f struct {
		Auths map[string]struct {
			Auth string `json:"auth"`
		} `json:"auths"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		s.log.Error("Unable to decode pre-shared authentication token data", "error", err)
		return ""
	}
	return f.Auths[host].Auth
}

// fetch is RegistrySessionHelper.get: a 401 whose challenge says the
// token expired (or that names no error) re-authenticates once and asks
// again; a registry asking for a token the session never got is answered
// the same way, as anonymous pulls from public registries need.
func (c *ociSession) fetch(ctx context.Context, path, accept string) (*http.Response, error) {
	resp, err := c.get(ctx, path, accept)
	if err != nil {
		return nil, downloadFailed(c.ref.href, err.Error())
	}
	if resp.StatusCode != http.StatusUnauthorized || c.reauths > 0 {
		return resp, nil
	}
	challenge := resp.Header.Get("Www-Authenticate")
	drain(resp)
	if m := wwwError.FindStringSubmatch(challenge); challenge == "" || m != nil && m[1] != "invalid_token" {
		return c.get(ctx, path, accept)
	}
	c.reauths++
	if err := c.authenticate(ctx); err != nil {
		return nil, err
	}
	resp, err = c.get(ctx, path, accept)
	if err != nil {
		return nil, downloadFailed(c.ref.href, err.Error())
	}
	return resp, nil
}

// statusError maps a registry's error answer as upstream does: 401 is
// ImageServiceAuthenticationRequired, 403 and 404 ImageNotFound, 429
// ImageHostRateLimitFailure, 5xx TemporaryFailure.
func (c *ociSession) statusError(resp *http.Response, u string) error {
	drain(resp)
	switch code := resp.StatusCode; {
	case code == http.StatusUnauthorized:
		return errs.New(errs.ClassImageServiceAuthenticationRequired, map[string]any{"image_ref": u})
	case code == http.StatusForbidden || code == http.StatusNotFound:
		return errs.New(errs.ClassImageNotFound, map[string]any{"image_id": c.ref.href})
	case code == http.StatusTooManyRequests:
		return errs.New(errs.ClassImageHostRateLimitFailure, map[string]any{"image_ref": u})
	case code >= 500:
		return errs.Unavailable(fmt.Errorf("registry %s answered %d", u, code))
	default:
		return downloadFailed(c.ref.href, fmt.Sprintf("Got HTTP code %d instead of 200 in response to GET request.", code))
	}
}

// ociManifest is the part of a manifest or index upstream reads.
type ociManifest struct {
	MediaType    string        `json:"mediaType"`
	ArtifactType string        `json:"artifactType"`
	Config       ociDescriptor `json:"config"`
	Layers       []ociDescriptor
	Manifests    []ociDescriptor `json:"manifests"`
}

type ociDescriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Annotations map[string]string `json:"annotations"`
	Platform    struct {
		Architecture string `json:"architecture"`
	} `json:"platform"`
	ArtifactType string `json:"artifactType"`
}

func (m *ociManifest) UnmarshalJSON(b []byte) error {
	type plain ociManifest
	var p struct {
		plain
		Layers []ociDescriptor `json:"layers"`
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*m = ociManifest(p.plain)
	m.Layers = p.Layers
	return nil
}

// artifact is upstream's is_oci_artifact_image.
func (m *ociManifest) artifact() bool {
	return m.ArtifactType != "" || m.Config.MediaType == mediaOCIEmpty
}

// manifest fetches the manifest digest of the session's image and checks
// that its content has that digest.
func (c *ociSession) manifest(ctx context.Context, digest string) (*ociManifest, error) {
	u := c.ref.image + "/manifests/" + digest
	resp, err := c.fetch(ctx, u, MediaOCIManifest)
	if err != nil {
		return nil, err
	}
	defer drain(resp)
	if resp.StatusCode != http.StatusOK {
		return nil, c.statusError(resp, c.url(u))
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return nil, downloadFailed(c.ref.href, err.Error())
	}
	if ok, err := digestMatches(digest, body); err != nil || !ok {
		return nil, errs.New(errs.ClassImageChecksumError, nil)
	}
	var m ociManifest
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, refValidationFailed(c.ref.href, "The manifest is not JSON: "+err.Error())
	}
	return &m, nil
}

func digestMatches(digest string, body []byte) (bool, error) {
	h, want, err := digestHasher(digest)
	if err != nil {
		return false, err
	}
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil)) == want, nil
}

func digestHasher(digest string) (hash.Hash, string, error) {
	algo, value, _ := strings.Cut(digest, ":")
	switch strings.ToLower(algo) {
	case "sha256":
		return sha256.New(), strings.ToLower(value), nil
	case "sha512":
		return sha512.New(), strings.ToLower(value), nil
	}
	return nil, "", errs.New(errs.ClassImageChecksumAlgorithmFailure, nil)
}

// index is upstream's _get_artifact_index after _resolve_tag: the tag must
// be among the repository's tags, then its index (or single manifest).
func (c *ociSession) index(ctx context.Context) (*ociManifest, error) {
	tags, err := c.tags(ctx)
	if err != nil {
		return nil, err
	}
	if len(tags) == 0 {
		return nil, errs.NewMessage(errs.ClassInvalidImageRef, fmt.Sprintf("Image %s does not have any tags", c.ref.href))
	}
	if !slices.Contains(tags, c.ref.tag) {
		return nil, errs.New(errs.ClassOciImageTagNotFound, map[string]any{"image_url": c.ref.href, "tags": strings.Join(tags, ", ")})
	}
	u := c.ref.image + "/manifests/" + c.ref.tag
	resp, err := c.fetch(ctx, u, MediaOCIIndex+", "+MediaOCIManifest)
	if err != nil {
		return nil, err
	}
	defer drain(resp)
	if resp.StatusCode != http.StatusOK {
		return nil, c.statusError(resp, c.url(u))
	}
	var m ociManifest
	if err := json.NewDecoder(io.LimitReader(resp.Body, 4<<20)).Decode(&m); err != nil {
		return nil, refValidationFailed(c.ref.href, "The artifact index is not JSON: "+err.Error())
	}
	if m.MediaType == "" {
		m.MediaType = resp.Header.Get("Content-Type")
	}
	return &m, nil
}

// tags lists the repository's tags, following the registry's pages.
func (c *ociSession) tags(ctx context.Context) ([]string, error) {
	var all []string
	next := c.ref.image + "/tags/list"
	for next != "" {
		resp, err := c.fetch(ctx, next, MediaOCIIndex)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusOK {
			return nil, c.statusError(resp, c.url(next))
		}
		var page struct {
			Tags []string `json:"tags"`
		}
		err = json.NewDecoder(io.LimitReader(resp.Body, 4<<20)).Decode(&page)
		drain(resp)
		if err != nil {
			return nil, refValidationFailed(c.ref.href, "The tag list is not JSON: "+err.Error())
		}
		all = append(all, page.Tags...)
		next = nextLink(resp.Header.Get("Link"))
	}
	return all, nil
}

// nextLink is the /v2-relative path of a Link: <…>; rel="next" header.
func nextLink(h string) string {
	for _, part := range strings.Split(h, ",") {
		if !strings.Contains(part, `rel="next"`) {
			continue
		}
		start, end := strings.Index(part, "<"), strings.Index(part, ">")
		if start < 0 || end < start {
			return ""
		}
		u, err := url.Parse(part[start+1 : end])
		if err != nil {
			return ""
		}
		p := strings.TrimPrefix(u.Path, "/v2")
		if u.RawQuery != "" {
			p += "?" + u.RawQuery
		}
		return p
	}
	return ""
}

// blobURL is upstream's get_blob_url.
func (c *ociSession) blobURL(digest string) string {
	return c.url(c.ref.image + "/blobs/" + digest)
}

// Show is upstream's OciImageService.show for a specific manifest: an
// artifact's size and digest are its one layer's; another image (bootc)
// counts its config and every layer.
func (s *OCIService) Show(ctx context.Context, href string) (*Info, error) {
	return s.ShowWithAuth(ctx, href, nil)
}

// ShowWithAuth is Show with the user's pull credentials.
func (s *OCIService) ShowWithAuth(ctx context.Context, href string, auth *OCIAuth) (*Info, error) {
	r, err := parseOCIRef(href)
	if err != nil {
		return nil, err
	}
	if err := r.specific(); err != nil {
		return nil, err
	}
	c := s.session(r, auth)
	if err := c.begin(ctx); err != nil {
		return nil, err
	}
	m, err := c.manifest(ctx, r.digest)
	if err != nil {
		return nil, err
	}
	info := &Info{ID: href, Properties: map[string]any{}}
	var digest string
	if m.artifact() {
		info.Properties["image_type"] = "artifact"
		if len(m.Layers) > 0 {
			info.Size, digest = m.Layers[0].Size, m.Layers[0].Digest
		}
	} else {
		info.Properties["image_type"] = "bootc"
		info.Size = m.Config.Size
		for _, l := range m.Layers {
			info.Size += l.Size
		}
		digest = r.digest
	}
	info.Properties["digest"] = digest
	if _, v, ok := strings.Cut(digest, ":"); ok {
		info.Checksum = v
	}
	return info, nil
}

// begin authenticates when the user gave credentials or a pre-shared
// token file is configured, as upstream's set_image_auth.
func (c *ociSession) begin(ctx context.Context) error {
	if (c.auth == nil || *c.auth == OCIAuth{}) && c.s.authConfig == "" {
		return nil
	}
	return c.authenticate(ctx)
}

// Download is upstream's download_blob_from_manifest: the manifest must
// have one layer, whose blob is written to dst while its digest is
// computed; a mismatch is ImageChecksumError.
func (s *OCIService) Download(ctx context.Context, href string, dst io.Writer) error {
	return s.DownloadWithAuth(ctx, href, nil, dst)
}

// DownloadWithAuth is Download with the user's pull credentials.
func (s *OCIService) DownloadWithAuth(ctx context.Context, href string, auth *OCIAuth, dst io.Writer) error {
	r, err := parseOCIRef(href)
	if err != nil {
		return err
	}
	if err := r.specific(); err != nil {
		return err
	}
	c := s.session(r, auth)
	if err := c.begin(ctx); err != nil {
		return err
	}
	m, err := c.manifest(ctx, r.digest)
	if err != nil {
		return err
	}
	if len(m.Layers) != 1 {
		return refValidationFailed(href, fmt.Sprintf("Incorrect number of layers. Expected 1 layer, found %d layers.", len(m.Layers)))
	}
	blob := m.Layers[0].Digest
	resp, err := c.blob(ctx, blob)
	if err != nil {
		return err
	}
	defer drain(resp)
	if resp.StatusCode != http.StatusOK {
		return c.statusError(resp, c.blobURL(blob))
	}
	h, want, err := digestHasher(blob)
	if err != nil {
		return err
	}
	if _, err := io.Copy(io.MultiWriter(dst, h), resp.Body); err != nil {
		return downloadFailed(c.blobURL(blob), err.Error())
	}
	if hex.EncodeToString(h.Sum(nil)) != want {
		return errs.New(errs.ClassImageChecksumError, nil)
	}
	return nil
}

// blob asks for a blob; a redirect (registries hand blobs to a CDN) keeps
// the Authorization header only towards [oci]/secure_cdn_registries, as
// upstream's check_redirect_trusted.
func (c *ociSession) blob(ctx context.Context, digest string) (*http.Response, error) {
	resp, err := c.fetch(ctx, c.ref.image+"/blobs/"+digest, "")
	if err != nil {
		return nil, err
	}
	for hops := 0; resp.StatusCode >= 300 && resp.StatusCode < 400 && hops < 10; hops++ {
		loc, err := resp.Location()
		drain(resp)
		if err != nil {
			return nil, downloadFailed(c.blobURL(digest), err.Error())
		}
		authz := ""
		if slices.ContainsFunc(c.s.secureCDN, func(h string) bool { return strings.Contains(loc.Host, h) }) {
			authz = c.header
		}
		if resp, err = c.do(ctx, loc.String(), "", authz); err != nil {
			return nil, downloadFailed(c.blobURL(digest), err.Error())
		}
	}
	return resp, nil
}

// OCIImage is what upstream's identify_specific_image tells the deploy
// about the artifact it chose; the deploy merges it into instance_info.
type OCIImage struct {
	URL                  string
	Size                 int64
	Filename             string
	Checksum             string
	BlobDigest           string
	MediaType            string
	Compression          string
	DiskFormat           string
	AuthorizationSecret  string
	ManifestURL          string
	specificManifestOnly bool
}

// InstanceInfo is the image as upstream's instance_info keys.
func (o *OCIImage) InstanceInfo() map[string]any {
	none := func(s string) any {
		if s == "" {
			return nil
		}
		return s
	}
	if o.specificManifestOnly {
		return map[string]any{
			"oci_image_manifest_url": o.ManifestURL, "image_checksum": none(o.Checksum), "image_url": o.URL,
			"image_disk_format": o.DiskFormat, "image_request_authorization_secret": none(o.AuthorizationSecret),
		}
	}
	return map[string]any{
		"image_url": o.URL, "image_size": o.Size, "image_filename": none(o.Filename), "image_checksum": o.Checksum,
		"image_container_blob_digest": none(o.BlobDigest), "image_media_type": none(o.MediaType),
		"image_compression_type": none(o.Compression), "image_disk_format": none(o.DiskFormat),
		"image_request_authorization_secret": none(o.AuthorizationSecret), "oci_image_manifest_url": none(o.ManifestURL),
	}
}

// Identify is upstream's identify_specific_image: a reference to a
// manifest is used as given; a tag's artifact index is filtered by the
// node's cpu_arch (x86_64 and amd64, aarch64 and arm64 alike) and ordered
// by disk type (raw first, qcow2 first when the conductor serves the image
// itself: downloadSource "local"); the first manifest with one layer is
// chosen, or one without a disk type taken as a bootc image. No match is
// a nil image.
func (s *OCIService) Identify(ctx context.Context, href string, auth *OCIAuth, downloadSource, cpuArch string) (*OCIImage, error) {
	r, err := parseOCIRef(href)
	if err != nil {
		return nil, err
	}
	c := s.session(r, auth)
	if err := c.begin(ctx); err != nil {
		return nil, err
	}
	if r.digest != "" {
		info, err := s.ShowWithAuth(ctx, href, auth)
		if err != nil {
			return nil, err
		}
		out := &OCIImage{ManifestURL: href, Checksum: info.Checksum, AuthorizationSecret: c.header, specificManifestOnly: true}
		if info.Properties["image_type"] == "artifact" {
			out.URL, out.DiskFormat = c.blobURL(info.Properties["digest"].(string)), "unknown"
		} else {
			out.URL, out.DiskFormat = href, "bootc"
		}
		return out, nil
	}
	idx, err := c.index(ctx)
	if err != nil {
		return nil, err
	}
	manifests := idx.Manifests
	if len(manifests) == 0 {
		if idx.MediaType != MediaOCIManifest {
			return nil, errs.New(errs.ClassInvalidImageRef, map[string]any{"image_href": href})
		}
		// The tag names one manifest, not an index: its layers are used.
		return c.choose(ctx, idx, []ociCandidate{{layers: idx.Layers, config: idx.Config, inline: true}})
	}
	if downloadSource == "swift" {
		return nil, errs.InvalidParameterValue("An image_download_source of swift is incompatible with retrieval of artifacts from an OCI container registry.")
	}
	return c.choose(ctx, idx, filterManifests(manifests, downloadSource, cpuArch))
}

// ociCandidate is a manifest of the index kept by filterManifests.
type ociCandidate struct {
	d        ociDescriptor
	disktype string
	priority int
	layers   []ociDescriptor
	config   ociDescriptor
	// inline: the index is itself the manifest (no digest of its own).
	inline bool
}

// filterManifests is upstream's _filter_manifests.
func filterManifests(ms []ociDescriptor, downloadSource, cpuArch string) []ociCandidate {
	prio := map[string]int{"qcow2": 3, "qemu": 4, "raw": 1, "applehv": 2}
	if downloadSource == "local" {
		prio = map[string]int{"qcow2": 1, "qemu": 2, "raw": 3, "applehv": 4}
	}
	arches := []string{cpuArch}
	switch cpuArch {
	case "x86_64", "amd64":
		arches = []string{"x86_64", "amd64"}
	case "arm64", "aarch64":
		arches = []string{"aarch64", "arm64"}
	}
	var out []ociCandidate
	for _, m := range ms {
		if a := m.Platform.Architecture; cpuArch != "" && a != "" && !slices.Contains(arches, a) {
			continue
		}
		dt := m.Annotations["disktype"]
		c := ociCandidate{d: m}
		if p, ok := prio[dt]; ok {
			c.priority = p
		} else if dt == "" {
			c.priority = 100
		} else {
			continue
		}
		switch {
		case dt == "applehv":
			dt = "raw"
		case dt != "" && dt != "raw":
			dt = "qcow2"
		}
		c.disktype = dt
		out = append(out, c)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].priority < out[j].priority })
	return out
}

func (c *ociSession) choose(ctx context.Context, idx *ociManifest, cands []ociCandidate) (*OCIImage, error) {
	for _, cand := range cands {
		disktype := cand.disktype
		layers, config := cand.layers, cand.config
		if !cand.inline {
			m, err := c.manifest(ctx, cand.d.Digest)
			if err != nil {
				return nil, err
			}
			layers, config = m.Layers, m.Config
			if disktype == "" && !m.artifact() && cand.d.ArtifactType == "" {
				disktype = "bootc"
			}
		} else if disktype == "" && !idx.artifact() {
			disktype = "bootc"
		}
		if len(layers) != 1 && disktype != "bootc" {
			c.s.log.InfoContext(ctx, "Skipping consideration of container registry manifest for image as it has multiple layers",
				"manifest", cand.d.Digest, "image", c.ref.href)
			continue
		}
		out := &OCIImage{AuthorizationSecret: c.header}
		if disktype == "bootc" {
			out.URL, out.DiskFormat = c.ref.href, "bootc"
			_, out.Checksum, _ = strings.Cut(cand.d.Digest, ":")
			out.Size = config.Size
			for _, l := range layers {
				out.Size += l.Size
			}
		} else {
			l := layers[0]
			out.BlobDigest, out.URL, out.Size = l.Digest, c.blobURL(l.Digest), l.Size
			_, out.Checksum, _ = strings.Cut(l.Digest, ":")
			out.Filename = l.Annotations["org.opencontainers.image.title"]
			out.MediaType, out.DiskFormat = l.MediaType, disktype
		}
		switch {
		case strings.HasSuffix(out.MediaType, "zstd"):
			out.Compression = "zstd"
		case strings.HasSuffix(out.MediaType, "gzip"):
			out.Compression = "gzip"
		}
		if cand.d.Digest != "" {
			out.ManifestURL = "oci://" + c.ref.host + c.ref.image + "@" + cand.d.Digest
		}
		return out, nil
	}
	return nil, nil
}

// drain empties and closes a response body so its connection is reused.
func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	_ = resp.Body.Close()
}

// OCIAuthFor is upstream's get_image_service_auth_override: the node's
// image_pull_secret ("user:password", or a bare token taken as the
// password) from instance_info, then driver_info, then [deploy]'s
// image_server_user and image_server_password; nil when none is set.
func OCIAuthFor(instanceInfo, driverInfo map[string]any, serverUser, serverPassword string) *OCIAuth {
	for _, info := range []map[string]any{instanceInfo, driverInfo} {
		secret, _ := info["image_pull_secret"].(string)
		if secret == "" {
			continue
		}
		if user, pass, ok := strings.Cut(secret, ":"); ok {
			return &OCIAuth{Username: user, Password: pass}
		}
		return &OCIAuth{Password: secret}
	}
	if serverUser != "" && serverPassword != "" {
		return &OCIAuth{Username: serverUser, Password: serverPassword}
	}
	return nil
}
