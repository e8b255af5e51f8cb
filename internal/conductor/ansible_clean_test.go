package conductor_test

import (
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/agentclient"
	"github.com/openkeel/ironic/internal/conductor"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/driver/agent"
	"github.com/openkeel/ironic/internal/driver/ansible"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/rpc"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store/sqldb"
	"github.com/openkeel/ironic/testing/await"
	"github.com/openkeel/ironic/testing/ipa"
	"github.com/openkeel/ironic/testing/sshd"
)

// TestAnsibleCleaningReachesAvailable: automated cleaning of a node with
// deploy_interface=ansible boots the ramdisk, and the first heartbeat has
// the conductor run the clean steps of our clean steps file in priority
// order, erase_devices_metadata (99) then erase_devices (10), each as our
// clean playbook with the step's tags through a real ansible-playbook
// over SSH (a throw-away sshd on 127.0.0.1, check mode); the node is
// powered off and available. A node whose clean playbook fails ends in
// clean failed with upstream's last_error.
func TestAnsibleCleaningReachesAvailable(t *testing.T) {
	if _, err := exec.LookPath("ansible-playbook"); err != nil {
		t.Skip("ansible-playbook not installed (Debian ansible)")
	}
	s := sshd.Start(t)
	dir := t.TempDir()
	logPath := filepath.Join(dir, "ansible.log")
	cfgPath := filepath.Join(dir, "ansible.cfg")
	conf := "[defaults]\nhost_key_checking = False\nremote_port = " + strconv.Itoa(s.Port) + "\nlog_path = " + logPath +
		"\nlocal_tmp = " + filepath.Join(dir, "tmp") + "\nremote_tmp = " + filepath.Join(dir, "rtmp") + "\n[ssh_connection]\npipelining = True\nssh_args = -o ControlMaster=no\n"
	if err := os.WriteFile(cfgPath, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	forEachDB(t, func(t *testing.T, db *sqldb.DB) { ansibleClean(t, db, s, dir, logPath, cfgPath) })
}

func ansibleClean(t *testing.T, db *sqldb.DB, s *sshd.Server, dir, logPath, cfgPath string) {
	_ = os.Remove(logPath)
	log := slog.New(slog.NewTextHandler(ftLogWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	e := newStoreEnv(t, db, testConfig(t, map[string]map[string]string{"agent": {"require_tls": "false"}}))
	r := stockRegistry(t)
	power := &countedPower{}
	mustRegister(t, r, driver.KindPower, "counted", power)
	opts := ansible.Options{
		EmbeddedDir: filepath.Join(dir, "playbooks"), ConfigFilePath: cfgPath, ExtraArgs: "--check",
		DefaultUsername: s.User, DefaultKeyFile: s.KeyFile, DefaultPythonInterpreter: "/usr/bin/python3", Tempdir: dir,
	}
	// The agent client is the conductor's, as in production: cleaning
	// asks it whether to collect the ramdisk's logs.
	co := agentclient.DefaultOptions()
	co.DeployLogs.LocalPath = t.TempDir()
	if err := ansible.Register(r, opts, agent.Options{DefaultBootMode: "uefi", Client: agentclient.New(co)}); err != nil {
		t.Fatal(err)
	}
	e.drivers = buildFakeHardware(t, r, map[driver.Kind][]string{
		driver.KindDeploy: {"ansible", "fake"}, driver.KindPower: {"counted", "fake"},
	})
	e.run(conductor.Options{Logger: log})

	mk := func(di map[string]any) *model.Node {
		return e.node(states.Manageable, func(n *model.Node) {
			n.DeployInterface = "ansible"
			n.PowerInterface = "counted"
			n.DriverInfo = di
		})
	}
	good := mk(map[string]any{})
	bad := mk(map[string]any{"ansible_clean_playbook": "no-such-clean.yaml"})
	ctx := context.Background()
	tokens := map[string]string{}
	for _, n := range []*model.Node{good, bad} {
		if err := e.api.DoProvisioningAction(ctx, "", n.UUID, "provide"); err != nil {
			t.Fatal(err)
		}
		e.waitState(n, states.CleanWait)
		tokens[n.UUID] = lookup(t, e, n)
	}
	a := ipa.New(t)
	start := time.Now()
	// The playbooks run in the heartbeat's worker, which holds the lock;
	// heartbeats sent meanwhile find the node locked, as a real agent's.
	ended := func(n *model.Node, want string) bool {
		cur := e.get(n)
		if cur.Reservation != nil {
			return false
		}
		switch cur.ProvisionState {
		case want:
			return true
		case states.CleanWait:
			err := e.api.Heartbeat(ctx, "", rpc.HeartbeatArgs{NodeID: n.UUID, CallbackURL: a.URL(), AgentToken: tokens[n.UUID], AgentVersion: ipa.Version})
			if err != nil && class(err) != "NodeLocked" {
				t.Fatalf("heartbeat: %v", err)
			}
		case states.Cleaning:
		default:
			t.Fatalf("node %s is %s, want %s (last_error %q)", n.UUID, cur.ProvisionState, want, deref(cur.LastError))
		}
		return false
	}
	await.Until(t, 5*time.Minute, "cleaning ends", func() bool {
		return ended(good, states.Available) && ended(bad, states.CleanFail)
	})
	t.Logf("heartbeat to the end of cleaning: %s", time.Since(start))

	cur := e.get(good)
	if cur.PowerState != states.PowerOff || deref(cur.LastError) != "" || len(cur.CleanStep) != 0 {
		t.Errorf("cleaned node: power %q, last_error %q, clean_step %v", cur.PowerState, deref(cur.LastError), cur.CleanStep)
	}
	if len(a.Commands()) != 0 {
		t.Errorf("the agent's command API was used: %v", commandNames(a))
	}
	out, _ := os.ReadFile(logPath)
	zap := strings.Index(string(out), "TASK [clean : Destroy the GPT and MBR structures]")
	shred := strings.Index(string(out), "TASK [clean : Overwrite the disks]")
	if zap < 0 || shred < zap || strings.Count(string(out), "TASK [clean : Overwrite the disks]") != 1 ||
		strings.Count(string(out), "TASK [clean : Destroy the GPT and MBR structures]") != 1 || !strings.Contains(string(out), good.UUID) {
		t.Errorf("clean steps not run once each, metadata first:\n%s", out)
	}

	failed := e.get(bad)
	want := "Node " + bad.UUID + " failed step {'interface': 'deploy', 'step': 'erase_devices_metadata', "
	le := deref(failed.LastError)
	if !strings.HasPrefix(le, want) || !strings.Contains(le, ": Failed to deploy instance: Unexpected error while running command.\nCommand: env ANSIBLE_CONFIG=") ||
		!strings.Contains(le, "no-such-clean.yaml") || !strings.Contains(le, "--tags=zap") || !failed.Maintenance {
		t.Errorf("failed cleaning: maintenance %v, last_error %q, want prefix %q", failed.Maintenance, le, want)
	}
}
