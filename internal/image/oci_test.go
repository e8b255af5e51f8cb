package image

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/testing/ociregistry"
)

// ociFleet pushes one disk image per architecture to repo and tags their
// index "v1": amd64 as raw, arm64 as qcow2 and raw.
type ociFleet struct {
	amd64Raw, arm64Qcow2, arm64Raw                     []byte
	amd64Manifest, arm64QcowManifest, arm64RawManifest string
}

func pushFleet(t *testing.T, r *ociregistry.Registry, repo string) ociFleet {
	t.Helper()
	f := ociFleet{
		amd64Raw:   bytes.Repeat([]byte("amd64-raw-disk "), 4096),
		arm64Qcow2: bytes.Repeat([]byte("arm64-qcow2-disk "), 4096),
		arm64Raw:   bytes.Repeat([]byte("arm64-raw-disk "), 4096),
	}
	entry := func(d ociregistry.Descriptor, arch, disktype string) ociregistry.Descriptor {
		d.Platform = &ociregistry.Platform{Architecture: arch, OS: "linux"}
		d.Annotations = map[string]string{"disktype": disktype}
		return d
	}
	a := r.Artifact(repo, "disk-amd64.raw", f.amd64Raw)
	q := r.Artifact(repo, "disk-arm64.qcow2", f.arm64Qcow2)
	w := r.Artifact(repo, "disk-arm64.raw", f.arm64Raw)
	f.amd64Manifest, f.arm64QcowManifest, f.arm64RawManifest = a.Digest, q.Digest, w.Digest
	r.Index(repo, "v1", entry(a, "amd64", "raw"), entry(q, "arm64", "qcow2"), entry(w, "arm64", "raw"))
	return f
}

func ociOpts(fallback bool) Options {
	o := DefaultOptions()
	o.OCIPermitHTTPFallback = fallback
	o.WebserverTimeout = 30 * time.Second
	return o
}

