package agent

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/agentclient"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/driver/fake"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/testing/ipa"
)

func bootcTask(ii, di map[string]any) *driver.Task {
	n := &model.Node{UUID: "5d1d8b0e-3c0e-4d0b-8f6e-1f0f7a2b9c11", InstanceInfo: ii, DriverInfo: di, Properties: map[string]any{}}
	return &driver.Task{Node: n, Driver: &driver.Interfaces{Boot: &fake.Boot{}, Management: &fake.Management{}}}
}

func TestBootcValidateNeedsOCIImage(t *testing.T) {
	d := NewBootc(Options{})
	ctx := context.Background()
	if err := d.Validate(ctx, bootcTask(map[string]any{"image_source": "oci://quay.io/example/os:latest"}, nil)); err != nil {
		t.Errorf("oci image refused: %v", err)
	}
	err := d.Validate(ctx, bootcTask(map[string]any{"image_source": "http://127.0.0.1/disk.img"}, nil))
	if err == nil || err.Error() != "Invalid image href http://127.0.0.1/disk.img." || !driver.IsClass(err, errs.ClassInvalidParameterValue) {
		t.Errorf("http image: %v", err)
	}
	err = d.Validate(ctx, bootcTask(map[string]any{}, nil))
	if err == nil || err.Error() != "Invalid image href None." {
		t.Errorf("no image: %v", err)
	}
	for _, src := range []string{"oci://quay.io/example/os:latest", "http://127.0.0.1/disk.img"} {
		if d.SupportsDeploy(ctx, bootcTask(map[string]any{"image_source": src}, nil)) {
			t.Errorf("%s reported as a bootc image without a registry lookup", src)
		}
	}
}

func TestBootcPullSecret(t *testing.T) {
	dir := t.TempDir()
	authFile := filepath.Join(dir, "auth.json")
	if err := os.WriteFile(authFile, []byte(`{"auths": {"quay.io": {"auth": "preshared"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	src := "oci://quay.io/example/os:latest"
	ctx := context.Background()
	cases := []struct {
		name   string
		opts   BootcOptions
		ii, di map[string]any
		want   string
	}{
		{"instance_info user:pass", BootcOptions{}, map[string]any{"image_pull_secret": "me:s3cret"}, map[string]any{"image_pull_secret": "other"}, "s3cret"},
		{"driver_info token", BootcOptions{}, map[string]any{}, map[string]any{"image_pull_secret": "tok"}, "tok"},
		{"image server", BootcOptions{ImageServerUser: "u", ImageServerPassword: "pw", OCIAuthConfig: authFile}, map[string]any{}, nil, "pw"},
		{"auth config", BootcOptions{OCIAuthConfig: authFile}, map[string]any{}, nil, "preshared"},
		{"other registry", BootcOptions{OCIAuthConfig: authFile}, map[string]any{"image_source": "oci://docker.io/x"}, nil, ""},
		{"unreadable config", BootcOptions{OCIAuthConfig: filepath.Join(dir, "missing.json")}, map[string]any{}, nil, ""},
	}
	for _, tc := range cases {
		d := NewBootc(Options{Bootc: tc.opts})
		s := src
		if v, ok := tc.ii["image_source"].(string); ok {
			s = v
		}
		if got := d.pullSecret(ctx, bootcTask(tc.ii, tc.di), s); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestBootcInstallInBand(t *testing.T) {
	a := ipa.New(t).WithToken("tok")
	co := agentclient.DefaultOptions()
	co.CommandWaitInterval = 10 * time.Millisecond
	client := agentclient.New(co)
	t.Cleanup(client.Close)
	d := NewBootc(Options{Client: client})
	task := bootcTask(map[string]any{"image_source": "oci://quay.io/example/os:latest", "configdrive": "H4sIcd", "image_pull_secret": "tok123"}, nil)
	n := task.Node
	n.DriverInternalInfo = map[string]any{"agent_url": a.URL(), "agent_secret_token": "tok", "hardware_manager_version": ipa.HardwareManagerVersion()}
	n.DeployStep = map[string]any{"interface": "deploy", "step": "execute_bootc_install", "priority": 80.0}
	res, err := d.ExecuteStep(context.Background(), task, driver.Step{Kind: driver.StepDeploy, Interface: driver.KindDeploy, Name: "execute_bootc_install"})
	if err != nil || res != states.DeployWait {
		t.Fatalf("execute_bootc_install: %q, %v", res, err)
	}
	st := a.LastParams("deploy.execute_deploy_step")["step"].(map[string]any)
	args := st["args"].(map[string]any)
	if st["step"] != "execute_bootc_install" || args["image_source"] != "oci://quay.io/example/os:latest" || args["configdrive"] != "H4sIcd" ||
		args["oci_pull_secret"] != base64.StdEncoding.EncodeToString([]byte("tok123")) {
		t.Errorf("step sent %v", st)
	}
}

// bootRecorder is the fake management interface recording boot devices.
type bootRecorder struct {
	fake.Management
	device     string
	persistent bool
	calls      int
}

func (m *bootRecorder) SetBootDevice(_ context.Context, _ *driver.Task, device string, persistent bool) error {
	m.device, m.persistent = device, persistent
	m.calls++
	return nil
}

func TestBootcSetBootToDisk(t *testing.T) {
	d := NewBootc(Options{DefaultBootMode: "uefi"})
	ctx := context.Background()
	for _, tc := range []struct {
		name       string
		di         map[string]any
		vendor     string
		calls      int
		persistent bool
	}{
		{"default", nil, "", 1, true},
		{"never persistent", map[string]any{"force_persistent_boot_device": "Never"}, "", 1, false},
		{"lenovo", nil, "Lenovo", 0, false},
	} {
		task := bootcTask(map[string]any{}, tc.di)
		task.Node.Properties["vendor"] = tc.vendor
		m := &bootRecorder{}
		task.Driver.Management = m
		if res, err := d.ExecuteStep(ctx, task, driver.Step{Kind: driver.StepDeploy, Interface: driver.KindDeploy, Name: "set_boot_to_disk"}); err != nil || res != "" {
			t.Fatalf("%s: %q, %v", tc.name, res, err)
		}
		if m.calls != tc.calls || (tc.calls > 0 && (m.device != "disk" || m.persistent != tc.persistent)) {
			t.Errorf("%s: %d calls, device %q persistent %v", tc.name, m.calls, m.device, m.persistent)
		}
	}
}
