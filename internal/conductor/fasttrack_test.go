package conductor_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/openkeel/ironic/internal/agentclient"
	"github.com/openkeel/ironic/internal/conductor"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/driver/agent"
	"github.com/openkeel/ironic/internal/driver/fake"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store/sqldb"
	"github.com/openkeel/ironic/testing/await"
	"github.com/openkeel/ironic/testing/ipa"
)

// countedPower is the fake power interface recording every power action.
type countedPower struct {
	fake.Power
	mu    sync.Mutex
	calls []string
}

func (p *countedPower) SetPowerState(ctx context.Context, task *driver.Task, state string, timeout time.Duration) error {
	p.mu.Lock()
	p.calls = append(p.calls, state)
	p.mu.Unlock()
	return p.Power.SetPowerState(ctx, task, state, timeout)
}

func (p *countedPower) Reboot(ctx context.Context, task *driver.Task, timeout time.Duration) error {
	p.mu.Lock()
	p.calls = append(p.calls, states.Reboot)
	p.mu.Unlock()
	task.Node.PowerState = states.PowerOn
	return p.Power.Reboot(ctx, task, timeout)
}

func (p *countedPower) take() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.calls
	p.calls = nil
	return out
}

// ramdiskBoot is the fake boot interface with upstream's ramdisk_boot
// capability, which the ramdisk deploy interface requires.
type ramdiskBoot struct{ fake.Boot }

func (b *ramdiskBoot) Capabilities() []string { return []string{"ramdisk_boot"} }

// diskManagement is the fake management interface able to boot from disk
// (upstream's fake management only knows PXE, so set_boot_to_disk fails
// on it).
type diskManagement struct {
	fake.Management
	mu     sync.Mutex
	device string
}

func (m *diskManagement) GetSupportedBootDevices(context.Context, *driver.Task) ([]string, error) {
	return []string{"pxe", "disk"}, nil
}

func (m *diskManagement) SetBootDevice(_ context.Context, _ *driver.Task, device string, _ bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.device = device
	return nil
}

// newFastTrackEnv is newAgentEnv with the counted power and ramdisk-able
// boot interfaces as the nodes' defaults and [deploy] options set.
func newFastTrackEnv(t *testing.T, db *sqldb.DB, deploy map[string]string) (*env, *countedPower) {
	t.Helper()
	return newFastTrackEnvWith(t, db, map[string]map[string]string{"deploy": deploy})
}

