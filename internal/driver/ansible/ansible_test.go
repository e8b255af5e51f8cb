package ansible

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/driver/agent"
	"github.com/openkeel/ironic/internal/driver/fake"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/testing/sshd"
)

// RamdiskOptions are the interface's options for a real ansible-playbook
// against s: our playbooks in check mode (nothing is written on this
// machine), with a configuration that reaches s's port and logs every
// task to the returned log file.
func RamdiskOptions(t *testing.T, s *sshd.Server) (Options, string) {
	t.Helper()
	if _, err := exec.LookPath("ansible-playbook"); err != nil {
		t.Skip("ansible-playbook not installed (Debian ansible)")
	}
	dir := t.TempDir()
	logPath := filepath.Join(dir, "ansible.log")
	cfg := filepath.Join(dir, "ansible.cfg")
	conf := "[defaults]\nhost_key_checking = False\nretry_files_enabled = False\nremote_port = " + strconv.Itoa(s.Port) +
		"\nlog_path = " + logPath + "\nlocal_tmp = " + filepath.Join(dir, "tmp") + "\nremote_tmp = " + filepath.Join(dir, "rtmp") + "\n[ssh_connection]\npipelining = True\nssh_args = -o ControlMaster=no\n"
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	return Options{
		EmbeddedDir: filepath.Join(dir, "playbooks"), ConfigFilePath: cfg, PlaybookScript: "ansible-playbook",
		ExtraArgs: "--check", DefaultUsername: s.User, DefaultKeyFile: s.KeyFile,
		DefaultPythonInterpreter: "/usr/bin/python3",
		DefaultDeployPlaybook:    "deploy.yaml", DefaultShutdownPlaybook: "shutdown.yaml",
		Tempdir: dir,
	}, logPath
}

// TestWriteImageRunsDeployPlaybook: write_image runs our deploy playbook
// with a real ansible-playbook over SSH against the ramdisk's address
// (from agent_url), with upstream's variables, then sets the boot device
// to disk; tear_down_agent runs the shutdown playbook and, the node
// staying on, powers it off out of band.
func TestWriteImageRunsDeployPlaybook(t *testing.T) {
	s := sshd.Start(t)
	o, logPath := RamdiskOptions(t, s)
	d := New(o, agent.Options{})
	img := []byte("a disk image")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(img) }))
	defer srv.Close()
	sum := md5.Sum(img)
	n := &model.Node{UUID: "1be26c0b-03f2-4d2e-ae87-c02d7f33c123", Extra: map[string]any{"rack": "r1"},
		InstanceInfo: map[string]any{
			"image_source": srv.URL + "/disk.img", "image_url": srv.URL + "/disk.img",
			"image_disk_format": "raw", "image_checksum": hex.EncodeToString(sum[:]),
			"root_mb": 10240, "configdrive": "H4sIAAAA",
		},
		DriverInternalInfo: map[string]any{"agent_url": "http://127.0.0.1:9999"},
	}
	mgmt := &bootDeviceRecorder{}
	power := &fake.Power{}
	task := &driver.Task{Node: n, Driver: &driver.Interfaces{Management: mgmt, Power: power}}
	vars, err := d.deployVars(n)
	if err != nil {
		t.Fatal(err)
	}
	iv := vars["image"].(map[string]any)
	if iv["checksum"] != "md5:"+hex.EncodeToString(sum[:]) || iv["url"] != srv.URL+"/disk.img" || iv["validate_certs"] != "yes" {
		t.Errorf("image variables %v", iv)
	}
	pi := vars["partition_info"].(map[string]any)
	parts := pi["partitions"].(map[string]any)
	if pi["label"] != "msdos" || parts["configdrive"].(map[string]any)["part_end"] != "65MiB" || parts["root"].(map[string]any)["part_end"] != "10305MiB" {
		t.Errorf("partition_info %v", pi)
	}
	if cd := vars["configdrive"].(map[string]any); cd["type"] != "file" {
		t.Errorf("configdrive %v", cd)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	start := time.Now()
	if _, err := d.writeImage(ctx, task, nil); err != nil {
		t.Fatalf("write_image: %v", err)
	}
	t.Logf("deploy playbook took %s", time.Since(start))
	if mgmt.device != "disk" {
		t.Errorf("boot device %q, want disk", mgmt.device)
	}
	log, _ := os.ReadFile(logPath)
	for _, want := range []string{
		"TASK [add-ironic-nodes : Add each node of ironic.nodes to group ironic]",
		"TASK [wait : Wait for SSH on the ramdisk]",
		"TASK [discover : Report the root device]",
		"image " + srv.URL + "/disk.img format raw",
		"TASK [prepare : Create the partitions]",
		"TASK [deploy : Write the image]",
		"TASK [deploy : Copy the configdrive]",
		"TASK [configure : Install the boot loader]",
		n.UUID,
	} {
		if !strings.Contains(string(log), want) {
			t.Errorf("ansible log lacks %q:\n%s", want, log)
		}
	}

	n.PowerState = "power on"
	if _, err := d.tearDownAgent(ctx, task, nil); err != nil {
		t.Fatalf("tear_down_agent: %v", err)
	}
	log, _ = os.ReadFile(logPath)
	if !strings.Contains(string(log), "TASK [shutdown : Power off the ramdisk]") {
		t.Errorf("shutdown playbook not run:\n%s", log)
	}
	if n.PowerState != "power off" {
		t.Errorf("power state %q after tear_down_agent", n.PowerState)
	}
}

