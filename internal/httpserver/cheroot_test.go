package httpserver

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// echo answers what the handler was given, as the API would read it.
var echo = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	fmt.Fprintf(w, "%s %s query=%q host=%s body=%q", r.Method, r.URL.Path, r.URL.Query(), r.Host, body)
})

// startFront serves h behind the cheroot front of "ironic_api".
func startFront(t *testing.T, h http.Handler) string {
	t.Helper()
	s, _ := start(t, Options{HostIP: "127.0.0.1", CherootServerName: "ironic_api"}, h)
	return s.Addr().String()
}

// exchange sends raw on a new connection and returns everything the
// server writes until it closes the connection.
func exchange(t *testing.T, addr, raw string) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// Only a guard against a hang: every exchange here ends with the
	// server closing the connection.
	c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(c)
	if err != nil {
		t.Fatalf("read %q: %v (got %q)", raw, err, b)
	}
	return string(b)
}

// TestCherootRefusals: request heads cheroot refuses get its answers byte
// for byte, and the connection ends. Expectations observed from cheroot
// (Debian's python3-cheroot 9.0.0, whose read_request_line,
// read_request_headers and simple_response are those of cheroot's main
// branch; master requires cheroot>=10.0.1) serving upstream 21.4's API
// application. 21.4 itself ran under eventlet, which answers HTTP/2.0 with
// an HTML page and no status line and ignores Transfer-Encoding: gzip;
// master's server wins.
func TestCherootRefusals(t *testing.T) {
	addr := startFront(t, echo)
	plain := func(status, msg string) string {
		return fmt.Sprintf("HTTP/1.1 %s\r\nContent-Length: %d\r\nContent-Type: text/plain\r\n\r\n%s", status, len(msg), msg)
	}
	for _, tc := range []struct{ name, raw, want string }{
		{"HTTP/2.0", "GET /v1 HTTP/2.0\r\nHost: x\r\n\r\n",
			plain("505 HTTP Version Not Supported", "Cannot fulfill request")},
		{"HTTP/1.5", "GET /v1 HTTP/1.5\r\nHost: x\r\n\r\n",
			plain("505 HTTP Version Not Supported", "Cannot fulfill request")},
		{"HTTP/0.9", "GET /v1 HTTP/0.9\r\nHost: x\r\n\r\n", plain("505 HTTP Version Not Supported", "")},
		{"Transfer-Encoding gzip", "POST /v1/nodes HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\nContent-Type: application/json\r\n\r\n",
			plain("501 Unimplemented", "")},
		{"Transfer-Encoding gzip, chunked", "POST /v1/nodes HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
			plain("501 Unimplemented", "")},
		{"no protocol", "GET /v1\r\n\r\n", plain("400 Bad Request", "Malformed Request-Line")},
		{"bad protocol", "GET /v1 FOO/1.1\r\n\r\n", plain("400 Bad Request", "Malformed Request-Line: bad protocol")},
		{"bad version", "GET /v1 HTTP/11\r\n\r\n", plain("400 Bad Request", "Malformed Request-Line: bad version")},
		{"version not a number", "GET /v1 HTTP/1.x\r\n\r\n", plain("400 Bad Request", "Malformed Request-Line")},
		{"lower-case method", "get /v1 HTTP/1.1\r\nHost: x\r\n\r\n", plain("400 Bad Request",
			"Malformed method name: According to RFC 2616 (section 5.1.1) and its successors RFC 7230 (section 3.1.1) "+
				"and RFC 7231 (section 4.1) method names are case-sensitive and uppercase.")},
		{"absolute form", "GET http://x/v1 HTTP/1.1\r\nHost: x\r\n\r\n",
			plain("400 Bad Request", "Absolute URI not allowed if server is not a proxy.")},
		// 21.4 (eventlet) served //v1/nodes as /v1/nodes; urlsplit reads
		// "v1" as an authority.
		{"double leading slash", "GET //v1/nodes HTTP/1.1\r\nHost: x\r\n\r\n",
			plain("400 Bad Request", "Absolute URI not allowed if server is not a proxy.")},
		{"relative path", "GET v1 HTTP/1.1\r\nHost: x\r\n\r\n", plain("400 Bad Request",
			`Invalid path in Request-URI: request-target must contain origin-form which starts with absolute-path (URI starting with a slash "/").`)},
		{"asterisk", "GET * HTTP/1.1\r\nHost: x\r\n\r\n", plain("400 Bad Request",
			`Invalid path in Request-URI: request-target must contain origin-form which starts with absolute-path (URI starting with a slash "/").`)},
		{"fragment", "GET /v1#frag HTTP/1.1\r\nHost: x\r\n\r\n", plain("400 Bad Request", "Illegal #fragment in Request-URI.")},
		{"non-ASCII target", "GET /v1/nodes/\xc3\xa9 HTTP/1.1\r\nHost: x\r\n\r\n", plain("400 Bad Request", "Malformed Request-URI")},
		{"bare LF", "GET /v1 HTTP/1.1\nHost: x\n\n", plain("400 Bad Request", "HTTP requires CRLF terminators")},
		{"bare LF in a header", "GET /v1 HTTP/1.1\r\nHost: x\n\r\n", plain("400 Bad Request", "HTTP requires CRLF terminators")},
		{"header without colon", "GET /v1 HTTP/1.1\r\nHost x\r\n\r\n", plain("400 Bad Request", "Illegal header line.")},
		{"bad Content-Length", "POST /v1/nodes HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n",
			plain("400 Bad Request", "Malformed Content-Length Header.")},
		{"CONNECT", "CONNECT x:80 HTTP/1.1\r\nHost: x\r\n\r\n", plain("405 Method Not Allowed", "")},
		{"two empty lines first", "\r\n\r\nGET /v1/nodes HTTP/1.1\r\nHost: x\r\n\r\n", plain("400 Bad Request", "Malformed Request-Line")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := exchange(t, addr, tc.raw); got != tc.want {
				t.Fatalf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestCherootTargets: what the handler sees of a request cheroot serves,
// where net/http alone would refuse it or read it otherwise. Observed as
// in TestCherootRefusals: the API answered as it does for the path,
// query and host given here.
func TestCherootTargets(t *testing.T) {
	addr := startFront(t, echo)
	port := addr[strings.LastIndexByte(addr, ':')+1:]
	for _, tc := range []struct{ name, raw, want string }{
		// cheroot's unquote_to_bytes keeps a malformed escape as sent;
		// upstream answers "Expected UUID or name for node: %zz".
		{"malformed escape", "GET /v1/nodes/%zz HTTP/1.1\r\nHost: x\r\n\r\n", `GET /v1/nodes/%zz query=map[] host=x body=""`},
		{"truncated escapes", "GET /v1/%4/% HTTP/1.1\r\nHost: x\r\n\r\n", `GET /v1/%4/% query=map[] host=x body=""`},
		{"encoded slash stays encoded", "GET /v1/nodes/a%2fb%2Fc HTTP/1.1\r\nHost: x\r\n\r\n", `GET /v1/nodes/a%2Fb%2Fc query=map[] host=x body=""`},
		{"other escapes decoded", "GET /v1/nodes/%41%42 HTTP/1.1\r\nHost: x\r\n\r\n", `GET /v1/nodes/AB query=map[] host=x body=""`},
		// webob's parse_qsl keeps the parameter: "Unexpected arguments: a".
		{"malformed escape in the query", "GET /v1/nodes?a=%zz&b=%41 HTTP/1.1\r\nHost: x\r\n\r\n",
			`GET /v1/nodes query=map["a":["%zz"] "b":["A"]] host=x body=""`},
		{"empty authority", "GET ///v1/nodes HTTP/1.1\r\nHost: x\r\n\r\n", `GET /v1/nodes query=map[] host=x body=""`},
		{"empty fragment", "GET /v1# HTTP/1.1\r\nHost: x\r\n\r\n", `GET /v1 query=map[] host=x body=""`},
		{"one empty line first", "\r\nGET /v1 HTTP/1.1\r\nHost: x\r\n\r\n", `GET /v1 query=map[] host=x body=""`},
		// OPTIONS targets are not unquoted.
		{"OPTIONS asterisk", "OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n", `OPTIONS /* query=map[] host=x body=""`},
		{"OPTIONS escapes", "OPTIONS /v1/%41 HTTP/1.1\r\nHost: x\r\n\r\n", `OPTIONS /v1/%41 query=map[] host=x body=""`},
		// webob builds links from SERVER_NAME and SERVER_PORT, which
		// cheroot sets to its name and port.
		{"no Host", "GET /v1 HTTP/1.1\r\n\r\n", `GET /v1 query=map[] host=ironic_api:` + port + ` body=""`},
		{"empty Host", "GET /v1 HTTP/1.1\r\nHost: \r\n\r\n", `GET /v1 query=map[] host= body=""`},
		{"two Hosts", "GET /v1 HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", `GET /v1 query=map[] host=b body=""`},
		{"Transfer-Encoding chunked twice", "POST /v1 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: Chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
			`POST /v1 query=map[] host=x body="{}"`},
		// HTTP/1.0 requests do not use Transfer-Encoding.
		{"HTTP/1.0 with gzip", "POST /v1 HTTP/1.0\r\nHost: x\r\nTransfer-Encoding: gzip\r\nContent-Length: 2\r\n\r\n{}",
			`POST /v1 query=map[] host=x body="{}"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := exchange(t, addr, strings.Replace(tc.raw, "\r\n\r\n", "\r\nConnection: close\r\n\r\n", 1))
			resp, err := http.ReadResponse(bufio.NewReader(strings.NewReader(got)), nil)
			if err != nil {
				t.Fatalf("%v: %q", err, got)
			}
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != 200 || string(body) != tc.want {
				t.Fatalf("%d %s\nwant 200 %s", resp.StatusCode, body, tc.want)
			}
			if s := resp.Header.Get("Server"); s != "ironic_api" {
				t.Errorf("Server %q", s)
			}
		})
	}
}

// TestCherootPersistentConnection: the front follows Content-Length and
// chunked bodies (whatever they hold) to the next request of a persistent
// connection, and a refused request is answered after the answers to the
// ones before it.
func TestCherootPersistentConnection(t *testing.T) {
	addr := startFront(t, echo)
	raw := "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 29\r\n\r\nGET /v1 HTTP/2.0\r\nHost: x\r\n\r\n" +
		"POST /b HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" +
		"5;ext=1\r\nget /\r\n11\r\n HTTP/2.0\r\n\r\n%zz \r\n0\r\nTrailer: t\r\n\r\n" +
		"\r\nGET /c/%zz HTTP/1.1\r\nHost: x\r\n\r\n" +
		"GET /d HTTP/2.0\r\nHost: x\r\n\r\n"
	br := bufio.NewReader(strings.NewReader(exchange(t, addr, raw)))
	for _, want := range []string{
		`POST /a query=map[] host=x body="GET /v1 HTTP/2.0\r\nHost: x\r\n\r\n"`,
		`POST /b query=map[] host=x body="get / HTTP/2.0\r\n\r\n%zz "`,
		`GET /c/%zz query=map[] host=x body=""`,
	} {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 || string(body) != want {
			t.Fatalf("%d %s\nwant 200 %s", resp.StatusCode, body, want)
		}
	}
	rest, _ := io.ReadAll(br)
	if want := "HTTP/1.1 505 HTTP Version Not Supported\r\nContent-Length: 22\r\nContent-Type: text/plain\r\n\r\nCannot fulfill request"; string(rest) != want {
		t.Fatalf("last answer %q, want %q", rest, want)
	}
}

// TestCherootTLS: behind TLS the handler still sees r.TLS, and the
// listener speaks HTTP/1.1 only, as cheroot does, even to a client that
// offers HTTP/2.
func TestCherootTLS(t *testing.T) {
	certFile, keyFile, pool := writeCert(t)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "tls=%v", r.TLS != nil)
	})
	s, _ := start(t, Options{HostIP: "127.0.0.1", EnableSSL: true, CertFile: certFile, KeyFile: keyFile, CherootServerName: "ironic_api"}, h)
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}}
	resp, err := c.Get("https://" + s.Addr().String() + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.Proto != "HTTP/1.1" || string(body) != "tls=true" {
		t.Fatalf("%s %s", resp.Proto, body)
	}

	// A client speaking clear HTTP to the TLS port: read from cheroot's
	// source (connections.py, _send_bad_request_plain_http_error).
	want := "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nContent-Length: 85\r\nConnection: close\r\n\r\n" +
		"The client sent a plain HTTP request, but this server only speaks HTTPS on this port."
	if got := exchange(t, s.Addr().String(), "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); got != want {
		t.Fatalf("clear HTTP: %q\nwant %q", got, want)
	}
}
