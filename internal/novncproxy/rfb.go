package novncproxy

import (
	"encoding/binary"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/openkeel/ironic/internal/errs"
)

// RFB (RFC 6143) constants the security proxy needs.
const (
	rfbVersionLength = 12
	authStatusPass   = 0x01
	authStatusFail   = 0x00
	authTypeInvalid  = 0
	authTypeNone     = 1
	// maxReasonLength bounds the failure reason read from a server, as
	// upstream does, against a server announcing 2^32 bytes.
	maxReasonLength = 256
)

// authTypeNames are RFB's security types by number, for messages.
var authTypeNames = map[byte]string{
	0: "INVALID", 1: "NONE", 2: "VNC", 5: "RA2", 6: "RA2NE", 16: "TIGHT", 17: "ULTRA",
	18: "TLS", 19: "VENCRYPT", 20: "SASL", 30: "ARD",
}

func authTypeName(t byte) string {
	if n, ok := authTypeNames[t]; ok {
		return n
	}
	return "UNKNOWN"
}

// authSchemes are the schemes [vnc]/novnc_auth_schemes may name, by the
// security type each speaks to the server. Upstream has only "none".
var authSchemes = map[string]byte{"none": authTypeNone}

// securityProxy is upstream's RFBSecurityProxy: it relays the protocol
// version, then poses as a server offering only the None security type
// to the client (which the proxy has authenticated by its token) while
// negotiating one of the allowed schemes with the VNC server. After that
// the two connections are simply joined.
type securityProxy struct {
	allowed map[byte]bool
}

func newSecurityProxy(schemes []string) (*securityProxy, error) {
	p := &securityProxy{allowed: map[byte]bool{}}
	for _, s := range schemes {
		t, ok := authSchemes[s]
		if !ok {
			return nil, fmt.Errorf("[vnc]novnc_auth_schemes: unknown scheme %q (known: none)", s)
		}
		p.allowed[t] = true
	}
	return p, nil
}

func handshakeFailed(format string, a ...any) error {
	return errs.New(errs.ClassRFBAuthHandshakeFailed, map[string]any{"reason": fmt.Sprintf(format, a...)})
}

func negotiationFailed(reason string) error {
	return errs.New(errs.ClassSecurityProxyNegotiationFailed, map[string]any{"reason": reason})
}

func recv(r io.Reader, n int) ([]byte, error) {
	b := make([]byte, n)
	got, err := io.ReadFull(r, b)
	if err != nil {
		return nil, handshakeFailed("Incorrect read from socket, wanted %d bytes but got %d. Socket returned %q", n, got, b[:got])
	}
	return b, nil
}

// parseVersion reads "RFB 003.008\n" as 3.8.
func parseVersion(v []byte) (major, minor int, ok bool) {
	s := string(v)
	if len(s) != rfbVersionLength || !strings.HasPrefix(s, "RFB ") {
		return 0, 0, false
	}
	maj, err1 := strconv.Atoi(s[4:7])
	min, err2 := strconv.Atoi(s[8:11])
	return maj, min, err1 == nil && err2 == nil
}

func is38(v []byte) bool {
	maj, min, ok := parseVersion(v)
	return ok && maj == 3 && min == 8
}

func varString(msg string) []byte {
	out := binary.BigEndian.AppendUint32(nil, uint32(len(msg)))
	return append(out, msg...)
}

// fail tells the client (a failed SecurityResult with a reason) and,
// when given, the server (the Invalid security type) that negotiation
// failed.
func fail(tenant, host io.Writer, msg string) {
	_, _ = tenant.Write(append(binary.BigEndian.AppendUint32(nil, 1), varString(msg)...))
	if host != nil {
		_, _ = host.Write([]byte{authTypeInvalid})
	}
}

// connect performs the version and security negotiation between tenant
// (the browser, through the websocket) and host (the VNC server). It
// requires RFB 3.8 on both sides, as upstream does.
func (p *securityProxy) connect(tenant, host io.ReadWriter) error {
	hostVersion, err := recv(host, rfbVersionLength)
	if err != nil {
		return err
	}
	if !is38(hostVersion) {
		return negotiationFailed(fmt.Sprintf("Security proxying requires RFB protocol version 3.8, but server sent %s", strings.TrimSuffix(string(hostVersion), "\n")))
	}
	if _, err := host.Write(hostVersion); err != nil {
		return handshakeFailed("send version to server: %v", err)
	}
	if _, err := tenant.Write(hostVersion); err != nil {
		return handshakeFailed("send version to client: %v", err)
	}
	tenantVersion, err := recv(tenant, rfbVersionLength)
	if err != nil {
		return err
	}
	if !is38(tenantVersion) {
		return negotiationFailed(fmt.Sprintf("Security proxying requires RFB protocol version 3.8, but tenant asked for %s", strings.TrimSuffix(string(tenantVersion), "\n")))
	}
	cnt, err := recv(host, 1)
	if err != nil {
		return err
	}
	if cnt[0] == 0 {
		// The server refuses: relay its reason (bounded) to the client.
		rawLen, err := recv(host, 4)
		if err != nil {
			return err
		}
		n := binary.BigEndian.Uint32(rawLen)
		var reason []byte
		if n <= maxReasonLength {
			if reason, err = recv(host, int(n)); err != nil {
				return err
			}
		} else {
			reason = []byte("Unable to negotiate security with server")
			rawLen = binary.BigEndian.AppendUint32(nil, uint32(len(reason)))
		}
		_, _ = tenant.Write(append(append([]byte{authStatusFail}, rawLen...), reason...))
		return negotiationFailed(string(reason))
	}
	offered, err := recv(host, int(cnt[0]))
	if err != nil {
		return err
	}
	// Offer the client None only: the token already authenticated it.
	if _, err := tenant.Write([]byte{authStatusPass, authTypeNone}); err != nil {
		return handshakeFailed("send security types to client: %v", err)
	}
	chosen, err := recv(tenant, 1)
	if err != nil {
		return err
	}
	if chosen[0] != authTypeNone {
		fail(tenant, host, fmt.Sprintf("Only the security type %d (%s) is supported", authTypeNone, authTypeName(authTypeNone)))
		return negotiationFailed(fmt.Sprintf("Client requested a security type other than %d (%s): %d (%s)",
			authTypeNone, authTypeName(authTypeNone), chosen[0], authTypeName(chosen[0])))
	}
	var scheme byte
	found := false
	for _, t := range offered {
		if p.allowed[t] {
			scheme, found = t, true
			break
		}
	}
	if !found {
		// The client is not told what failed: that would leak the
		// server's configuration.
		fail(tenant, host, "Unable to negotiate security with server")
		return negotiationFailed(fmt.Sprintf("No host auth available: %s", errs.New(errs.ClassRFBAuthNoAvailableScheme, map[string]any{
			"allowed_types": joinTypes(p.allowed), "desired_types": joinBytes(offered),
		}).Error()))
	}
	if _, err := host.Write([]byte{scheme}); err != nil {
		return handshakeFailed("send security type to server: %v", err)
	}
	// The None scheme has no handshake; the server's SecurityResult is
	// relayed by the plain proxying that follows.
	return nil
}

func joinTypes(m map[byte]bool) string {
	var parts []string
	for t := range m {
		parts = append(parts, strconv.Itoa(int(t)))
	}
	return strings.Join(parts, ", ")
}

func joinBytes(b []byte) string {
	parts := make([]string, len(b))
	for i, t := range b {
		parts[i] = strconv.Itoa(int(t))
	}
	return strings.Join(parts, ", ")
}
