package httpserver

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// Upstream master serves its API with cheroot's WSGI server
// (ironic/common/wsgi_service.py; 21.4 ran it under eventlet, which master
// dropped), and a client sees cheroot's answers to a request head it
// refuses: its own plain-text answers from HTTPRequest.read_request_line
// and read_request_headers (cheroot/server.py, simple_response), where
// net/http refuses differently (HTTP/2.0, Transfer-Encoding: gzip, a
// lower-case method, an absolute-form target) or not at all. cheroot also
// hands the application request targets net/http refuses or decodes
// otherwise: a malformed percent escape stays as sent and %2F stays
// encoded in PATH_INFO, so that `/v1/nodes/%zz` reaches the API, which
// answers its JSON 400.
//
// cherootConn sits between a connection and net/http: it reads each
// request head, checks it as cheroot does, and either answers it as
// cheroot does and ends the connection, or hands net/http the head
// rewritten so that net/http's URL.Path is cheroot's PATH_INFO and its
// framing is cheroot's. It follows the body's framing (Content-Length or
// chunked) to find the next head of a persistent connection.

// maxCheckedHead bounds the head the front reads before net/http sees
// it: beyond net/http's own bound (http.DefaultMaxHeaderBytes plus its
// slack) the bytes pass unchecked and net/http answers 431.
const maxCheckedHead = http.DefaultMaxHeaderBytes + 4096

// maxChunkLine bounds a chunk-size or trailer line the front follows; a
// longer one passes unchecked, and net/http refuses it.
const maxChunkLine = 4096

// cherootListener hands out connections behind the cheroot front of the
// server named name.
type cherootListener struct {
	net.Listener
	name string
}

func (l cherootListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	// A request without a Host is cheroot's SERVER_NAME and SERVER_PORT
	// (the server's name and the listening port) to webob.
	host := l.name
	if a, ok := c.LocalAddr().(*net.TCPAddr); ok {
		host = net.JoinHostPort(l.name, strconv.Itoa(a.Port))
	}
	return &cherootConn{Conn: c, host: host}, nil
}

// frontState is what the front expects next from the client.
type frontState int

const (
	expectHead      frontState = iota
	expectBody                 // remain bytes of a Content-Length body
	expectChunkSize            // a chunk-size line
	expectChunkData            // remain bytes of chunk data and its CRLF
	expectTrailer              // trailer lines up to the empty one
	passThrough                // a stream the front cannot follow; net/http answers it
	refused                    // the front answered; net/http sees the end of the stream
)

// cherootConn is a connection behind the cheroot front. net/http reads it
// from one goroutine at a time; Close may come from another.
type cherootConn struct {
	net.Conn
	host   string // the Host of a request that names none
	in     []byte // read from the client, not yet looked at
	out    []byte // checked, for net/http to read
	state  frontState
	remain int64
	// skipped is set once the empty line allowed before this head is
	// passed over.
	skipped bool
	rbuf    [8192]byte

	mu      sync.Mutex
	answer  []byte // cheroot's answer, written before the connection ends
	written bool
}

func (c *cherootConn) Read(p []byte) (int, error) {
	for len(c.out) == 0 {
		if err := c.advance(); err != nil {
			return 0, err
		}
	}
	n := copy(p, c.out)
	c.out = c.out[n:]
	return n, nil
}

// advance moves what the client sent through the state in force, reading
// more when it has too little to decide.
func (c *cherootConn) advance() error {
	switch c.state {
	case refused:
		return io.EOF
	case passThrough:
		if len(c.in) == 0 {
			return c.fill()
		}
		c.out, c.in = c.in, nil
	case expectBody, expectChunkData:
		if c.remain == 0 {
			if c.state == expectChunkData {
				c.state = expectChunkSize
			} else {
				c.state = expectHead
			}
			return nil
		}
		if len(c.in) == 0 {
			return c.fill()
		}
		n := int64(len(c.in))
		if n > c.remain {
			n = c.remain
		}
		c.out, c.in = c.in[:n:n], c.in[n:]
		c.remain -= n
	case expectChunkSize, expectTrailer:
		return c.chunkLine()
	case expectHead:
		return c.head()
	}
	return nil
}

