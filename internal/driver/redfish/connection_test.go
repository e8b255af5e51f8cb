package redfish

import (
	"encoding/pem"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/testing/redfishbmc"
)

func TestSessionIsCachedAndReused(t *testing.T) {
	bmc := redfishbmc.New(t).System("sys-1").WithSessionsOnly(testUser, testPassword)
	e := newEnv(t, bmc, nil)
	for range 3 {
		_, err := e.power.GetPowerState(e.ctx, e.task)
		must(t, err)
	}
	_, err := e.mgmt.GetBootDevice(e.ctx, e.task)
	must(t, err)
	if n := bmc.SessionsCreated(); n != 1 {
		t.Fatalf("%d sessions created, want 1 shared by every operation", n)
	}
	if n := e.core.cache.len(); n != 1 {
		t.Fatalf("cache holds %d connections", n)
	}
}

func TestSessionExpiredIsReestablished(t *testing.T) {
	bmc := redfishbmc.New(t).System("sys-1").WithSessionsOnly(testUser, testPassword)
	e := newEnv(t, bmc, nil)
	_, err := e.power.GetPowerState(e.ctx, e.task)
	must(t, err)
	bmc.ExpireSessions()
	must(t, e.power.SetPowerState(e.ctx, e.task, states.PowerOn, 0))
	if n := bmc.SessionsCreated(); n != 2 {
		t.Fatalf("%d sessions created, want a new one after the 401", n)
	}
	if bmc.Power("sys-1") != redfishbmc.On {
		t.Fatal("power on not applied after re-authentication")
	}
}

func TestChangedPasswordOpensNewConnection(t *testing.T) {
	bmc := redfishbmc.New(t).System("sys-1").WithBasicAuth(testUser, testPassword).WithSessions()
	e := newEnv(t, bmc, nil)
	_, err := e.power.GetPowerState(e.ctx, e.task)
	must(t, err)
	e.node.DriverInfo["redfish_password"] = "wrong-" + testPassword
	_, err = e.power.GetPowerState(e.ctx, e.task)
	wantClass(t, err, "RedfishError", "")
	if strings.Contains(err.Error(), testPassword) {
		t.Fatalf("error reveals the password: %v", err)
	}
	// The refused login is not kept; the good one still is.
	if n := e.core.cache.len(); n != 1 {
		t.Fatalf("cache holds %d connections, want 1", n)
	}
	e.node.DriverInfo["redfish_password"] = testPassword
	_, err = e.power.GetPowerState(e.ctx, e.task)
	must(t, err)
	if n := bmc.SessionsCreated(); n != 1 {
		t.Fatalf("%d sessions created, want the first reused", n)
	}
}

func TestAuthTypes(t *testing.T) {
	for _, tc := range []struct {
		name     string
		build    func(*redfishbmc.BMC) *redfishbmc.BMC
		authType string
		wantErr  bool
		sessions int
	}{
		{"auto falls back to basic without SessionService", func(b *redfishbmc.BMC) *redfishbmc.BMC { return b.WithBasicAuth(testUser, testPassword) }, "auto", false, 0},
		{"auto prefers sessions", func(b *redfishbmc.BMC) *redfishbmc.BMC {
			return b.WithBasicAuth(testUser, testPassword).WithSessions()
		}, "auto", false, 1},
		{"basic never logs in", func(b *redfishbmc.BMC) *redfishbmc.BMC {
			return b.WithBasicAuth(testUser, testPassword).WithSessions()
		}, "basic", false, 0},
		{"session requires a SessionService", func(b *redfishbmc.BMC) *redfishbmc.BMC { return b.WithBasicAuth(testUser, testPassword) }, "session", true, 0},
		{"basic refused by a sessions-only BMC", func(b *redfishbmc.BMC) *redfishbmc.BMC { return b.WithSessionsOnly(testUser, testPassword) }, "basic", true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bmc := tc.build(redfishbmc.New(t).System("sys-1"))
			e := newEnv(t, bmc, nil)
			e.node.DriverInfo["redfish_auth_type"] = tc.authType
			_, err := e.power.GetPowerState(e.ctx, e.task)
			if tc.wantErr {
				wantClass(t, err, "RedfishError", "")
			} else {
				must(t, err)
			}
			if n := bmc.SessionsCreated(); n != tc.sessions {
				t.Fatalf("%d sessions, want %d", n, tc.sessions)
			}
		})
	}
}

