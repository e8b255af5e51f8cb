package agentclient

import (
	"bytes"
	"context"
	"encoding/base64"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/testing/ipa"
	"github.com/openkeel/ironic/testing/keystone"
	fakeswift "github.com/openkeel/ironic/testing/swift"
)

func (e *env) logText() string {
	logMu.Lock()
	defer logMu.Unlock()
	return e.logs.String()
}

func TestCollectRamdiskLogs(t *testing.T) {
	ctx := context.Background()
	archive := []byte("\x1f\x8b a gzipped tarball of the ramdisk's journal")
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.FixedZone("CET", 3600))
	local := func(dir, collect string) func(*Options) {
		return func(o *Options) {
			o.DeployLogs = DeployLogs{Collect: collect, StorageBackend: "local", LocalPath: dir}
			o.Now = func() time.Time { return at }
		}
	}
	logsAgent := func(t *testing.T) *ipa.Agent {
		return ipa.New(t).WithToken(token).Handle("log.collect_system_logs",
			ipa.Sync(map[string]any{"system_logs": base64.StdEncoding.EncodeToString(archive)}))
	}

	t.Run("stored under the local path with upstream's name", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "deploy")
		e := newEnv(t, logsAgent(t), local(dir, LogsOnFailure))
		name, instance := "node-7", "0c5a4f8e-4f6b-4a87-9e8b-3b8c6f6f2a11"
		e.tgt.NodeName, e.tgt.InstanceUUID = name, instance
		e.cl.CollectRamdiskLogs(ctx, e.tgt, "cleaning")
		want := filepath.Join(dir, e.tgt.NodeUUID+"_node-7_"+instance+"_cleaning_2026-03-04-04-06-07.tar.gz")
		got, err := os.ReadFile(want)
		if err != nil {
			t.Fatalf("stored logs: %v (log: %s)", err, e.logText())
		}
		if !bytes.Equal(got, archive) {
			t.Fatalf("stored %q, want the decoded archive", got)
		}
		if e.agent.Count("log.collect_system_logs") != 1 {
			t.Fatalf("collect_system_logs sent %d times", e.agent.Count("log.collect_system_logs"))
		}
	})
	t.Run("no label, no name", func(t *testing.T) {
		e := newEnv(t, logsAgent(t), local(t.TempDir(), LogsAlways))
		if got := e.cl.RamdiskLogsFileName(e.tgt, ""); got != e.tgt.NodeUUID+"_2026-03-04-04-06-07.tar.gz" {
			t.Fatalf("file name %q", got)
		}
	})
	t.Run("never asks nothing", func(t *testing.T) {
		dir := t.TempDir()
		e := newEnv(t, logsAgent(t), local(dir, LogsNever))
		e.cl.CollectRamdiskLogs(ctx, e.tgt, "")
		if e.agent.Count("log.collect_system_logs") != 0 {
			t.Fatal("logs collected with deploy_logs_collect = never")
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Fatalf("files written: %v", entries)
		}
	})
	t.Run("failures are logged, not returned", func(t *testing.T) {
		dir := t.TempDir()
		for _, c := range []struct {
			name  string
			agent func(*testing.T) *ipa.Agent
			tune  func(*Options)
			want  string
		}{
			{"agent gone", func(t *testing.T) *ipa.Agent { a := ipa.New(t).WithToken(token); a.Down(); return a },
				local(dir, LogsAlways), "Failed to invoke collect_system_logs agent command for node "},
			{"command failed", func(t *testing.T) *ipa.Agent {
				return ipa.New(t).WithToken(token).Handle("log.collect_system_logs", ipa.AsyncFail(0, ipa.CommandError("CommandExecutionError", "Command execution failed", "journalctl missing", 500)))
			}, local(dir, LogsAlways), "Failed to collect logs from the node "},
			{"unwritable path", logsAgent, local("/proc/no-such-dir", LogsAlways), "Failed to store the logs from the node "},
		} {
			t.Run(c.name, func(t *testing.T) {
				e := newEnv(t, c.agent(t), func(o *Options) { c.tune(o); o.MaxCommandAttempts = 1 })
				e.cl.CollectRamdiskLogs(ctx, e.tgt, "")
				if out := e.logText(); !strings.Contains(out, c.want) {
					t.Fatalf("log lacks %q:\n%s", c.want, out)
				}
			})
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Fatalf("files written on failure: %v", entries)
		}
	})
}

