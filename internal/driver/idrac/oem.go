package idrac

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/driver/redfish"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/pyfmt"
)

// dell is what the idrac interfaces share: the redfish Set they are built
// on and the [drac] options.
type dell struct {
	set  *redfish.Set
	opts Options
}

func redfishError(format string, a ...any) *errs.Error {
	return errs.New(errs.ClassRedfishError, map[string]any{"error": fmt.Sprintf(format, a...)})
}

// odataLink is a Redfish reference.
type odataLink struct {
	ODataID string `json:"@odata.id"`
}

// actionTarget is a Redfish action with its allowable values.
type actionTarget struct {
	Target string   `json:"target"`
	Force  []string `json:"Force@Redfish.AllowableValues"`
}

// dellManager is the part of an iDRAC Manager the Dell OEM extension
// reads (sushy's DellManagerExtension).
type dellManager struct {
	ODataID string `json:"@odata.id"`
	ID      string `json:"Id"`
	UUID    string
	Model   string
	Oem     map[string]json.RawMessage
	Links   struct {
		Oem struct {
			Dell map[string]json.RawMessage
		}
	}
	Actions struct {
		Oem map[string]actionTarget
	}
}

// name is how upstream's messages name a manager: its UUID, else its Id.
func (m *dellManager) name() string {
	if m.UUID != "" {
		return m.UUID
	}
	return m.ID
}

// missingError is sushy's MissingAttributeError, a SushyError: the
// manager lacks a Dell service, so the next manager is tried.
type missingError struct{ attr, path string }

func (e *missingError) Error() string {
	return fmt.Sprintf("The attribute %s is missing from the resource %s", e.attr, e.path)
}

// service is the path of Links/Oem/Dell/<name>.
func (m *dellManager) service(name string) (string, error) {
	var l odataLink
	if raw, ok := m.Links.Oem.Dell[name]; ok && json.Unmarshal(raw, &l) == nil && l.ODataID != "" {
		return l.ODataID, nil
	}
	return "", &missingError{attr: "Links/Oem/Dell/" + name, path: m.ODataID}
}

// action is the target of the OEM manager action whose name ends with
// suffix (sushy matches the key by its end: the prefix varies with the
// firmware, "#OemManager." or "#EID_674_Manager.").
func (m *dellManager) action(suffix string) (string, error) {
	for k, a := range m.Actions.Oem {
		if strings.HasSuffix(k, suffix) && a.Target != "" {
			return a.Target, nil
		}
	}
	return "", &missingError{attr: "Actions/Oem/" + suffix, path: m.ODataID}
}

// oemCall is one Dell OEM operation on a manager.
type oemCall func(ctx context.Context, s *redfish.Session, m *dellManager) error

// execOEM is upstream drac_utils.execute_oem_manager_method: fn runs on
// each manager of the node's system until one succeeds. A manager without
// the Dell OEM fails at once; Redfish errors of one manager move on to the
// next, and when all fail the error lists each manager's.
func (d *dell) execOEM(ctx context.Context, task *driver.Task, process string, fn oemCall) error {
	return d.set.WithSession(ctx, task, func(s *redfish.Session) error { return d.execOEMOn(ctx, task, s, process, fn) })
}

// execOEMOn is execOEM on a session the caller holds.
func (d *dell) execOEMOn(ctx context.Context, task *driver.Task, s *redfish.Session, process string, fn oemCall) error {
	paths := s.Managers()
	if len(paths) == 0 {
		return redfishError("System %s has no managers", s.SystemUUID())
	}
	log := task.Logger().With("node", task.Node.UUID, "process", process)
	var msgs []any
	for _, p := range paths {
		var m dellManager
		if err := s.GetJSON(p, &m); err != nil {
			return redfishError("%s", err)
		}
		if _, ok := m.Oem["Dell"]; !ok {
			msg := fmt.Sprintf("Search for Sushy OEM extension in 'sushy' package failed for node %s. "+
				"Ensure it is installed. Error: No OEM extension found for vendor Dell in resource %s",
				task.Node.UUID, m.ODataID)
			log.Error(msg)
			return redfishError("%s", msg)
		}
		err := fn(ctx, s, &m)
		if err == nil {
			log.Info("completed OEM operation", "system", s.SystemUUID(), "manager", m.name())
			return nil
		}
		if !oemFailure(err) {
			return err
		}
		msg := fmt.Sprintf("Manager %s: %s", m.name(), err)
		log.Debug("OEM operation failed, trying the next manager", "error", msg)
		msgs = append(msgs, msg)
	}
	msg := fmt.Sprintf("In system %s for node %s all managers failed: %s. Errors: %s",
		s.SystemUUID(), task.Node.UUID, process, pyfmt.ReprJSON(msgs))
	log.Error(msg)
	return redfishError("%s", msg)
}

// oemFailure tells the errors sushy raises as SushyError, which
// execute_oem_manager_method takes as that manager's failure.
func oemFailure(err error) bool {
	var herr *redfish.HTTPError
	var miss *missingError
	var ext *extensionError
	return errors.As(err, &herr) || errors.As(err, &miss) || errors.As(err, &ext)
}

// extensionError is sushy's ExtensionError.
type extensionError struct{ msg string }

func (e *extensionError) Error() string { return e.msg }

// monitorPath is the path of a Location header (absolute or not).
func monitorPath(loc string) string {
	if u, err := url.Parse(loc); err == nil && u.IsAbs() {
		return u.RequestURI()
	}
	return loc
}

// retryAfter is the wait an answer asks for, poll when it says none.
func retryAfter(resp *http.Response, now time.Time, poll time.Duration) time.Duration {
	v := resp.Header.Get("Retry-After")
	if v == "" {
		return poll
	}
	var secs int
	if _, err := fmt.Sscanf(v, "%d", &secs); err == nil {
		return time.Duration(secs) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(0, t.Sub(now))
	}
	return poll
}

// asyncCall is sushy-oem-idrac's asynchronous.http_call for a POST: while
// the answer is 202 its Location is read again after Retry-After (or
// poll); an answer of 400 or above is an ExtensionError.
func (d *dell) asyncCall(ctx context.Context, s *redfish.Session, path string, payload any, poll time.Duration) (*http.Response, error) {
	resp, err := s.Post(path, payload)
	if err != nil {
		return nil, err
	}
	location := ""
	for resp.StatusCode == http.StatusAccepted {
		_ = resp.Body.Close()
		if loc := resp.Header.Get("Location"); loc != "" {
			location = loc
		}
		if location == "" {
			return nil, &extensionError{msg: fmt.Sprintf("Response %d to HTTP POST %s does not include Location: in header",
				resp.StatusCode, path)}
		}
		clk := d.set.Clock()
		if err := clk.Sleep(ctx, retryAfter(resp, clk.Now(), poll)); err != nil {
			return nil, err
		}
		if resp, err = s.Get(monitorPath(location)); err != nil {
			return nil, err
		}
	}
	return resp, nil
}
