package httpserver

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
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/openkeel/ironic/testing/await"
)

// start serves h and returns a stop function that ends the server and
// returns Serve's result; it is also run at cleanup and may be called twice.
func start(t *testing.T, opts Options, h http.Handler) (*Server, func() error) {
	t.Helper()
	s, err := Listen(opts, h)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	stop := sync.OnceValue(func() error {
		cancel()
		return <-done
	})
	t.Cleanup(func() { stop() })
	return s, stop
}

var ok = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })

func TestTCP(t *testing.T) {
	s, _ := start(t, Options{HostIP: "127.0.0.1", Port: 0}, ok)
	resp, err := http.Get("http://" + s.Addr().String() + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "ok" {
		t.Fatalf("body %q", b)
	}
}

func TestUnixSocketModeAndCleanup(t *testing.T) {
	path := filepath.Join(t.TempDir(), "api.sock")
	_, stop := start(t, Options{UnixSocket: path, UnixSocketMode: 0o660}, ok)
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o660 {
		t.Fatalf("socket mode %v, want 0660", st.Mode().Perm())
	}
	c := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", path)
	}}}
	resp, err := c.Get("http://unix/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if err := stop(); err != nil {
		t.Fatalf("serve: %v", err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("socket left behind: %v", err)
	}
}

func TestGracefulShutdownFinishesInFlight(t *testing.T) {
	entered := make(chan struct{})
	release := make(chan struct{})
	slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-release
		io.WriteString(w, "done")
	})
	s, stop := start(t, Options{HostIP: "127.0.0.1", ShutdownTimeout: 5 * time.Second}, slow)
	got := make(chan string, 1)
	go func() {
		resp, err := http.Get("http://" + s.Addr().String() + "/")
		if err != nil {
			got <- "error: " + err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		got <- string(b)
	}()
	<-entered
	stopped := make(chan error, 1)
	go func() { stopped <- stop() }()
	// New connections are refused once shutdown has begun.
	await.UntilReason(t, 5*time.Second, "the listener to close", func() (bool, string) {
		c, err := net.Dial("tcp", s.Addr().String())
		if err != nil {
			return true, ""
		}
		c.Close()
		return false, "listener still accepting after shutdown began"
	})
	close(release)
	if b := <-got; b != "done" {
		t.Fatalf("in-flight request got %q", b)
	}
	if err := <-stopped; err != nil {
		t.Fatalf("serve: %v", err)
	}
}

func writeCert(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "c.pem"), filepath.Join(dir, "k.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

func TestTLSMinimumVersion(t *testing.T) {
	certFile, keyFile, pool := writeCert(t)
	for _, tc := range []struct {
		min       string
		clientMax uint16
		wantOK    bool
	}{
		{"1.3", tls.VersionTLS13, true},
		{"1.3", tls.VersionTLS12, false},
		{"1.2", tls.VersionTLS12, true},
	} {
		s, _ := start(t, Options{HostIP: "127.0.0.1", EnableSSL: true, CertFile: certFile, KeyFile: keyFile, TLSMinVersion: tc.min}, ok)
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MaxVersion: tc.clientMax}}}
		resp, err := c.Get("https://" + s.Addr().String() + "/")
		if resp != nil {
			resp.Body.Close()
		}
		if (err == nil) != tc.wantOK {
			t.Errorf("min %s client max %x: err=%v, want ok=%v", tc.min, tc.clientMax, err, tc.wantOK)
		}
	}
}

func TestTLSConfigErrors(t *testing.T) {
	if _, err := Listen(Options{HostIP: "127.0.0.1", EnableSSL: true}, ok); err == nil {
		t.Fatal("TLS without certificate accepted")
	}
	certFile, keyFile, _ := writeCert(t)
	if _, err := Listen(Options{HostIP: "127.0.0.1", EnableSSL: true, CertFile: certFile, KeyFile: keyFile, TLSMinVersion: "1.1"}, ok); err == nil {
		t.Fatal("tls_minimum_version 1.1 accepted")
	}
}
