// Package oslo is the rpc_transport = oslo transport: oslo.messaging's
// RabbitMQ driver wire protocol (oslo_messaging/_drivers/impl_rabbit.py
// and amqpdriver.py) between the API, which calls, and the conductors,
// which consume.
//
// A call is published to the topic exchange [DEFAULT]/control_exchange
// with the conductor's topic ("ironic.conductor_manager.<host>", chosen
// by the hash ring as for JSON-RPC) as routing key. Its body is the
// message envelope 2.0:
//
//	{"oslo.version": "2.0", "oslo.message": "<JSON text of the message>"}
//
// where the message is {"method": ..., "args": {<kwargs>}, "version":
// "1.x", "_unique_id": ..., "_context_<key>": <value>..., and for a call
// "_msg_id", "_reply_q" and "_timeout"}. The conductor answers a call on
// the default exchange with the caller's reply queue ("reply_<uuid>") as
// routing key: {"result": ..., "failure": null or the JSON text of
// {"class", "module", "message", "tb", "args", "kwargs"}, "ending": true,
// "_msg_id": ...}. A cast has no _msg_id and gets no answer.
//
// The kwargs, context and results are encoded by the same generated client
// and server table as JSON-RPC (package jsonrpc's Sender and Dispatch), so
// both transports carry the same payloads.
package oslo

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/openkeel/ironic/internal/config"
)

// Options configure a Client or a Server; OptionsFromConfig reads them
// from upstream's option names.
type Options struct {
	// TransportURL is [DEFAULT]/transport_url:
	// rabbit://user:pass@host1:5672,user:pass@host2:5672/vhost?ssl=1.
	// Hosts are tried in turn (kombu_failover_strategy round-robin).
	TransportURL string
	// Exchange is [DEFAULT]/control_exchange.
	Exchange string
	// Timeout bounds a call ([DEFAULT]/rpc_response_timeout), including
	// the time spent reaching a broker.
	Timeout time.Duration
	// Heartbeat is [oslo_messaging_rabbit]/heartbeat_timeout_threshold;
	// 0 disables AMQP heartbeats.
	Heartbeat time.Duration
	// Durable declares topic exchanges and queues durable
	// (amqp_durable_queues, implied by rabbit_quorum_queue); AutoDelete
	// declares them auto-delete (amqp_auto_delete).
	Durable, AutoDelete bool
	// HAQueues asks for mirrored queues (rabbit_ha_queues, x-ha-policy).
	HAQueues bool
	// Quorum declares the conductors' topic queues as quorum queues
	// (rabbit_quorum_queue), with their three limits when not 0.
	Quorum                                                           bool
	QuorumDeliveryLimit, QuorumMaxMemoryLength, QuorumMaxMemoryBytes int
	// TransientTTL expires unused reply and fanout queues
	// (rabbit_transient_queues_ttl, x-expires); 0 never.
	TransientTTL time.Duration
	// Prefetch bounds the unacknowledged calls a conductor takes at once
	// (rabbit_qos_prefetch_count); 0 is no bound.
	Prefetch int
	// RetryInterval, RetryBackoff and IntervalMax pace reconnections:
	// the first waits RetryInterval, each next one RetryBackoff longer,
	// never more than IntervalMax (rabbit_retry_interval, _backoff,
	// rabbit_interval_max).
	RetryInterval, RetryBackoff, IntervalMax time.Duration
	// Shuffle starts each connection at a random host
	// (kombu_failover_strategy = shuffle).
	Shuffle bool
	// DirectMandatory publishes replies mandatory, so that a reply whose
	// caller has gone is returned and logged (direct_mandatory_flag).
	DirectMandatory bool
	// TLS, when set, connects with TLS ([oslo_messaging_rabbit]/ssl or
	// ?ssl=1 in the URL).
	TLS *tls.Config
	// Workers bounds the calls a conductor runs at once
	// ([DEFAULT]/executor_thread_pool_size).
	Workers int
	Logger  *slog.Logger
}

