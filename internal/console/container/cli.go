package container

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/google/shlex"

	"github.com/openkeel/ironic/internal/model"
)

//go:embed templates/*.template
var templates embed.FS

const (
	namePrefix  = "ironic-console"
	labelPrefix = "org.openstack.ironic"
)

// CLI is upstream's "container" provider: a Docker-compatible CLI
// ([vnc]/container_executable: docker, or podman) runs one container per
// node from [vnc]/console_image.
type CLI struct {
	o        Options
	template string
	log      *slog.Logger
}

func newCLI(o Options) (*CLI, error) {
	c := &CLI{o: o, log: slog.Default().With("provider", "container")}
	if _, err := c.run(context.Background(), nil, "version"); err != nil {
		return nil, Error(c.Name(), fmt.Sprintf("%s not available or the container engine is not reachable: %v", o.Executable, err))
	}
	if o.Image == "" {
		return nil, Error(c.Name(), "[vnc]console_image must be set.")
	}
	text, err := readTemplate(o.CommandTemplate)
	if err != nil {
		return nil, Error(c.Name(), err)
	}
	c.template = text
	if _, err := c.args("", "fake"); err != nil {
		name := o.CommandTemplate
		if name == "" {
			name = "the built-in container command template"
		}
		return nil, Error(c.Name(), fmt.Sprintf("Parsing %s failed: %v", name, err))
	}
	return c, nil
}

// readTemplate reads the operator's template, or the built-in one for "".
func readTemplate(path string) (string, error) {
	return readFileOr(path, "templates/ironic-console-container.template")
}

// readFileOr reads the operator's template at path, or the built-in one
// named builtin when path is "".
func readFileOr(path, builtin string) (string, error) {
	if path == "" {
		b, err := templates.ReadFile(builtin)
		return string(b), err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read console container template: %w", err)
	}
	return string(b), nil
}

// templateName names a template in errors: the operator's file or ours.
func templateName(path string) string {
	if path == "" {
		return "the built-in template"
	}
	return path
}

// Name is "container".
func (c *CLI) Name() string { return "container" }

// args renders the command template into the CLI's argument vector.
func (c *CLI) args(uuid, app string) ([]string, error) {
	params := map[string]string{
		"uuid":         uuid,
		"image":        c.o.Image,
		"app":          app,
		"read_only":    pyBool(c.o.ReadOnly),
		"conductor":    c.o.ConductorHost,
		"publish_port": c.o.PublishPort,
		"my_ip":        c.o.MyIP,
	}
	out, err := substitute(c.template, params)
	if err != nil {
		return nil, err
	}
	return shlex.Split(out)
}

func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

// run executes the CLI; extra joins its environment ([vnc]/container_host
// is exported as DOCKER_HOST and CONTAINER_HOST, as docker and podman
// each read one).
func (c *CLI) run(ctx context.Context, extra map[string]string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, c.o.Executable, args...)
	if c.o.Host != "" || len(extra) > 0 {
		env := os.Environ()
		if c.o.Host != "" {
			env = append(env, "DOCKER_HOST="+c.o.Host, "CONTAINER_HOST="+c.o.Host)
		}
		for k, v := range extra {
			env = append(env, k+"="+v)
		}
		cmd.Env = env
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	// Arguments never hold credentials (APP_INFO travels in the
	// environment), so they may be logged.
	c.log.DebugContext(ctx, "console container command", "command", c.o.Executable, "args", args,
		"stdout", stdout.String(), "stderr", stderr.String())
	if err != nil {
		return stdout.String(), fmt.Errorf("%s %s: %w: %s", c.o.Executable, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

func containerName(uuid string) string { return namePrefix + "-" + uuid }

// Start removes any stale container of the node, runs a new one and waits
// until its published VNC port answers RFB.
func (c *CLI) Start(ctx context.Context, n *model.Node, app string, appInfo map[string]any) (string, int, error) {
	name := containerName(n.UUID)
	c.remove(ctx, name)
	args, err := c.args(n.UUID, app)
	if err != nil {
		return "", 0, Error(c.Name(), err)
	}
	info, err := json.Marshal(appInfo)
	if err != nil {
		return "", 0, Error(c.Name(), err)
	}
	host, port, err := func() (string, int, error) {
		if _, err := c.run(ctx, map[string]string{"APP_INFO": string(info)}, args...); err != nil {
			return "", 0, Error(c.Name(), err)
		}
		host, port, err := c.hostPort(ctx, name)
		if err != nil {
			return "", 0, err
		}
		return host, port, waitForListen(ctx, c.Name(), host, port, c.o.WaitForReady)
	}()
	if err != nil {
		c.log.ErrorContext(ctx, "Failed to start console container, cleaning up", "node", n.UUID)
		c.logs(ctx, name)
		c.remove(ctx, name)
		return "", 0, err
	}
	return host, port, nil
}

// hostPort reads "<executable> port <name> 5900/tcp": IPv4, bracketed
// and bare IPv6 forms; the first IPv4 binding wins; an unspecified
// address becomes [DEFAULT]/my_ip.
func (c *CLI) hostPort(ctx context.Context, name string) (string, int, error) {
	out, err := c.run(ctx, nil, "port", name, "5900/tcp")
	if err != nil {
		return "", 0, Error(c.Name(), err)
	}
	type binding struct {
		host string
		port int
	}
	var bs []binding
	for _, line := range strings.Split(out, "\n") {
		parts := strings.Split(line, "->")
		line = strings.TrimSpace(parts[len(parts)-1])
		i := strings.LastIndex(line, ":")
		if i < 0 {
			continue
		}
		port, err := strconv.Atoi(line[i+1:])
		if err != nil {
			continue
		}
		bs = append(bs, binding{strings.Trim(line[:i], "[]"), port})
	}
	if len(bs) == 0 {
		return "", 0, Error(c.Name(), "Could not detect a published VNC port in the output: "+out)
	}
	pick := bs[0]
	for _, b := range bs {
		if strings.Contains(b.host, ".") && !strings.Contains(b.host, ":") {
			pick = b
			break
		}
	}
	if pick.host == "0.0.0.0" || pick.host == "::" {
		pick.host = c.o.MyIP
	}
	return pick.host, pick.port, nil
}

// remove force-removes a container; a missing one is no error (engines
// disagree on the exit code), so failures are only logged.
func (c *CLI) remove(ctx context.Context, name string) {
	if _, err := c.run(ctx, nil, "rm", "--force", name); err != nil {
		c.log.DebugContext(ctx, "remove console container", "container", name, "error", err)
	}
}

// logs records a container's output at debug level, best effort.
func (c *CLI) logs(ctx context.Context, name string) {
	_, _ = c.run(ctx, nil, "logs", name)
}

// Stop removes the node's container.
func (c *CLI) Stop(ctx context.Context, n *model.Node) error {
	name := containerName(n.UUID)
	c.logs(ctx, name)
	c.remove(ctx, name)
	return nil
}

// StopAll removes the containers labelled with this conductor, exited
// ones included; other conductors' containers on a shared engine stay.
func (c *CLI) StopAll(ctx context.Context) error {
	out, err := c.run(ctx, nil, "ps", "--all", "--quiet", "--filter", "label="+labelPrefix+".conductor="+c.o.ConductorHost)
	if err != nil {
		return Error(c.Name(), err)
	}
	for _, id := range strings.Fields(out) {
		c.logs(ctx, id)
		c.remove(ctx, id)
	}
	return nil
}
