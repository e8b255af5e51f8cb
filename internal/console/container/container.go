// Package container runs the process that shows a node's graphical
// console as a VNC server (upstream ironic/console/container): a
// provider starts one per node and tells where its VNC server listens,
// for the noVNC proxy (or Nova's) to connect to.
package container

import (
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
)

// Provider manages console containers ([vnc]/container_provider).
type Provider interface {
	// Name is the provider's name in error messages.
	Name() string
	// Start runs the node's console container with app (the console
	// implementation to show) and appInfo (what it needs to reach the
	// BMC, credentials included), and returns where its VNC server
	// listens once it answers.
	Start(ctx context.Context, n *model.Node, app string, appInfo map[string]any) (host string, port int, err error)
	// Stop removes the node's console container, if any.
	Stop(ctx context.Context, n *model.Node) error
	// StopAll removes every console container of this conductor, at
	// start-up and shutdown.
	StopAll(ctx context.Context) error
}

// Options are the [vnc] settings of the providers.
type Options struct {
	Provider        string
	Image           string
	Executable      string
	Host            string
	PublishPort     string
	CommandTemplate string
	ReadOnly        bool
	// ConductorHost is [DEFAULT]/host, the label that scopes StopAll.
	ConductorHost string
	// MyIP replaces an unspecified published address.
	MyIP string
	// SystemdTemplate and SystemdPublishPort are
	// [vnc]/systemd_container_template ("" for ours) and
	// systemd_container_publish_port.
	SystemdTemplate    string
	SystemdPublishPort string
	// SystemdUnitDir is where the systemd provider writes its quadlets;
	// "" is upstream's /etc/containers/systemd/users/<uid>/containers/systemd.
	SystemdUnitDir string
	// KubernetesTemplate is [vnc]/kubernetes_container_template ("" for
	// ours); KubernetesPodTimeout is kubernetes_pod_timeout, how long a
	// console pod gets to be ready.
	KubernetesTemplate   string
	KubernetesPodTimeout time.Duration
	// WaitForReady is how many one-second attempts a started container
	// gets to answer RFB ([vnc]/wait_for_ready_timeout).
	WaitForReady int
}

// New returns the configured provider. Upstream loads providers as entry
// points; an unknown name is refused as an unknown entry point is.
func New(o Options) (Provider, error) {
	switch o.Provider {
	case "fake", "":
		return Fake{}, nil
	case "container":
		return newCLI(o)
	case "systemd":
		return newSystemd(o)
	case "kubernetes":
		return newKubernetes(o)
	default:
		return nil, Error(o.Provider, fmt.Sprintf("No 'ironic.console.container' driver found, looking for %q (openkeel provides fake, container, systemd and kubernetes)", o.Provider))
	}
}

// Error is upstream's ConsoleContainerError.
func Error(provider string, reason any) error {
	return errs.New(errs.ClassConsoleContainerError, map[string]any{"provider": provider, "reason": fmt.Sprint(reason)})
}

// versionLength is the length of RFB's ProtocolVersion message.
const versionLength = 12

// waitForListen is upstream's _wait_for_listen: a container is ready when
// its VNC server sends the 12 bytes of its protocol version.
func waitForListen(ctx context.Context, provider, host string, port, attempts int) error {
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	for i := 0; i < max(attempts, 1); i++ {
		if rfbAnswers(ctx, addr) {
			return nil
		}
		select {
		case <-ctx.Done():
			return Error(provider, ctx.Err())
		case <-time.After(time.Second):
		}
	}
	return Error(provider, fmt.Sprintf("RFB data not returned by %s:%d", host, port))
}

func rfbAnswers(ctx context.Context, addr string) bool {
	d := net.Dialer{Timeout: time.Second}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(time.Second))
	buf := make([]byte, versionLength)
	_, err = io.ReadFull(c, buf)
	return err == nil
}