// Issue 23 item 7: oci:// images from a real registry (Debian's
// docker-registry on 127.0.0.1): a tag's index is resolved by the node's
// cpu_arch and the download source's disk type preference as master's
// identify_specific_image, the chosen manifest is fetched through the
// image cache with its blob's digest checked, and a plain-HTTP registry is
// reached only with [oci]/permit_fallback_to_http_transport.
func TestOCIRegistryIdentifyAndFetch(t *testing.T) {
	reg := ociregistry.Start(t)
	fleet := pushFleet(t, reg, "ironic/disk")
	ctx := context.Background()
	href := "oci://" + reg.Host + "/ironic/disk:v1"

	srcs, err := NewSources(ociOpts(true), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		arch, source, manifest, format, filename string
		content                                  []byte
	}{
		{"x86_64", "http", fleet.amd64Manifest, "raw", "disk-amd64.raw", fleet.amd64Raw},
		{"aarch64", "http", fleet.arm64RawManifest, "raw", "disk-arm64.raw", fleet.arm64Raw},
		// The conductor converting images itself prefers qcow2.
		{"arm64", "local", fleet.arm64QcowManifest, "qcow2", "disk-arm64.qcow2", fleet.arm64Qcow2},
	} {
		img, err := srcs.OCI.Identify(ctx, href, nil, tc.source, tc.arch)
		if err != nil {
			t.Fatalf("%s/%s: %v", tc.arch, tc.source, err)
		}
		blob := ociregistry.Digest(tc.content)
		wantManifest := "oci://" + reg.Host + "/ironic/disk@" + tc.manifest
		if img.ManifestURL != wantManifest || img.DiskFormat != tc.format || img.Filename != tc.filename ||
			img.URL != "http://"+reg.Host+"/v2/ironic/disk/blobs/"+blob || img.Checksum != strings.TrimPrefix(blob, "sha256:") ||
			img.Size != int64(len(tc.content)) {
			t.Errorf("%s/%s: chose %+v, want manifest %s (%s, %s)", tc.arch, tc.source, img, wantManifest, tc.format, tc.filename)
		}
		ii := img.InstanceInfo()
		if ii["image_url"] != img.URL || ii["oci_image_manifest_url"] != wantManifest || ii["image_disk_format"] != tc.format {
			t.Errorf("%s: instance_info %v", tc.arch, ii)
		}

		// The deploy then fetches the chosen manifest through the cache.
		dir := t.TempDir()
		cache, err := NewCache(filepath.Join(dir, "master"), 1<<30, time.Hour, false, NewFetcher(srcs, ociOpts(true)))
		if err != nil {
			t.Fatal(err)
		}
		dest := filepath.Join(dir, "disk")
		if err := cache.FetchImage(ctx, img.ManifestURL, dest, nil, FetchOptions{DisableValidation: true}); err != nil {
			t.Fatalf("%s: fetch %s: %v", tc.arch, img.ManifestURL, err)
		}
		if got, _ := os.ReadFile(dest); !bytes.Equal(got, tc.content) {
			t.Errorf("%s: fetched %d bytes, not the %s blob", tc.arch, len(got), tc.filename)
		}
	}

	// An architecture the index does not have: nothing is chosen.
	if img, err := srcs.OCI.Identify(ctx, href, nil, "http", "ppc64le"); err != nil || img != nil {
		t.Errorf("ppc64le: %+v, %v; want no image", img, err)
	}
	// Upstream's errors: an unknown tag lists the tags; Show needs a digest.
	_, err = srcs.OCI.Identify(ctx, "oci://"+reg.Host+"/ironic/disk:v2", nil, "http", "x86_64")
	wantClass(t, err, errs.ClassOciImageTagNotFound, "Image tag oci://"+reg.Host+"/ironic/disk:v2 could not be found, available tags are v1")
	_, err = srcs.Show(ctx, href)
	wantClass(t, err, errs.ClassOciImageNotSpecific, "")
	// A manifest of the index is shown with its one layer's size and digest.
	info, err := srcs.Show(ctx, "oci://"+reg.Host+"/ironic/disk@"+fleet.amd64Manifest)
	if err != nil || info.Size != int64(len(fleet.amd64Raw)) || info.Properties["image_type"] != "artifact" {
		t.Errorf("show: %+v, %v", info, err)
	}

	// Without the fallback a registry that does not speak TLS is refused.
	strict, err := NewSources(ociOpts(false), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := strict.OCI.Identify(ctx, href, nil, "http", "x86_64"); err == nil {
		t.Error("plain-HTTP registry reached without permit_fallback_to_http_transport")
	}
}

// The bearer-token flow as public registries run it: /v2/ answers 401 with
// a Bearer challenge, a token for the repository's pull scope comes from the
// realm with the user's credentials (or a pre-shared token of
// [oci]/authentication_config), an expired token is renewed once, blobs
// redirected to a CDN take the Authorization header only to
// [oci]/secure_cdn_registries, and a corrupted blob fails its digest check.
// The front serves TLS, trusted through [oci]/verify_ca.
func TestOCIRegistryBearerTokenFlow(t *testing.T) {
	reg := ociregistry.Start(t)
	fleet := pushFleet(t, reg, "ironic/disk")
	front := ociregistry.NewFront(t, reg, true)
	front.RequireBearer("puller", "s3cret")
	ctx := context.Background()
	dir := t.TempDir()
	href := "oci://" + front.Host() + "/ironic/disk:v1"
	manifest := "oci://" + front.Host() + "/ironic/disk@" + fleet.amd64Manifest

	opts := ociOpts(false)
	ca := front.CAFile(dir)
	opts.OCIVerifyCA = &ca
	svc, err := NewOCIService(opts)
	if err != nil {
		t.Fatal(err)
	}
	// Without credentials the realm refuses a token.
	_, err = svc.Identify(ctx, href, nil, "http", "x86_64")
	wantClass(t, err, errs.ClassImageServiceAuthenticationRequired, "")

	auth := &OCIAuth{Username: "puller", Password: "s3cret"}
	img, err := svc.Identify(ctx, href, auth, "http", "x86_64")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(img.AuthorizationSecret, "Bearer ") || img.URL != "https://"+front.Host()+"/v2/ironic/disk/blobs/"+ociregistry.Digest(fleet.amd64Raw) {
		t.Errorf("identified %+v", img)
	}
	if scopes := front.Scopes(); !slices.Contains(scopes, "repository:ironic/disk:pull") {
		t.Errorf("token scopes %v", scopes)
	}
	var buf bytes.Buffer
	if err := svc.DownloadWithAuth(ctx, manifest, auth, &buf); err != nil || !bytes.Equal(buf.Bytes(), fleet.amd64Raw) {
		t.Fatalf("download: %v (%d bytes)", err, buf.Len())
	}

	// Pre-shared token from [oci]/authentication_config, keyed by the
	// realm's host.
	cfg := filepath.Join(dir, "auth.json")
	if err := os.WriteFile(cfg, []byte(`{"auths": {"`+front.Host()+`": {"auth": "pre-shared"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	front.RequireBearer("", "pre-shared")
	opts.OCIAuthConfig = cfg
	shared, err := NewOCIService(opts)
	if err != nil {
		t.Fatal(err)
	}
	buf.Reset()
	if err := shared.Download(ctx, manifest, &buf); err != nil || !bytes.Equal(buf.Bytes(), fleet.amd64Raw) {
		t.Fatalf("download with the pre-shared token: %v", err)
	}

	// Blobs on a CDN: the token goes only to a trusted one.
	front.RedirectBlobs()
	for _, trusted := range []bool{false, true} {
		o := opts
		o.OCISecureCDNRegistries = nil
		if trusted {
			o.OCISecureCDNRegistries = []string{front.CDNHost()}
		}
		s, err := NewOCIService(o)
		if err != nil {
			t.Fatal(err)
		}
		buf.Reset()
		if err := s.Download(ctx, manifest, &buf); err != nil {
			t.Fatalf("download through the CDN: %v", err)
		}
		got := front.CDNAuthorization()
		if last := got[len(got)-1]; trusted != strings.HasPrefix(last, "Bearer ") {
			t.Errorf("CDN trusted=%v got Authorization %q", trusted, last)
		}
	}

	// A corrupted blob fails the digest check.
	front.CorruptNextBlob()
	err = shared.Download(ctx, manifest, &bytes.Buffer{})
	wantClass(t, err, errs.ClassImageChecksumError, "")
}
