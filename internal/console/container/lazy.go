package container

import (
	"context"
	"sync"
	"time"

	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/model"
)

// OptionsFromConfig reads [vnc]'s provider options.
func OptionsFromConfig(c *config.Config) Options {
	return Options{
		Provider:        c.StringOf(config.VNCContainerProvider),
		Image:           c.StringOf(config.VNCConsoleImage),
		Executable:      c.StringOf(config.VNCContainerExecutable),
		Host:            c.StringOf(config.VNCContainerHost),
		PublishPort:     c.StringOf(config.VNCContainerPublishPort),
		CommandTemplate: operatorFile(c, config.VNCContainerCommandTemplate),
		ReadOnly:        c.BoolOf(config.VNCReadOnly),
		ConductorHost:   c.StringOf(config.DefaultHost),
		MyIP:            c.StringOf(config.DefaultMyIP),
		WaitForReady:    c.IntOf(config.VNCWaitForReadyTimeout),
		// Upstream's default templates are files under Python's package
		// directory, which this binary does not have: ours are built in.
		SystemdTemplate:      operatorFile(c, config.VNCSystemdContainerTemplate),
		SystemdPublishPort:   c.StringOf(config.VNCSystemdContainerPublishPort),
		KubernetesTemplate:   operatorFile(c, config.VNCKubernetesContainerTemplate),
		KubernetesPodTimeout: time.Duration(c.IntOf(config.VNCKubernetesPodTimeout)) * time.Second,
	}
}

// operatorFile is the operator's template file, or "" for ours while the
// option keeps upstream's default.
func operatorFile(c *config.Config, opt config.StringOpt) string {
	if !c.IsSetOf(opt) {
		return ""
	}
	return c.StringOf(opt)
}

// Lazy builds the configured provider on first use, as upstream's
// ConsoleContainerFactory does: an API process or a conductor that never
// starts a console never probes the container engine. A failed build is
// retried on the next use.
type Lazy struct {
	o  Options
	mu sync.Mutex
	p  Provider
}

// NewLazy returns a provider built from o when first needed.
func NewLazy(o Options) *Lazy { return &Lazy{o: o} }

func (l *Lazy) get() (Provider, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.p != nil {
		return l.p, nil
	}
	p, err := New(l.o)
	if err != nil {
		return nil, err
	}
	l.p = p
	return p, nil
}

// Name is the configured provider's name.
func (l *Lazy) Name() string {
	if l.o.Provider == "" {
		return "fake"
	}
	return l.o.Provider
}

// Start builds the provider if needed and starts the node's container.
func (l *Lazy) Start(ctx context.Context, n *model.Node, app string, appInfo map[string]any) (string, int, error) {
	p, err := l.get()
	if err != nil {
		return "", 0, err
	}
	return p.Start(ctx, n, app, appInfo)
}

// Stop builds the provider if needed and stops the node's container.
func (l *Lazy) Stop(ctx context.Context, n *model.Node) error {
	p, err := l.get()
	if err != nil {
		return err
	}
	return p.Stop(ctx, n)
}

// StopAll builds the provider if needed and stops this conductor's
// containers.
func (l *Lazy) StopAll(ctx context.Context) error {
	p, err := l.get()
	if err != nil {
		return err
	}
	return p.StopAll(ctx)
}
