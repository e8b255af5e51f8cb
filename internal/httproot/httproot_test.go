package httproot

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/config"
)

func write(t *testing.T, p string, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// fixture: a root with a file, a sub-directory, an inner link and a link
// leading out of the root to a secret.
func fixture(t *testing.T) (root string) {
	t.Helper()
	base := t.TempDir()
	root = filepath.Join(base, "httpboot")
	write(t, filepath.Join(root, "redfish", "boot-n.iso"), "0123456789abcdef")
	write(t, filepath.Join(base, "secret"), "SECRET")
	if err := os.Symlink("redfish/boot-n.iso", filepath.Join(root, "inner")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../secret", filepath.Join(root, "outer")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(base, "secret"), filepath.Join(root, "absolute")); err != nil {
		t.Fatal(err)
	}
	return root
}

func TestHandler(t *testing.T) {
	h, err := NewHandler(fixture(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	for _, tc := range []struct {
		name, method, path, rng string
		status                  int
		body                    string
	}{
		{"file", "GET", "/redfish/boot-n.iso", "", 200, "0123456789abcdef"},
		{"inner link", "GET", "/inner", "", 200, "0123456789abcdef"},
		{"range", "GET", "/redfish/boot-n.iso", "bytes=4-7", 206, "4567"},
		{"suffix range", "GET", "/redfish/boot-n.iso", "bytes=-3", 206, "def"},
		{"bad range", "GET", "/redfish/boot-n.iso", "bytes=100-", 416, ""},
		{"head", "HEAD", "/redfish/boot-n.iso", "", 200, ""},
		{"root listing", "GET", "/", "", 404, ""},
		{"dir listing", "GET", "/redfish/", "", 404, ""},
		{"dir without slash", "GET", "/redfish", "", 404, ""},
		{"missing", "GET", "/nope", "", 404, ""},
		{"dot-dot", "GET", "/redfish/../../secret", "", 404, ""},
		{"link out", "GET", "/outer", "", 404, ""},
		{"absolute link", "GET", "/absolute", "", 404, ""},
		{"post", "POST", "/redfish/boot-n.iso", "", 405, ""},
		{"delete", "DELETE", "/redfish/boot-n.iso", "", 405, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(tc.method, "http://x"+tc.path, nil)
			if tc.rng != "" {
				req.Header.Set("Range", tc.rng)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d (%s)", rec.Code, tc.status, rec.Body)
			}
			if tc.status >= 300 {
				if rec.Body.Len() > 0 && rec.Body.String() == "SECRET" {
					t.Fatal("leaked a file outside the root")
				}
				return
			}
			if rec.Body.String() != tc.body {
				t.Fatalf("body %q, want %q", rec.Body, tc.body)
			}
			if tc.method == "HEAD" && rec.Header().Get("Content-Length") != "16" {
				t.Fatalf("HEAD Content-Length %q", rec.Header().Get("Content-Length"))
			}
			if rec.Header().Get("Accept-Ranges") != "bytes" {
				t.Fatalf("Accept-Ranges %q", rec.Header().Get("Accept-Ranges"))
			}
		})
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("PUT", "http://x/new", nil))
	if rec.Header().Get("Allow") != "GET, HEAD" {
		t.Fatalf("Allow %q", rec.Header().Get("Allow"))
	}
}

func TestStartServesAndStops(t *testing.T) {
	root := filepath.Join(t.TempDir(), "created")
	ctx, cancel := context.WithCancel(context.Background())
	s, err := Start(ctx, Options{Root: root, HostIP: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(root, "a.txt"), "hello")
	resp, err := http.Get(s.URL() + "/a.txt")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "hello" {
		t.Fatalf("%d %q", resp.StatusCode, body)
	}
	// A second server on the same port is refused at Start.
	port := s.Addr().(*net.TCPAddr).Port
	if _, err := Start(ctx, Options{Root: root, HostIP: "127.0.0.1", Port: port}); err == nil {
		t.Fatal("second server on a busy port started")
	}
	cancel()
	if err := s.Wait(); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get(s.URL() + "/a.txt"); err == nil {
		t.Fatal("server still answering after its context ended")
	}
}

func TestStartTLS(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile, pool := selfSigned(t, dir)
	root := filepath.Join(dir, "root")
	write(t, filepath.Join(root, "x.iso"), "iso")
	ctx, cancel := context.WithCancel(context.Background())
	s, err := Start(ctx, Options{Root: root, HostIP: "127.0.0.1", TLS: true, CertFile: certFile, KeyFile: keyFile})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	defer func() {
		cancel()
		if err := s.Wait(); err != nil {
			t.Error(err)
		}
	}()
	if s.URL()[:8] != "https://" {
		t.Fatalf("URL %s", s.URL())
	}
	cl := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	defer cl.CloseIdleConnections()
	resp, err := cl.Get(s.URL() + "/x.iso")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "iso" {
		t.Fatalf("body %q", body)
	}
	// Without the certificate the client refuses the server: it is TLS.
	if _, err := http.Get(s.URL() + "/x.iso"); err == nil {
		t.Fatal("untrusted TLS server accepted")
	}
}

func TestStartTLSWithoutCertificate(t *testing.T) {
	_, err := Start(t.Context(), Options{Root: t.TempDir(), HostIP: "127.0.0.1", TLS: true})
	if err == nil {
		t.Fatal("TLS server without certificate started")
	}
}

func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "c.pem"), filepath.Join(dir, "k.pem")
	write(t, certFile, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})))
	write(t, keyFile, string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})))
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

