package jsonrpc

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/auth"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/httpserver"
)

// selfSigned writes a certificate for 127.0.0.1 and its key, returning
// their paths.
func selfSigned(t *testing.T) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "conductor"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// TestTLSWithConfig runs a conductor endpoint configured from ironic.conf
// options ([json_rpc] use_ssl, cert_file, key_file, http_basic) through
// httpserver, and calls it with a client configured the same way, trusting
// the certificate through cafile. A client without the CA is refused.
func TestTLSWithConfig(t *testing.T) {
	certFile, keyFile := selfSigned(t)
	users := writeHtpasswd(t, "ironic:"+bcryptOf(t, "pw"))
	cfg, err := config.Load(config.LoadOptions{Overrides: map[string]map[string]string{
		"json_rpc": {
			"host_ip": "127.0.0.1", "port": "0", "use_ssl": "true", "cert_file": certFile, "key_file": keyFile,
			"auth_strategy": "http_basic", "http_basic_auth_user_file": users,
			"username": "ironic", "password": "pw", "cafile": certFile, "timeout": "5",
		},
	}})
	if err != nil {
		t.Fatal(err)
	}
	fake := newFake()
	basic, err := auth.NewJSONRPC(cfg, "json_rpc")
	if err != nil {
		t.Fatal(err)
	}
	srv := auth.Handler(basic, NewServer(fake, ServerOptionsFromConfig(cfg)))
	lopts := ListenOptions(cfg)
	hs, err := httpserver.Listen(lopts, srv)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	port := hs.Addr().(*net.TCPAddr).Port

	copts := ClientOptionsFromConfig(cfg)
	if !copts.UseSSL || copts.Timeout != 5*time.Second || copts.AuthStrategy != "http_basic" {
		t.Fatalf("client options from config: %+v", copts)
	}
	c, err := NewClient(copts)
	if err != nil {
		t.Fatal(err)
	}
	topic := ".127.0.0.1:" + strconv.Itoa(port)
	fake.results["GetSupportedBootDevices"] = []string{"pxe", "disk"}
	got, err := c.GetSupportedBootDevices(context.Background(), topic, "n1")
	if err != nil {
		t.Fatalf("call over TLS: %v", err)
	}
	if len(got) != 2 || got[0] != "pxe" {
		t.Errorf("result %v", got)
	}

	copts.CAFile = ""
	untrusting, err := NewClient(copts)
	if err != nil {
		t.Fatal(err)
	}
	err = untrusting.InjectNMI(context.Background(), topic, "n1")
	var unknownCA x509.UnknownAuthorityError
	if !errors.As(err, &unknownCA) {
		t.Errorf("client without the CA: got %v, want an unknown authority error", err)
	}
}

func TestOptionsFromDefaults(t *testing.T) {
	cfg, err := config.Load(config.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	l := ListenOptions(cfg)
	if l.Port != 8089 || l.EnableSSL || l.TLSMinVersion != "1.3" {
		t.Errorf("listen options %+v", l)
	}
	// Upstream's default strategy is keystone: the server admits the
	// admin role, the client logs in with [json_rpc]'s options.
	s := ServerOptionsFromConfig(cfg)
	if s.MaxJSONDepth != 25 || !slices.Equal(s.AllowedRoles, []string{"admin"}) {
		t.Errorf("server options %+v", s)
	}
	c := ClientOptionsFromConfig(cfg)
	if c.Port != 8089 || c.UseSSL || c.AuthStrategy != "keystone" || c.Keystone == nil {
		t.Errorf("client options %+v", c)
	}
	if _, err := NewClient(c); err != nil {
		t.Errorf("client refused the keystone default: %v", err)
	}
}