// newFastTrackEnvWith is newFastTrackEnv with more configuration; its
// options win over the environment's.
func newFastTrackEnvWith(t *testing.T, db *sqldb.DB, more map[string]map[string]string) (*env, *countedPower) {
	t.Helper()
	log := slog.New(slog.NewTextHandler(ftLogWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	e := newStoreEnv(t, db, testConfig(t, map[string]map[string]string{"agent": {"require_tls": "false"}}, more))
	cfg := e.cfg
	r := stockRegistry(t)
	power := &countedPower{}
	mustRegister(t, r, driver.KindPower, "counted", power)
	mustRegister(t, r, driver.KindBoot, "ramdisk-able", &ramdiskBoot{})
	mustRegister(t, r, driver.KindManagement, "disk-able", &diskManagement{})
	co := agentclient.DefaultOptions()
	co.CommandWaitInterval = 10 * time.Millisecond
	co.CommandTimeout = 5 * time.Second
	co.Log = log
	ft := driver.FastTrack{Enabled: cfg.Bool("deploy", "fast_track"), Timeout: time.Duration(cfg.Int("deploy", "fast_track_timeout")) * time.Second, Now: e.clock.Now}
	client := agentclient.New(co)
	deployIfaces := []string{"autodetect", "direct", "custom-agent", "ramdisk", "bootc", "fake"}
	auto := agent.AutodetectOptions{Candidates: []string{"ramdisk", "direct"}, Enabled: deployIfaces}
	if err := agent.Register(r, agent.Options{Client: client, DefaultBootMode: "uefi", FastTrack: ft, Autodetect: auto}); err != nil {
		t.Fatal(err)
	}
	if err := agent.RegisterRAID(r, agent.RAIDOptions{Client: client, Now: e.clock.Now}); err != nil {
		t.Fatal(err)
	}
	if err := agent.RegisterPower(r, agent.PowerOptions{Client: client, FastTrack: ft, Wait: time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	e.drivers = buildFakeHardware(t, r, map[driver.Kind][]string{
		driver.KindBoot: {"ramdisk-able", "fake"}, driver.KindDeploy: deployIfaces,
		driver.KindManagement: {"fake", "disk-able"}, driver.KindPower: {"counted", "agent", "fake"},
		driver.KindRAID: {"fake", "agent"},
	})
	e.run(conductor.Options{Logger: log})
	return e, power
}

type ftLogWriter struct{ t *testing.T }

func (w ftLogWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func withImage(n *model.Node) {
	n.InstanceInfo = map[string]any{"image_source": "http://127.0.0.1:1/disk.img", "image_checksum": "5d41402abc4b2a76b9719d911017c592"}
}

func TestCustomAgentDeployRunsAgentDeployStep(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e, power := newFastTrackEnv(t, db, nil)
		ctx := context.Background()
		n := e.node(states.Available, withImage, func(n *model.Node) {
			n.DeployInterface = "custom-agent"
			n.PowerInterface = "counted"
		})
		user := []map[string]any{{"interface": "deploy", "step": "erase_devices_metadata", "priority": 90, "args": map[string]any{}}}
		if err := e.api.DoNodeDeploy(ctx, "", n.UUID, false, nil, user); err != nil {
			t.Fatal(err)
		}
		e.waitState(n, states.DeployWait)
		token := lookup(t, e, n)
		a := ipa.New(t).WithToken(token)
		active := heartbeatUntil(t, e, n, a, token, states.Active)
		want := []string{"deploy.get_deploy_steps", "deploy.execute_deploy_step:erase_devices_metadata", "standby.power_off"}
		if got := commandNames(a); strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("agent commands %v, want %v (no image written by custom-agent)", got, want)
		}
		if active.PowerState != states.PowerOn || deref(active.LastError) != "" {
			t.Errorf("active node: power %q, last_error %q", active.PowerState, deref(active.LastError))
		}
		if got := strings.Join(power.take(), ","); got != "rebooting,power off,power on" {
			t.Errorf("power actions %s", got)
		}
	})
}

func TestRamdiskDeployReachesActive(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e, power := newFastTrackEnv(t, db, nil)
		ctx := context.Background()

		// A boot interface without ramdisk_boot cannot serve the ramdisk deploy.
		plain := e.node(states.Available, func(n *model.Node) {
			n.DeployInterface = "ramdisk"
			n.BootInterface = "fake"
		})
		err := e.api.DoNodeDeploy(ctx, "", plain.UUID, false, nil, nil)
		if err == nil || !strings.Contains(err.Error(), "must have the `ramdisk_boot` capability") {
			t.Fatalf("deploy with a boot interface lacking ramdisk_boot: %v", err)
		}

		n := e.node(states.Available, func(n *model.Node) {
			n.DeployInterface = "ramdisk"
			n.BootInterface = "ramdisk-able"
			n.PowerInterface = "counted"
			n.PowerState = states.PowerOn
		})
		if err := e.api.DoNodeDeploy(ctx, "", n.UUID, false, nil, nil); err != nil {
			t.Fatal(err)
		}
		active := e.waitState(n, states.Active)
		if active.PowerState != states.PowerOn || deref(active.LastError) != "" {
			t.Errorf("active node: power %q, last_error %q", active.PowerState, deref(active.LastError))
		}
		// Prepare powers off; deploy finds the node off and sends no second
		// power off (upstream node_power_action), then powers on; no
		// reboot into an agent.
		if got := strings.Join(power.take(), ","); got != "power off,power on" {
			t.Errorf("power actions %s", got)
		}
		if active.DriverInternalInfo["agent_secret_token"] != nil {
			t.Error("ramdisk deploy involved an agent token")
		}
	})
}

