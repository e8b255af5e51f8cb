package main

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"golang.org/x/crypto/bcrypt"

	"github.com/openkeel/ironic/testing/await"
	"github.com/openkeel/ironic/testing/keystone"
)

// The web console in headless Chromium against the all-in-one on
// fake-hardware: the overview counts the fleet, the node list pages on
// the server and filters, and a node is taken through manage, provide and
// deploy by its buttons and confirmation dialog while its page follows
// without a reload (through the change stream when the server has one,
// by re-reading otherwise). A node field holding markup stays text.
// Screenshots of each page are kept (IRONIC_TEST_ARTIFACTS, else the
// test's temporary folder; docs/console/ too with
// IRONIC_CONSOLE_DOCS_SCREENSHOTS=1).
func TestWebConsoleInBrowser(t *testing.T) {
	chromium := requireChromium(t)
	dir := t.TempDir()
	port := freePort(t)
	conf := writeConf(t, dir, fmt.Sprintf("[api]\nport = %d\n[conductor]\nconductor_group = rack-a\n", port))
	p := startIronic(t, dir, "ironic", "--config-file", conf)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	waitHealthy(t, p, base+"/healthcheck")
	c := &apiClient{t: t, base: base, version: "1.115"}

	// Twelve nodes in the conductor's group: two pages of ten, one of its
	// own resource class, one in maintenance, one whose description is
	// markup.
	const fleet = 12
	for i := 1; i <= fleet; i++ {
		n := map[string]any{"name": fmt.Sprintf("console-%02d", i), "driver": "fake-hardware",
			"resource_class": "baremetal", "conductor_group": "rack-a"}
		switch i {
		case 2:
			n["resource_class"] = "gpu"
		case 5:
			n["bios_interface"] = "fake"
		case 3:
			n["description"] = `<img src=x id=xss-probe onerror="document.title='owned'">`
		}
		if status, body := c.do("POST", "/v1/nodes", n); status != http.StatusCreated {
			t.Fatalf("create %v: %d %v", n["name"], status, body)
		}
	}
	if status, body := c.do("PUT", "/v1/nodes/console-04/maintenance", map[string]any{"reason": "fan replacement"}); status != http.StatusAccepted {
		t.Fatalf("maintenance: %d %v", status, body)
	}
	// A few nodes further on, for an overview with more than one state.
	for _, name := range []string{"console-05", "console-06", "console-07"} {
		if status, body := c.do("PUT", "/v1/nodes/"+name+"/states/provision", map[string]any{"target": "manage"}); status != http.StatusAccepted {
			t.Fatalf("manage %s: %d %v", name, status, body)
		}
	}
	for _, name := range []string{"console-05", "console-06", "console-07"} {
		c.waitState(name, "manageable")
	}
	if status, body := c.do("PUT", "/v1/nodes/console-05/states/power", map[string]any{"target": "power on"}); status != http.StatusAccepted {
		t.Fatalf("power on: %d %v", status, body)
	}
	await.UntilReason(t, 30*time.Second, "console-05 powered on", func() (bool, string) {
		_, n := c.do("GET", "/v1/nodes/console-05", nil)
		return n["power_state"] == "power on", fmt.Sprint(n["power_state"])
	})
	stream := hasChangeStream(t, base)
	t.Logf("change stream served: %v", stream)

	resp, err := http.Get(base + "/openkeel/console/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if csp := resp.Header.Get("Content-Security-Policy"); resp.StatusCode != http.StatusOK || !strings.Contains(csp, "script-src 'self'") {
		t.Fatalf("console page: %d, CSP %q", resp.StatusCode, csp)
	}

	b := newConsoleBrowser(t, chromium)
	b.open(base + "/openkeel/console/")
	b.waitFor(fmt.Sprintf(`document.getElementById('total')?.textContent === '%d'`, fleet), 30*time.Second)
	b.waitFor(`document.querySelector('#by-provision [data-count="enroll"]')?.textContent === '9' && document.querySelector('#by-power [data-count="power on"]')?.textContent === '1'`, 10*time.Second)
	b.waitFor(`[...document.querySelectorAll('#groups tbody tr')].some(r => r.cells[0].textContent === 'rack-a' && r.cells[1].textContent === '12')`, 10*time.Second)
	b.waitFor(`document.getElementById('total-maintenance').textContent === '1'`, 10*time.Second)

	// Server-side paging: ten rows, then the remaining two.
	b.eval(`location.hash = '#/nodes?limit=10'`)
	b.waitFor(`document.querySelectorAll('#nodes tbody tr').length === 10`, 30*time.Second)
	first := b.text(`document.querySelector('#nodes tbody tr a').textContent`)
	b.screenshot("nodes")
	b.click("#page-next")
	b.waitFor(fmt.Sprintf(`document.querySelectorAll('#nodes tbody tr').length === %d`, fleet-10), 30*time.Second)
	b.click("#page-prev")
	b.waitFor(fmt.Sprintf(`document.querySelectorAll('#nodes tbody tr').length === 10 && document.querySelector('#nodes tbody tr a').textContent === %q`, first), 30*time.Second)
	// Filters go to the API's own query parameters.
	b.eval(`location.hash = '#/nodes?resource_class=gpu'`)
	b.waitFor(`document.querySelectorAll('#nodes tbody tr').length === 1 && document.querySelector('#nodes tbody tr a').textContent === 'console-02'`, 30*time.Second)
	b.eval(`location.hash = '#/nodes?maintenance=true'`)
	b.waitFor(`document.querySelectorAll('#nodes tbody tr').length === 1 && document.querySelector('#nodes tbody tr a').textContent === 'console-04'`, 30*time.Second)

	// Markup in a field is shown as text and never becomes an element.
	b.eval(`location.hash = '#/node/console-03'`)
	b.waitFor(`[...document.querySelectorAll('#fields tr')].some(r => r.cells[0].textContent === 'description' && r.cells[1].textContent.includes('<img src=x id=xss-probe'))`, 30*time.Second)
	if b.text(`String(document.getElementById('xss-probe') === null && document.title !== 'owned')`) != "true" {
		t.Fatal("a node's description became markup in the page")
	}

	// The node page from the list, then manage, provide and deploy by
	// its buttons; the marker proves the page is never reloaded.
	b.eval(`location.hash = '#/nodes?limit=10'`)
	b.waitFor(`[...document.querySelectorAll('#nodes tbody a')].some(a => a.textContent === 'console-01')`, 30*time.Second)
	b.eval(`[...document.querySelectorAll('#nodes tbody a')].find(a => a.textContent === 'console-01').click()`)
	b.waitFor(`document.getElementById('provision-state')?.textContent === 'enroll'`, 30*time.Second)
	b.waitFor(`!!(document.querySelector('#node-ports h2') && document.querySelector('#node-history h2') && document.querySelector('#node-inventory h2'))`, 30*time.Second)
	b.eval(`window.consoleNotReloaded = true`)
	for i, step := range []struct{ button, state string }{
		{"#action-manage", "manageable"},
		{"#action-provide", "available"},
		{"#action-active", "active"},
	} {
		b.waitFor(fmt.Sprintf(`document.querySelector(%q) && !document.querySelector(%q).disabled`, step.button, step.button), 60*time.Second)
		b.click(step.button)
		b.waitFor(`document.getElementById('confirm').open`, 10*time.Second)
		if i == 0 {
			b.screenshot("confirm")
		}
		before := b.text(`document.getElementById('live').dataset.events`)
		b.click("#confirm-ok")
		b.waitFor(fmt.Sprintf(`document.getElementById('provision-state').textContent === %q && !document.getElementById('target-provision-state')`, step.state), 60*time.Second)
		if after := b.text(`document.getElementById('live').dataset.events`); stream && after == before {
			t.Errorf("%s: the page changed without an event from the stream", step.button)
		}
		if n := c.waitState("console-01", step.state); n["last_error"] != nil {
			t.Fatalf("%s: last_error %v", step.button, n["last_error"])
		}
	}
	if b.text(`String(window.consoleNotReloaded === true)`) != "true" {
		t.Fatal("the node page was reloaded")
	}
	mode := b.text(`document.getElementById('live').dataset.mode`)
	events := b.text(`document.getElementById('live').dataset.events`)
	t.Logf("live updates: %s, %s events", mode, events)
	switch {
	case stream && (mode != "stream" || events == "0"):
		t.Errorf("the server has a change stream but the page is %q with %s events", mode, events)
	case !stream && mode != "polling":
		t.Errorf("without a change stream the page should poll, it is %q", mode)
	}
	b.screenshot("node")

	// The other actions on a manageable node: clean with steps of the
	// dialog's list, maintenance with a reason and back, boot device.
	b.eval(`location.hash = '#/node/console-05'`)
	b.waitFor(`document.getElementById('node-name')?.textContent === 'console-05' && !document.getElementById('action-clean').disabled`, 30*time.Second)
	b.click("#action-clean")
	b.waitFor(`document.getElementById('confirm').open && !!document.getElementById('clean-steps')`, 10*time.Second)
	b.eval(`document.getElementById('clean-steps').value = '[{"interface": "bios", "step": "cache_bios_settings"}]'`)
	b.click("#confirm-ok")
	b.waitFor(`document.getElementById('action-status').textContent === 'Clean: accepted' && document.getElementById('provision-state').textContent === 'manageable' && !document.getElementById('target-provision-state')`, 60*time.Second)
	if n := c.waitState("console-05", "manageable"); n["last_error"] != nil {
		t.Fatalf("clean: last_error %v", n["last_error"])
	}
	b.click("#action-maintenance-on")
	b.waitFor(`document.getElementById('confirm').open && !!document.getElementById('maintenance-reason')`, 10*time.Second)
	b.eval(`document.getElementById('maintenance-reason').value = 'disk swap'`)
	b.click("#confirm-ok")
	b.waitFor(`document.getElementById('maintenance').textContent === 'in maintenance: disk swap'`, 30*time.Second)
	b.click("#action-maintenance-off")
	b.waitFor(`document.getElementById('confirm').open`, 10*time.Second)
	b.click("#confirm-ok")
	b.waitFor(`document.getElementById('maintenance').textContent === 'no'`, 30*time.Second)
	b.click("#action-boot-device")
	b.waitFor(`document.getElementById('confirm').open && !!document.getElementById('boot-device')`, 10*time.Second)
	b.click("#confirm-ok")
	b.waitFor(`document.getElementById('action-status').textContent === 'boot device pxe: accepted'`, 30*time.Second)
	if status, body := c.do("GET", "/v1/nodes/console-05/management/boot_device", nil); status != http.StatusOK || body["boot_device"] != "pxe" {
		t.Errorf("boot device: %d %v", status, body)
	}

	// Back to the overview: the deployed node is counted as active.
	b.eval(`location.hash = '#/'`)
	b.waitFor(`document.getElementById('total-active')?.textContent === '1'`, 30*time.Second)
	b.screenshot("overview")
}

