package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/openkeel/ironic/internal/agentclient"
	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/allocation"
	"github.com/openkeel/ironic/internal/api/apiutil"
	"github.com/openkeel/ironic/internal/api/chassis"
	"github.com/openkeel/ironic/internal/api/conductors"
	"github.com/openkeel/ironic/internal/api/deploytemplate"
	"github.com/openkeel/ironic/internal/api/drivers"
	"github.com/openkeel/ironic/internal/api/events"
	"github.com/openkeel/ironic/internal/api/inspectionrule"
	"github.com/openkeel/ironic/internal/api/middleware"
	"github.com/openkeel/ironic/internal/api/node"
	"github.com/openkeel/ironic/internal/api/port"
	"github.com/openkeel/ironic/internal/api/portgroup"
	"github.com/openkeel/ironic/internal/api/ramdisk"
	"github.com/openkeel/ironic/internal/api/runbook"
	"github.com/openkeel/ironic/internal/api/shard"
	"github.com/openkeel/ironic/internal/api/volume"
	"github.com/openkeel/ironic/internal/audit"
	"github.com/openkeel/ironic/internal/auth"
	"github.com/openkeel/ironic/internal/authz"
	"github.com/openkeel/ironic/internal/changes"
	"github.com/openkeel/ironic/internal/conductor"
	"github.com/openkeel/ironic/internal/conductor/workers"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/driver/builtin"
	"github.com/openkeel/ironic/internal/driver/network"
	"github.com/openkeel/ironic/internal/httpserver"
	"github.com/openkeel/ironic/internal/logging"
	"github.com/openkeel/ironic/internal/metrics"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/notify"
	"github.com/openkeel/ironic/internal/nova"
	"github.com/openkeel/ironic/internal/rpc"
	"github.com/openkeel/ironic/internal/rpc/jsonrpc"
	"github.com/openkeel/ironic/internal/rpc/ringmgr"
	"github.com/openkeel/ironic/internal/store"
	"github.com/openkeel/ironic/internal/store/sqldb"
	"github.com/prometheus/client_golang/prometheus"
)

// stack is what one process runs, wired from the configuration: the API
// reads through the store and writes through rpc.ConductorAPI, which is
// the conductor itself in all-in-one and JSON-RPC to the conductor the
// hash ring chooses in api mode.
type stack struct {
	cfg       *config.Config
	log       *slog.Logger
	store     store.Store
	router    *rpc.Router
	conductor *conductor.Conductor
	rpc       rpc.ConductorAPI
	// metrics is the process's registry, served at /metrics by the API
	// and JSON-RPC listeners.
	metrics *prometheus.Registry
	// apiNotifier sends the API's versioned notifications; closeAPI
	// flushes it once the listeners have stopped.
	apiNotifier *notify.Notifier
	// auditNotifier sends the API's audit events ([audit]/enabled).
	auditNotifier *notify.SensorNotifier
}

