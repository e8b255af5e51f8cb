package auth

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
)

// Issue 23: [keystone_authtoken]/http_request_max_retries retries a call to
// Keystone that could not connect (keystoneauth's connect_retries, as
// auth_token's adapter): with one retry a refused first connection still
// validates the token; with none the request gets the 503 of an
// unreachable identity service.
func TestKeystoneConnectRetries(t *testing.T) {
	for _, retries := range []int{0, 1} {
		var dials atomic.Int32
		ks, k := newKeystone(t, func(c *KeystoneConfig) {
			c.ConnectRetries = retries
			var d net.Dialer
			c.Client = &http.Client{Transport: &http.Transport{DisableKeepAlives: true,
				DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
					if dials.Add(1) == 1 {
						return nil, &net.OpError{Op: "dial", Net: network, Err: errors.New("connection refused")}
					}
					return d.DialContext(ctx, network, addr)
				}}}
		})
		w, _ := keystoneRequest(t, k, map[string]string{"X-Auth-Token": ks.Token("alice", "demo")})
		want := http.StatusNoContent
		if retries == 0 {
			want = http.StatusServiceUnavailable
		}
		if w.Code != want {
			t.Errorf("http_request_max_retries %d: status %d (%s), want %d", retries, w.Code, w.Body, want)
		}
	}
}