func TestWrongCredentialsFailWithoutRetry(t *testing.T) {
	bmc := redfishbmc.New(t).System("sys-1").WithBasicAuth(testUser, "other")
	e := newEnv(t, bmc, nil)
	_, err := e.power.GetPowerState(e.ctx, e.task)
	wantClass(t, err, "RedfishError", "")
	if !strings.Contains(err.Error(), "returned code 401") {
		t.Fatalf("message %q does not carry the BMC's answer", err)
	}
	if e.clock.Slept() != 0 {
		t.Fatalf("an authentication failure was retried: %v", e.clock.Sleeps())
	}
	if e.core.cache.len() != 0 {
		t.Fatal("a refused connection stayed cached")
	}
}

func TestServerSideErrorsOnGetAreRetried(t *testing.T) {
	bmc := redfishbmc.New(t).System("sys-1", redfishbmc.PowerState(redfishbmc.On)).WithBasicAuth(testUser, testPassword)
	e := newEnv(t, bmc, nil)
	bmc.FailNextMatching(redfishbmc.Match{Method: http.MethodGet, Path: "/Systems/sys-1"}, 2, http.StatusServiceUnavailable, "")
	got, err := e.power.GetPowerState(e.ctx, e.task)
	must(t, err)
	if got != states.PowerOn {
		t.Fatalf("power %q", got)
	}
	if d := e.clock.Slept(); d != 6*time.Second {
		t.Fatalf("waited %v, want two 3 s server side retry delays", d)
	}
	// A POST answered 500 is not retried.
	bmc.FailNextMatching(redfishbmc.Match{Method: http.MethodPost}, 1, http.StatusInternalServerError, "")
	wantClass(t, e.power.SetPowerState(e.ctx, e.task, states.PowerOff, 0), "RedfishError", "")
	if n := bmc.Count(http.MethodPost, sysPath+"/Actions/ComputerSystem.Reset"); n != 1 {
		t.Fatalf("%d reset POSTs, want 1", n)
	}
}

func TestSlowBMCAnswerWithinReadTimeout(t *testing.T) {
	bmc := redfishbmc.New(t).System("sys-1").WithBasicAuth(testUser, testPassword)
	e := newEnv(t, bmc, func(o *Options) {
		o.ReadTimeout = 50 * time.Millisecond
		o.ServerSideRetries = 1
		o.ConnectionAttempts = 1
	})
	bmc.SlowNext(1, 500*time.Millisecond)
	_, err := e.power.GetPowerState(e.ctx, e.task)
	wantClass(t, err, "RedfishConnectionError", "")
}

func TestConnectionCacheIsBounded(t *testing.T) {
	a := redfishbmc.New(t).System("sys-1").WithSessionsOnly(testUser, testPassword)
	b := redfishbmc.New(t).System("sys-1").WithSessionsOnly(testUser, testPassword)
	e := newEnv(t, a, func(o *Options) { o.ConnectionCacheSize = 1 })
	for range 2 {
		for _, bmc := range []*redfishbmc.BMC{a, b} {
			e.node.DriverInfo["redfish_address"] = bmc.URL()
			_, err := e.power.GetPowerState(e.ctx, e.task)
			must(t, err)
		}
	}
	if e.core.cache.len() != 1 {
		t.Fatalf("cache holds %d", e.core.cache.len())
	}
	if a.SessionsCreated() != 2 || b.SessionsCreated() != 2 {
		t.Fatalf("sessions %d/%d, want every eviction to force a new login", a.SessionsCreated(), b.SessionsCreated())
	}
}