// hasChangeStream reports whether the server serves the change stream
// (issue 24 item 1), which the console uses when it is there.
func hasChangeStream(t *testing.T, base string) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/openkeel/v1/changes", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("change stream: %v", err)
	}
	// The headers say it; the body is an endless stream.
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// requireChromium returns Debian's chromium, skipping the test without
// it (failing in CI, where it is required).
func requireChromium(t *testing.T) string {
	t.Helper()
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("IRONIC_SPEC_REQUIRED") == "1" {
			t.Fatal("Debian's chromium is required in CI")
		}
		t.Skip("chromium not installed")
	}
	return chromium
}

// consoleBrowser is a headless Chromium on one page.
type consoleBrowser struct {
	t   *testing.T
	ctx context.Context
	out []string
}

func newConsoleBrowser(t *testing.T, chromium string) *consoleBrowser {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium), chromedp.NoSandbox,
		chromedp.Flag("disable-gpu", true), chromedp.WindowSize(1280, 860))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	t.Cleanup(cancelBrowser)
	out := []string{os.Getenv("IRONIC_TEST_ARTIFACTS")}
	if out[0] == "" {
		out[0] = t.TempDir()
	}
	if os.Getenv("IRONIC_CONSOLE_DOCS_SCREENSHOTS") == "1" {
		out = append(out, filepath.Join("..", "..", "docs", "console"))
	}
	return &consoleBrowser{t: t, ctx: bctx, out: out}
}