// fill reads from the client. A read error is returned as it comes and
// not kept: net/http cuts its background read short with a deadline and
// reads again.
func (c *cherootConn) fill() error {
	n, err := c.Conn.Read(c.rbuf[:])
	c.in = append(c.in, c.rbuf[:n]...)
	if n > 0 {
		return nil
	}
	var rhe tls.RecordHeaderError
	if errors.As(err, &rhe) && rhe.Conn != nil {
		// cheroot's ConnectionManager._send_bad_request_plain_http_error
		// answers in clear (cheroot/connections.py).
		const msg = "The client sent a plain HTTP request, but this server only speaks HTTPS on this port."
		fmt.Fprintf(rhe.Conn, "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n"+
			"Connection: close\r\n\r\n%s", len(msg), msg)
		c.state = refused
		return io.EOF
	}
	if err == nil {
		return io.ErrNoProgress
	}
	return err
}

// chunkLine passes one chunk-size or trailer line of a chunked body.
func (c *cherootConn) chunkLine() error {
	i := bytes.IndexByte(c.in, '\n')
	if i < 0 {
		if len(c.in) > maxChunkLine {
			c.state = passThrough
			return nil
		}
		return c.fill()
	}
	line := c.in[:i+1]
	c.out, c.in = line, c.in[i+1:]
	text := bytes.TrimRight(line, "\r\n")
	if c.state == expectTrailer {
		if len(text) == 0 {
			c.state = expectHead
		}
		return nil
	}
	size, _, _ := bytes.Cut(text, []byte(";"))
	n, err := strconv.ParseInt(string(bytes.TrimSpace(size)), 16, 64)
	switch {
	case err != nil || n < 0:
		// net/http refuses the body and closes the connection.
		c.state = passThrough
	case n == 0:
		c.state = expectTrailer
	default:
		c.state, c.remain = expectChunkData, n+2
	}
	return nil
}

// head reads a request head and checks it.
func (c *cherootConn) head() error {
	// RFC 7230 3.5 (and cheroot): one empty line before a request line is
	// ignored.
	if !c.skipped && bytes.HasPrefix(c.in, crlf) {
		c.in = c.in[len(crlf):]
		c.skipped = true
	}
	lines, complete := headLines(c.in)
	if len(lines) > 0 {
		if answer := checkRequestLine(lines[0]).answer; answer != nil {
			return c.refuse(answer)
		}
	}
	if !complete {
		if len(c.in) > maxCheckedHead {
			c.state = passThrough
			return nil
		}
		return c.fill()
	}
	n := 0
	for _, l := range lines {
		n += len(l)
	}
	h := checkHead(lines, c.host)
	if h.answer != nil {
		return c.refuse(h.answer)
	}
	c.out, c.in = h.head, c.in[n:]
	c.skipped = false
	switch {
	case h.chunked:
		c.state = expectChunkSize
	case h.length > 0:
		c.state, c.remain = expectBody, h.length
	}
	return nil
}

// refuse keeps cheroot's answer for the end of the connection, so that an
// answer net/http is still writing to an earlier request goes first, and
// tells net/http the stream has ended.
func (c *cherootConn) refuse(answer []byte) error {
	c.mu.Lock()
	c.answer = answer
	c.mu.Unlock()
	c.state = refused
	return io.EOF
}

// flushAnswer writes cheroot's answer once, before the connection closes.
func (c *cherootConn) flushAnswer() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.answer != nil && !c.written {
		c.written = true
		c.Conn.Write(c.answer)
	}
}

func (c *cherootConn) Close() error {
	c.flushAnswer()
	return c.Conn.Close()
}