// Tearing down an agent deployment destroys the node's volume targets,
// as upstream's tear_down_storage_configuration does, and leaves other
// nodes' targets alone.
func TestAgentTearDownDestroysVolumeTargets(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e, _ := newFastTrackEnvWith(t, db, map[string]map[string]string{"conductor": {"automated_clean": "false"}})
		ctx := context.Background()
		n := e.node(states.Active, func(n *model.Node) {
			n.DeployInterface = "ramdisk"
			n.BootInterface = "ramdisk-able"
			n.PowerInterface = "counted"
			n.PowerState = states.PowerOn
		})
		other := e.node(states.Active)
		target := func(node *model.Node, index int) *model.VolumeTarget {
			typ, vol := "iscsi", fmt.Sprintf("vol-%d-%d", node.ID, index)
			vt, err := e.st.CreateVolumeTarget(ctx, &model.VolumeTarget{
				UUID: uuid.NewString(), NodeID: &node.ID, VolumeType: &typ, BootIndex: &index, VolumeID: &vol})
			if err != nil {
				t.Fatal(err)
			}
			return vt
		}
		mine := []*model.VolumeTarget{target(n, 0), target(n, 1)}
		kept := target(other, 0)
		if err := e.api.DoNodeTearDown(ctx, "", n.UUID); err != nil {
			t.Fatal(err)
		}
		e.waitState(n, states.Available)
		for _, vt := range mine {
			if _, err := e.st.GetVolumeTargetByID(ctx, vt.ID); err == nil {
				t.Errorf("volume target %s of the torn down node kept", vt.UUID)
			}
		}
		if _, err := e.st.GetVolumeTargetByID(ctx, kept.ID); err != nil {
			t.Errorf("volume target of another node: %v", err)
		}
	})
}

func TestFastTrackDeployAfterCleaning(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e, power := newFastTrackEnv(t, db, map[string]string{"fast_track": "true"})
		ctx := context.Background()
		n := e.node(states.Manageable, func(n *model.Node) {
			n.DeployInterface = "direct"
			n.PowerInterface = "counted"
		})
		token := provideToAgent(t, e, n)
		a := ipa.New(t).WithToken(token)
		clean := heartbeatUntil(t, e, n, a, token, states.Available)
		if got := strings.Join(power.take(), ","); got != "rebooting" {
			t.Errorf("power actions of cleaning %s, want only the reboot into the ramdisk", got)
		}
		if clean.PowerState != states.PowerOn || clean.DriverInternalInfo["agent_url"] != a.URL() || clean.DriverInternalInfo["agent_secret_token"] != token {
			t.Fatalf("after fast-track cleaning: power %q, driver_internal_info %v", clean.PowerState, clean.DriverInternalInfo)
		}

		withImage(clean)
		if _, err := e.st.UpdateNode(ctx, clean, "instance_info"); err != nil {
			t.Fatal(err)
		}
		if err := e.api.DoNodeDeploy(ctx, "", n.UUID, false, nil, nil); err != nil {
			t.Fatal(err)
		}
		// The same agent, with the same token, writes the image.
		active := heartbeatUntil(t, e, n, a, token, states.Active)
		want := []string{"clean.get_clean_steps", "clean.execute_clean_step:erase_devices_metadata", "clean.execute_clean_step:erase_devices",
			"deploy.get_deploy_steps", "deploy.execute_deploy_step:write_image", "standby.get_partition_uuids", "image.install_bootloader", "standby.power_off"}
		if got := commandNames(a); strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("agent commands %v, want %v", got, want)
		}
		// No power cycle between cleaning and deploy: only the agent's
		// tear-down (out of band, the fake stays on) and the instance boot.
		if got := strings.Join(power.take(), ","); got != "power off,power on" {
			t.Errorf("power actions of the deploy %s", got)
		}
		if active.PowerState != states.PowerOn || deref(active.LastError) != "" {
			t.Errorf("active node: power %q, last_error %q", active.PowerState, deref(active.LastError))
		}
	})
}

func TestFastTrackOffPowersOffAfterCleaning(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e, power := newFastTrackEnv(t, db, nil)
		n := e.node(states.Manageable, func(n *model.Node) {
			n.DeployInterface = "direct"
			n.PowerInterface = "counted"
			n.DriverInfo = map[string]any{"fast_track": "false"}
		})
		token := provideToAgent(t, e, n)
		done := heartbeatUntil(t, e, n, ipa.New(t).WithToken(token), token, states.Available)
		if got := strings.Join(power.take(), ","); got != "rebooting,power off" {
			t.Errorf("power actions %s", got)
		}
		if done.DriverInternalInfo["agent_url"] != nil || done.DriverInternalInfo["agent_secret_token"] != nil {
			t.Errorf("agent kept without fast track: %v", done.DriverInternalInfo)
		}
	})
}