func TestDeployLogsFromConfig(t *testing.T) {
	c, err := config.Load(config.LoadOptions{Overrides: map[string]map[string]string{
		"agent": {"deploy_logs_collect": "always", "deploy_logs_local_path": "/srv/ipa-logs"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	got := OptionsFromConfig(c).DeployLogs
	if got != (DeployLogs{Collect: LogsAlways, StorageBackend: "local", LocalPath: "/srv/ipa-logs",
		SwiftContainer: "ironic_deploy_logs_container", SwiftDaysToExpire: 30}) {
		t.Fatalf("deploy logs options %+v", got)
	}
	if d := DefaultOptions().DeployLogs; d.Collect != LogsOnFailure || d.LocalPath != "/var/log/ironic/deploy" {
		t.Fatalf("defaults %+v", d)
	}
}

// TestRamdiskLogsInSwift: with deploy_logs_storage_backend swift the
// archive is uploaded, with the [swift] credentials, to
// deploy_logs_swift_container under the same name as a local file, and
// Swift deletes it after deploy_logs_swift_days_to_expire days.
func TestRamdiskLogsInSwift(t *testing.T) {
	ctx := context.Background()
	archive := []byte("\x1f\x8b the ramdisk's journal")
	ks := keystone.New(t).Project("service").User("ironic", "secret").Grant("ironic", "service", "admin")
	sw := fakeswift.New(t).ValidateTokens(ks.TokenValid)
	sw.Register(ks, ks.ProjectID("service"))
	c, err := config.Load(config.LoadOptions{Overrides: map[string]map[string]string{
		"agent": {"deploy_logs_collect": "always", "deploy_logs_storage_backend": "swift",
			"deploy_logs_swift_container": "ipa-logs", "deploy_logs_swift_days_to_expire": "2"},
		"swift": fakeswift.IronicSection(ks, "ironic", "secret", "service"),
	}})
	if err != nil {
		t.Fatal(err)
	}
	agent := ipa.New(t).WithToken(token).Handle("log.collect_system_logs",
		ipa.Sync(map[string]any{"system_logs": base64.StdEncoding.EncodeToString(archive)}))
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	e := newEnv(t, agent, func(o *Options) {
		o.DeployLogs = DeployLogsFromConfig(c)
		o.Now = func() time.Time { return at }
	})
	e.cl.CollectRamdiskLogs(ctx, e.tgt, "deploy")
	account := fakeswift.AccountName(ks.ProjectID("service"))
	name := e.tgt.NodeUUID + "_deploy_2026-03-04-05-06-07.tar.gz"
	o := sw.Object(account, "ipa-logs", name)
	if o == nil {
		t.Fatalf("no object %s in %v (log: %s)", name, sw.Objects(account, "ipa-logs"), e.logText())
	}
	if !bytes.Equal(o.Data, archive) {
		t.Fatalf("uploaded %q, want the decoded archive", o.Data)
	}
	if want := sw.Now().Add(2 * 24 * time.Hour); !o.DeleteAt.Equal(want) {
		t.Fatalf("object expires at %v, want %v", o.DeleteAt, want)
	}
	if !strings.Contains(e.logText(), "Ramdisk logs were stored in swift for node "+e.tgt.NodeUUID) {
		t.Fatalf("upload not logged:\n%s", e.logText())
	}

	// A failed upload is logged with upstream's SwiftOperationError.
	sw.Fail(http.StatusServiceUnavailable)
	e.cl.CollectRamdiskLogs(ctx, e.tgt, "clean")
	if out := e.logText(); !strings.Contains(out, "Failed to store the logs from the node "+e.tgt.NodeUUID+" deployment. Error: Swift operation 'put container' failed: 503") {
		t.Fatalf("failed upload not logged:\n%s", out)
	}
}
