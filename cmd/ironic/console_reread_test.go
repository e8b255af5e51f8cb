package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// staleRead sits between the browser and the API and, once armed, makes
// the node page's next read of a node arrive late and old: on a
// provision action it reads the node first (as it is before the action),
// passes the action on, and answers the page's next GET of that node
// with that read, held until the test releases it — a read the server
// answered before the action's changes and the network delivered after
// the stream had shown them. So that the read is asked for before the
// changes reach the page, as in that race, the change stream's data is
// held from arming until the page's GET arrives. Every other request
// passes through.
type staleRead struct {
	backend *url.URL
	proxy   *httputil.ReverseProxy

	mu        sync.Mutex
	armed     bool
	hold      chan struct{} // the stream's data waits while it is open
	node      string        // the node's path, /v1/nodes/{uuid}
	stale     []byte
	release   chan struct{}
	delivered chan struct{}
	reread    chan struct{} // closed at the first read of the node after the stale one
	rereadOn  bool
}

func newStaleRead(t *testing.T, backend string) *staleRead {
	u, err := url.Parse(backend)
	if err != nil {
		t.Fatal(err)
	}
	p := httputil.NewSingleHostReverseProxy(u)
	p.FlushInterval = -1 // the change stream
	s := &staleRead{backend: u, proxy: p, release: make(chan struct{}), delivered: make(chan struct{}), reread: make(chan struct{})}
	p.ModifyResponse = func(resp *http.Response) error {
		if resp.Request.URL.Path == "/openkeel/v1/changes" {
			resp.Body = &gatedBody{ReadCloser: resp.Body, s: s}
		}
		return nil
	}
	return s
}

func (s *staleRead) arm() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.armed = true
	s.hold = make(chan struct{})
}

// gatedBody passes the change stream on, except while the proxy holds it.
type gatedBody struct {
	io.ReadCloser
	s *staleRead
}

func (g *gatedBody) Read(p []byte) (int, error) {
	n, err := g.ReadCloser.Read(p)
	g.s.mu.Lock()
	hold := g.s.hold
	g.s.mu.Unlock()
	if hold != nil {
		<-hold
	}
	return n, err
}

func (s *staleRead) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	switch {
	case s.armed && r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/states/provision"):
		s.armed = false
		s.node = strings.TrimSuffix(r.URL.Path, "/states/provision")
		s.mu.Unlock()
		stale := s.read(w, r)
		if stale == nil {
			return
		}
		s.mu.Lock()
		s.stale = stale
		s.mu.Unlock()
	case s.stale != nil && r.Method == http.MethodGet && r.URL.Path == s.node:
		stale := s.stale
		s.stale = nil
		close(s.hold)
		s.hold = nil
		s.mu.Unlock()
		<-s.release
		w.Header().Set("Content-Type", "application/json")
		w.Write(stale)
		close(s.delivered)
		s.mu.Lock()
		s.rereadOn = true
		s.mu.Unlock()
		return
	case s.rereadOn && r.Method == http.MethodGet && r.URL.Path == s.node:
		s.rereadOn = false
		close(s.reread)
		s.mu.Unlock()
	default:
		s.mu.Unlock()
	}
	s.proxy.ServeHTTP(w, r)
}