func TestFastTrackSecondCleaningWithoutReboot(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e, power := newFastTrackEnv(t, db, map[string]string{"fast_track": "true"})
		ctx := context.Background()
		n := e.node(states.Manageable, func(n *model.Node) {
			n.DeployInterface = "direct"
			n.PowerInterface = "counted"
		})
		token := provideToAgent(t, e, n)
		a := ipa.New(t).WithToken(token)
		heartbeatUntil(t, e, n, a, token, states.Available)
		if got := strings.Join(power.take(), ","); got != "rebooting" {
			t.Fatalf("power actions of the first cleaning %s", got)
		}

		if err := e.api.DoProvisioningAction(ctx, "", n.UUID, "manage"); err != nil {
			t.Fatal(err)
		}
		e.waitState(n, states.Manageable)
		if err := e.api.DoProvisioningAction(ctx, "", n.UUID, "provide"); err != nil {
			t.Fatal(err)
		}
		// The running agent is asked for its steps at once, without a
		// reboot and without waiting for a heartbeat; it keeps its token.
		done := heartbeatUntil(t, e, n, a, token, states.Available)
		if got := power.take(); len(got) != 0 {
			t.Errorf("power actions of the fast-track cleaning %v, want none", got)
		}
		first := []string{"clean.get_clean_steps", "clean.execute_clean_step:erase_devices_metadata", "clean.execute_clean_step:erase_devices"}
		want := strings.Join(append(append([]string{}, first...), first...), ",")
		if got := strings.Join(commandNames(a), ","); got != want {
			t.Errorf("agent commands %s, want %s", got, want)
		}
		if done.DriverInternalInfo["agent_secret_token"] != token || done.DriverInternalInfo["agent_url"] != a.URL() || deref(done.LastError) != "" {
			t.Errorf("after the second cleaning: last_error %q, driver_internal_info %v", deref(done.LastError), done.DriverInternalInfo)
		}
		if done.DriverInternalInfo["agent_erase_devices_iterations"] != nil {
			t.Errorf("clean params without configuration: %v", done.DriverInternalInfo)
		}
	})
}

func TestFastTrackCleaningRebootsWhenAgentSilent(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e, power := newFastTrackEnv(t, db, map[string]string{"fast_track": "true", "fast_track_timeout": "60"})
		ctx := context.Background()
		n := e.node(states.Manageable, func(n *model.Node) {
			n.DeployInterface = "direct"
			n.PowerInterface = "counted"
		})
		token := provideToAgent(t, e, n)
		a := ipa.New(t).WithToken(token)
		heartbeatUntil(t, e, n, a, token, states.Available)
		power.take()
		if err := e.api.DoProvisioningAction(ctx, "", n.UUID, "manage"); err != nil {
			t.Fatal(err)
		}
		e.waitState(n, states.Manageable)
		// The last heartbeat is now older than fast_track_timeout.
		e.clock.Advance(61 * time.Second)
		if err := e.api.DoProvisioningAction(ctx, "", n.UUID, "provide"); err != nil {
			t.Fatal(err)
		}
		waiting := e.waitState(n, states.CleanWait)
		if got := strings.Join(power.take(), ","); got != "rebooting" {
			t.Errorf("power actions %s, want the reboot into a new ramdisk", got)
		}
		if waiting.DriverInternalInfo["agent_url"] != nil || waiting.DriverInternalInfo["agent_secret_token"] != nil {
			t.Errorf("old agent kept across the reboot: %v", waiting.DriverInternalInfo)
		}
	})
}

func TestAgentRAIDManualCleaning(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e, _ := newFastTrackEnv(t, db, nil)
		ctx := context.Background()
		n := e.node(states.Manageable, func(n *model.Node) {
			n.DeployInterface = "direct"
			n.PowerInterface = "counted"
			n.RAIDInterface = "agent"
			n.Properties = map[string]any{"capabilities": "boot_mode:uefi"}
			n.TargetRAIDConfig = map[string]any{"logical_disks": []any{
				map[string]any{"raid_level": "1", "size_gb": 100, "is_root_volume": true},
				map[string]any{"raid_level": "0", "size_gb": "MAX"},
			}}
		})
		// The agent reports create_configuration without argsinfo, so
		// upstream's argument check refuses create_root_volume and
		// create_nonroot_volumes for it.
		steps := []map[string]any{
			{"interface": "raid", "step": "delete_configuration"},
			{"interface": "raid", "step": "create_configuration"},
		}
		if err := e.api.DoNodeClean(ctx, "", n.UUID, steps, false); err != nil {
			t.Fatal(err)
		}
		e.waitState(n, states.CleanWait)
		token := lookup(t, e, n)
		a := ipa.New(t).WithToken(token).Handle("clean.execute_clean_step", ipa.RAIDSteps("clean", 1))
		done := heartbeatUntil(t, e, n, a, token, states.Manageable)
		want := "clean.get_clean_steps,clean.execute_clean_step:delete_configuration,clean.execute_clean_step:create_configuration"
		if got := strings.Join(commandNames(a), ","); got != want {
			t.Fatalf("agent commands %s, want %s (last_error %q)", got, want, deref(done.LastError))
		}
		sent := a.LastParams("clean.execute_clean_step")
		filtered, _ := sent["node"].(map[string]any)["driver_internal_info"].(map[string]any)["target_raid_config"].(map[string]any)
		if disks, _ := filtered["logical_disks"].([]any); len(disks) != 2 {
			t.Errorf("filtered target sent to the agent: %v", filtered)
		}
		if deref(done.LastError) != "" || done.RAIDConfig["last_updated"] == nil || len(done.RAIDConfig["logical_disks"].([]any)) != 2 {
			t.Fatalf("after cleaning: last_error %q, raid_config %v", deref(done.LastError), done.RAIDConfig)
		}
		if done.Properties["capabilities"] != "boot_mode:uefi,raid_level:1" || done.Properties["local_gb"] != float64(100) {
			t.Errorf("properties %v", done.Properties)
		}
	})
}

