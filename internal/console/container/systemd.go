package container

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/openkeel/ironic/internal/model"
)

// systemdPortLine is a line of "podman port <container>" for the VNC
// server's port: "5900/tcp -> <host>:<port>".
var systemdPortLine = regexp.MustCompile(`^5900/tcp -> (.*):([0-9]+)$`)

// Systemd is upstream's "systemd" provider: a podman quadlet per node,
// written to the user's quadlet directory from
// [vnc]/systemd_container_template and run as a user unit through
// systemctl --user; podman tells the published port.
type Systemd struct {
	o        Options
	template string
	unitDir  string
	log      *slog.Logger
}

func newSystemd(o Options) (*Systemd, error) {
	s := &Systemd{o: o, unitDir: o.SystemdUnitDir, log: slog.Default().With("provider", "systemd")}
	for _, tool := range []string{"systemctl", "podman"} {
		if _, err := s.run(context.Background(), tool, "--version"); err != nil {
			return nil, Error(s.Name(), err)
		}
	}
	text, err := readFileOr(o.SystemdTemplate, "templates/ironic-console.container.template")
	if err != nil {
		return nil, Error(s.Name(), err)
	}
	s.template = text
	if _, err := s.render("", "fake", map[string]any{}); err != nil {
		return nil, Error(s.Name(), fmt.Sprintf("Parsing %s failed: %v", templateName(o.SystemdTemplate), err))
	}
	return s, nil
}

// Name is "systemd".
func (s *Systemd) Name() string { return "systemd" }

// render fills the quadlet template with upstream's variables.
func (s *Systemd) render(uuid, app string, appInfo map[string]any) (string, error) {
	info, err := json.Marshal(appInfo)
	if err != nil {
		return "", err
	}
	return substitute(s.template, map[string]string{
		"description": "A VNC server which displays a console for node " + uuid,
		"image":       s.o.Image,
		"port":        s.o.SystemdPublishPort,
		"app":         app,
		"app_info":    string(info),
		"read_only":   pyBool(s.o.ReadOnly),
	})
}

// initUnitDir is upstream's: the quadlets of user <uid> live in
// /etc/containers/systemd/users/<uid>/containers/systemd, whose parent
// the operator must have created for this user.
func (s *Systemd) initUnitDir() error {
	if s.unitDir == "" {
		uid := strconv.Itoa(os.Getuid())
		userDir := filepath.Join("/etc/containers/systemd/users", uid)
		if st, err := os.Stat(userDir); err != nil || !st.IsDir() {
			return Error(s.Name(), fmt.Sprintf("Directory %s must exist and be writable by user %s", userDir, uid))
		}
		s.unitDir = filepath.Join(userDir, "containers/systemd")
	}
	if err := os.MkdirAll(s.unitDir, 0o755); err != nil {
		return Error(s.Name(), err)
	}
	return nil
}

func (s *Systemd) containerPath(uuid string) string {
	return filepath.Join(s.unitDir, namePrefix+"-"+uuid+".container")
}

func unitName(uuid string) string { return namePrefix + "-" + uuid + ".service" }

// quadletContainer is the name podman gives the quadlet's container.
func quadletContainer(uuid string) string { return "systemd-" + namePrefix + "-" + uuid }

