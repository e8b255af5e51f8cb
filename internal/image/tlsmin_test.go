package image

import (
	"bytes"
	"context"
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"testing"
)

// Issue 23: [DEFAULT]/webserver_tls_minimum_version bounds HTTPS image
// downloads: an image server that stops at TLS 1.2 is refused at the
// default (1.3) and served with "1.2".
func TestWebserverTLSMinimumVersion(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("disk"))
	}))
	srv.TLS = &tls.Config{MaxVersion: tls.VersionTLS12}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	for _, tc := range []struct {
		min string
		ok  bool
	}{{"", false}, {"1.3", false}, {"1.2", true}} {
		o := DefaultOptions()
		o.WebserverVerifyCA = "False"
		o.WebserverTLSMinVersion = tc.min
		h, err := NewHTTPService(o)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		err = h.Download(context.Background(), srv.URL+"/disk.img", &buf)
		if tc.ok != (err == nil) {
			t.Errorf("minimum %q: download error %v, want ok=%v", tc.min, err, tc.ok)
		}
	}
}