func newStack(ctx context.Context, m mode, cfg *config.Config, log *slog.Logger, db *sqldb.DB) (*stack, error) {
	// Every line logged in a request's context names the request.
	log = logging.New(log.Handler())
	st, err := newStore(ctx, cfg, db)
	if err != nil {
		return nil, err
	}
	s := &stack{cfg: cfg, log: log, store: st, metrics: metrics.NewRegistry()}
	heartbeatTimeout := cfg.DurationOf(config.ConductorHeartbeatTimeout)
	rings := ringmgr.New(s.store, ringmgr.Options{
		PartitionExponent: cfg.IntOf(config.DefaultHashPartitionExponent),
		Algorithm:         cfg.StringOf(config.DefaultHashRingAlgorithm),
		ResetInterval:     cfg.DurationOf(config.DefaultHashRingResetInterval),
		HeartbeatTimeout:  heartbeatTimeout,
		// Upstream keeps the rings until a miss on SQLite, where only one
		// conductor can use the database.
		NeverExpire: db.Dialect() == sqldb.SQLite,
	})
	s.router = rpc.NewRouter(rpc.RouterOptions{
		Rings:            rings,
		Conductors:       s.store,
		HeartbeatTimeout: heartbeatTimeout,
		Host:             cfg.StringOf(config.DefaultHost),
		TopicPrefix:      topicPrefix(cfg),
	})
	if m == modeAPI && usesOslo(cfg) {
		api, err := osloClient(cfg, log, s.store)
		if err != nil {
			return nil, err
		}
		s.rpc = api
		return s, nil
	}
	if m == modeAPI {
		copts := jsonrpc.ClientOptionsFromConfig(cfg)
		// Pinned to an older release, the client sends updates as
		// upstream's API does, naming the fields that differ from the row.
		copts.Store = s.store
		c, err := jsonrpc.NewClient(copts)
		if err != nil {
			return nil, fmt.Errorf("JSON-RPC client: %w", err)
		}
		s.rpc = c
		return s, nil
	}
	hardware, err := metrics.NewHardware(s.metrics, cfg.StringOf(config.DefaultHost))
	if err != nil {
		return nil, err
	}
	drivers, err := conductorDrivers(cfg, s.store, hardware, log)
	if err != nil {
		return nil, err
	}
	// The pool is built here rather than by the conductor so that its
	// counts can be scraped.
	pool, err := workers.New(workers.SettingsFromConfig(cfg), workers.WithLogger(log))
	if err != nil {
		return nil, fmt.Errorf("conductor worker pool: %w", err)
	}
	periodics, err := metrics.NewPeriodic(s.metrics, cfg.StringOf(config.DefaultHost))
	if err != nil {
		return nil, err
	}
	notifier, err := notify.FromConfig(cfg, notify.ServiceConductor, log, apiutil.MaskDict, s.metrics)
	if err != nil {
		return nil, err
	}
	sensors, observeSensors, err := sensorData(cfg, log, s.metrics)
	if err != nil {
		notifier.Close()
		return nil, err
	}
	opts := conductor.Options{Store: s.store, Drivers: drivers, Config: cfg, Logger: log, Pool: pool,
		ObservePeriodic: func(r conductor.PeriodicRun) {
			periodics.Observe(r.Name, r.Interval, r.Due, r.Started, r.Duration)
		},
		ObserveLock:    hardware.ObserveLock,
		Notifier:       notifier,
		Nova:           nova.FromConfig(cfg, log, globalRequestID),
		Sensors:        sensors,
		ObserveSensors: observeSensors,
		MaskSecrets:    apiutil.MaskDict,
	}
	if m == modeConductor {
		// Several conductors share the nodes: periodic tasks only touch
		// the ones the ring gives this host.
		host := cfg.StringOf(config.DefaultHost)
		opts.Owns = func(n *model.Node) bool {
			owner, err := s.router.GetConductorFor(context.Background(), n)
			return err == nil && owner == host
		}
	}
	s.conductor, err = conductor.New(opts)
	if err != nil {
		return nil, fmt.Errorf("conductor: %w", err)
	}
	s.rpc = rpc.NewLocal(s.conductor, log)
	host := s.conductor.Host()
	if err := metrics.RegisterConductor(s.metrics, metrics.ConductorSource{
		Host:    host,
		Workers: pool.Stats,
		LocksHeld: func(ctx context.Context) (int, error) {
			nodes, err := s.store.ListNodes(ctx, store.NodeFilter{ReservedByAnyOf: []string{host}}, store.ListOptions{})
			return len(nodes), err
		},
		PushEvents: s.conductor.PushEventCounts,
	}); err != nil {
		return nil, err
	}
	return s, nil
}

// sensorData is the conductor's sensor notifier and the /metrics series
// of the readings, with [sensor_data]/send_sensor_data; nothing without
// it. A node's series go after three intervals without a reading (the
// node was deleted, moved to another conductor or left active).
func sensorData(cfg *config.Config, log *slog.Logger, reg *prometheus.Registry) (*notify.SensorNotifier, func(conductor.SensorReport), error) {
	if !cfg.BoolOf(config.SensorDataSendSensorData) {
		return nil, nil, nil
	}
	series, err := metrics.NewSensors(reg, 3*cfg.DurationOf(config.SensorDataInterval))
	if err != nil {
		return nil, nil, err
	}
	n, err := notify.SensorsFromConfig(cfg, log, reg)
	if err != nil {
		return nil, nil, err
	}
	return n, func(r conductor.SensorReport) {
		series.Observe(metrics.SensorReading{NodeUUID: r.NodeUUID, NodeName: r.NodeName, InstanceUUID: r.InstanceUUID,
			Driver: r.Driver, Data: r.Data, Time: r.Time})
	}, nil
}

