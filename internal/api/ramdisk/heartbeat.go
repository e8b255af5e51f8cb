package ramdisk

import (
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apiutil"
	"github.com/openkeel/ironic/internal/api/microversion"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/rpc"
)

// agentValidStates are the agent_status values (AGENT_VALID_STATES).
var agentValidStates = []string{"start", "end", "error"}

// heartbeatArgs are HeartbeatController.post's keyword arguments in
// signature order, which is the order upstream validates them in.
var heartbeatArgs = []string{"callback_url", "agent_version", "agent_token", "agent_verify_ca", "agent_status", "agent_status_message"}

// callArgs merges the query string and a JSON object body into keyword
// arguments as upstream's method.expose does: a name given in both
// becomes a list (which then fails the string check), a body that is not
// a JSON object carries no arguments, and any name not taken is 400
// "Unexpected arguments".
func callArgs(r *http.Request, allowed []string) (map[string]any, error) {
	out := map[string]any{}
	for k, v := range r.URL.Query() {
		out[k] = v[len(v)-1]
	}
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		body, err := apiutil.DecodeBody(r)
		if err != nil {
			return nil, err
		}
		if d, ok := body.(*apiutil.Dict); ok {
			for _, k := range d.Keys() {
				v, _ := d.Get(k)
				if q, dup := out[k]; dup {
					out[k] = []any{q, apiutil.Plain(v)}
					continue
				}
				out[k] = apiutil.Plain(v)
			}
		}
	}
	if err := apiutil.UnexpectedArgs(out, allowed); err != nil {
		return nil, err
	}
	return out, nil
}
func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// schemeRe is what urllib.parse accepts as a scheme before the colon.
var schemeRe = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9+.-]*):`)

// normalizeCallbackURL is the urlparse check of the heartbeat: the scheme
// must contain "http" (lower-cased as urlparse does) and a bracketed
// IPv6 host must be closed; ok is false when the URL fails.
func normalizeCallbackURL(u string) (string, bool) {
	m := schemeRe.FindStringSubmatch(u)
	if m == nil {
		return u, false
	}
	scheme := strings.ToLower(m[1])
	rest := u[len(m[0]):]
	if strings.HasPrefix(rest, "//") {
		netloc := rest[2:]
		if i := strings.IndexAny(netloc, "/?#"); i >= 0 {
			netloc = netloc[:i]
		}
		if strings.Contains(netloc, "[") != strings.Contains(netloc, "]") {
			return u, false
		}
	}
	if !strings.Contains(scheme, "http") {
		return u, false
	}
	return scheme + ":" + rest, true
}

// heartbeat is HeartbeatController.post.
func (h *handlers) heartbeat(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	ident := rc.Param("node_ident")
	args, err := callArgs(r, heartbeatArgs)
	if err != nil {
		return err
	}
	if err := apiutil.UUIDOrName("node_ident", ident); err != nil {
		return err
	}
	vals := map[string]*string{}
	for _, name := range heartbeatArgs {
		s, err := apiutil.StringArg(args, name)
		if err != nil {
			return err
		}
		if name == "callback_url" && s == nil {
			return errs.MissingParameterValue("Missing mandatory parameter: callback_url")
		}
		vals[name] = s
	}
	v := rc.Version
	if deref(vals["agent_version"]) != "" && !microversion.AllowAgentVersionInHeartbeat.Allows(v) {
		return errs.InvalidParameterValue(`Field "agent_version" not recognised`)
	}
	if (deref(vals["agent_status"]) != "" || deref(vals["agent_status_message"]) != "") && !microversion.AllowStatusInHeartbeat.Allows(v) {
		return errs.InvalidParameterValue(`Fields "agent_status" and "agent_status_message" not recognised.`)
	}
	if vals["agent_verify_ca"] != nil && !microversion.AllowVerifyCaInHeartbeat.Allows(v) {
		return errs.InvalidParameterValue(`Field "agent_verify_ca" not recognised in this version`)
	}
	ctx := r.Context()
	n, err := apiutil.GetNodeWithSuffix(ctx, h.Store, ident, v)
	if err != nil {
		return err
	}
	callbackURL := *vals["callback_url"]
	if u, ok := normalizeCallbackURL(callbackURL); ok {
		callbackURL = u
	} else if callbackURL != "" {
		// The anaconda deploy interface heartbeats one way, with an
		// empty callback URL.
		return errs.InvalidParameterValue(`An issue with the supplied "callback_url" has been detected.`)
	}
	// An agent that changes its URL behaves unexpectedly: refuse it.
	if known, ok := n.InternalInfo().Lookup(model.DIIAgentURL); ok && known != nil && known != callbackURL {
		h.Logger.Error("heartbeat with an unexpected callback URL is not processed", "node", n.UUID, "url", callbackURL)
		return errs.NewMessage(errs.ClassInvalid, `Detected change in ramdisk provided "callback_url"`)
	}
	if vals["agent_token"] == nil {
		h.Logger.Error("agent heartbeat received without an agent token", "node", ident)
		return errs.InvalidParameterValue("Agent token is required for heartbeat processing.")
	}
	if st := vals["agent_status"]; st != nil && !slices.Contains(agentValidStates, *st) {
		return errs.InvalidParameterValue("Agent status is invalid. Valid states are " + strings.Join(agentValidStates, ",") + ".")
	}
	topic, err := h.topic(ctx, n)
	if err != nil {
		return err
	}
	err = h.Conductor.Heartbeat(ctx, topic, rpc.HeartbeatArgs{
		NodeID:             n.UUID,
		CallbackURL:        callbackURL,
		AgentVersion:       deref(vals["agent_version"]),
		AgentToken:         deref(vals["agent_token"]),
		AgentVerifyCA:      deref(vals["agent_verify_ca"]),
		AgentStatus:        deref(vals["agent_status"]),
		AgentStatusMessage: deref(vals["agent_status_message"]),
	})
	if err != nil {
		return err
	}
	api.WriteEmpty(w, http.StatusAccepted)
	return nil
}
