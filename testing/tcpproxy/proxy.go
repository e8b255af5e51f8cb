// Package tcpproxy is a TCP proxy for tests that stands between a client
// and a real peer (MariaDB, a conductor's JSON-RPC port) and cuts the
// peer off on demand, as a stopped or crashed server, a failover or a
// broken network would:
//
//	p := tcpproxy.New(t, "127.0.0.1:3306")
//	url := "mysql+pymysql://root@" + p.Addr() + "/ironic"
//	p.Cut()     // open connections are reset, new ones refused
//	p.Restore() // new connections reach the peer again
//
// The proxy listens on 127.0.0.1, logs what it does to the test, and
// stops with the test.
package tcpproxy

import (
	"io"
	"net"
	"sync"
	"testing"
)

// Proxy forwards connections from Addr to its target.
type Proxy struct {
	t      testing.TB
	target string
	addr   string

	mu       sync.Mutex
	ln       net.Listener // nil while cut
	conns    map[net.Conn]struct{}
	accepted int
	closed   bool
	wg       sync.WaitGroup
}

// New starts a proxy to target (host:port) on a free 127.0.0.1 port.
func New(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("tcpproxy: listen: %v", err)
	}
	p := &Proxy{t: t, target: target, addr: ln.Addr().String(), conns: map[net.Conn]struct{}{}}
	p.serve(ln)
	t.Cleanup(p.close)
	return p
}

// Addr is the proxy's host:port, the address to give the client.
func (p *Proxy) Addr() string { return p.addr }

// Accepted is how many connections the proxy has accepted so far.
func (p *Proxy) Accepted() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.accepted
}

// Cut takes the peer away as a crashed server: the listening port closes
// (new connections are refused) and every open connection is reset in
// both directions, so statements in flight fail as they do when a server
// dies under them.
func (p *Proxy) Cut() {
	p.mu.Lock()
	ln := p.ln
	p.ln = nil
	conns := p.conns
	p.conns = map[net.Conn]struct{}{}
	p.mu.Unlock()
	if ln == nil {
		return
	}
	ln.Close()
	for c := range conns {
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0) // close sends RST, not FIN
		}
		c.Close()
	}
	p.t.Logf("tcpproxy %s: cut from %s (%d connections reset)", p.addr, p.Target(), len(conns)/2)
}

// Retarget sends new connections to target instead, as a proxy or a
// virtual IP in front of a Galera cluster fails over to another node;
// connections already open stay with the old peer (Cut them to move
// their clients too).
func (p *Proxy) Retarget(target string) {
	p.mu.Lock()
	old := p.target
	p.target = target
	p.mu.Unlock()
	p.t.Logf("tcpproxy %s: retargeted from %s to %s", p.addr, old, target)
}

// Target is where new connections go.
func (p *Proxy) Target() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.target
}

// Restore lets connections reach the peer again, on the same address.
// Call it from the test's goroutine: it fails the test when the port was
// taken meanwhile.
func (p *Proxy) Restore() {
	p.t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil || p.closed {
		return
	}
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		// Another process took the port while it was closed.
		p.t.Fatalf("tcpproxy: restore %s: %v", p.addr, err)
	}
	p.serveLocked(ln)
	p.t.Logf("tcpproxy %s: restored to %s", p.addr, p.target)
}

func (p *Proxy) serve(ln net.Listener) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.serveLocked(ln)
}

func (p *Proxy) serveLocked(ln net.Listener) {
	p.ln = ln
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return // closed by Cut or at the end of the test
			}
			p.wg.Add(1)
			go func() {
				defer p.wg.Done()
				p.forward(c)
			}()
		}
	}()
}

// forward pipes c to a new connection to the target until either side
// closes or the proxy is cut.
func (p *Proxy) forward(c net.Conn) {
	target := p.Target()
	up, err := net.Dial("tcp", target)
	if err != nil {
		p.t.Logf("tcpproxy %s: dial %s: %v", p.addr, target, err)
		c.Close()
		return
	}
	if !p.track(c, up) {
		// Cut between Accept and here: the client is reset as the others.
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0)
		}
		c.Close()
		up.Close()
		return
	}
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		// The copy ends with EOF, or with a reset or ErrClosed when the
		// proxy is cut: all of them simply end this direction.
		_, _ = io.Copy(dst, src)
		// Half-close so that the other direction drains, as a real
		// peer's FIN does.
		if tc, ok := dst.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
		done <- struct{}{}
	}
	go pipe(up, c)
	go pipe(c, up)
	<-done
	<-done
	p.untrack(c, up)
	c.Close()
	up.Close()
}

// track registers a connection pair; it refuses when the proxy is cut or
// closed.
func (p *Proxy) track(c, up net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln == nil || p.closed {
		return false
	}
	p.accepted++
	p.conns[c] = struct{}{}
	p.conns[up] = struct{}{}
	return true
}

func (p *Proxy) untrack(c, up net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.conns, c)
	delete(p.conns, up)
}

// close stops the proxy and waits for its goroutines.
func (p *Proxy) close() {
	p.Cut()
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.wg.Wait()
}
