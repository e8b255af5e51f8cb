package sqldb

import (
	"crypto/tls"
	"encoding/pem"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
)

func TestParseConnectionTLS(t *testing.T) {
	c, err := parseConnection("mysql+pymysql://u:p@db.example.org/ironic?ssl_ca=/etc/ca.pem&ssl_cert=/etc/c.pem&ssl_key=/etc/k.pem&ssl_check_hostname=false")
	if err != nil {
		t.Fatal(err)
	}
	want := tlsOptions{ca: "/etc/ca.pem", cert: "/etc/c.pem", key: "/etc/k.pem", verifyCert: true, checkHostname: false}
	if c.tls == nil || *c.tls != want {
		t.Errorf("TLS options %+v, want %+v", c.tls, want)
	}
	cfg, err := mysql.ParseDSN(c.dsn)
	if err != nil || cfg.TLSConfig != "true" {
		t.Errorf("DSN %q does not ask for TLS (%v)", c.dsn, err)
	}
	for _, bad := range []string{
		"mysql+pymysql://u:p@db/ironic?ssl_cipher=AES",
		"mysql+pymysql://u:p@db/ironic?ssl_cert=/c.pem",
		"mysql+pymysql://u:p@db/ironic?ssl_verify_cert=maybe",
	} {
		if _, err := parseConnection(bad); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
	if c, _ := parseConnection("mysql+pymysql://u:p@db/ironic"); c.tls != nil || strings.Contains(c.dsn, "tls=") {
		t.Errorf("TLS without asking: %+v %q", c.tls, c.dsn)
	}
}

// The configuration built from ssl_ca trusts that CA, checks the host name
// unless ssl_check_hostname=false, and still checks the chain then.
func TestTLSConfigVerification(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // refused handshakes are the point
	srv.StartTLS()
	defer srv.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	notCA := filepath.Join(t.TempDir(), "not-a-ca.pem")
	if err := os.WriteFile(notCA, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := srv.Listener.Addr().String()
	cases := []struct {
		name    string
		opts    tlsOptions
		host    string
		wantErr bool
	}{
		{"trusted CA, right name", tlsOptions{ca: ca, verifyCert: true, checkHostname: true}, "example.com", false},
		{"trusted CA, wrong name", tlsOptions{ca: ca, verifyCert: true, checkHostname: true}, "db.wrong.test", true},
		{"trusted CA, name not checked", tlsOptions{ca: ca, verifyCert: true, checkHostname: false}, "db.wrong.test", false},
		{"system roots only, name not checked", tlsOptions{verifyCert: true, checkHostname: false}, "db.wrong.test", true},
		{"no verification", tlsOptions{verifyCert: false, checkHostname: true}, "db.wrong.test", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := tc.opts.config(tc.host)
			if err != nil {
				t.Fatal(err)
			}
			conn, err := tls.Dial("tcp", addr, cfg)
			if err == nil {
				conn.Close()
			}
			if (err != nil) != tc.wantErr {
				t.Errorf("handshake error = %v, want error: %v", err, tc.wantErr)
			}
		})
	}
	if _, err := (&tlsOptions{ca: notCA, verifyCert: true}).config("x"); err == nil {
		t.Error("a CA file without certificates was accepted")
	}
}