func (b *consoleBrowser) open(url string) {
	b.t.Helper()
	// The browser lives as long as the context of its first action,
	// which must have no deadline.
	if err := chromedp.Do(b.ctx, chromedp.Navigate(url)); err != nil {
		b.t.Fatalf("open %s: %v", url, err)
	}
}

// waitFor waits until the expression is true in the page, showing the
// page's text when it never is.
func (b *consoleBrowser) waitFor(expr string, timeout time.Duration) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, timeout+5*time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingInterval(50*time.Millisecond),
		chromedp.WithPollingTimeout(timeout))); err != nil {
		page, _ := chromedp.Run(b.ctx, chromedp.Evaluate[string](`document.body.innerText`))
		b.t.Fatalf("waiting for %s: %v\npage:\n%s", expr, err, page)
	}
}

func (b *consoleBrowser) eval(expr string) {
	b.t.Helper()
	if _, err := chromedp.Run(b.ctx, chromedp.Evaluate[chromedp.Void](expr)); err != nil {
		b.t.Fatalf("%s: %v", expr, err)
	}
}

func (b *consoleBrowser) text(expr string) string {
	b.t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](expr))
	if err != nil {
		b.t.Fatalf("%s: %v", expr, err)
	}
	return s
}

func (b *consoleBrowser) click(sel string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(sel))); err != nil {
		b.t.Fatalf("click %s: %v", sel, err)
	}
}

