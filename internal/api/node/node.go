// Package node serves every /v1/nodes route as upstream's
// ironic/api/controllers/v1/node.py does: reads go to the store, every
// change of a node goes through the conductor (rpc.ConductorAPI) chosen
// by Topics, as upstream's API service does.
//
// Policy is not decided here: the router's Authorize seam checks each
// route's rule, and Deps.Authorize is the one place a per-node rule
// (owner/lessee scoped) is asked, with the rule name upstream checks at
// that point; Deps.Show answers the output-filtering rules (secrets,
// redactions).
package node

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apiutil"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/notify"
	"github.com/openkeel/ironic/internal/rpc"
	"github.com/openkeel/ironic/internal/store"
	"github.com/openkeel/ironic/internal/swift"
)

// Topics chooses the conductor of a node (rpc.Router implements it).
type Topics interface {
	GetTopicFor(ctx context.Context, node *model.Node) (string, error)
	GetConductorFor(ctx context.Context, node *model.Node) (string, error)
}

// Deps is what the node handlers need.
type Deps struct {
	Store     store.Store
	Conductor rpc.ConductorAPI
	Topics    Topics
	// Config is the service configuration; nil means all defaults.
	Config *config.Config
	// Logger; nil means slog.Default().
	Logger *slog.Logger
	// Authorize checks a per-node policy rule (upstream's
	// check_node_policy_and_retrieve and check_owner_policy) once the node
	// is known. An error that is NotAuthorized for "baremetal:node:get"
	// is answered as NodeNotFound, as upstream conceals nodes. nil refuses
	// every rule.
	Authorize func(r *http.Request, rule string, node *model.Node) error
	// Show answers the rules that only shape output ("show_password",
	// "show_instance_secrets", "baremetal:node:get:filter_threshold", ...)
	// for a node; nil answers false for every rule, which is what upstream
	// answers a noauth caller for the secret rules.
	Show func(r *http.Request, rule string, node *model.Node) bool
	// HasRule tells whether a policy rule is in force; the operator's
	// baremetal:step:execute:<interface>.<step> rules are only checked
	// when defined. nil means none is.
	HasRule func(rule string) bool
	// AuthorizeRunbook checks a runbook rule ("baremetal:runbook:use")
	// against the runbook's owner. nil refuses every rule.
	AuthorizeRunbook func(r *http.Request, rule string, rb *model.Runbook) error
	// Project is check_list_policy's answer for nodes: the project a
	// caller's listings are limited to, nil when it sees every node. nil
	// means no limit.
	Project func(r *http.Request) *string
	// Notifier sends the API's node notifications; nil sends none.
	Notifier *notify.Notifier
}

type handlers struct {
	Deps
	// swiftOnce builds swift, the [swift] client inventories are read
	// with under [inventory]/data_backend swift, on first use.
	swiftOnce sync.Once
	swift     *swift.Client
	// pages holds the buffers list pages are written into, and
	// pageNodeBytes the size per node of the last one (listrender.go).
	pages         sync.Pool
	pageNodeBytes [pageSizeClasses]atomic.Int64
	// plans are the page plans without a field list, by planKey.
	plans sync.Map
	// schemas validate node creation, patches and network_data, around
	// [api]/network_data_schema; schemasErr is why they could not be
	// built (CheckConfig refuses such a configuration at start).
	schemas    *apiutil.NodeSchemas
	schemasErr error
}

// CheckConfig reports a configuration the node handlers cannot serve: an
// [api]/network_data_schema file that cannot be read or compiled.
func CheckConfig(cfg *config.Config) error {
	_, err := nodeSchemas(cfg)
	return err
}

// nodeSchemas are the embedded schemas, or those around the operator's
// network_data schema when [api]/network_data_schema names a file of
// theirs rather than upstream's default under $pybasedir.
func nodeSchemas(cfg *config.Config) (*apiutil.NodeSchemas, error) {
	file := cfg.StringOf(config.APINetworkDataSchema)
	base := strings.TrimRight(cfg.StringOf(config.DefaultPybasedir), "/")
	if file == "" || base != "" && strings.HasPrefix(file, base+"/") {
		return apiutil.EmbeddedNodeSchemas(), nil
	}
	return apiutil.LoadNodeSchemas(file)
}

