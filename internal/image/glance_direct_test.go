package image

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// Issue 23: with "file" in [glance]/allowed_direct_url_schemes an image
// whose direct_url is a file (a store shared with the conductor) is read
// from there; without it, or for another location, through the API.
func TestGlanceDirectURLFile(t *testing.T) {
	store := filepath.Join(t.TempDir(), imgID)
	if err := os.WriteFile(store, []byte("from the shared store"), 0o644); err != nil {
		t.Fatal(err)
	}
	image := map[string]any{"id": imgID, "status": "active", "visibility": "public", "direct_url": "file://" + store}
	srv := fakeGlance(t, image, []byte("through the API"))
	for _, tc := range []struct {
		schemes []string
		url     string
		want    string
	}{
		{nil, "file://" + store, "through the API"},
		{[]string{"file"}, "file://" + store, "from the shared store"},
		{[]string{"file"}, "swift://container/" + imgID, "through the API"},
	} {
		image["direct_url"] = tc.url
		g := glanceFor(srv)
		g.Opts.GlanceAllowedDirectURLSchemes = tc.schemes
		var buf bytes.Buffer
		if err := g.Download(t.Context(), imgID, &buf); err != nil || buf.String() != tc.want {
			t.Errorf("schemes %v, direct_url %s: %q %v, want %q", tc.schemes, tc.url, buf.String(), err, tc.want)
		}
	}
}
