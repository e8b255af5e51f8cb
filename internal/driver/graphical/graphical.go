// Package graphical holds the graphical console interfaces (upstream
// drivers/modules/graphical_console.py): starting a console runs a
// container showing the BMC's console as a VNC server and authorizes a
// token for the noVNC proxy; the console's URL points the browser at
// the proxy with that token.
package graphical

import (
	"context"
	"fmt"
	"time"

	"github.com/openkeel/ironic/internal/console/container"
	"github.com/openkeel/ironic/internal/console/vnc"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/driver/redfish"
	"github.com/openkeel/ironic/internal/model"
)

// Options are the [vnc] settings the interfaces read.
type Options struct {
	// Provider runs the console containers; nil is the fake provider.
	Provider container.Provider
	// TokenTimeout is [vnc]/token_timeout.
	TokenTimeout time.Duration
	// ExpireInterval is [vnc]/expire_console_session_interval.
	ExpireInterval time.Duration
	// PublicURL is [vnc]/public_url.
	PublicURL string
	// Now is the clock tokens are stamped and checked with.
	Now func() time.Time
	// Redfish configures redfish-graphical's driver_info parsing.
	Redfish redfish.Options
}

// Console is a graphical console implementation: app names what the
// console container shows, appInfo what it needs to reach the BMC.
type Console struct {
	driver.NoSteps
	name     string
	app      string
	props    func() map[string]string
	validate func(*model.Node) error
	appInfo  func(*model.Node) (map[string]any, error)
	o        Options
}

var (
	_ driver.ConsoleInterface      = (*Console)(nil)
	_ driver.ConsoleSessionExpirer = (*Console)(nil)
)

// Register adds fake-graphical and redfish-graphical.
func Register(r *driver.Registry, o Options) error {
	if o.Provider == nil {
		o.Provider = container.Fake{}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	fake := &Console{
		name:     "fake-graphical",
		app:      "fake",
		props:    func() map[string]string { return map[string]string{} },
		validate: func(*model.Node) error { return nil },
		appInfo:  func(*model.Node) (map[string]any, error) { return map[string]any{}, nil },
		o:        o,
	}
	rf := &Console{
		name:  "redfish-graphical",
		app:   "redfish-graphical",
		props: redfish.Properties,
		validate: func(n *model.Node) error {
			_, err := redfish.ParseDriverInfo(n, &o.Redfish)
			return err
		},
		appInfo: func(n *model.Node) (map[string]any, error) { return redfishAppInfo(n, &o.Redfish) },
		o:       o,
	}
	for _, c := range []*Console{fake, rf} {
		if err := r.Register(driver.KindConsole, c.name, c); err != nil {
			return fmt.Errorf("register %s console: %w", c.name, err)
		}
	}
	return nil
}

// Properties are the driver_info keys the console reads.
func (c *Console) Properties() map[string]string { return c.props() }

// Validate checks what the console container will need.
func (c *Console) Validate(_ context.Context, task *driver.Task) error { return c.validate(task.Node) }

// StartConsole runs the node's console container, records where its VNC
// server listens and authorizes a new token (start_console).
func (c *Console) StartConsole(ctx context.Context, task *driver.Task) error {
	n := task.Node
	info, err := c.appInfo(n)
	if err != nil {
		return err
	}
	host, port, err := c.o.Provider.Start(ctx, n, c.app, info)
	if err != nil {
		return err
	}
	ii := n.InternalInfo()
	ii.Set(model.DIIVNCHost, host)
	ii.Set(model.DIIVNCPort, port)
	n.ConsoleEnabled = true
	vnc.Authorize(n, c.o.Now())
	return nil
}

// StopConsole removes the container and forgets the token (stop_console).
func (c *Console) StopConsole(ctx context.Context, task *driver.Task) error {
	n := task.Node
	if err := c.o.Provider.Stop(ctx, n); err != nil {
		return err
	}
	n.InternalInfo().Delete(model.DIIVNCPort, model.DIIVNCHost)
	n.ConsoleEnabled = false
	vnc.Unauthorize(n)
	return nil
}

// GetConsole answers the noVNC URL with the node's token.
func (c *Console) GetConsole(_ context.Context, task *driver.Task) (map[string]any, error) {
	return vnc.ConsoleInfo(task.Node, c.o.PublicURL), nil
}

// ConsoleSessionInterval is how often sessions are checked for expiry.
func (c *Console) ConsoleSessionInterval() time.Duration { return c.o.ExpireInterval }

// ConsoleSessionActive is the periodic's predicate: this implementation's
// console with a token.
func (c *Console) ConsoleSessionActive(n *model.Node) bool {
	return n.ConsoleEnabled && driver.NodeInterface(n, driver.KindConsole) == c.name && vnc.HasToken(n)
}

// ConsoleSessionExpired reports a token past [vnc]/token_timeout.
func (c *Console) ConsoleSessionExpired(n *model.Node) bool {
	return vnc.Expired(n, c.o.Now(), c.o.TokenTimeout)
}

// redfishAppInfo is parse_driver_info's dictionary, which upstream hands
// to the console container as the redfish-graphical app's information.
func redfishAppInfo(n *model.Node, o *redfish.Options) (map[string]any, error) {
	d, err := redfish.ParseDriverInfo(n, o)
	if err != nil {
		return nil, err
	}
	var verify any = d.VerifyCA
	switch d.VerifyCA {
	case "true":
		verify = true
	case "false":
		verify = false
	}
	info := map[string]any{
		"address":   d.Address,
		"system_id": nullable(d.SystemID),
		"username":  nullable(d.Username),
		"password":  nullable(d.Password),
		"verify_ca": verify,
		"auth_type": d.AuthType,
		"node_uuid": n.UUID,
	}
	if d.RootPrefix != "" {
		info["root_prefix"] = d.RootPrefix
	}
	return info, nil
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}