// conductorDrivers is builtin.DriversWithPorts with the agent client the
// agent interfaces share timing its commands for /metrics and logging
// through the process's logger, and every Redfish exchange and ipmitool
// run timed for /metrics as a BMC request.
func conductorDrivers(cfg *config.Config, ports network.PortStore, hw *metrics.Hardware, log *slog.Logger) (*driver.Drivers, error) {
	o, err := builtin.OptionsFromConfig(cfg)
	if err != nil {
		return nil, err
	}
	o.Ports = ports
	o.Redfish.WrapTransport = func(next http.RoundTripper) http.RoundTripper { return hw.RoundTripper("redfish", next) }
	if o.IPMI != nil {
		o.IPMI.Observe = func(operation string, d time.Duration, failed bool) {
			hw.ObserveBMC("ipmitool", operation, d, failed)
		}
	}
	ao := agentclient.OptionsFromConfig(cfg)
	ao.Observe = hw.ObserveAgentCommand
	ao.Log = log
	o.Agent.Client = agentclient.New(ao)
	r, err := builtin.Registry(o)
	if err != nil {
		return nil, err
	}
	d, err := r.Build(driver.SettingsFromConfig(cfg))
	if err != nil {
		return nil, fmt.Errorf("enabled drivers: %w", err)
	}
	return d, nil
}

// apiHandler is the REST API with every resource handler of this build.
func (s *stack) apiHandler() (http.Handler, error) {
	authn, err := auth.New(s.cfg)
	if err != nil {
		return nil, fmt.Errorf("authentication: %w", err)
	}
	az, err := authz.New(s.cfg)
	if err != nil {
		return nil, fmt.Errorf("authorization: %w", err)
	}
	notifier, err := notify.FromConfig(s.cfg, notify.ServiceAPI, s.log, apiutil.MaskDict, s.metrics)
	if err != nil {
		return nil, err
	}
	s.apiNotifier = notifier
	if err := node.CheckConfig(s.cfg); err != nil {
		return nil, err
	}
	handlers := Handlers(s.store, s.rpc, flowTopics{s.router}, s.cfg, s.log, az, WithNotifier(notifier))
	for id, h := range handlers {
		handlers[id] = withCallerContext(h)
	}
	auditor, err := s.auditMiddleware()
	if err != nil {
		return nil, err
	}
	h, err := api.Build(api.Deps{Config: s.cfg, Logger: s.log, Handlers: handlers,
		Authenticate: authn, Authorize: az.Route, Audit: auditor})
	if err != nil {
		return nil, err
	}
	requests, err := metrics.NewAPI(s.metrics, api.Routes)
	if err != nil {
		return nil, err
	}
	if err := metrics.RegisterNodes(s.metrics, func(ctx context.Context) ([]metrics.NodeCount, error) {
		counts, err := s.store.CountNodesByState(ctx)
		out := make([]metrics.NodeCount, len(counts))
		for i, c := range counts {
			out[i] = metrics.NodeCount(c)
		}
		return out, err
	}); err != nil {
		return nil, err
	}
	// The console's pages sit beside /v1, outside its middleware chain as
	// /metrics does; their data comes from /v1 with the caller's own
	// credentials.
	console, err := s.webConsole(authn, az)
	if err != nil {
		return nil, err
	}
	// /metrics is not an API resource (no microversion, no policy) but is
	// guarded by the API's own authentication: open under noauth, a
	// user of the htpasswd file or a valid token otherwise.
	// The flow is made before the access log's context, so that its line
	// names the node and conductor the request was routed to.
	stream, err := s.changeStream(authn, az, h)
	if err != nil {
		return nil, err
	}
	return logging.Middleware(changes.Mount(stream, console.Mount(metrics.Mount(auth.Handler(authn, metrics.Handler(s.metrics)), requests.Middleware(h))))), nil
}

// closeAPI flushes the API's notifications after its listeners have
// stopped: what the last requests queued reaches the broker (within the
// driver's few seconds) instead of dying with the process.
func (s *stack) closeAPI() {
	s.apiNotifier.Close()
	s.auditNotifier.Close()
}

// auditMiddleware is [audit]'s stage of the API, nil when disabled; its
// notifier is kept for closeAPI.
func (s *stack) auditMiddleware() (middleware.Middleware, error) {
	if !s.cfg.BoolOf(config.AuditEnabled) {
		return nil, nil
	}
	n, err := notify.AuditFromConfig(s.cfg, s.log, s.metrics)
	if err != nil {
		return nil, err
	}
	mw, err := audit.FromConfig(s.cfg, n, s.log)
	if err != nil {
		n.Close()
		return nil, err
	}
	s.auditNotifier = n
	return mw.Wrap, nil
}