// TestAutodetectDeployThenRestore: autodetect hands a disk image to the
// direct deploy interface for the deployment, and the node gets
// autodetect back when the cleaning after its undeploy ends.
func TestAutodetectDeployThenRestore(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e, _ := newFastTrackEnv(t, db, nil)
		ctx := context.Background()
		n := e.node(states.Available, withImage, func(n *model.Node) {
			n.DeployInterface = "autodetect"
			n.PowerInterface = "counted"
		})
		if err := e.api.DoNodeDeploy(ctx, "", n.UUID, false, nil, nil); err != nil {
			t.Fatal(err)
		}
		waiting := e.waitState(n, states.DeployWait)
		if waiting.DeployInterface != "direct" || waiting.DriverInternalInfo["original_deploy_interface"] != "autodetect" {
			t.Fatalf("deploying with %q, driver_internal_info %v", waiting.DeployInterface, waiting.DriverInternalInfo)
		}
		token := lookup(t, e, n)
		a := ipa.New(t).WithToken(token)
		active := heartbeatUntil(t, e, n, a, token, states.Active)
		if active.DeployInterface != "direct" || a.Count("deploy.execute_deploy_step") == 0 {
			t.Fatalf("active with %q, agent commands %v", active.DeployInterface, commandNames(a))
		}

		if err := e.api.DoNodeTearDown(ctx, "", n.UUID); err != nil {
			t.Fatal(err)
		}
		e.waitState(n, states.CleanWait)
		token = lookup(t, e, n)
		cleaner := ipa.New(t).WithToken(token)
		done := heartbeatUntil(t, e, n, cleaner, token, states.Available)
		if cleaner.Count("clean.execute_clean_step") == 0 {
			t.Errorf("cleaning after undeploy ran no agent step: %v", commandNames(cleaner))
		}
		if done.DeployInterface != "autodetect" || done.DriverInternalInfo["original_deploy_interface"] != nil {
			t.Errorf("after cleaning: deploy_interface %q, driver_internal_info %v", done.DeployInterface, done.DriverInternalInfo)
		}
	})
}

// TestAutodetectRamdiskImage: a ramdisk deployment asked for in
// instance_info switches to the ramdisk deploy interface.
func TestAutodetectRamdiskImage(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e, _ := newFastTrackEnv(t, db, nil)
		ctx := context.Background()
		n := e.node(states.Available, func(n *model.Node) {
			n.DeployInterface = "autodetect"
			n.BootInterface = "ramdisk-able"
			n.PowerInterface = "counted"
			n.InstanceInfo = map[string]any{"boot_iso": "http://127.0.0.1:1/boot.iso", "ironic_ramdisk_deploy": true}
		})
		if err := e.api.DoNodeDeploy(ctx, "", n.UUID, false, nil, nil); err != nil {
			t.Fatal(err)
		}
		active := e.waitState(n, states.Active)
		if active.DeployInterface != "ramdisk" || active.DriverInternalInfo["original_deploy_interface"] != "autodetect" {
			t.Errorf("active with %q, driver_internal_info %v", active.DeployInterface, active.DriverInternalInfo)
		}
	})
}