// A failing playbook fails the step with InstanceDeployFailure and the
// playbook's output.
func TestPlaybookFailure(t *testing.T) {
	s := sshd.Start(t)
	o, _ := RamdiskOptions(t, s)
	d := New(o, agent.Options{})
	n := &model.Node{UUID: "2be26c0b-03f2-4d2e-ae87-c02d7f33c123", DriverInfo: map[string]any{"ansible_deploy_playbook": "missing.yaml"},
		InstanceInfo:       map[string]any{"image_url": "http://127.0.0.1:1/x"},
		DriverInternalInfo: map[string]any{"agent_url": "http://127.0.0.1:9999"}}
	_, err := d.writeImage(context.Background(), &driver.Task{Node: n, Driver: &driver.Interfaces{Management: &bootDeviceRecorder{}}}, nil)
	if err == nil || !strings.Contains(err.Error(), "Failed to deploy instance") || !strings.Contains(err.Error(), "missing.yaml") {
		t.Fatalf("error %v", err)
	}
}

func TestRootDeviceHints(t *testing.T) {
	for name, tc := range map[string]struct {
		hints map[string]any
		want  map[string]any
		bad   bool
	}{
		"plain":     {map[string]any{"name": "/dev/sda", "size": 100}, map[string]any{"name": "/dev/sda", "size": 100}, false},
		"operators": {map[string]any{"size": "== 100", "model": "s== Big%20Disk"}, map[string]any{"size": 100, "model": "Big Disk"}, false},
		"advanced":  {map[string]any{"size": ">= 100"}, nil, true},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := rootDeviceHints(&model.Node{Properties: map[string]any{"root_device": tc.hints}})
			if tc.bad {
				if err == nil || !strings.Contains(err.Error(), "does not support advanced root device hints") {
					t.Fatalf("err %v", err)
				}
				return
			}
			if err != nil || len(got) != len(tc.want) {
				t.Fatalf("got %v, %v", got, err)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("%s = %v, want %v", k, got[k], v)
				}
			}
		})
	}
}

func TestSplitArgs(t *testing.T) {
	got, err := splitArgs(`--check -e 'a=b c' "x y"\ z`)
	if err != nil || strings.Join(got, "|") != "--check|-e|a=b c|x y z" {
		t.Fatalf("%q %v", got, err)
	}
	if _, err := splitArgs(`'open`); err == nil {
		t.Fatal("unbalanced quote accepted")
	}
}

type bootDeviceRecorder struct {
	fake.Management
	device string
}

func (m *bootDeviceRecorder) SetBootDevice(_ context.Context, _ *driver.Task, device string, _ bool) error {
	m.device = device
	return nil
}
