// Package ramdisk serves the endpoints the deploy ramdisk (ironic-python-
// agent) calls without a token, as upstream's
// ironic/api/controllers/v1/ramdisk.py: GET /v1/lookup, POST
// /v1/heartbeat/{node_ident} and POST /v1/continue_inspection. Each reads
// the node through the store and relays the call to the conductor chosen
// by Topics; the conductor does the work (token generation, heartbeat
// processing, inspection).
package ramdisk

import (
	"context"
	"log/slog"
	"net/http"
	"strings"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apiutil"
	"github.com/openkeel/ironic/internal/api/collection"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/rpc"
	"github.com/openkeel/ironic/internal/store"
)

// Topics chooses the conductor of a node (rpc.Router implements it).
type Topics interface {
	GetTopicFor(ctx context.Context, node *model.Node) (string, error)
}

// Deps is what the ramdisk handlers need.
type Deps struct {
	Store     store.Store
	Conductor rpc.ConductorAPI
	Topics    Topics
	// Config is the service configuration; nil means all defaults.
	Config *config.Config
	// Logger; nil means slog.Default().
	Logger *slog.Logger
}

type handlers struct {
	Deps
}

// Register adds the handlers of the ramdisk routes to m.
func Register(m map[string]api.HandlerFunc, d Deps) {
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	if d.Config == nil {
		cfg, err := config.Load(config.LoadOptions{})
		if err != nil {
			panic("ramdisk: default configuration: " + err.Error())
		}
		d.Config = cfg
	}
	h := &handlers{Deps: d}
	m["GET /v1/lookup"] = h.enabled(h.lookup)
	m["POST /v1/heartbeat/{node_ident}"] = h.enabled(h.heartbeat)
	m["POST /v1/continue_inspection"] = h.enabled(h.continueInspection)
}

// enabled refuses the route with upstream's 403 HTTPForbidden naming the
// path when [api]/enable_ramdisk_endpoints is off, as on a public API of
// a split-horizon deployment that agents must not reach.
func (h *handlers) enabled(f api.HandlerFunc) api.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
		if !h.Config.BoolOf(config.APIEnableRamdiskEndpoints) {
			return errs.New(errs.ClassHTTPForbidden, map[string]any{"resource": r.URL.Path})
		}
		return f(w, r, rc)
	}
}

// topic is get_topic_for with NoValidHost answered as 400, as upstream's
// ramdisk controllers do.
func (h *handlers) topic(ctx context.Context, n *model.Node) (string, error) {
	t, err := h.Topics.GetTopicFor(ctx, n)
	if err != nil {
		if e, ok := errs.As(err); ok && e.Class == errs.ClassNoValidHost {
			c := *e
			c.Code = http.StatusBadRequest
			return "", &c
		}
		return "", err
	}
	return t, nil
}

// validMACs is get_valid_mac_addresses: the addresses that are MACs,
// lower-cased; the others are logged and ignored.
func (h *handlers) validMACs(addresses []string) []string {
	var valid, invalid []string
	for _, a := range addresses {
		if m, ok := apiutil.NormalizeMAC(a); ok {
			valid = append(valid, m)
		} else {
			invalid = append(invalid, a)
		}
	}
	if len(invalid) > 0 {
		h.Logger.Warn("invalid MAC addresses ignored by the lookup request", "addresses", strings.Join(invalid, ", "))
	}
	return valid
}

// lookupFields are the node fields a lookup answers (_LOOKUP_RETURN_FIELDS).
var lookupFields = []string{"uuid", "properties", "instance_info", "driver_internal_info"}