// CloseWrite is net/http's half-close before it closes.
func (c *cherootConn) CloseWrite() error {
	c.flushAnswer()
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// ReadFrom keeps the underlying connection's sendfile path.
func (c *cherootConn) ReadFrom(r io.Reader) (int64, error) { return io.Copy(c.Conn, r) }

// tlsConn is the TLS connection under a front, nil for a clear one.
func (c *cherootConn) tlsConn() *tls.Conn {
	tc, _ := c.Conn.(*tls.Conn)
	return tc
}

var crlf = []byte("\r\n")

// headLines splits a request head into its lines, each with its line end;
// complete reports that the head's end was found: the empty line after
// the header lines, or a line without CRLF, where cheroot stops reading.
func headLines(b []byte) (lines [][]byte, complete bool) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return lines, false
		}
		line := b[:i+1]
		b = b[i+1:]
		lines = append(lines, line)
		if !bytes.HasSuffix(line, crlf) || (len(lines) > 1 && len(line) == len(crlf)) {
			return lines, true
		}
		if len(lines) == 1 && len(line) == len(crlf) {
			// An empty request line (after the one ignored) is malformed.
			return lines, true
		}
	}
	return lines, false
}

// checkedHead is the front's verdict on a request head: either cheroot's
// answer, or the head for net/http and the framing of its body.
type checkedHead struct {
	answer  []byte
	head    []byte
	chunked bool
	length  int64
}

// requestLine is a request line as cheroot reads it.
type requestLine struct {
	answer       []byte
	method       []byte
	target       []byte // origin-form target for net/http
	major, minor int
}

// simpleResponse is cheroot's HTTPRequest.simple_response: its server
// protocol, no Date, no Connection header (the connection is closed).
func simpleResponse(status, msg string) []byte {
	return fmt.Appendf(nil, "HTTP/1.1 %s\r\nContent-Length: %d\r\nContent-Type: text/plain\r\n\r\n%s", status, len(msg), msg)
}

func badRequest(msg string) []byte { return simpleResponse("400 Bad Request", msg) }

// checkRequestLine is cheroot's read_request_line.
func checkRequestLine(line []byte) requestLine {
	if !bytes.HasSuffix(line, crlf) {
		return requestLine{answer: badRequest("HTTP requires CRLF terminators")}
	}
	parts := bytes.SplitN(bytes.Trim(line, " \t\n\r\v\f"), []byte(" "), 3)
	if len(parts) != 3 {
		return requestLine{answer: badRequest("Malformed Request-Line")}
	}
	method, uri, proto := parts[0], parts[1], parts[2]
	version, ok := bytes.CutPrefix(proto, []byte("HTTP/"))
	if !ok {
		return requestLine{answer: badRequest("Malformed Request-Line: bad protocol")}
	}
	majorText, minorText, ok := bytes.Cut(version, []byte("."))
	if !ok {
		return requestLine{answer: badRequest("Malformed Request-Line: bad version")}
	}
	major, err1 := strconv.Atoi(string(majorText))
	minor, err2 := strconv.Atoi(string(minorText))
	if err1 != nil || err2 != nil || major < 0 || minor < 0 {
		return requestLine{answer: badRequest("Malformed Request-Line")}
	}
	if major > 1 || (major == 1 && minor > 1) {
		return requestLine{answer: simpleResponse("505 HTTP Version Not Supported", "Cannot fulfill request")}
	}
	if bytes.ContainsFunc(method, func(r rune) bool { return 'a' <= r && r <= 'z' }) {
		return requestLine{answer: badRequest("Malformed method name: According to RFC 2616 (section 5.1.1) and its " +
			"successors RFC 7230 (section 3.1.1) and RFC 7231 (section 4.1) method names are case-sensitive and uppercase.")}
	}
	target, answer := checkTarget(string(method), uri)
	if answer != nil {
		return requestLine{answer: answer}
	}
	if major != 1 {
		// Only the major version must match the server's.
		return requestLine{answer: simpleResponse("505 HTTP Version Not Supported", "")}
	}
	return requestLine{method: method, target: target, major: major, minor: minor}
}

