package redfish

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/stmcginnis/gofish/common"
	"github.com/stmcginnis/gofish/redfish"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
)

// core is what every redfish interface of one registry shares: the options
// and the connection cache.
type core struct {
	opts  Options
	cache *connCache
	// ext are a vendor hardware type's changes (NewSet); zero for redfish.
	ext Extensions
}

func newCore(opts Options, log *slog.Logger) *core {
	if log == nil {
		log = slog.Default()
	}
	return &core{opts: opts, cache: newConnCache(opts.ConnectionCacheSize, log)}
}

// redfishError is upstream RedfishError(error=msg).
func redfishError(msg string) *errs.Error {
	return errs.New(errs.ClassRedfishError, map[string]any{"error": msg})
}

// requireExclusive is upstream's require_exclusive_lock decorator.
func requireExclusive(task *driver.Task) error {
	if task.Shared {
		return errs.New(errs.ClassExclusiveLockRequired, nil)
	}
	return nil
}

// system is a ComputerSystem with the raw document, for the properties
// gofish does not model (allowable boot targets).
type system struct {
	*redfish.ComputerSystem
	cl  *client
	raw map[string]json.RawMessage
}

// withConnection runs fn on the node's cached connection as upstream's
// _get_connection does: connection errors drop the cached connection and
// are retried [redfish]connection_attempts times,
// [redfish]connection_retry_interval apart, access errors drop it and fail
// at once. Permanent connection errors (an address whose scheme is not
// http or https, TLS spoken to a plain-HTTP BMC, a certificate that does
// not verify) fail at once too: upstream retries them, though every
// attempt fails the same way while the node stays locked.
func (c *core) withConnection(ctx context.Context, task *driver.Task, fn func(cl *client, info DriverInfo) error) error {
	info, err := ParseDriverInfo(task.Node, &c.opts)
	if err != nil {
		return err
	}
	log := task.Logger()
	attempts := max(c.opts.ConnectionAttempts, 1)
	var lastErr error
	for attempt := 1; attempt <= attempts; attempt++ {
		cn, key, err := c.cache.get(info, &c.opts)
		if err != nil {
			return redfishError(err.Error())
		}
		err = fn(cn.bind(ctx), info)
		if err == nil {
			return nil
		}
		var cerr *ConnectionError
		var herr *HTTPError
		switch {
		case errors.As(err, &cerr):
			c.cache.drop(key)
			lastErr = err
			log.Warn("connection error from redfish BMC", "node", task.Node.UUID, "address", info.SafeAddress(),
				"auth_type", info.AuthType, "attempt", attempt, "attempts", attempts, "error", err)
			if cerr.Permanent {
				log.Error("failed to connect to redfish BMC; the error is permanent, not retrying",
					"node", task.Node.UUID, "address", info.SafeAddress(), "error", err)
				return errs.New(errs.ClassRedfishConnectionError, map[string]any{"node": task.Node.UUID, "error": err.Error()})
			}
			if ctx.Err() != nil {
				return errs.New(errs.ClassRedfishConnectionError, map[string]any{"node": task.Node.UUID, "error": err.Error()})
			}
			if attempt < attempts {
				if serr := c.opts.clock().Sleep(ctx, c.opts.ConnectionRetryInterval); serr != nil {
					return errs.New(errs.ClassRedfishConnectionError, map[string]any{"node": task.Node.UUID, "error": err.Error()})
				}
			}
			continue
		case errors.As(err, &herr) && herr.isAccess():
			c.cache.drop(key)
			log.Warn("authentication error from redfish BMC; the connection will not be reused",
				"node", task.Node.UUID, "address", info.SafeAddress(), "auth_type", info.AuthType, "error", err)
			return redfishError(err.Error())
		}
		return err
	}
	log.Error("failed to connect to redfish BMC", "node", task.Node.UUID, "address", info.SafeAddress())
	return errs.New(errs.ClassRedfishConnectionError, map[string]any{"node": task.Node.UUID, "error": lastErr.Error()})
}

// getSystem is upstream get_system: the node's ComputerSystem, found by
// redfish_system_id or as the only system of the BMC.
func (c *core) getSystem(ctx context.Context, task *driver.Task) (*system, error) {
	var out *system
	err := c.withConnection(ctx, task, func(cl *client, info DriverInfo) error {
		s, err := fetchSystem(cl, info)
		out = s
		return err
	})
	if err != nil {
		var herr *HTTPError
		if errors.As(err, &herr) && herr.Status == http.StatusNotFound {
			task.Logger().Error("redfish system not found", "node", task.Node.UUID, "error", err)
			return nil, redfishError(err.Error())
		}
		if _, ok := errs.As(err); ok {
			return nil, err
		}
		return nil, redfishError(err.Error())
	}
	return out, nil
}

