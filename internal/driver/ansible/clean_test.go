package ansible

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/driver/agent"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/testing/sshd"
)

// TestCleanSteps: our clean steps file offers erase_devices_metadata (99)
// and erase_devices (10) of the deploy interface, in the file's order,
// with the tags argument; [deploy]/erase_devices_priority and
// erase_devices_metadata_priority replace the file's priorities.
func TestCleanSteps(t *testing.T) {
	n := &model.Node{UUID: "n1"}
	d := New(Options{EmbeddedDir: t.TempDir()}, agent.Options{})
	got, err := d.ListSteps(context.Background(), &driver.Task{Node: n}, driver.StepClean)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Name != "erase_devices_metadata" || got[0].Priority != 99 ||
		got[1].Name != "erase_devices" || got[1].Priority != 10 {
		t.Fatalf("clean steps %+v", got)
	}
	for _, s := range got {
		ai, ok := s.ArgsInfo["tags"]
		if s.Kind != driver.StepClean || s.Abortable || !s.RequiresRamdisk || !ok || ai.Required == nil || !*ai.Required || ai.Description == "" {
			t.Errorf("step %+v", s)
		}
	}
	zero, five := 0, 5
	d = New(Options{EmbeddedDir: t.TempDir()}, agent.Options{ErasePriority: &zero, EraseMetadataPriority: &five})
	got, err = d.ListSteps(context.Background(), &driver.Task{Node: n}, driver.StepClean)
	if err != nil || got[0].Priority != 5 || got[1].Priority != 0 {
		t.Fatalf("overridden steps %+v, %v", got, err)
	}
	if deploy, _ := d.ListSteps(context.Background(), &driver.Task{Node: n}, driver.StepDeploy); len(deploy) != 5 {
		t.Errorf("deploy steps %+v", deploy)
	}
}

// A node's own steps file (driver_info ansible_clean_steps_config in its
// ansible_playbooks_path) replaces ours; steps of other interfaces are
// not the deploy interface's; a bad file fails cleaning with upstream's
// errors.
func TestCleanStepsFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("mine.yaml", `
- name: wipe_fast
  priority: 50
  interface: deploy
  args:
    tags:
      description: what to run
      value: [fast]
    level:
      required: false
- name: bios_thing
  interface: bios
`)
	write("unnamed.yaml", "- priority: 3\n- name: a\n- name: b\n  interface: deploy\n  args:\n    tags:\n      required: true\n")
	write("dups.yaml", "- name: a\n  interface: deploy\n- name: a\n  interface: deploy\n")
	write("notyaml.yaml", "- name: [unclosed\n")
	d := New(Options{}, agent.Options{})
	node := func(file string) *model.Node {
		return &model.Node{UUID: "n2", DriverInfo: map[string]any{"ansible_playbooks_path": dir, "ansible_clean_steps_config": "/elsewhere/" + file}}
	}
	got, err := d.cleanSteps(node("mine.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].spec.Name != "wipe_fast" || got[0].spec.Priority != 50 || got[0].spec.ArgsInfo["tags"].Required != nil ||
		*got[0].spec.ArgsInfo["level"].Required || fmt.Sprint(got[0].defaults["tags"]) != "[fast]" {
		t.Fatalf("steps %+v", got)
	}
	for file, want := range map[string]string{
		"missing.yaml": "Failed to clean node n2: Failed to load clean steps from file " + filepath.Join(dir, "missing.yaml") +
			": [Errno 2] No such file or directory: '" + filepath.Join(dir, "missing.yaml") + "'",
		"unnamed.yaml": "Failed to clean node n2: Malformed clean_steps file: name undefined, field name, name a, field interface, name b, field tags.value",
		"dups.yaml":    "Failed to clean node n2: Cleaning steps do not have unique names.",
		"notyaml.yaml": "Failed to clean node n2: Failed to load clean steps from file " + filepath.Join(dir, "notyaml.yaml") + ": yaml:",
	} {
		_, err := d.ListSteps(context.Background(), &driver.Task{Node: node(file)}, driver.StepClean)
		if err == nil || !errs.Is(err, errs.ClassNodeCleaningFailure) || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: %v, want %q", file, err, want)
		}
	}
}

