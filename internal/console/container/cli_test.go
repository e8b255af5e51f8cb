package container

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fakeCLI writes a CLI that prints the answer the test gives for "port"
// and succeeds otherwise.
func fakeCLI(t *testing.T, portOut string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "engine")
	script := "#!/bin/sh\ncase \"$1\" in port) printf '%s' \"" + portOut + "\" ;; esac\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestBuiltInTemplateRendersUpstreamArguments(t *testing.T) {
	c, err := newCLI(Options{Executable: fakeCLI(t, ""), Image: "quay.io/x/console:1", ConductorHost: "cond-1",
		PublishPort: "127.0.0.1::5900", ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.args("uuid-1", "redfish-graphical")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"run", "--detach", "--rm", "--name", "ironic-console-uuid-1",
		"--label", "org.openstack.ironic.console=true", "--label", "org.openstack.ironic.conductor=cond-1",
		"--label", "org.openstack.ironic.node=uuid-1", "--publish", "127.0.0.1::5900", "--pull", "missing",
		"--env", "APP=redfish-graphical", "--env", "APP_INFO", "--env", "READ_ONLY=True", "quay.io/x/console:1"}
	if !slices.Equal(got, want) {
		t.Errorf("arguments\n got %q\nwant %q", got, want)
	}
}

func TestProviderRefusals(t *testing.T) {
	engine := fakeCLI(t, "")
	dir := t.TempDir()
	jinja := filepath.Join(dir, "jinja.template")
	_ = os.WriteFile(jinja, []byte("run {% if x %}--rm{% endif %} {{ image }}"), 0o644)
	unknown := filepath.Join(dir, "unknown.template")
	_ = os.WriteFile(unknown, []byte("run {{ password }}"), 0o644)
	for name, tc := range map[string]struct {
		o    Options
		want string
	}{
		"no image":          {Options{Provider: "container", Executable: engine}, "[vnc]console_image must be set."},
		"no engine":         {Options{Provider: "container", Executable: filepath.Join(dir, "absent"), Image: "i"}, "not available or the container engine is not reachable"},
		"jinja statements":  {Options{Provider: "container", Executable: engine, Image: "i", CommandTemplate: jinja}, "jinja2 statements"},
		"unknown variable":  {Options{Provider: "container", Executable: engine, Image: "i", CommandTemplate: unknown}, `unknown template variable "password"`},
		"provider not here": {Options{Provider: "nonesuch"}, `looking for "nonesuch"`},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := New(tc.o)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "Console container error with provider") {
				t.Fatalf("got %v, want ConsoleContainerError with %q", err, tc.want)
			}
		})
	}
}

func TestPublishedPortParsing(t *testing.T) {
	for out, want := range map[string]string{
		"127.0.0.1:32768\n":                 "127.0.0.1:32768",
		"0.0.0.0:32768\n[::]:32768\n":       "10.1.2.3:32768",
		"[::1]:40000\n192.0.2.7:40001\n":    "192.0.2.7:40001",
		"::1:40000\n":                       "::1:40000",
		"5900/tcp -> 198.51.100.2:41000\n":  "198.51.100.2:41000",
		"5900/tcp -> [2001:db8::5]:41001\n": "2001:db8::5:41001",
	} {
		c := &CLI{o: Options{Executable: fakeCLI(t, out), MyIP: "10.1.2.3"}, log: discard()}
		host, port, err := c.hostPort(context.Background(), "ironic-console-x")
		if err != nil {
			t.Errorf("%q: %v", out, err)
			continue
		}
		if got := host + ":" + itoa(port); got != want {
			t.Errorf("%q: %s, want %s", out, got, want)
		}
	}
	c := &CLI{o: Options{Executable: fakeCLI(t, "nothing published")}, log: discard()}
	if _, _, err := c.hostPort(context.Background(), "x"); err == nil || !strings.Contains(err.Error(), "Could not detect a published VNC port") {
		t.Errorf("no binding: %v", err)
	}
}