// read GETs the node as the page would, with the action's headers.
func (s *staleRead) read(w http.ResponseWriter, r *http.Request) []byte {
	req, err := http.NewRequestWithContext(r.Context(), http.MethodGet, s.backend.String()+s.node, nil)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return nil
	}
	for _, h := range []string{"X-OpenStack-Ironic-API-Version", "X-Auth-Token", "Authorization"} {
		if v := r.Header.Get(h); v != "" {
			req.Header.Set(h, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return nil
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		http.Error(w, fmt.Sprint("stale read: ", resp.StatusCode, err), http.StatusBadGateway)
		return nil
	}
	return body
}

// A read of the node that crossed the changes the stream showed is not
// shown over them: the page reads the node again. (The CI run of stop 36
// saw the page stuck at "deploying → active" with the deploy long done:
// the page's read after "Deploy" came back after the stream's last
// changes and was shown over them.)
func TestWebConsoleRereadsAfterStreamChanges(t *testing.T) {
	chromium := requireChromium(t)
	dir := t.TempDir()
	port := freePort(t)
	conf := writeConf(t, dir, fmt.Sprintf("[api]\nport = %d\n", port))
	p := startIronic(t, dir, "ironic", "--config-file", conf)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	waitHealthy(t, p, base+"/healthcheck")
	if !hasChangeStream(t, base) {
		t.Fatal("the all-in-one serves no change stream")
	}
	c := &apiClient{t: t, base: base, version: "1.115"}
	if status, body := c.do("POST", "/v1/nodes", map[string]any{"name": "stale-01", "driver": "fake-hardware"}); status != http.StatusCreated {
		t.Fatalf("create: %d %v", status, body)
	}
	stale := newStaleRead(t, base)
	front := httptest.NewServer(stale)
	t.Cleanup(front.Close)
	t.Cleanup(func() {
		select {
		case <-stale.release:
		default:
			close(stale.release)
		}
	})

	b := newConsoleBrowser(t, chromium)
	b.open(front.URL + "/openkeel/console/#/node/stale-01")
	b.waitFor(`document.getElementById('provision-state')?.textContent === 'enroll' && document.getElementById('live')?.dataset.mode === 'stream'`, 30*time.Second)
	b.waitFor(`document.querySelector('#action-manage') && !document.querySelector('#action-manage').disabled`, 30*time.Second)
	stale.arm()
	b.click("#action-manage")
	b.waitFor(`document.getElementById('confirm').open`, 10*time.Second)
	b.click("#confirm-ok")
	// The page's own read is held: only the stream can show the change.
	b.waitFor(`document.getElementById('provision-state').textContent === 'manageable' && !document.getElementById('target-provision-state')`, 30*time.Second)
	c.waitState("stale-01", "manageable")
	// From here the page must never show the node as the held read has it.
	b.eval(`window.sawStale = false; new MutationObserver(() => {
		if (document.getElementById('provision-state')?.textContent === 'enroll') window.sawStale = true;
	}).observe(document.body, { subtree: true, childList: true, characterData: true })`)
	close(stale.release)
	select {
	case <-stale.delivered:
	case <-time.After(30 * time.Second):
		t.Fatal("the page never read the node after the action")
	}
	select {
	case <-stale.reread:
	case <-time.After(30 * time.Second):
		t.Fatalf("the page never read the node again after a read older than the changes it had shown; it shows %q",
			b.text(`document.getElementById('provision-state').textContent`))
	}
	b.waitFor(`document.getElementById('provision-state').textContent === 'manageable' && !document.getElementById('target-provision-state') && document.getElementById('reservation').textContent === '—'`, 30*time.Second)
	if b.text(`String(window.sawStale)`) != "false" {
		t.Fatal("the page showed a read older than the changes it had shown")
	}

	// A change shown from the stream keeps the action buttons that stay
	// the same: one replaced under the pointer loses the click (CI saw
	// chromedp's click fail on a button swapped out by a re-read).
	b.eval(`window.kept = document.getElementById('action-maintenance-on')`)
	if status, body := c.do("PATCH", "/v1/nodes/stale-01", []map[string]any{{"op": "add", "path": "/extra/rack", "value": "r7"}}); status != http.StatusOK {
		t.Fatalf("patch: %d %v", status, body)
	}
	b.waitFor(`[...document.querySelectorAll('#fields tr')].some(r => r.cells[0].textContent === 'extra' && r.cells[1].textContent.includes('r7'))`, 30*time.Second)
	if b.text(`String(!!window.kept && window.kept.isConnected && window.kept === document.getElementById('action-maintenance-on'))`) != "true" {
		t.Fatal("a change to the node replaced its action buttons")
	}
}
