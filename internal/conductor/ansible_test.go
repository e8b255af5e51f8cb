package conductor_test

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

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

// TestAnsibleDeployReachesActive: a fake-hardware node with
// deploy_interface=ansible boots the ramdisk, and its first heartbeat has
// the conductor run our deploy playbook with a real ansible-playbook over
// SSH against the ramdisk's address (a throw-away sshd on 127.0.0.1, the
// playbook in check mode so nothing is written here), then the shutdown
// playbook; the node stays on in the power interface's eyes, so it is
// powered off out of band, then on into the instance, and is active.
func TestAnsibleDeployReachesActive(t *testing.T) {
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
	img := []byte("a whole disk image")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(img) }))
	defer srv.Close()
	sum := md5.Sum(img)

	forEachDB(t, func(t *testing.T, db *sqldb.DB) { ansibleDeploy(t, db, s, dir, logPath, cfgPath, srv.URL, sum[:]) })
}

func ansibleDeploy(t *testing.T, db *sqldb.DB, s *sshd.Server, dir, logPath, cfgPath, imgURL string, sum []byte) {
	log := slog.New(slog.NewTextHandler(ftLogWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	e := newStoreEnv(t, db, testConfig(t, map[string]map[string]string{"agent": {"require_tls": "false"}}))
	r := stockRegistry(t)
	power := &countedPower{}
	mustRegister(t, r, driver.KindPower, "counted", power)
	mustRegister(t, r, driver.KindManagement, "disk-able", &diskManagement{})
	opts := ansible.Options{
		EmbeddedDir: filepath.Join(dir, "playbooks"), ConfigFilePath: cfgPath, ExtraArgs: "--check",
		DefaultUsername: s.User, DefaultKeyFile: s.KeyFile, DefaultPythonInterpreter: "/usr/bin/python3", Tempdir: dir, ExtraMemory: 10,
	}
	if err := ansible.Register(r, opts, agent.Options{DefaultBootMode: "uefi"}); err != nil {
		t.Fatal(err)
	}
	e.drivers = buildFakeHardware(t, r, map[driver.Kind][]string{
		driver.KindDeploy: {"ansible", "fake"}, driver.KindManagement: {"fake", "disk-able"}, driver.KindPower: {"counted", "fake"},
	})
	e.run(conductor.Options{Logger: log})

	n := e.node(states.Available, func(n *model.Node) {
		n.DeployInterface = "ansible"
		n.PowerInterface = "counted"
		n.ManagementInterface = "disk-able"
		n.InstanceInfo = map[string]any{"image_source": imgURL + "/disk.img", "image_url": imgURL + "/disk.img",
			"image_disk_format": "raw", "image_checksum": hex.EncodeToString(sum)}
		n.DriverInternalInfo = map[string]any{"is_whole_disk_image": true}
	})
	ctx := context.Background()
	if err := e.api.DoNodeDeploy(ctx, "", n.UUID, false, nil, nil); err != nil {
		t.Fatal(err)
	}
	e.waitState(n, states.DeployWait)
	token := lookup(t, e, n)
	a := ipa.New(t).WithToken(token)
	start := time.Now()
	// The playbooks run in the heartbeat's worker, which holds the lock;
	// heartbeats sent meanwhile find the node locked, as a real agent's.
	await.Until(t, 5*time.Minute, "node active", func() bool {
		cur := e.get(n)
		if cur.ProvisionState == states.Active && cur.Reservation == nil {
			return true
		}
		if cur.ProvisionState == states.DeployFail {
			t.Fatalf("deploy failed: %s", deref(cur.LastError))
		}
		if cur.Reservation == nil && cur.ProvisionState == states.DeployWait {
			err := e.api.Heartbeat(ctx, "", rpc.HeartbeatArgs{NodeID: n.UUID, CallbackURL: a.URL(), AgentToken: token, AgentVersion: ipa.Version})
			if err != nil && class(err) != "NodeLocked" {
				t.Fatalf("heartbeat: %v", err)
			}
		}
		return false
	})
	t.Logf("heartbeat to active: %s", time.Since(start))
	active := e.get(n)
	// 18 bytes are 0 MiB, plus [ansible]/extra_memory's default 10 here.
	if got := active.InstanceInfo["image_mem_req"]; got != float64(10) {
		t.Errorf("image_mem_req %v (%T), want 10", got, got)
	}
	if active.PowerState != states.PowerOn || deref(active.LastError) != "" {
		t.Errorf("active node: power %q, last_error %q", active.PowerState, deref(active.LastError))
	}
	// The node starts off, so prepare sends no power off; the shutdown
	// playbook cannot power off in check mode, hence the one out of band.
	if got := strings.Join(power.take(), ","); got != "rebooting,power off,power on" {
		t.Errorf("power actions %s", got)
	}
	if len(a.Commands()) != 0 {
		t.Errorf("the agent's command API was used: %v", commandNames(a))
	}
	out, _ := os.ReadFile(logPath)
	for _, want := range []string{"TASK [deploy : Download the image]", "TASK [deploy : Write the image]",
		"image " + imgURL + "/disk.img format raw", "TASK [shutdown : Power off the ramdisk]", n.UUID} {
		if !strings.Contains(string(out), want) {
			t.Errorf("ansible log lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "TASK [prepare : Create the partitions]") && !strings.Contains(string(out), "skipping") {
		t.Errorf("a whole disk image was partitioned")
	}
}