// convert is upstream's convert_with_links: the node restricted to the
// lookup fields (secrets masked, as for a caller without the secret
// rules, which the ramdisk never has) and the agent's config document.
func (h *handlers) convert(rc *api.RequestContext, n *model.Node) *apiutil.Dict {
	nd := apiutil.NewDict()
	nd.Set("uuid", n.UUID)
	nd.Set("driver_internal_info", apiutil.MaskDict(orEmpty(n.DriverInternalInfo)))
	ii := apiutil.MaskDict(orEmpty(n.InstanceInfo))
	for _, k := range []string{"configdrive", "image_url"} {
		if apiutil.Truthy(ii[k]) {
			ii[k] = apiutil.Secret
		}
	}
	nd.Set("instance_info", ii)
	nd.Set("properties", orEmpty(n.Properties))
	nd.Set("links", collection.SelfAndBookmark(rc.PublicURL, "nodes", n.UUID))
	out := apiutil.NewDict()
	out.Set("node", nd)
	out.Set("config", h.agentConfig(n.InternalInfo().Get(model.DIIAgentSecretToken), n))
	return out
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// optString is a string option that is None upstream when unset and
// without default.
func (h *handlers) optString(section, name string) any {
	if !h.Config.Has(section, name) {
		return nil
	}
	return h.Config.String(section, name)
}

// agentConfig is upstream's config(token, node): the settings the agent
// reads from a lookup answer (seed § 4 lists the keys IPA uses).
func (h *handlers) agentConfig(token any, n *model.Node) *apiutil.Dict {
	c := h.Config
	// Out-of-band management knows its BMC address already: the agent
	// need not detect it.
	skipBMC := n.ManagementInterface == "redfish" || n.ManagementInterface == "idrac-redfish"
	metrics := apiutil.NewDict()
	metrics.Set("backend", c.StringOf(config.MetricsAgentBackend))
	metrics.Set("prepend_host", c.BoolOf(config.MetricsAgentPrependHost))
	metrics.Set("prepend_uuid", c.BoolOf(config.MetricsAgentPrependUUID))
	metrics.Set("prepend_host_reverse", c.BoolOf(config.MetricsAgentPrependHostReverse))
	metrics.Set("global_prefix", h.optString("metrics", "agent_global_prefix"))
	statsd := apiutil.NewDict()
	statsd.Set("statsd_host", c.StringOf(config.MetricsStatsdAgentStatsdHost))
	statsd.Set("statsd_port", c.IntOf(config.MetricsStatsdAgentStatsdPort))
	containers := apiutil.NewDict()
	containers.Set("allow_arbitrary_containers", c.BoolOf(config.AgentContainersAllowArbitraryContainers))
	containers.Set("allowed_containers", list(c.ListOf(config.AgentContainersAllowedContainers)))
	containers.Set("container_steps_file", c.StringOf(config.AgentContainersContainerStepsFile))
	containers.Set("runner", c.StringOf(config.AgentContainersRunner))
	containers.Set("pull_options", list(c.ListOf(config.AgentContainersPullOptions)))
	containers.Set("run_options", list(c.ListOf(config.AgentContainersRunOptions)))
	// Newer upstream releases add this option; send it when ours knows it.
	if _, ok := config.Lookup("agent_containers", "container_conf_file"); ok {
		containers.Set("container_conf_file", h.optString("agent_containers", "container_conf_file"))
	}
	d := apiutil.NewDict()
	d.Set("metrics", metrics)
	d.Set("metrics_statsd", statsd)
	d.Set("heartbeat_timeout", c.IntOf(config.APIRamdiskHeartbeatTimeout))
	d.Set("agent_containers", containers)
	d.Set("agent_token", token)
	// Always true since Victoria: newer agents lock the behaviour in.
	d.Set("agent_token_required", true)
	d.Set("agent_md5_checksum_enable", c.BoolOf(config.AgentAllowMd5Checksum))
	d.Set("disable_deep_image_inspection", c.BoolOf(config.ConductorDisableDeepImageInspection))
	d.Set("permitted_image_formats", list(c.ListOf(config.ConductorPermittedImageFormats)))
	d.Set("agent_skip_bmc_detect", skipBMC)
	d.Set("enable_bios_bootloader_install", c.BoolOf(config.AgentEnableBIOSBootloaderInstall))
	d.Set("tls_min_version", c.StringOf(config.AgentTLSMinimumVersion))
	d.Set("tls_cipher_suites", h.optString("agent", "tls_ciphers"))
	return d
}

// list keeps an empty option list an empty JSON array.
func list(v []string) []string {
	if v == nil {
		return []string{}
	}
	return v
}
