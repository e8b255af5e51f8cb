package image

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/openkeel/ironic/internal/keystoneauth"
	"github.com/openkeel/ironic/testing/keystone"
)

const imgID = "2a5c3d5e-6a3f-4f1b-9d2c-1b2f0e8a9c11"

func fakeGlance(t *testing.T, image map[string]any, data []byte) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Auth-Token") != "tok" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		switch r.URL.Path {
		case "/v2/images/" + imgID:
			json.NewEncoder(w).Encode(image)
		case "/v2/images/" + imgID + "/file":
			w.Write(data)
		case "/v2/images/" + imgID + "/members":
			json.NewEncoder(w).Encode(map[string]any{"members": []any{map[string]any{"member_id": "conductor-project"}}})
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func glanceFor(srv *httptest.Server) *GlanceService {
	o := DefaultOptions()
	o.ConductorProjectID = "conductor-project"
	o.IgnoreProjectCheckForAdmin = false
	return &GlanceService{Auth: func(context.Context) (string, string, error) { return "tok", srv.URL, nil }, Opts: o}
}

func TestGlanceShowAndDownload(t *testing.T) {
	image := map[string]any{
		"id": imgID, "status": "active", "visibility": "public", "size": 5.0,
		"disk_format": "qcow2", "container_format": "bare", "checksum": "c",
		"os_hash_algo": "sha512", "os_hash_value": "v", "kernel_id": "k", "empty": "",
		"updated_at": "2024-01-02T03:04:05Z",
	}
	srv := fakeGlance(t, image, []byte("hello"))
	g := glanceFor(srv)
	info, err := g.Show(t.Context(), "glance://"+imgID)
	if err != nil {
		t.Fatal(err)
	}
	if info.Size != 5 || info.DiskFormat != "qcow2" || info.OSHashAlgo != "sha512" || info.Properties["kernel_id"] != "k" || info.UpdatedAt.Year() != 2024 {
		t.Fatalf("info %+v", info)
	}
	if _, ok := info.Properties["empty"]; ok {
		t.Fatal("unset property copied")
	}
	var buf bytes.Buffer
	if err := g.Download(t.Context(), imgID, &buf); err != nil || buf.String() != "hello" {
		t.Fatalf("download %q %v", buf.String(), err)
	}

	image["visibility"] = "shared"
	if _, err := g.Show(t.Context(), imgID); err != nil {
		t.Fatalf("shared with the conductor: %v", err)
	}
	image["visibility"] = "private"
	image["owner"] = "someone"
	_, err = g.Show(t.Context(), imgID)
	wantClass(t, err, "ImageNotFound", "Image "+imgID+" could not be found.")
	image["status"] = "queued"
	_, err = g.Show(t.Context(), imgID)
	wantClass(t, err, "ImageUnacceptable", "Image "+imgID+" is unacceptable: The image is required to be in an active state.")

	other := "0a5c3d5e-6a3f-4f1b-9d2c-1b2f0e8a9c11"
	_, err = g.Show(t.Context(), other)
	wantClass(t, err, "ImageNotFound", "")
	_, err = g.Show(t.Context(), "glance://nope")
	wantClass(t, err, "InvalidImageRef", "Invalid image href glance://nope.")

	empty := glanceFor(fakeGlance(t, image, nil))
	err = empty.Download(t.Context(), imgID, &buf)
	wantClass(t, err, "ImageDownloadFailed", "Failed to download image "+imgID+", reason: image contains no data.")

	down := &GlanceService{Auth: func(context.Context) (string, string, error) { return "tok", "http://127.0.0.1:1", nil }, Opts: DefaultOptions()}
	_, err = down.Show(t.Context(), imgID)
	wantClass(t, err, "GlanceConnectionFailed", "")
}

// With a Keystone session the conductor's project is its token's, and a
// refused token is renewed once by the session's client.
func TestGlanceThroughKeystoneSession(t *testing.T) {
	ks := keystone.New(t).Project("service").User("ironic", "s3cret").Grant("ironic", "service", "admin")
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok := r.Header.Get("X-Auth-Token")
		seen = append(seen, tok)
		if !ks.TokenValid(tok) {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		switch r.URL.Path {
		case "/v2/images/" + imgID:
			json.NewEncoder(w).Encode(map[string]any{"id": imgID, "status": "active", "visibility": "private", "owner": ks.ProjectID("service")})
		case "/v2/images/" + imgID + "/file":
			w.Write([]byte("data"))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	ks.AddService("image", "glance", "RegionOne", srv.URL, "internal")
	sess := keystoneauth.New(keystoneauth.Options{
		Section: "glance", AuthType: "password", AuthURL: ks.URL(), Username: "ironic", Password: "s3cret",
		UserDomainID: "default", ProjectName: "service", ProjectDomainID: "default",
		ServiceType: "image", ValidInterfaces: []string{"internal", "public"},
	})
	o := DefaultOptions()
	o.IgnoreProjectCheckForAdmin = false
	g := &GlanceService{Auth: sess.Auth, Client: sess.Client(), Opts: o, ProjectID: sess.ProjectID}
	if _, err := g.Show(t.Context(), imgID); err != nil {
		t.Fatalf("private image of the conductor's project: %v", err)
	}
	ks.RevokeUserTokens("ironic")
	var buf bytes.Buffer
	if err := g.Download(t.Context(), imgID, &buf); err != nil || buf.String() != "data" {
		t.Fatalf("download after revocation %q %v", buf.String(), err)
	}
	if n := ks.Authentications(); n != 2 || len(seen) != 3 || seen[1] != seen[0] || seen[2] == seen[1] {
		t.Fatalf("authentications %d, tokens seen %d", n, len(seen))
	}
}