func (b *consoleBrowser) screenshot(name string) {
	b.t.Helper()
	shot, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	for _, dir := range b.out {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+".png"), shot, 0o644); err != nil {
			b.t.Errorf("screenshot %s: %v", name, err)
		}
	}
}

// The console under auth_strategy = keystone: the login form obtains a
// token from the identity endpoint, a project reader sees only its
// project's nodes, and an action its role may not take is shown as not
// permitted, the node unchanged.
func TestWebConsoleKeystoneInBrowser(t *testing.T) {
	chromium := requireChromium(t)
	ks := keystone.New(t).
		Project("service").Project("alpha").Project("beta").
		User("ironic", "svc-pw").Grant("ironic", "service", "admin", "service").
		User("admin", "adm-pw").GrantSystem("admin", "admin", "member", "reader").
		User("carol", "c-pw").Grant("carol", "alpha", "reader")
	base, _ := startKeystoneIronic(t, ks)
	admin := &apiClient{t: t, base: base, version: "1.115", header: http.Header{"X-Auth-Token": {ks.SystemToken("admin")}}}
	for _, n := range []struct{ name, owner string }{{"alpha-1", "alpha"}, {"alpha-2", "alpha"}, {"beta-1", "beta"}} {
		if status, body := admin.do("POST", "/v1/nodes", map[string]any{"name": n.name, "driver": "fake-hardware", "owner": ks.ProjectID(n.owner)}); status != http.StatusCreated {
			t.Fatalf("create %s: %d %v", n.name, status, body)
		}
	}

	b := newConsoleBrowser(t, chromium)
	b.open(base + "/openkeel/console/")
	b.waitFor(`location.hash === '#/login' && !!document.getElementById('login-keystone')`, 30*time.Second)
	b.eval(`document.getElementById('login-user').value = 'carol'; document.getElementById('login-password').value = 'wrong'; document.getElementById('login-project').value = 'alpha'`)
	b.screenshot("login")
	b.click("#login-keystone button[type=submit]")
	b.waitFor(`document.getElementById('login-error').textContent.startsWith('Login failed')`, 30*time.Second)
	b.eval(`document.getElementById('login-password').value = 'c-pw'`)
	b.click("#login-keystone button[type=submit]")
	// Only project alpha's two nodes are counted and listed.
	b.waitFor(`document.getElementById('total')?.textContent === '2'`, 30*time.Second)
	if got := b.text(`JSON.parse(sessionStorage.getItem('openkeel.console.auth')).kind + ' ' + String(JSON.stringify(sessionStorage).includes('c-pw'))`); got != "token false" {
		t.Errorf("session keeps %q, want a token and never the password", got)
	}
	b.eval(`location.hash = '#/nodes'`)
	b.waitFor(`document.querySelectorAll('#nodes tbody tr').length === 2 && ![...document.querySelectorAll('#nodes tbody a')].some(a => a.textContent === 'beta-1')`, 30*time.Second)
	// A reader may look but not act.
	b.eval(`location.hash = '#/node/alpha-1'`)
	b.waitFor(`document.getElementById('provision-state')?.textContent === 'enroll'`, 30*time.Second)
	b.click("#action-power-off")
	b.waitFor(`document.getElementById('confirm').open`, 10*time.Second)
	b.click("#confirm-ok")
	b.waitFor(`document.getElementById('confirm-error').textContent === 'not permitted' && document.getElementById('action-status').textContent === 'power off: not permitted'`, 30*time.Second)
	b.screenshot("not-permitted")
	if _, n := admin.do("GET", "/v1/nodes/alpha-1", nil); n["target_power_state"] != nil || n["power_state"] == "power off" {
		t.Errorf("a refused action changed the node: %v %v", n["power_state"], n["target_power_state"])
	}
	// Another project's node is not found, as the API conceals it.
	b.eval(`location.hash = '#/node/beta-1'`)
	b.waitFor(`!!document.getElementById('not-found')`, 30*time.Second)
}