// TestCleanStepRunsClean: a clean step runs our clean playbook with a
// real ansible-playbook over SSH against the ramdisk (check mode), with
// the step's tags from the steps file: erase_devices_metadata runs the
// zap tasks only; tags given as the step's arguments win (the
// conductor's cleaning test runs erase_devices with its own). A failing playbook fails the step with
// InstanceDeployFailure worded as upstream's ProcessExecutionError.
func TestCleanStepRunsClean(t *testing.T) {
	s := sshd.Start(t)
	o, logPath := RamdiskOptions(t, s)
	d := New(o, agent.Options{})
	n := &model.Node{UUID: "3be26c0b-03f2-4d2e-ae87-c02d7f33c123",
		DriverInternalInfo: map[string]any{"agent_url": "http://127.0.0.1:9999"}}
	task := &driver.Task{Node: n}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const zap, shred = "TASK [clean : Destroy the GPT and MBR structures]", "TASK [clean : Overwrite the disks]"
	run := func(step string, args map[string]any) string {
		t.Helper()
		_ = os.Remove(logPath)
		res, err := d.ExecuteStep(ctx, task, driver.Step{Kind: driver.StepClean, Interface: driver.KindDeploy, Name: step, Args: args})
		if err != nil || res != "" {
			t.Fatalf("%s: %q, %v", step, res, err)
		}
		log, _ := os.ReadFile(logPath)
		if !strings.Contains(string(log), "TASK [wait : Wait for SSH on the ramdisk]") || !strings.Contains(string(log), n.UUID) {
			t.Errorf("%s did not reach the ramdisk:\n%s", step, log)
		}
		return string(log)
	}
	if log := run("erase_devices_metadata", nil); !strings.Contains(log, zap) || strings.Contains(log, shred) {
		t.Errorf("erase_devices_metadata ran:\n%s", log)
	}
	if log := run("erase_devices", map[string]any{"tags": []any{"zap"}}); !strings.Contains(log, zap) || strings.Contains(log, shred) {
		t.Errorf("erase_devices with tags [zap] ran:\n%s", log)
	}

	n.DriverInfo = map[string]any{"ansible_clean_playbook": "missing-clean.yaml"}
	_, err := d.ExecuteStep(ctx, task, driver.Step{Kind: driver.StepClean, Interface: driver.KindDeploy, Name: "erase_devices"})
	if err == nil || !errs.Is(err, errs.ClassInstanceDeployFailure) ||
		!strings.HasPrefix(err.Error(), "Failed to deploy instance: Unexpected error while running command.\nCommand: env ANSIBLE_CONFIG=") ||
		!strings.Contains(err.Error(), "missing-clean.yaml -i ") || !strings.Contains(err.Error(), "--tags=shred") ||
		!strings.Contains(err.Error(), "\nExit code: 1\nStdout: ") {
		t.Fatalf("failing playbook: %v", err)
	}
	if _, err := d.ExecuteStep(ctx, task, driver.Step{Kind: driver.StepClean, Interface: driver.KindDeploy, Name: "not_in_file"}); err == nil ||
		!strings.Contains(err.Error(), "clean step not_in_file is not in the clean steps file and was given no tags") {
		t.Fatalf("undeclared step without tags: %v", err)
	}
	if _, err := d.ExecuteStep(ctx, task, driver.Step{Kind: driver.StepClean, Interface: driver.KindDeploy, Name: "erase_devices", Args: map[string]any{"tags": "zap"}}); err == nil ||
		!errs.Is(err, errs.ClassInvalidParameterValue) {
		t.Fatalf("tags not a list: %v", err)
	}
}
