package conductor_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/image/configdrive"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store/sqldb"
)

func (s *swiftEnv) options() []envOption {
	opts := []envOption{withConf("deploy", "configdrive_use_object_store", "true"),
		withConf("conductor", "configdrive_swift_container", "drives")}
	for k, v := range s.section {
		opts = append(opts, withConf("swift", k, v))
	}
	return opts
}

func fetch(t *testing.T, u string) (int, string) {
	t.Helper()
	resp, err := http.Get(u) //nolint:noctx // test
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestConfigdriveInSwift: with [deploy]/configdrive_use_object_store the
// configdrive is uploaded to configdrive_swift_container as
// configdrive-<uuid>, expiring with the temporary URL instance_info gets
// instead of the configdrive; a dict is built into the ISO first.
func TestConfigdriveInSwift(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		s := newSwiftEnv(t)
		s.sw.SetTempURLKey(s.account, "secret-key", false)
		e := newEnv(t, db, append(s.options(), withConf("conductor", "configdrive_swift_temp_url_duration", "600"))...)
		ctx := context.Background()
		n := e.node(states.Available, scriptedNode)
		if err := e.api.DoNodeDeploy(ctx, "", n.UUID, false, "H4sICDrive", nil); err != nil {
			t.Fatal(err)
		}
		got := e.waitState(n, states.Active)
		e.expect(got, states.Active, "", "")
		u, _ := got.InstanceInfo["configdrive"].(string)
		if !strings.HasPrefix(u, s.sw.URL()+"/v1/"+s.account+"/drives/configdrive-"+n.UUID+"?temp_url_sig=") {
			t.Fatalf("instance_info configdrive %q", got.InstanceInfo["configdrive"])
		}
		if status, body := fetch(t, u); status != http.StatusOK || body != "H4sICDrive" {
			t.Fatalf("GET the temp URL: %d %q", status, body)
		}
		o := s.sw.Object(s.account, "drives", "configdrive-"+n.UUID)
		if o == nil || !o.DeleteAt.Equal(s.sw.Now().Add(600*time.Second)) {
			t.Fatalf("object %+v, want it to expire in 600 s", o)
		}

		// A dict is uploaded as the ISO built from it.
		if err := e.api.DoNodeDeploy(ctx, "", n.UUID, true, map[string]any{"meta_data": map[string]any{"hostname": "h1"}}, nil); err != nil {
			t.Fatal(err)
		}
		got = e.waitState(n, states.Active)
		o = s.sw.Object(s.account, "drives", "configdrive-"+n.UUID)
		if o == nil {
			t.Fatal("rebuilt configdrive not uploaded")
		}
		iso, err := configdrive.Decode(string(o.Data), 0)
		if err != nil || len(iso) < 32*1024 || string(iso[32769:32774]) != "CD001" {
			t.Fatalf("uploaded configdrive is no ISO: %d bytes, %v", len(iso), err)
		}
		if u, _ := got.InstanceInfo["configdrive"].(string); !strings.Contains(u, "temp_url_sig=") {
			t.Fatalf("rebuild configdrive %v", got.InstanceInfo["configdrive"])
		}
	})
}

// TestConfigdriveSwiftFailure: a configdrive that cannot be stored fails
// the deployment with upstream's message; without a duration the object
// lives as long as the deploy callback timeout plus two minutes.
func TestConfigdriveSwiftFailure(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		s := newSwiftEnv(t)
		e := newEnv(t, db, s.options()...)
		ctx := context.Background()
		n := e.node(states.Available, scriptedNode)
		if err := e.api.DoNodeDeploy(ctx, "", n.UUID, false, "H4sICDrive", nil); err != nil {
			t.Fatal(err)
		}
		got := e.waitState(n, states.DeployFail)
		e.expect(got, states.DeployFail, states.Active, "Failed to upload the configdrive to Swift: Swift temporary URLs require a shared secret to be created. You must provide pre-generate the key on the project used to access Swift.")
		if _, ok := got.InstanceInfo["configdrive"]; ok {
			t.Fatalf("configdrive kept after the failed upload: %v", got.InstanceInfo)
		}
		if o := s.sw.Object(s.account, "drives", "configdrive-"+n.UUID); o == nil || !o.DeleteAt.Equal(s.sw.Now().Add(1920*time.Second)) {
			t.Fatalf("object %+v, want it to expire in 1800+120 s", o)
		}

		s.sw.SetTempURLKey(s.account, "k", false)
		s.sw.Fail(http.StatusServiceUnavailable)
		m := e.node(states.Available, scriptedNode)
		if err := e.api.DoNodeDeploy(ctx, "", m.UUID, false, "H4sICDrive", nil); err != nil {
			t.Fatal(err)
		}
		got = e.waitState(m, states.DeployFail)
		if !strings.HasPrefix(deref(got.LastError), "Failed to upload the configdrive to Swift: Swift operation 'put container' failed: 503") {
			t.Fatalf("last_error %q", deref(got.LastError))
		}
	})
}