// OptionsFromConfig reads the oslo.messaging options.
func OptionsFromConfig(cfg *config.Config) (Options, error) {
	o := Options{
		TransportURL:          cfg.StringOf(config.DefaultTransportURL),
		Exchange:              cfg.StringOf(config.DefaultControlExchange),
		Timeout:               time.Duration(cfg.IntOf(config.DefaultRPCResponseTimeout)) * time.Second,
		Heartbeat:             time.Duration(cfg.IntOf(config.OsloMessagingRabbitHeartbeatTimeoutThreshold)) * time.Second,
		Durable:               cfg.BoolOf(config.OsloMessagingRabbitAmqpDurableQueues),
		AutoDelete:            cfg.BoolOf(config.OsloMessagingRabbitAmqpAutoDelete),
		HAQueues:              cfg.BoolOf(config.OsloMessagingRabbitRabbitHaQueues),
		Quorum:                cfg.BoolOf(config.OsloMessagingRabbitRabbitQuorumQueue),
		QuorumDeliveryLimit:   cfg.IntOf(config.OsloMessagingRabbitRabbitQuorumDeliveryLimit),
		QuorumMaxMemoryLength: cfg.IntOf(config.OsloMessagingRabbitRabbitQuroumMaxMemoryLength),
		QuorumMaxMemoryBytes:  cfg.IntOf(config.OsloMessagingRabbitRabbitQuroumMaxMemoryBytes),
		TransientTTL:          time.Duration(cfg.IntOf(config.OsloMessagingRabbitRabbitTransientQueuesTTL)) * time.Second,
		Prefetch:              cfg.IntOf(config.OsloMessagingRabbitRabbitQosPrefetchCount),
		RetryInterval:         time.Duration(cfg.IntOf(config.OsloMessagingRabbitRabbitRetryInterval)) * time.Second,
		RetryBackoff:          time.Duration(cfg.IntOf(config.OsloMessagingRabbitRabbitRetryBackoff)) * time.Second,
		IntervalMax:           time.Duration(cfg.IntOf(config.OsloMessagingRabbitRabbitIntervalMax)) * time.Second,
		Shuffle:               cfg.StringOf(config.OsloMessagingRabbitKombuFailoverStrategy) == "shuffle",
		DirectMandatory:       cfg.BoolOf(config.OsloMessagingRabbitDirectMandatoryFlag),
		Workers:               cfg.IntOf(config.DefaultExecutorThreadPoolSize),
	}
	if cfg.BoolOf(config.OsloMessagingRabbitSSL) {
		t, err := tlsConfig(cfg.StringOf(config.OsloMessagingRabbitSSLCAFile), cfg.StringOf(config.OsloMessagingRabbitSSLCertFile),
			cfg.StringOf(config.OsloMessagingRabbitSSLKeyFile), cfg.StringOf(config.OsloMessagingRabbitSSLVersion),
			cfg.BoolOf(config.OsloMessagingRabbitSSLEnforceHostnameVerification))
		if err != nil {
			return Options{}, err
		}
		o.TLS = t
	}
	return o, nil
}

// Upstream's RabbitMQ defaults, for what Options leaves 0.
const (
	defaultTimeout       = 60 * time.Second
	defaultRetryInterval = time.Second
	defaultIntervalMax   = 30 * time.Second
	defaultWorkers       = 64
)

func (o Options) withDefaults() Options {
	if o.Exchange == "" {
		o.Exchange = "ironic"
	}
	if o.Timeout <= 0 {
		o.Timeout = defaultTimeout
	}
	if o.RetryInterval <= 0 {
		o.RetryInterval = defaultRetryInterval
	}
	if o.IntervalMax <= 0 {
		o.IntervalMax = defaultIntervalMax
	}
	if o.Workers <= 0 {
		o.Workers = defaultWorkers
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// tlsConfig builds the client TLS of [oslo_messaging_rabbit]: the broker's
// chain is checked against caFile (the system's roots without one), and
// its name only when verifyHostname is set, as upstream's default leaves
// hostname verification off.
func tlsConfig(caFile, certFile, keyFile, version string, verifyHostname bool) (*tls.Config, error) {
	c := &tls.Config{MinVersion: tls.VersionTLS12}
	switch version {
	case "", "TLSv1_2", "tlsv1_2", "TLSv1.2":
	case "TLSv1_3", "tlsv1_3", "TLSv1.3":
		c.MinVersion = tls.VersionTLS13
	default:
		return nil, fmt.Errorf("[oslo_messaging_rabbit]/ssl_version %q is not supported, use TLSv1_2 or TLSv1_3", version)
	}
	var roots *x509.CertPool
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("[oslo_messaging_rabbit]/ssl_ca_file: %w", err)
		}
		roots = x509.NewCertPool()
		if !roots.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("[oslo_messaging_rabbit]/ssl_ca_file %s holds no certificate", caFile)
		}
		c.RootCAs = roots
	}
	if certFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("[oslo_messaging_rabbit]/ssl_cert_file: %w", err)
		}
		c.Certificates = []tls.Certificate{cert}
	}
	if !verifyHostname {
		// The chain is still verified, by hand, without the name.
		c.InsecureSkipVerify = true
		c.VerifyConnection = func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return fmt.Errorf("broker sent no certificate")
			}
			inter := x509.NewCertPool()
			for _, ic := range cs.PeerCertificates[1:] {
				inter.AddCert(ic)
			}
			_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter})
			return err
		}
	}
	return c, nil
}