// The console under auth_strategy = http_basic: the login form's user
// and password are sent as the API's basic credentials; wrong ones are
// refused on the form.
func TestWebConsoleHTTPBasicInBrowser(t *testing.T) {
	chromium := requireChromium(t)
	dir := t.TempDir()
	hash, err := bcrypt.GenerateFromPassword([]byte("op-pw"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	users := filepath.Join(dir, "htpasswd")
	if err := os.WriteFile(users, []byte("operator:"+string(hash)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	conf := writeConf(t, dir, fmt.Sprintf("[DEFAULT]\nauth_strategy = http_basic\nhttp_basic_auth_user_file = %s\n[api]\nport = %d\n", users, port))
	p := startIronic(t, dir, "ironic", "--config-file", conf)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	waitHealthy(t, p, base+"/healthcheck")
	c := &apiClient{t: t, base: base, version: "1.115", header: http.Header{
		"Authorization": {"Basic " + base64.StdEncoding.EncodeToString([]byte("operator:op-pw"))}}}
	if status, body := c.do("POST", "/v1/nodes", map[string]any{"name": "basic-1", "driver": "fake-hardware"}); status != http.StatusCreated {
		t.Fatalf("create: %d %v", status, body)
	}

	b := newConsoleBrowser(t, chromium)
	b.open(base + "/openkeel/console/")
	b.waitFor(`location.hash === '#/login' && !!document.getElementById('login-basic')`, 30*time.Second)
	b.eval(`document.getElementById('login-user').value = 'operator'; document.getElementById('login-password').value = 'nope'`)
	b.click("#login-basic button[type=submit]")
	b.waitFor(`document.getElementById('login-error').textContent.startsWith('Login failed')`, 30*time.Second)
	b.eval(`document.getElementById('login-password').value = 'op-pw'`)
	b.click("#login-basic button[type=submit]")
	b.waitFor(`document.getElementById('total')?.textContent === '1' && document.getElementById('who').textContent === 'operator'`, 30*time.Second)
	b.eval(`location.hash = '#/node/basic-1'`)
	b.waitFor(`document.getElementById('provision-state')?.textContent === 'enroll'`, 30*time.Second)
}