// nodeSchemas returns the handlers' schemas, or the error that kept them
// from being built, as a 503 naming it.
func (h *handlers) nodeSchemas() (*apiutil.NodeSchemas, error) {
	if h.schemasErr != nil {
		return nil, errs.Unavailable(h.schemasErr)
	}
	return h.schemas, nil
}

// Register adds the handlers of every node route to m.
func Register(m map[string]api.HandlerFunc, d Deps) {
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	if d.Config == nil {
		cfg, err := config.Load(config.LoadOptions{})
		if err != nil {
			panic("node: default configuration: " + err.Error())
		}
		d.Config = cfg
	}
	if d.Authorize == nil {
		d.Authorize = apiutil.RefuseAll[*model.Node]
	}
	if d.AuthorizeRunbook == nil {
		d.AuthorizeRunbook = apiutil.RefuseAll[*model.Runbook]
	}
	h := &handlers{Deps: d}
	h.schemas, h.schemasErr = nodeSchemas(d.Config)
	for id, f := range map[string]api.HandlerFunc{
		"GET /v1/nodes":                                 h.list,
		"GET /v1/nodes/detail":                          h.detail,
		"GET /v1/nodes/{node_ident}":                    h.getOne,
		"GET /v1/chassis/{chassis_id}/nodes":            h.chassisList,
		"GET /v1/chassis/{chassis_id}/nodes/detail":     h.chassisDetail,
		"POST /v1/nodes":                                h.create,
		"PATCH /v1/nodes/{node_ident}":                  h.patch,
		"DELETE /v1/nodes/{node_ident}":                 h.delete,
		"GET /v1/nodes/{node_ident}/validate":           h.validate,
		"GET /v1/nodes/{node_ident}/states":             h.states,
		"PUT /v1/nodes/{node_ident}/states/power":       h.power,
		"PUT /v1/nodes/{node_ident}/states/provision":   h.provision,
		"PUT /v1/nodes/{node_ident}/states/raid":        h.setRAID,
		"PUT /v1/nodes/{node_ident}/states/boot_mode":   h.setBootMode,
		"PUT /v1/nodes/{node_ident}/states/secure_boot": h.setSecureBoot,
		"GET /v1/nodes/{node_ident}/states/console":     h.getConsole,
		"PUT /v1/nodes/{node_ident}/states/console":     h.setConsole,

		"GET /v1/nodes/{node_ident}/traits":            h.listTraits,
		"PUT /v1/nodes/{node_ident}/traits":            h.putTraits,
		"PUT /v1/nodes/{node_ident}/traits/{trait}":    h.putTraits,
		"DELETE /v1/nodes/{node_ident}/traits":         h.deleteTraits,
		"DELETE /v1/nodes/{node_ident}/traits/{trait}": h.deleteTraits,

		"GET /v1/nodes/{node_ident}/vifs":                     h.listVIFs,
		"POST /v1/nodes/{node_ident}/vifs":                    h.attachVIF,
		"DELETE /v1/nodes/{node_ident}/vifs/{node_vif_ident}": h.detachVIF,

		"GET /v1/nodes/{node_ident}/management/boot_device":                        h.getBootDevice,
		"PUT /v1/nodes/{node_ident}/management/boot_device":                        h.setBootDevice,
		"GET /v1/nodes/{node_ident}/management/boot_device/supported":              h.supportedBootDevices,
		"PUT /v1/nodes/{node_ident}/management/inject_nmi":                         h.injectNMI,
		"GET /v1/nodes/{node_ident}/management/indicators":                         h.listIndicators,
		"GET /v1/nodes/{node_ident}/management/indicators/{ind_ident}@{component}": h.getIndicator,
		"PUT /v1/nodes/{node_ident}/management/indicators/{ind_ident}@{component}": h.setIndicator,

		"GET /v1/nodes/{node_ident}/history":                      h.listHistory,
		"GET /v1/nodes/{node_ident}/history/{history_event_uuid}": h.getHistory,
		"GET /v1/nodes/{node_ident}/inventory":                    h.inventory,
		"GET /v1/nodes/{node_ident}/bios":                         h.listBIOS,
		"GET /v1/nodes/{node_ident}/bios/{bios_setting}":          h.getBIOS,
		"GET /v1/nodes/{node_ident}/firmware":                     h.listFirmware,
		"GET /v1/nodes/{node_ident}/children":                     h.children,

		"GET /v1/nodes/{node_ident}/vendor_passthru/methods": h.vendorMethods,
		"GET /v1/nodes/{node_ident}/vendor_passthru":         h.vendorCall,
		"POST /v1/nodes/{node_ident}/vendor_passthru":        h.vendorCall,
		"PUT /v1/nodes/{node_ident}/vendor_passthru":         h.vendorCall,
		"PATCH /v1/nodes/{node_ident}/vendor_passthru":       h.vendorCall,
		"DELETE /v1/nodes/{node_ident}/vendor_passthru":      h.vendorCall,

		"GET /v1/nodes/{node_ident}/vmedia":         h.getVmedia,
		"POST /v1/nodes/{node_ident}/vmedia":        h.attachVmedia,
		"DELETE /v1/nodes/{node_ident}/vmedia":      h.detachVmedia,
		"PUT /v1/nodes/{node_ident}/maintenance":    h.setMaintenance,
		"DELETE /v1/nodes/{node_ident}/maintenance": h.unsetMaintenance,
	} {
		m[id] = f
	}
}

