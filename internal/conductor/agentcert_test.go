package conductor_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/rpc"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store/sqldb"
	"github.com/openkeel/ironic/testing/await"
)

const agentCA = "-----BEGIN CERTIFICATE-----\nMIIBagent\n-----END CERTIFICATE-----\n"

// The CA an agent heartbeats with is kept as a file under
// [agent]/certificates_path, named in agent_verify_ca; a ramdisk that
// comes back with another CA is refused unless the file is gone.
func TestHeartbeatStoresAgentCertificate(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		dir := filepath.Join(t.TempDir(), "certs")
		e := newEnv(t, db, withConf("agent", "certificates_path", dir))
		ctx := context.Background()
		n := e.node(states.CleanWait)
		got, err := e.api.GetNodeWithToken(ctx, "", n.UUID)
		if err != nil {
			t.Fatal(err)
		}
		token := got.DriverInternalInfo["agent_secret_token"].(string)
		hb := rpc.HeartbeatArgs{NodeID: n.UUID, AgentVersion: "10.0", AgentToken: token, CallbackURL: "https://127.0.0.1:9999", AgentVerifyCA: agentCA}
		if err := e.api.Heartbeat(ctx, "", hb); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, n.UUID+".crt")
		if data, err := os.ReadFile(path); err != nil || string(data) != agentCA {
			t.Fatalf("stored certificate %q, %v", data, err)
		}
		await.UntilReason(t, 5*time.Second, "agent_verify_ca recorded", func() (bool, string) {
			got := e.get(n).DriverInternalInfo["agent_verify_ca"]
			return got == path, fmt.Sprintf("agent_verify_ca = %v, want %s", got, path)
		})
		e.waitUnlocked(n)
		other := hb
		other.AgentVerifyCA = "-----BEGIN CERTIFICATE-----\nMIIBother\n-----END CERTIFICATE-----\n"
		if err := e.api.Heartbeat(ctx, "", other); class(err) != "InvalidParameterValue" || err.Error() != `Detected change in ramdisk provided "agent_verify_ca"` {
			t.Fatalf("heartbeat with another CA: %v", err)
		}
		if data, _ := os.ReadFile(path); string(data) != agentCA {
			t.Fatal("the refused heartbeat replaced the certificate")
		}
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		if err := e.api.Heartbeat(ctx, "", other); err != nil {
			t.Fatalf("heartbeat after take over: %v", err)
		}
		if data, _ := os.ReadFile(path); string(data) != other.AgentVerifyCA {
			t.Fatalf("certificate after take over %q", data)
		}
	})
}
