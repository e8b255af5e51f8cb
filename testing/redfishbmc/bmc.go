// Package redfishbmc is a Redfish BMC emulator for tests: an httptest
// server on 127.0.0.1 that answers the requests Ironic's redfish hardware
// type makes (service root, sessions, systems with reset and boot override,
// secure boot, ethernet interfaces, chassis and managers with virtual
// media), configured with a fluent builder and able to inject faults:
//
//	bmc := redfishbmc.New(t).
//		System("sys-1", redfishbmc.PowerState("Off"), redfishbmc.SettleAfter(2)).
//		WithBasicAuth("admin", "secret").
//		WithSessions()
//	bmc.FailNext(1, http.StatusServiceUnavailable)
//	addr := bmc.URL()
//
// The server starts on the first call of URL (so TLS and auth can be chosen
// first) and stops when the test ends. Every request is logged to the test
// with its credentials left out; counters let tests assert what the client
// sent.
//
// Outside a test, Standalone builds one that logs to a log.Logger and
// Serve runs it on a given address until it is closed; cmd/redfishbmc is
// that as a process, configured from a JSON file (Config), whose faults a
// test injects through the control API (WithControl).
package redfishbmc

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Power states as Redfish spells them.
const (
	On          = "On"
	Off         = "Off"
	PoweringOn  = "PoweringOn"
	PoweringOff = "PoweringOff"
)

// Reset types the emulator implements (#ComputerSystem.Reset).
var defaultResetTypes = []string{
	"On", "ForceOff", "GracefulShutdown", "ForceRestart", "GracefulRestart", "Nmi", "PushPowerButton",
}

var defaultBootTargets = []string{"None", "Pxe", "Hdd", "Cd", "BiosSetup", "UefiHttp", "UefiTarget"}