func fetchSystem(cl *client, info DriverInfo) (*system, error) {
	path := info.SystemID
	if path == "" {
		systems, err := cl.c.systemsPath(cl)
		if err != nil {
			return nil, err
		}
		coll, err := common.GetCollection(cl, systems)
		if err != nil {
			return nil, err
		}
		if len(coll.ItemLinks) != 1 {
			return nil, fmt.Errorf(`Failed at determining default for "ComputerSystem": System count is not exactly one`)
		}
		path = coll.ItemLinks[0]
	}
	return loadSystem(cl, path)
}

func loadSystem(cl *client, path string) (*system, error) {
	cs, err := redfish.GetComputerSystem(cl, path)
	if err != nil {
		return nil, err
	}
	s := &system{ComputerSystem: cs, cl: cl}
	if err := json.Unmarshal(cs.RawData, &s.raw); err != nil {
		return nil, fmt.Errorf("decode system %s: %w", path, err)
	}
	return s, nil
}

// refresh reads the system again.
func (s *system) refresh() error {
	fresh, err := loadSystem(s.cl, s.ODataID)
	if err != nil {
		return err
	}
	*s = *fresh
	return nil
}

// allowedBootTargets is BootSourceOverrideTarget@Redfish.AllowableValues,
// nil when the BMC does not say.
func (s *system) allowedBootTargets() []string {
	var boot map[string]json.RawMessage
	if json.Unmarshal(s.raw["Boot"], &boot) != nil {
		return nil
	}
	var out []string
	if json.Unmarshal(boot["BootSourceOverrideTarget@Redfish.AllowableValues"], &out) != nil {
		return nil
	}
	return out
}

// bootField returns a Boot property as sent ("" when absent).
func (s *system) bootField(name string) string {
	var boot map[string]any
	if json.Unmarshal(s.raw["Boot"], &boot) != nil {
		return ""
	}
	v, _ := boot[name].(string)
	return v
}

// links returns the @odata.id list of Links.<name>.
// Links is read member by member: other members, such as a vendor's Oem
// object (iDRAC's Links.Oem.Dell), are not lists.
func (s *system) links(name string) []string {
	var links map[string]json.RawMessage
	if json.Unmarshal(s.raw["Links"], &links) != nil {
		return nil
	}
	var list []common.Link
	if json.Unmarshal(links[name], &list) != nil {
		return nil
	}
	out := make([]string, 0, len(list))
	for _, l := range list {
		if l != "" {
			out = append(out, l.String())
		}
	}
	return out
}

// chassis reads the chassis the system is in.
func (s *system) chassis() ([]*redfish.Chassis, error) {
	var out []*redfish.Chassis
	for _, p := range s.links("Chassis") {
		c, err := redfish.GetChassis(s.cl, p)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// manager reads the first manager of the system (upstream get_manager).
func (s *system) manager() (*managerDoc, error) {
	managers := s.links("ManagedBy")
	if len(managers) == 0 {
		return nil, fmt.Errorf("Couldn't find any Sushy Manager")
	}
	m := &managerDoc{path: managers[0], cl: s.cl}
	return m, m.refresh()
}

// managerDoc is the part of a Manager the clock steps use.
type managerDoc struct {
	path                string
	cl                  *client
	DateTime            string
	DateTimeLocalOffset string
}

func (m *managerDoc) refresh() error {
	var doc struct{ DateTime, DateTimeLocalOffset string }
	if err := m.cl.getJSON(m.path, &doc); err != nil {
		return err
	}
	m.DateTime, m.DateTimeLocalOffset = doc.DateTime, doc.DateTimeLocalOffset
	return nil
}

// setDateTime patches DateTime and, when given, DateTimeLocalOffset.
func (m *managerDoc) setDateTime(dt string, offset *string) error {
	body := map[string]any{"DateTime": dt}
	if offset != nil {
		body["DateTimeLocalOffset"] = *offset
	}
	resp, err := m.cl.Patch(m.path, body)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}

// systemsPath is the service root's Systems link, read once per
// connection as sushy reads the root once.
func (c *conn) systemsPath(cl *client) (string, error) {
	c.mu.Lock()
	p := c.systems
	c.mu.Unlock()
	if p != "" {
		return p, nil
	}
	var root struct{ Systems common.Link }
	if err := cl.getJSON(c.info.RootPrefix, &root); err != nil {
		return "", err
	}
	if root.Systems == "" {
		return "", fmt.Errorf("The attribute Systems is missing from the resource %s", c.info.RootPrefix)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.systems = root.Systems.String()
	return c.systems, nil
}