// show answers an output rule for node.
func (h *handlers) show(r *http.Request, rule string, n *model.Node) bool {
	return h.Show != nil && h.Show(r, rule, n)
}

// node is check_node_policy_and_retrieve: the node named by ident,
// visible to the caller ("baremetal:node:get", concealed as NodeNotFound),
// then allowed rule.
func (h *handlers) node(r *http.Request, rc *api.RequestContext, rule, ident string) (*model.Node, error) {
	return h.retrieve(r, rc, rule, ident, false)
}

// nodeWithSuffix is check_node_policy_and_retrieve(with_suffix=True),
// which upstream's get_one, patch and delete use: a name that lost its
// ".json" to the JSON extension middleware is found (GetNodeWithSuffix).
func (h *handlers) nodeWithSuffix(r *http.Request, rc *api.RequestContext, rule, ident string) (*model.Node, error) {
	return h.retrieve(r, rc, rule, ident, true)
}

func (h *handlers) retrieve(r *http.Request, rc *api.RequestContext, rule, ident string, withSuffix bool) (*model.Node, error) {
	get := apiutil.GetNode
	if withSuffix {
		get = apiutil.GetNodeWithSuffix
	}
	n, err := get(r.Context(), h.Store, ident, rc.Version)
	if err != nil {
		return nil, err
	}
	if err := h.Authorize(r, "baremetal:node:get", n); err != nil {
		if errs.Status(err) == http.StatusForbidden {
			return nil, errs.NodeNotFound(ident)
		}
		return nil, err
	}
	if rule != "" && rule != "baremetal:node:get" {
		if err := h.Authorize(r, rule, n); err != nil {
			return nil, err
		}
	}
	return n, nil
}

// nodeTopic is node followed by the conductor topic that owns it, the
// prelude of every handler that calls the conductor about one node.
func (h *handlers) nodeTopic(r *http.Request, rc *api.RequestContext, rule, ident string) (*model.Node, string, error) {
	n, err := h.node(r, rc, rule, ident)
	if err != nil {
		return nil, "", err
	}
	topic, err := h.Topics.GetTopicFor(r.Context(), n)
	if err != nil {
		return nil, "", err
	}
	return n, topic, nil
}

// topic is get_topic_for, with NoValidHost turned into a 400 as upstream
// does wherever the client chose the driver.
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