// checkTarget is cheroot's reading of a request target (urllib's urlsplit,
// then the unquoting of the path except %2F); target is the origin-form
// target whose decoding by net/http is cheroot's PATH_INFO.
func checkTarget(method string, uri []byte) (target, answer []byte) {
	if bytes.ContainsFunc(uri, func(r rune) bool { return r >= 0x80 }) {
		// urlsplit decodes the target as ASCII.
		return nil, badRequest("Malformed Request-URI")
	}
	s := string(uri)
	rest, fragment, _ := strings.Cut(s, "#")
	scheme := urlScheme(rest)
	if scheme != "" {
		rest = rest[len(scheme)+1:]
	}
	authority := ""
	if len(rest) >= 2 && rest[:2] == "//" {
		end := 2
		for end < len(rest) && rest[end] != '/' && rest[end] != '?' {
			end++
		}
		authority, rest = rest[2:end], rest[end:]
	}
	path, query, hasQuery := strings.Cut(rest, "?")
	switch method {
	case http.MethodOptions:
		// Taken as sent, not unquoted.
		path = escapeAll(path)
	case http.MethodConnect:
		return nil, simpleResponse("405 Method Not Allowed", "")
	default:
		switch {
		case scheme != "" || authority != "":
			return nil, badRequest("Absolute URI not allowed if server is not a proxy.")
		case !bytes.HasPrefix(uri, []byte("/")):
			return nil, badRequest(`Invalid path in Request-URI: request-target must contain origin-form which ` +
				`starts with absolute-path (URI starting with a slash "/").`)
		case fragment != "":
			return nil, badRequest("Illegal #fragment in Request-URI.")
		}
		path = escapeForPathInfo(path)
	}
	if len(path) == 0 || path[0] != '/' {
		path = "/" + path
	}
	target = []byte(path)
	if hasQuery {
		target = append(append(target, '?'), escapeMalformed(query)...)
	}
	return target, nil
}

// urlScheme is urlsplit's scheme: letters, digits, "+-." before the
// first colon, starting with a letter.
func urlScheme(s string) string {
	i := strings.IndexByte(s, ':')
	if i <= 0 || !isAlpha(s[0]) {
		return ""
	}
	for j := 0; j < i; j++ {
		c := s[j]
		if !isAlpha(c) && !('0' <= c && c <= '9') && c != '+' && c != '-' && c != '.' {
			return ""
		}
	}
	return s[:i]
}

func isAlpha(c byte) bool { return ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') }

func isHex(c byte) bool {
	return ('0' <= c && c <= '9') || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F')
}

// escapeForPathInfo escapes what cheroot leaves undecoded in the path so
// that net/http decodes it to cheroot's PATH_INFO: a malformed escape
// stays as sent, and %2F (of either case, rejoined as "%2F") stays
// encoded.
func escapeForPathInfo(p string) string {
	var b []byte
	for i := 0; i < len(p); i++ {
		switch {
		case p[i] != '%':
		case !validEscape(p, i):
			b = append(b, "%25"...)
			continue
		case p[i+1] == '2' && (p[i+2] == 'F' || p[i+2] == 'f'):
			b = append(b, "%252F"...)
			i += 2
			continue
		}
		b = append(b, p[i])
	}
	return string(b)
}

// escapeMalformed escapes the percent sign of each malformed escape of a
// query, which webob's parse_qsl keeps as sent and net/http's ParseQuery
// would drop with its parameter.
func escapeMalformed(q string) string {
	var b []byte
	for i := 0; i < len(q); i++ {
		if q[i] == '%' && !validEscape(q, i) {
			b = append(b, "%25"...)
			continue
		}
		b = append(b, q[i])
	}
	return string(b)
}

func validEscape(s string, i int) bool { return i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) }