// reporter is where the emulator logs its requests and reports misuse:
// the test it serves, or a logger when it runs on its own.
type reporter interface {
	Logf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// BMC is one emulated Redfish service hosting any number of systems.
type BMC struct {
	t reporter
	// listener is the one Serve opened; nil lets httptest pick a port on
	// 127.0.0.1.
	listener net.Listener
	// control serves the control API (control.go).
	control bool

	mu       sync.Mutex
	srv      *httptest.Server
	useTLS   bool
	vendor   string
	username string
	password string
	basic    bool
	sessOn   bool
	etags    bool

	systems  map[string]*System
	order    []string
	manager  manager
	chassis  chassis
	sessions map[string]string // token -> session id
	nextSess int
	created  int

	faults []fault
	holds  []*Hold
	counts map[string]int
	total  int

	tasks        []*bmcTask
	nextTask     int
	taskPolls    int
	taskFailures []string
	asyncRAID    bool
	images       map[string]firmwareImage

	subs       []*subscription
	nextSub    int
	nextEvent  int
	deliveries eventDeliveries // (eventservice.go)

	adapters     []*NetworkAdapter
	startOnReset bool

	// ramdisk is how the machines run their ramdisk (RunMachines).
	ramdisk RamdiskConfig

	// dell, when set, makes the BMC an iDRAC (dell.go).
	dell *dellOEM

	// sensors are the chassis' readings and the systems' health
	// (sensors.go).
	sensors sensorState
}

// New returns an emulator with no systems, no authentication and plain
// HTTP. It is not listening until URL is called.
func New(t testing.TB) *BMC {
	t.Helper()
	b := newBMC(t)
	t.Cleanup(b.close)
	return b
}

// logReporter reports to a logger; misuse ends the process, as a failed
// test would end the test.
type logReporter struct{ l *log.Logger }

func (r logReporter) Logf(format string, args ...any)   { r.l.Printf(format, args...) }
func (r logReporter) Fatalf(format string, args ...any) { r.l.Fatalf(format, args...) }

// Standalone returns an emulator for use outside a test (cmd/redfishbmc):
// requests are logged to l and Close stops it.
func Standalone(l *log.Logger) *BMC {
	return newBMC(logReporter{l})
}

// Close stops the server.
func (b *BMC) Close() { b.close() }

func newBMC(t reporter) *BMC {
	b := &BMC{
		t:        t,
		vendor:   "OpenKeel",
		systems:  map[string]*System{},
		sessions: map[string]string{},
		counts:   map[string]int{},
		manager: manager{
			ID: "BMC", DateTime: time.Now().UTC().Format(time.RFC3339),
			DateTimeLocalOffset: "+00:00",
			VirtualMedia: map[string]*virtualMedia{
				"Cd":     {ID: "Cd", MediaTypes: []string{"CD", "DVD"}},
				"Floppy": {ID: "Floppy", MediaTypes: []string{"Floppy", "USBStick"}},
			},
		},
		chassis: chassis{ID: "1U", UUID: newUUID(), IndicatorLED: "Off"},
	}
	return b
}

// WithTLS serves HTTPS with httptest's self-signed certificate.
func (b *BMC) WithTLS() *BMC {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.mustNotBeStarted("WithTLS")
	b.useTLS = true
	return b
}

// WithBasicAuth requires credentials on every request but the service
// root, and accepts them as HTTP basic authentication.
func (b *BMC) WithBasicAuth(username, password string) *BMC {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.username, b.password, b.basic = username, password, true
	return b
}

// WithSessions enables the SessionService: clients may POST credentials to
// /redfish/v1/SessionService/Sessions and use the X-Auth-Token returned.
func (b *BMC) WithSessions() *BMC {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.sessOn = true
	return b
}

// WithSessionsOnly enables sessions and refuses basic authentication, as
// some BMCs do.
func (b *BMC) WithSessionsOnly(username, password string) *BMC {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.username, b.password, b.basic, b.sessOn = username, password, false, true
	return b
}

// WithETags answers every resource with an ETag and refuses a PATCH whose
// If-Match names another version (412).
func (b *BMC) WithETags() *BMC {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.etags = true
	return b
}

// WithVendor sets the service root's Vendor ("" leaves it out).
func (b *BMC) WithVendor(vendor string) *BMC {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.vendor = vendor
	return b
}

// System adds a system with the given identity (its URL is
// /redfish/v1/Systems/<id>).
func (b *BMC) System(id string, opts ...SystemOption) *BMC {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, dup := b.systems[id]; dup {
		b.t.Fatalf("redfishbmc: system %q added twice", id)
	}
	s := newSystem(id)
	for _, o := range opts {
		o(s)
	}
	b.systems[id] = s
	b.order = append(b.order, id)
	return b
}

// URL starts the server if needed and returns its base URL
// (http://127.0.0.1:port or https://...).
func (b *BMC) URL() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.srv == nil {
		b.srv = httptest.NewUnstartedServer(http.HandlerFunc(b.serve))
		if b.listener != nil {
			_ = b.srv.Listener.Close()
			b.srv.Listener = b.listener
		}
		// Server-side errors (TLS handshakes refused by a verifying
		// client...) belong in the test's output, not on stderr.
		b.srv.Config.ErrorLog = log.New(testWriter{b.t}, "redfishbmc: ", 0)
		if b.useTLS {
			b.srv.StartTLS()
		} else {
			b.srv.Start()
		}
	}
	return b.srv.URL
}

// Address is URL without the scheme (host:port), the form an operator may
// put in redfish_address when https is meant.
func (b *BMC) Address() string {
	u := b.URL()
	return u[strings.Index(u, "://")+3:]
}

// SystemPath is the @odata.id of a system.
func SystemPath(id string) string { return "/redfish/v1/Systems/" + id }

// Server starts the server if needed and returns it, for tests that need
// its certificate or client.
func (b *BMC) Server() *httptest.Server {
	b.URL()
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.srv
}

type testWriter struct{ t reporter }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Logf("%s", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func (b *BMC) close() {
	b.mu.Lock()
	srv, holds := b.srv, b.holds
	b.mu.Unlock()
	for _, h := range holds {
		h.Release()
	}
	b.deliveries.stop()
	if srv != nil {
		srv.CloseClientConnections()
		srv.Close()
	}
}

func (b *BMC) mustNotBeStarted(what string) {
	if b.srv != nil {
		b.t.Fatalf("redfishbmc: %s after the server started", what)
	}
}

func newUUID() string {
	var u [16]byte
	if _, err := rand.Read(u[:]); err != nil {
		panic(fmt.Sprintf("redfishbmc: random: %v", err))
	}
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	h := hex.EncodeToString(u[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

func newToken() string {
	var u [20]byte
	if _, err := rand.Read(u[:]); err != nil {
		panic(fmt.Sprintf("redfishbmc: random: %v", err))
	}
	return hex.EncodeToString(u[:])
}
