// Package ociregistry runs Debian's docker-registry (the CNCF distribution
// registry) on 127.0.0.1 for tests, pushes OCI artefacts to it through the
// registry HTTP API (no docker needed), and puts a front in front of it that
// behaves as public registries do: bearer-token authentication with a
// token realm, blobs redirected to a CDN, and faults injected by method call.
package ociregistry

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openkeel/ironic/testing/await"
)

// Binary is the Debian package's program.
const Binary = "/usr/bin/docker-registry"

// Registry is a running docker-registry.
type Registry struct {
	t testing.TB
	// Host is its host:port on 127.0.0.1 (plain HTTP).
	Host string
	log  bytes.Buffer
}

// Start runs a registry with its storage in a test folder until the test
// ends. Without the package the test is skipped (failed when
// IRONIC_TEST_OCI_REQUIRED is set, as CI sets it).
func Start(t testing.TB) *Registry {
	t.Helper()
	if _, err := os.Stat(Binary); err != nil {
		if os.Getenv("IRONIC_TEST_OCI_REQUIRED") != "" {
			t.Fatalf("docker-registry is required: %v", err)
		}
		t.Skipf("docker-registry not installed (apt-get install docker-registry): %v", err)
	}
	dir := t.TempDir()
	port := freePort(t)
	r := &Registry{t: t, Host: fmt.Sprintf("127.0.0.1:%d", port)}
	conf := fmt.Sprintf("version: 0.1\nlog:\n  level: info\n  accesslog:\n    disabled: false\nstorage:\n  filesystem:\n    rootdirectory: %s\n  delete:\n    enabled: true\nhttp:\n  addr: %s\n",
		filepath.Join(dir, "data"), r.Host)
	confFile := filepath.Join(dir, "config.yml")
	if err := os.WriteFile(confFile, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(Binary, "serve", confFile)
	cmd.Stdout, cmd.Stderr = &r.log, &r.log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
		if t.Failed() {
			t.Logf("docker-registry log:\n%s", r.log.String())
		}
	})
	await.Until(t, 30*time.Second, "docker-registry answering /v2/", func() bool {
		resp, err := http.Get("http://" + r.Host + "/v2/")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return r
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Digest is the sha256 digest of b in the registry's spelling.
func Digest(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

// PushBlob uploads b to repo (a monolithic upload: POST then PUT with the
// digest) and returns its digest.
func (r *Registry) PushBlob(repo string, b []byte) string {
	r.t.Helper()
	d := Digest(b)
	resp := r.do(http.MethodPost, "/v2/"+repo+"/blobs/uploads/", "", nil)
	if resp.StatusCode != http.StatusAccepted {
		r.t.Fatalf("start upload to %s: %d", repo, resp.StatusCode)
	}
	loc := resp.Header.Get("Location")
	sep := "?"
	if strings.Contains(loc, "?") {
		sep = "&"
	}
	if !strings.HasPrefix(loc, "http") {
		loc = "http://" + r.Host + loc
	}
	resp = r.do(http.MethodPut, loc+sep+"digest="+d, "application/octet-stream", b)
	if resp.StatusCode != http.StatusCreated {
		r.t.Fatalf("upload of %s to %s: %d", d, repo, resp.StatusCode)
	}
	return d
}

// Descriptor is an OCI content descriptor.
type Descriptor struct {
	MediaType    string            `json:"mediaType"`
	ArtifactType string            `json:"artifactType,omitempty"`
	Digest       string            `json:"digest"`
	Size         int64             `json:"size"`
	Annotations  map[string]string `json:"annotations,omitempty"`
	Platform     *Platform         `json:"platform,omitempty"`
}

// Platform is an index entry's platform.
type Platform struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
}

// Media types of OCI artefacts.
const (
	MediaManifest = "application/vnd.oci.image.manifest.v1+json"
	MediaIndex    = "application/vnd.oci.image.index.v1+json"
	MediaEmpty    = "application/vnd.oci.empty.v1+json"
)

// Artifact pushes a disk image as an OCI artefact of one layer (empty
// config, the file name as the layer's title) and returns the manifest's
// descriptor.
func (r *Registry) Artifact(repo, filename string, disk []byte) Descriptor {
	r.t.Helper()
	empty := []byte("{}")
	cfg := Descriptor{MediaType: MediaEmpty, Digest: r.PushBlob(repo, empty), Size: int64(len(empty))}
	layer := Descriptor{MediaType: "application/vnd.oci.image.layer.v1.tar", Digest: r.PushBlob(repo, disk), Size: int64(len(disk)),
		Annotations: map[string]string{"org.opencontainers.image.title": filename}}
	m := map[string]any{"schemaVersion": 2, "mediaType": MediaManifest, "artifactType": "application/vnd.unknown.artifact.v1",
		"config": cfg, "layers": []Descriptor{layer}}
	body, _ := json.Marshal(m)
	d := Digest(body)
	r.putManifest(repo, d, MediaManifest, body)
	return Descriptor{MediaType: MediaManifest, Digest: d, Size: int64(len(body))}
}

// Index tags an index of the given manifests.
func (r *Registry) Index(repo, tag string, manifests ...Descriptor) string {
	r.t.Helper()
	body, _ := json.Marshal(map[string]any{"schemaVersion": 2, "mediaType": MediaIndex, "manifests": manifests})
	r.putManifest(repo, tag, MediaIndex, body)
	return Digest(body)
}

func (r *Registry) putManifest(repo, ref, mediaType string, body []byte) {
	r.t.Helper()
	resp := r.do(http.MethodPut, "/v2/"+repo+"/manifests/"+ref, mediaType, body)
	if resp.StatusCode != http.StatusCreated {
		r.t.Fatalf("put manifest %s:%s: %d", repo, ref, resp.StatusCode)
	}
}

func (r *Registry) do(method, path, contentType string, body []byte) *http.Response {
	r.t.Helper()
	u := path
	if !strings.HasPrefix(u, "http") {
		u = "http://" + r.Host + path
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(body))
	if err != nil {
		r.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}