func TestOptionsFromConfig(t *testing.T) {
	for _, tc := range []struct {
		url  string
		port int
		tls  bool
	}{
		{"http://192.0.2.1:8088/", 8088, false},
		{"http://boot.example.com", 80, false},
		{"https://boot.example.com/x", 443, true},
		{"https://[2001:db8::1]:8443", 8443, true},
	} {
		c, err := config.Load(config.LoadOptions{Overrides: map[string]map[string]string{
			"deploy": {"http_url": tc.url, "http_root": "/srv/httpboot"},
			"api":    {"cert_file": "/c.pem", "key_file": "/k.pem"},
		}})
		if err != nil {
			t.Fatal(err)
		}
		o, err := OptionsFromConfig(c)
		if err != nil {
			t.Fatalf("%s: %v", tc.url, err)
		}
		if o.Port != tc.port || o.TLS != tc.tls || o.Root != "/srv/httpboot" {
			t.Fatalf("%s: %+v", tc.url, o)
		}
		if tc.tls != (o.CertFile == "/c.pem" && o.KeyFile == "/k.pem") {
			t.Fatalf("%s: certificate %q %q", tc.url, o.CertFile, o.KeyFile)
		}
	}
	c, err := config.Load(config.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := OptionsFromConfig(c); err == nil {
		t.Fatal("no error without [deploy]/http_url")
	}
}

// Links into a link target are followed, as upstream's agent_images links
// into [pxe]/images_path are by nginx; links elsewhere are not, nor links
// inside the target leading out of it.
func TestHandlerLinkTargets(t *testing.T) {
	root := fixture(t)
	base := filepath.Dir(root)
	images := filepath.Join(base, "images")
	write(t, filepath.Join(images, "node-1", "disk"), "DISK IMAGE")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(root, "agent_images"), 0o755))
	must(os.Symlink(filepath.Join(images, "node-1", "disk"), filepath.Join(root, "agent_images", "node-1")))
	must(os.Symlink(filepath.Join(base, "secret"), filepath.Join(images, "sneaky")))
	must(os.Symlink(filepath.Join(images, "sneaky"), filepath.Join(root, "agent_images", "node-2")))
	must(os.Symlink(images, filepath.Join(root, "all")))
	h, err := NewHandler(root, nil, images)
	must(err)
	defer h.Close()
	for path, want := range map[string]int{
		"/agent_images/node-1": 200, "/agent_images/node-2": 404, "/outer": 404, "/absolute": 404,
		"/all/node-1/disk": 200, "/all/sneaky": 404, "/all/node-1": 404, "/redfish/boot-n.iso": 200,
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "http://x"+path, nil))
		if rec.Code != want {
			t.Errorf("%s: status %d, want %d", path, rec.Code, want)
		}
		if rec.Body.String() == "SECRET" {
			t.Fatalf("%s leaked a file outside the root", path)
		}
		if want == 200 && path != "/redfish/boot-n.iso" && rec.Body.String() != "DISK IMAGE" {
			t.Errorf("%s: body %q", path, rec.Body)
		}
	}
	c, err := config.Load(config.LoadOptions{Overrides: map[string]map[string]string{
		"deploy": {"http_url": "http://127.0.0.1:8080"}, "pxe": {"images_path": images},
	}})
	must(err)
	o, err := OptionsFromConfig(c)
	must(err)
	if len(o.LinkTargets) != 1 || o.LinkTargets[0] != images {
		t.Fatalf("link targets %v", o.LinkTargets)
	}
}

// TestBindAddress: [openkeel_http]/http_root_host_ip binds the file
// server; unset, it listens on every address as before.
func TestBindAddress(t *testing.T) {
	for _, tc := range []struct {
		conf map[string]string
		want string
	}{
		{nil, ""},
		{map[string]string{"http_root_host_ip": "127.0.0.1"}, "127.0.0.1"},
	} {
		c, err := config.Load(config.LoadOptions{Overrides: map[string]map[string]string{
			"deploy":        {"http_url": "http://127.0.0.1:0", "http_root": t.TempDir()},
			"openkeel_http": tc.conf,
		}})
		if err != nil {
			t.Fatal(err)
		}
		o, err := OptionsFromConfig(c)
		if err != nil {
			t.Fatal(err)
		}
		if o.HostIP != tc.want || o.Limits.MaxConnections != 4096 {
			t.Fatalf("%v: host %q, limits %+v", tc.conf, o.HostIP, o.Limits)
		}
		ctx, cancel := context.WithCancel(context.Background())
		s, err := Start(ctx, o)
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		host, _, _ := net.SplitHostPort(s.Addr().String())
		cancel()
		if err := s.Wait(); err != nil {
			t.Fatal(err)
		}
		ip := net.ParseIP(host)
		if every := tc.want == ""; every != ip.IsUnspecified() || !every && host != tc.want {
			t.Fatalf("%v: listening on %s, want %q (every address when empty)", tc.conf, host, tc.want)
		}
	}
}