// TestBootcDeploy: the agent installs the container image with its
// execute_bootc_install step and the node boots from disk.
func TestBootcDeploy(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e, power := newFastTrackEnv(t, db, nil)
		ctx := context.Background()
		plain := e.node(states.Available, withImage, func(n *model.Node) { n.DeployInterface = "bootc" })
		err := e.api.DoNodeDeploy(ctx, "", plain.UUID, false, nil, nil)
		if class(err) != "InstanceDeployFailure" || !strings.HasSuffix(err.Error(), "Invalid image href http://127.0.0.1:1/disk.img.") {
			t.Fatalf("bootc with a disk image: %v", err)
		}

		n := e.node(states.Available, func(n *model.Node) {
			n.DeployInterface = "bootc"
			n.PowerInterface = "counted"
			n.ManagementInterface = "disk-able"
			n.InstanceInfo = map[string]any{"image_source": "oci://127.0.0.1:1/example/os:latest", "image_pull_secret": "s3cret"}
		})
		if err := e.api.DoNodeDeploy(ctx, "", n.UUID, false, nil, nil); err != nil {
			t.Fatal(err)
		}
		e.waitState(n, states.DeployWait)
		token := lookup(t, e, n)
		a := ipa.New(t).WithToken(token)
		active := heartbeatUntil(t, e, n, a, token, states.Active)
		want := "deploy.get_deploy_steps,deploy.execute_deploy_step:execute_bootc_install,standby.power_off"
		if got := strings.Join(commandNames(a), ","); got != want {
			t.Fatalf("agent commands %s, want %s (last_error %q)", got, want, deref(active.LastError))
		}
		args := a.LastParams("deploy.execute_deploy_step")["step"].(map[string]any)["args"].(map[string]any)
		if args["image_source"] != "oci://127.0.0.1:1/example/os:latest" || args["oci_pull_secret"] != "czNjcmV0" {
			t.Errorf("bootc install args %v", args)
		}
		if got := strings.Join(power.take(), ","); got != "rebooting,power off,power on" {
			t.Errorf("power actions %s", got)
		}
	})
}

// TestAgentPowerReboot: with the agent power interface only reboots are
// accepted, and, as upstream, a reboot asked through the API cannot
// reach the agent: node_power_action drops agent_url (as for any reboot)
// before the interface sends standby.run_image, so the action fails and
// the agent, now unknown, is offline for the interface.
func TestAgentPowerReboot(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e, _ := newFastTrackEnv(t, db, map[string]string{"fast_track": "true"})
		ctx := context.Background()
		a := ipa.New(t).WithToken("tok")
		n := e.node(states.Manageable, func(n *model.Node) {
			n.PowerInterface = "agent"
			n.PowerState = states.PowerOn
			n.DriverInternalInfo = map[string]any{
				"agent_url": a.URL(), "agent_secret_token": "tok",
				"agent_last_heartbeat": e.clock.Now().UTC().Format("2006-01-02T15:04:05.000000"),
			}
		})
		err := e.api.ChangeNodePowerState(ctx, "", n.UUID, states.PowerOff, 0)
		if class(err) != "InvalidParameterValue" || !strings.Contains(err.Error(), "does not support the power state, power off") {
			t.Fatalf("power off: %v", err)
		}
		if err := e.api.ChangeNodePowerState(ctx, "", n.UUID, states.Reboot, 0); err != nil {
			t.Fatal(err)
		}
		var got *model.Node
		await.UntilReason(t, 5*time.Second, "the reboot to finish", func() (bool, string) {
			got = e.waitUnlocked(n)
			return got.TargetPowerState == states.NoState, fmt.Sprintf("reboot: agent commands %v, last_error %q", commandNames(a), deref(got.LastError))
		})
		if a.Count("standby.run_image") != 0 || !strings.HasSuffix(deref(got.LastError), "Agent driver requires agent_url in driver_internal_info") {
			t.Fatalf("reboot: agent commands %v, last_error %q", commandNames(a), deref(got.LastError))
		}
		if got.DriverInternalInfo["agent_url"] != nil || got.DriverInternalInfo["agent_secret_token"] != nil {
			t.Errorf("agent kept after its reboot: %v", got.DriverInternalInfo)
		}
		// Without a live agent the interface refuses to act.
		err = e.api.ChangeNodePowerState(ctx, "", n.UUID, states.Reboot, 0)
		if class(err) != "InvalidParameterValue" || !strings.Contains(err.Error(), "Agent seems offline for node "+n.UUID) {
			t.Errorf("reboot without an agent: %v", err)
		}
	})
}