// withCallerContext gives the handler's calls to the conductor the
// caller's rpc.RequestContext, which the JSON-RPC client sends as the
// "context" argument (upstream's RequestContext.to_dict): the conductor
// then logs under the API's request id and acts with the caller's
// identity and token, in another process as in all-in-one.
func withCallerContext(h api.HandlerFunc) api.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
		ctx := r.Context()
		c := &rpc.RequestContext{
			RequestID:       rc.RequestID,
			GlobalRequestID: middleware.GlobalRequestID(ctx),
			IsPublicAPI:     middleware.IsPublicRoute(ctx),
		}
		if a := auth.FromContext(ctx); a != nil {
			c.UserID, c.UserName, c.UserDomainID = a.UserID, a.UserName, a.UserDomainID
			c.ProjectID, c.ProjectName, c.ProjectDomainID = a.ProjectID, a.ProjectName, a.ProjectDomainID
			c.DomainID, c.SystemScope, c.Roles, c.AuthToken = a.DomainID, a.SystemScope, a.Roles, a.AuthToken
		}
		return h(w, r.WithContext(rpc.WithRequestContext(ctx, c)), rc)
	}
}

// flowTopics records in the request's logging.Flow the node and the
// conductor each lookup chooses: that is where the API learns them.
type flowTopics struct{ Topics }

func (f flowTopics) GetTopicFor(ctx context.Context, node *model.Node) (string, error) {
	topic, err := f.Topics.GetTopicFor(ctx, node)
	if err == nil {
		fl := logging.FlowFrom(ctx)
		fl.SetNode(node.UUID)
		fl.SetConductor(rpc.HostFromTopic(topic))
	}
	return topic, err
}

func (f flowTopics) GetConductorFor(ctx context.Context, node *model.Node) (string, error) {
	host, err := f.Topics.GetConductorFor(ctx, node)
	if err == nil {
		fl := logging.FlowFrom(ctx)
		fl.SetNode(node.UUID)
		fl.SetConductor(host)
	}
	return host, err
}

func (f flowTopics) GetRandomTopic(ctx context.Context) (string, error) {
	topic, err := f.Topics.GetRandomTopic(ctx)
	if err == nil {
		logging.FlowFrom(ctx).SetConductor(rpc.HostFromTopic(topic))
	}
	return topic, err
}

func (f flowTopics) GetTopicForDriver(ctx context.Context, driverName string) (string, error) {
	topic, err := f.Topics.GetTopicForDriver(ctx, driverName)
	if err == nil {
		logging.FlowFrom(ctx).SetConductor(rpc.HostFromTopic(topic))
	}
	return topic, err
}

// Topics is the conductor lookup the handlers use (rpc.Router).
type Topics interface {
	GetTopicFor(ctx context.Context, node *model.Node) (string, error)
	GetConductorFor(ctx context.Context, node *model.Node) (string, error)
	GetRandomTopic(ctx context.Context) (string, error)
	GetTopicForDriver(ctx context.Context, driverName string) (string, error)
}

// HandlerOption adds an optional dependency to Handlers.
type HandlerOption func(*handlerOptions)

type handlerOptions struct {
	notifier *notify.Notifier
}

// WithNotifier makes the handlers send the API's versioned notifications
// through n.
func WithNotifier(n *notify.Notifier) HandlerOption {
	return func(o *handlerOptions) { o.notifier = n }
}