// run executes a tool; its output is logged at debug level only, since
// systemctl status and the journal may echo the unit's environment.
func (s *Systemd) run(ctx context.Context, tool string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, tool, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	s.log.DebugContext(ctx, "console container command", "command", tool, "args", args)
	if err != nil {
		return stdout.String(), fmt.Errorf("%s %s: %w: %s", tool, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

func (s *Systemd) reload(ctx context.Context) error {
	if _, err := s.run(ctx, "systemctl", "--user", "daemon-reload"); err != nil {
		return Error(s.Name(), err)
	}
	return nil
}

// Start writes the node's quadlet, has systemd generate and start its
// unit, reads the published port from podman and waits until the VNC
// server answers RFB. A unit that fails to start leaves no quadlet.
func (s *Systemd) Start(ctx context.Context, n *model.Node, app string, appInfo map[string]any) (string, int, error) {
	if err := s.initUnitDir(); err != nil {
		return "", 0, err
	}
	text, err := s.render(n.UUID, app, appInfo)
	if err != nil {
		return "", 0, Error(s.Name(), err)
	}
	// The quadlet holds APP_INFO, the BMC credentials.
	if err := os.WriteFile(s.containerPath(n.UUID), []byte(text), 0o600); err != nil {
		return "", 0, Error(s.Name(), err)
	}
	if err := s.reload(ctx); err != nil {
		return "", 0, err
	}
	unit := unitName(n.UUID)
	if _, err := s.run(ctx, "systemctl", "--user", "start", unit); err != nil {
		s.log.ErrorContext(ctx, "could not start the console container unit", "node", n.UUID, "unit", unit)
		_, _ = s.run(ctx, "systemctl", "--user", "status", unit)
		_, _ = s.run(ctx, "journalctl", "--user", "--no-pager", "-u", unit)
		if rmErr := s.deleteContainerFile(n.UUID); rmErr != nil {
			s.log.WarnContext(ctx, "could not remove the quadlet of a failed console", "node", n.UUID, "error", rmErr)
		}
		return "", 0, Error(s.Name(), err)
	}
	host, port, err := s.hostPort(ctx, quadletContainer(n.UUID))
	if err != nil {
		return "", 0, err
	}
	if err := waitForListen(ctx, s.Name(), host, port, s.o.WaitForReady); err != nil {
		return "", 0, err
	}
	return host, port, nil
}

// hostPort reads "podman port <container>": the first binding of the VNC
// port. Upstream matches the whole output as one line, which fails when
// podman lists an IPv4 and an IPv6 binding; the first one is taken here.
func (s *Systemd) hostPort(ctx context.Context, container string) (string, int, error) {
	out, err := s.run(ctx, "podman", "port", container)
	if err != nil {
		return "", 0, Error(s.Name(), err)
	}
	for _, line := range strings.Split(out, "\n") {
		if m := systemdPortLine.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
			port, err := strconv.Atoi(m[2])
			if err == nil {
				return m[1], port, nil
			}
		}
	}
	return "", 0, Error(s.Name(), "Could not detect port in the output: "+out)
}

func (s *Systemd) deleteContainerFile(uuid string) error {
	if err := os.Remove(s.containerPath(uuid)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return Error(s.Name(), err)
	}
	return nil
}

// stopUnit stops the node's unit (its journal logged at debug level
// first), then removes its quadlet; a unit that does not stop is only
// logged, as upstream.
func (s *Systemd) stopUnit(ctx context.Context, uuid string) error {
	unit := unitName(uuid)
	_, _ = s.run(ctx, "journalctl", "--user", "--no-pager", "-u", unit)
	if _, err := s.run(ctx, "systemctl", "--user", "stop", unit); err != nil {
		s.log.WarnContext(ctx, "could not stop the console container unit", "unit", unit, "error", err)
		_, _ = s.run(ctx, "systemctl", "--user", "status", unit)
	}
	return s.deleteContainerFile(uuid)
}

// Stop stops the node's unit, removes its quadlet and has systemd drop
// the generated unit.
func (s *Systemd) Stop(ctx context.Context, n *model.Node) error {
	if err := s.initUnitDir(); err != nil {
		return err
	}
	if err := s.stopUnit(ctx, n.UUID); err != nil {
		return err
	}
	return s.reload(ctx)
}

// StopAll stops the unit of every quadlet of ours in the directory, at
// start-up and shutdown; failures are logged and the rest go on.
func (s *Systemd) StopAll(ctx context.Context) error {
	if err := s.initUnitDir(); err != nil {
		return err
	}
	entries, err := os.ReadDir(s.unitDir)
	if err != nil {
		return Error(s.Name(), err)
	}
	stopped := 0
	for _, e := range entries {
		uuid, ok := strings.CutPrefix(e.Name(), namePrefix+"-")
		if !ok {
			continue
		}
		stopped++
		if err := s.stopUnit(ctx, strings.TrimSuffix(uuid, ".container")); err != nil {
			s.log.WarnContext(ctx, "could not stop a console container", "file", e.Name(), "error", err)
		}
	}
	if stopped > 0 {
		if err := s.reload(ctx); err != nil {
			s.log.WarnContext(ctx, "systemctl daemon-reload after stopping the console containers failed", "error", err)
		}
	}
	return nil
}