// escapeAll escapes every percent sign, for a path taken as sent.
func escapeAll(p string) string {
	return strings.ReplaceAll(p, "%", "%25")
}

// checkHead is cheroot's read_request_line and read_request_headers over
// a complete head; the head for net/http carries the rewritten request
// line, at most one Transfer-Encoding and exactly one Host (the last one
// sent, or defaultHost for none, as webob reads the WSGI
// environment), net/http's reading of which is then cheroot's.
func checkHead(lines [][]byte, defaultHost string) checkedHead {
	rl := checkRequestLine(lines[0])
	if rl.answer != nil {
		return checkedHead{answer: rl.answer}
	}
	out := fmt.Appendf(nil, "%s %s HTTP/%d.%d\r\n", rl.method, rl.target, rl.major, rl.minor)
	var te [][]byte
	var length int64
	host := []byte(defaultHost)
	for _, line := range lines[1:] {
		if !bytes.HasSuffix(line, crlf) {
			return checkedHead{answer: badRequest("HTTP requires CRLF terminators")}
		}
		if len(line) == len(crlf) {
			break
		}
		if line[0] != ' ' && line[0] != '\t' {
			name, value, ok := bytes.Cut(line, []byte(":"))
			if !ok {
				return checkedHead{answer: badRequest("Illegal header line.")}
			}
			value = bytes.TrimSpace(value)
			switch http.CanonicalHeaderKey(string(bytes.TrimSpace(name))) {
			case "Content-Length":
				n, err := strconv.ParseInt(string(value), 10, 64)
				if err != nil || !isDigits(value) {
					return checkedHead{answer: badRequest("Malformed Content-Length Header.")}
				}
				length = n
			case "Transfer-Encoding":
				// Left out: net/http gets one, if any, below.
				for _, enc := range bytes.Split(value, []byte(",")) {
					if enc = bytes.ToLower(bytes.TrimSpace(enc)); len(enc) > 0 {
						te = append(te, enc)
					}
				}
				continue
			case "Host":
				host = value
				continue
			}
		}
		out = append(out, line...)
	}
	chunked := false
	if rl.minor >= 1 {
		// cheroot (as RFC 7230) reads Transfer-Encoding from HTTP/1.1
		// clients only; any coding but chunked is not implemented.
		for _, enc := range te {
			if string(enc) != "chunked" {
				return checkedHead{answer: simpleResponse("501 Unimplemented", "")}
			}
			chunked = true
		}
	}
	if chunked {
		out = append(out, "Transfer-Encoding: chunked\r\n"...)
	}
	out = fmt.Appendf(out, "Host: %s\r\n", host)
	out = append(out, crlf...)
	return checkedHead{head: out, chunked: chunked, length: length}
}

func isDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(b) > 0
}

// tlsConnKey carries a fronted connection's TLS state to its requests.
type tlsConnKey struct{}

// cherootConnContext remembers the TLS connection under a front, which
// net/http no longer sees.
func cherootConnContext(ctx context.Context, c net.Conn) context.Context {
	if cc, ok := c.(*cherootConn); ok {
		if tc := cc.tlsConn(); tc != nil {
			return context.WithValue(ctx, tlsConnKey{}, tc)
		}
	}
	return ctx
}

// withTLSState gives requests of a fronted TLS connection their r.TLS, as
// net/http gives it on a bare one.
func withTLSState(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if tc, ok := r.Context().Value(tlsConnKey{}).(*tls.Conn); ok && r.TLS == nil {
			st := tc.ConnectionState()
			r = r.WithContext(r.Context())
			r.TLS = &st
		}
		next.ServeHTTP(w, r)
	})
}

// serverHeader names the server in every answer, as cheroot's
// HTTPRequest.send_headers does unless the application named one.
func serverHeader(name string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Server", name)
		next.ServeHTTP(w, r)
	})
}