// Handlers are the resource handlers of this build by route ID, with the
// policy hooks of az.
func Handlers(st store.Store, cond rpc.ConductorAPI, topics Topics, cfg *config.Config, log *slog.Logger, az *authz.Authz, opts ...HandlerOption) map[string]api.HandlerFunc {
	var o handlerOptions
	for _, f := range opts {
		f(&o)
	}
	handlers := map[string]api.HandlerFunc{}
	node.Register(handlers, node.Deps{Store: st, Conductor: cond, Topics: topics, Config: cfg, Logger: log,
		Authorize: az.Node, Show: az.NodeShow, HasRule: az.HasRule, AuthorizeRunbook: az.Runbook, Project: az.NodeProject,
		Notifier: o.notifier})
	port.Register(handlers, port.Deps{Store: st, Conductor: cond, Topics: topics, Authorize: az.Node, ListProject: az.ListProject,
		Notifier: o.notifier})
	portgroup.Register(handlers, portgroup.Deps{Store: st, Conductor: cond, Topics: topics, Authorize: az.Node, ListProject: az.ListProject,
		Notifier: o.notifier})
	volume.Register(handlers, volume.Deps{Store: st, Conductor: cond, Topics: topics, Authorize: az.Node, ListProject: az.ListProject,
		ViewTargetProperties: az.ViewTargetProperties, Notifier: o.notifier})
	chassis.Register(handlers, chassis.Deps{Store: st, Notifier: o.notifier})
	allocation.Register(handlers, allocation.Deps{Store: st, Conductor: cond, Topics: topics, Logger: log, Authorize: az.Allocation,
		AuthorizeNode: az.Node, Check: az.Check, Scope: az.Scope, ListProject: az.AllocationListProject, Notifier: o.notifier})
	deploytemplate.Register(handlers, deploytemplate.Deps{Store: st, Notifier: o.notifier})
	runbook.Register(handlers, runbook.Deps{Store: st, Authorize: az.Runbook, Scope: az.Scope})
	inspectionrule.Register(handlers, inspectionrule.Deps{Store: st})
	conductors.Register(handlers, conductors.Deps{Store: st})
	drivers.Register(handlers, drivers.Deps{Store: st, Conductor: cond, Topics: topics})
	shard.Register(handlers, shard.Deps{Store: st})
	ramdisk.Register(handlers, ramdisk.Deps{Store: st, Conductor: cond, Topics: topics, Config: cfg, Logger: log})
	events.Register(handlers, events.Deps{Logger: log})
	return handlers
}

// jsonRPCServer is the conductor's JSON-RPC endpoint behind the
// [json_rpc] authentication strategy.
func (s *stack) jsonRPCServer() (*httpserver.Server, error) {
	authn, err := auth.NewJSONRPC(s.cfg, "json_rpc")
	if err != nil {
		return nil, fmt.Errorf("JSON-RPC authentication: %w", err)
	}
	opts := jsonrpc.ServerOptionsFromConfig(s.cfg)
	opts.Logger = s.log
	lopts := jsonrpc.ListenOptions(s.cfg)
	lopts.Logger = s.log
	lopts.ShutdownTimeout = s.cfg.DurationOf(config.ConductorGracefulShutdownTimeout)
	calls, err := metrics.NewRPC(s.metrics)
	if err != nil {
		return nil, err
	}
	// The conductor's /metrics shares the listener and its
	// authentication: one port per pod to reach and to protect.
	srv, err := httpserver.Listen(lopts, auth.Handler(authn, metrics.Mount(metrics.Handler(s.metrics),
		calls.Middleware(rpcFlow(s.conductor.Host(), jsonrpc.NewServer(s.conductor, opts))))))
	if err != nil {
		return nil, fmt.Errorf("JSON-RPC server: %w", err)
	}
	return srv, nil
}

// rpcFlow gives each JSON-RPC call a logging.Flow naming this conductor
// and the node of the call's node_id or node_obj argument (the API sends
// the UUID), so that lines logged outside a task's logger still name them.
func rpcFlow(host string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := logging.WithFlow(r.Context())
		f := logging.FlowFrom(ctx)
		f.SetConductor(host)
		if r.Method == http.MethodPost {
			// One byte past the server's bound, as metrics.RPC, so that
			// the server still answers an oversized body 413.
			body, err := io.ReadAll(io.LimitReader(r.Body, jsonrpc.DefaultMaxBodyBytes+1))
			if err != nil {
				http.Error(w, "Cannot read request body", http.StatusBadRequest)
				return
			}
			var frame struct {
				Params struct {
					NodeID any `json:"node_id"`
					// node_obj is a serialised versioned object.
					NodeObj struct {
						Data struct {
							UUID string `json:"uuid"`
						} `json:"ironic_object.data"`
					} `json:"node_obj"`
				} `json:"params"`
			}
			if json.Unmarshal(body, &frame) == nil {
				id, _ := frame.Params.NodeID.(string)
				if id == "" {
					id = frame.Params.NodeObj.Data.UUID
				}
				if uuid.Validate(id) == nil {
					f.SetNode(id)
				}
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// globalRequestID is the id of the request a conductor call serves, sent
// to Nova so that its logs join up with ours (upstream context.global_id).
func globalRequestID(ctx context.Context) string {
	rc := rpc.RequestContextFrom(ctx)
	if rc == nil {
		return ""
	}
	if rc.GlobalRequestID != "" {
		return rc.GlobalRequestID
	}
	return rc.RequestID
}