func TestCacheDisabled(t *testing.T) {
	bmc := redfishbmc.New(t).System("sys-1").WithSessionsOnly(testUser, testPassword)
	e := newEnv(t, bmc, func(o *Options) { o.ConnectionCacheSize = 0 })
	for range 2 {
		_, err := e.power.GetPowerState(e.ctx, e.task)
		must(t, err)
	}
	if n := bmc.SessionsCreated(); n != 2 {
		t.Fatalf("%d sessions, want one per operation without a cache", n)
	}
}

func TestTLSVerification(t *testing.T) {
	bmc := redfishbmc.New(t).WithTLS().System("sys-1").WithBasicAuth(testUser, testPassword)
	e := newEnv(t, bmc, nil)

	// The emulator's certificate is self-signed: verification fails, and
	// is not retried.
	_, err := e.power.GetPowerState(e.ctx, e.task)
	wantClass(t, err, "RedfishConnectionError", "")
	if n := bmc.Requests(); n != 0 {
		t.Fatalf("%d requests got through an unverified TLS handshake", n)
	}

	e.node.DriverInfo["redfish_verify_ca"] = false
	_, err = e.power.GetPowerState(e.ctx, e.task)
	must(t, err)

	ca := filepath.Join(t.TempDir(), "ca.pem")
	cert := bmc.Server().Certificate()
	must(t, os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw}), 0o600))
	e.node.DriverInfo["redfish_verify_ca"] = ca
	_, err = e.power.GetPowerState(e.ctx, e.task)
	must(t, err)

	// An address without a scheme means https.
	e.node.DriverInfo["redfish_address"] = bmc.Address()
	_, err = e.power.GetPowerState(e.ctx, e.task)
	must(t, err)
}

func TestSystemSelection(t *testing.T) {
	bmc := redfishbmc.New(t).System("a").System("b", redfishbmc.PowerState(redfishbmc.On))
	e := newEnv(t, bmc, nil)
	_, err := e.power.GetPowerState(e.ctx, e.task)
	wantClass(t, err, "RedfishError",
		`Redfish exception occurred. Error: Failed at determining default for "ComputerSystem": System count is not exactly one`)

	e.node.DriverInfo["redfish_system_id"] = "/redfish/v1/Systems/b"
	got, err := e.power.GetPowerState(e.ctx, e.task)
	must(t, err)
	if got != states.PowerOn {
		t.Fatalf("power of system b %q", got)
	}

	e.node.DriverInfo["redfish_system_id"] = "/redfish/v1/Systems/missing"
	_, err = e.power.GetPowerState(e.ctx, e.task)
	wantClass(t, err, "RedfishError", "Redfish exception occurred. Error: Resource "+bmc.URL()+"/redfish/v1/Systems/missing not found")
}

func TestETagsAreHonoured(t *testing.T) {
	bmc := redfishbmc.New(t).System("sys-1").WithBasicAuth(testUser, testPassword).WithETags()
	e := newEnv(t, bmc, nil)
	must(t, e.mgmt.SetBootDevice(e.ctx, e.task, "pxe", false))
	if got := bmc.Snapshot("sys-1").BootTarget; got != "Pxe" {
		t.Fatalf("boot target %s", got)
	}
}

func TestUserinfoInAddressNeverShown(t *testing.T) {
	const urlSecret = "url-Secret-42"
	bmc := redfishbmc.New(t).System("sys-1").WithBasicAuth(testUser, testPassword)
	e := newEnv(t, bmc, nil)
	e.node.DriverInfo["redfish_address"] = strings.Replace(bmc.URL(), "://", "://"+testUser+":"+urlSecret+"@", 1)
	bmc.FailNext(10, http.StatusInternalServerError)
	_, err := e.power.GetPowerState(e.ctx, e.task)
	wantClass(t, err, "RedfishError", "")
	if strings.Contains(err.Error(), urlSecret) || strings.Contains(e.logs.String(), urlSecret) {
		t.Fatalf("the address' password leaked:\nerror %v\nlog %s", err, e.logs)
	}
	if !strings.Contains(err.Error(), "://***@127.0.0.1") {
		t.Fatalf("error does not name the BMC: %v", err)
	}
}
