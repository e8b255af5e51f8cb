package config

import (
	"net"
	"os"
	"path/filepath"
)

// libraryOptions are options of the OpenStack libraries that Ironic reads but
// that config-options.json does not list (it holds only what Ironic itself
// registers). Names, types and defaults follow keystonemiddleware,
// keystoneauth1, oslo.policy, oslo.middleware, oslo.db, oslo.messaging and
// oslo.log, with the defaults Ironic overrides at start (cors in
// ironic/api/app.py, database connection in ironic/db/sqlalchemy/models.py).
var libraryOptions = []Option{
	// keystonemiddleware auth_token.
	{Section: "keystone_authtoken", Name: "www_authenticate_uri", Type: TypeString, Deprecated: []Name{{"keystone_authtoken", "auth_uri"}}},
	{Section: "keystone_authtoken", Name: "auth_version", Type: TypeString},
	{Section: "keystone_authtoken", Name: "interface", Type: TypeString, Default: "internal"},
	{Section: "keystone_authtoken", Name: "delay_auth_decision", Type: TypeBool, Default: false},
	{Section: "keystone_authtoken", Name: "http_connect_timeout", Type: TypeInt},
	{Section: "keystone_authtoken", Name: "http_request_max_retries", Type: TypeInt, Default: 3},
	{Section: "keystone_authtoken", Name: "cache", Type: TypeString},
	{Section: "keystone_authtoken", Name: "certfile", Type: TypeString},
	{Section: "keystone_authtoken", Name: "keyfile", Type: TypeString},
	{Section: "keystone_authtoken", Name: "cafile", Type: TypeString},
	{Section: "keystone_authtoken", Name: "insecure", Type: TypeBool, Default: false},
	{Section: "keystone_authtoken", Name: "region_name", Type: TypeString},
	{Section: "keystone_authtoken", Name: "memcached_servers", Type: TypeList, Deprecated: []Name{{"keystone_authtoken", "memcache_servers"}}},
	{Section: "keystone_authtoken", Name: "token_cache_time", Type: TypeInt, Default: 300},
	{Section: "keystone_authtoken", Name: "memcache_security_strategy", Type: TypeString, Default: "None", Choices: []string{"None", "MAC", "ENCRYPT"}},
	{Section: "keystone_authtoken", Name: "memcache_secret_key", Type: TypeString, Secret: true},
	{Section: "keystone_authtoken", Name: "memcache_pool_dead_retry", Type: TypeInt, Default: 300},
	{Section: "keystone_authtoken", Name: "memcache_pool_maxsize", Type: TypeInt, Default: 10},
	{Section: "keystone_authtoken", Name: "memcache_pool_socket_timeout", Type: TypeInt, Default: 3},
	{Section: "keystone_authtoken", Name: "memcache_pool_unused_timeout", Type: TypeInt, Default: 60},
	{Section: "keystone_authtoken", Name: "memcache_pool_conn_get_timeout", Type: TypeInt, Default: 10},
	{Section: "keystone_authtoken", Name: "memcache_use_advanced_pool", Type: TypeBool, Default: true},
	{Section: "keystone_authtoken", Name: "include_service_catalog", Type: TypeBool, Default: true},
	{Section: "keystone_authtoken", Name: "enforce_token_bind", Type: TypeString, Default: "permissive"},
	{Section: "keystone_authtoken", Name: "service_token_roles", Type: TypeList, Default: []string{"service"}},
	{Section: "keystone_authtoken", Name: "service_token_roles_required", Type: TypeBool, Default: false},
	{Section: "keystone_authtoken", Name: "service_type", Type: TypeString},
	// keystoneauth1 password plugin, loaded by auth_token from the same section.
	{Section: "keystone_authtoken", Name: "auth_type", Type: TypeString, Deprecated: []Name{{"keystone_authtoken", "auth_plugin"}}},
	{Section: "keystone_authtoken", Name: "auth_section", Type: TypeString},
	{Section: "keystone_authtoken", Name: "auth_url", Type: TypeString},
	{Section: "keystone_authtoken", Name: "username", Type: TypeString, Deprecated: []Name{{"keystone_authtoken", "user_name"}}},
	{Section: "keystone_authtoken", Name: "user_id", Type: TypeString},
	{Section: "keystone_authtoken", Name: "password", Type: TypeString, Secret: true},
	{Section: "keystone_authtoken", Name: "project_name", Type: TypeString, Deprecated: []Name{{"keystone_authtoken", "tenant_name"}}},
	{Section: "keystone_authtoken", Name: "project_id", Type: TypeString, Deprecated: []Name{{"keystone_authtoken", "tenant_id"}}},
	{Section: "keystone_authtoken", Name: "user_domain_name", Type: TypeString},
	{Section: "keystone_authtoken", Name: "user_domain_id", Type: TypeString},
	{Section: "keystone_authtoken", Name: "project_domain_name", Type: TypeString},
	{Section: "keystone_authtoken", Name: "project_domain_id", Type: TypeString},
	{Section: "keystone_authtoken", Name: "system_scope", Type: TypeString},

	// oslo.policy (6.x: new defaults and scope checks are on, YAML file).
	{Section: "oslo_policy", Name: "enforce_scope", Type: TypeBool, Default: true},
	{Section: "oslo_policy", Name: "enforce_new_defaults", Type: TypeBool, Default: true},
	{Section: "oslo_policy", Name: "policy_file", Type: TypeString, Default: "policy.yaml", Deprecated: []Name{{"DEFAULT", "policy_file"}}},
	{Section: "oslo_policy", Name: "policy_default_rule", Type: TypeString, Default: "default", Deprecated: []Name{{"DEFAULT", "policy_default_rule"}}},
	{Section: "oslo_policy", Name: "policy_dirs", Type: TypeMultiString, Default: []string{"policy.d"}, Deprecated: []Name{{"DEFAULT", "policy_dirs"}}},

	// oslo.middleware CORS, with the defaults set by ironic/api/app.py.
	{Section: "cors", Name: "allowed_origin", Type: TypeList},
	{Section: "cors", Name: "allow_credentials", Type: TypeBool, Default: true},
	{Section: "cors", Name: "expose_headers", Type: TypeList, Default: []string{"X-OpenStack-Ironic-API-Maximum-Version", "X-OpenStack-Ironic-API-Minimum-Version", "X-OpenStack-Ironic-API-Version"}},
	{Section: "cors", Name: "max_age", Type: TypeInt, Default: 3600},
	{Section: "cors", Name: "allow_methods", Type: TypeList, Default: []string{"GET", "PUT", "POST", "DELETE", "PATCH"}},
	{Section: "cors", Name: "allow_headers", Type: TypeList, Default: []string{}},

	// oslo.middleware proxy headers and request size limit.
	{Section: "oslo_middleware", Name: "enable_proxy_headers_parsing", Type: TypeBool, Default: false},
	{Section: "oslo_middleware", Name: "max_request_body_size", Type: TypeInt, Default: 114688, Deprecated: []Name{{"DEFAULT", "osapi_max_request_body_size"}, {"DEFAULT", "max_request_body_size"}}},

	// oslo.middleware healthcheck ([healthcheck]/enabled is Ironic's own).
	{Section: "healthcheck", Name: "path", Type: TypeString, Default: "/healthcheck"},
	{Section: "healthcheck", Name: "detailed", Type: TypeBool, Default: false},
	{Section: "healthcheck", Name: "backends", Type: TypeList, Default: []string{}},
	{Section: "healthcheck", Name: "disable_by_file_path", Type: TypeString},
	{Section: "healthcheck", Name: "disable_by_file_paths", Type: TypeList, Default: []string{}},
	{Section: "healthcheck", Name: "allowed_source_ranges", Type: TypeList, Default: []string{}},
	{Section: "healthcheck", Name: "ignore_proxied_requests", Type: TypeBool, Default: false},

	// oslo.db, with the connection default set by Ironic's models module.
	{Section: "database", Name: "sqlite_synchronous", Type: TypeBool, Default: true, Deprecated: []Name{{"DEFAULT", "sqlite_synchronous"}}},
	{Section: "database", Name: "backend", Type: TypeString, Default: "sqlalchemy", Deprecated: []Name{{"DEFAULT", "db_backend"}}},
	{Section: "database", Name: "connection", Type: TypeString, Default: "sqlite:///$state_path/ironic.sqlite", Secret: true, Deprecated: []Name{{"DEFAULT", "sql_connection"}, {"database", "sql_connection"}, {"sql", "connection"}}},
	{Section: "database", Name: "slave_connection", Type: TypeString, Secret: true},
	{Section: "database", Name: "mysql_sql_mode", Type: TypeString, Default: "TRADITIONAL"},
	{Section: "database", Name: "mysql_wsrep_sync_wait", Type: TypeInt},
	{Section: "database", Name: "mysql_enable_ndb", Type: TypeBool, Default: false},
	{Section: "database", Name: "connection_recycle_time", Type: TypeInt, Default: 3600},
	{Section: "database", Name: "max_pool_size", Type: TypeInt, Default: 5},
	{Section: "database", Name: "max_retries", Type: TypeInt, Default: 10, Deprecated: []Name{{"DEFAULT", "sql_max_retries"}, {"database", "sql_max_retries"}}},
	{Section: "database", Name: "retry_interval", Type: TypeInt, Default: 10, Deprecated: []Name{{"DEFAULT", "sql_retry_interval"}, {"database", "reconnect_interval"}}},
	{Section: "database", Name: "max_overflow", Type: TypeInt, Default: 50, Deprecated: []Name{{"DEFAULT", "sql_max_overflow"}, {"database", "sqlalchemy_max_overflow"}}},
	{Section: "database", Name: "connection_debug", Type: TypeInt, Default: 0, Min: bound(0), Max: bound(100), Deprecated: []Name{{"DEFAULT", "sql_connection_debug"}}},
	{Section: "database", Name: "connection_trace", Type: TypeBool, Default: false, Deprecated: []Name{{"DEFAULT", "sql_connection_trace"}}},
	{Section: "database", Name: "pool_timeout", Type: TypeInt, Deprecated: []Name{{"database", "sqlalchemy_pool_timeout"}}},
	{Section: "database", Name: "use_db_reconnect", Type: TypeBool, Default: false},
	{Section: "database", Name: "db_retry_interval", Type: TypeInt, Default: 1},
	{Section: "database", Name: "db_inc_retry_interval", Type: TypeBool, Default: true},
	{Section: "database", Name: "db_max_retry_interval", Type: TypeInt, Default: 10},
	{Section: "database", Name: "db_max_retries", Type: TypeInt, Default: 20},
	{Section: "database", Name: "connection_parameters", Type: TypeString, Default: ""},

	// oslo.messaging notifications.
	{Section: "oslo_messaging_notifications", Name: "driver", Type: TypeMultiString, Default: []string{}, Deprecated: []Name{{"DEFAULT", "notification_driver"}}},
	{Section: "oslo_messaging_notifications", Name: "transport_url", Type: TypeString, Secret: true, Deprecated: []Name{{"DEFAULT", "notification_transport_url"}}},
	{Section: "oslo_messaging_notifications", Name: "topics", Type: TypeList, Default: []string{"notifications"}, Deprecated: []Name{{"rpc_notifier2", "topics"}, {"DEFAULT", "notification_topics"}}},
	{Section: "oslo_messaging_notifications", Name: "retry", Type: TypeInt, Default: -1},
	// oslo.messaging transport: the notification transport falls back to
	// [DEFAULT]/transport_url; Ironic sets control_exchange's default to
	// "ironic" (set_transport_defaults), the exchange notifications go to.
	{Section: "DEFAULT", Name: "transport_url", Type: TypeString, Secret: true, Default: "rabbit://"},
	{Section: "DEFAULT", Name: "control_exchange", Type: TypeString, Default: "ironic"},
	// oslo.messaging RPC over RabbitMQ (rpc_transport = oslo): the
	// options of oslo_messaging/rpc/client.py, server.py and
	// _drivers/impl_rabbit.py that the oslo transport reads.
	{Section: "DEFAULT", Name: "rpc_response_timeout", Type: TypeInt, Default: 60},
	{Section: "DEFAULT", Name: "executor_thread_pool_size", Type: TypeInt, Default: 64, Deprecated: []Name{{"DEFAULT", "rpc_thread_pool_size"}}},
	{Section: "oslo_messaging_rabbit", Name: "amqp_durable_queues", Type: TypeBool, Default: false},
	{Section: "oslo_messaging_rabbit", Name: "amqp_auto_delete", Type: TypeBool, Default: false},
	{Section: "oslo_messaging_rabbit", Name: "rabbit_ha_queues", Type: TypeBool, Default: false},
	{Section: "oslo_messaging_rabbit", Name: "rabbit_quorum_queue", Type: TypeBool, Default: false},
	{Section: "oslo_messaging_rabbit", Name: "rabbit_quorum_delivery_limit", Type: TypeInt, Default: 0},
	{Section: "oslo_messaging_rabbit", Name: "rabbit_quroum_max_memory_length", Type: TypeInt, Default: 0},
	{Section: "oslo_messaging_rabbit", Name: "rabbit_quroum_max_memory_bytes", Type: TypeInt, Default: 0},
	{Section: "oslo_messaging_rabbit", Name: "rabbit_transient_queues_ttl", Type: TypeInt, Default: 1800, Min: bound(0)},
	{Section: "oslo_messaging_rabbit", Name: "rabbit_qos_prefetch_count", Type: TypeInt, Default: 0},
	{Section: "oslo_messaging_rabbit", Name: "heartbeat_timeout_threshold", Type: TypeInt, Default: 60},
	{Section: "oslo_messaging_rabbit", Name: "rabbit_retry_interval", Type: TypeInt, Default: 1},
	{Section: "oslo_messaging_rabbit", Name: "rabbit_retry_backoff", Type: TypeInt, Default: 2},
	{Section: "oslo_messaging_rabbit", Name: "rabbit_interval_max", Type: TypeInt, Default: 30},
	{Section: "oslo_messaging_rabbit", Name: "kombu_failover_strategy", Type: TypeString, Default: "round-robin", Choices: []string{"round-robin", "shuffle"}},
	{Section: "oslo_messaging_rabbit", Name: "direct_mandatory_flag", Type: TypeBool, Default: true},
	{Section: "oslo_messaging_rabbit", Name: "ssl", Type: TypeBool, Default: false},
	{Section: "oslo_messaging_rabbit", Name: "ssl_version", Type: TypeString, Default: ""},
	{Section: "oslo_messaging_rabbit", Name: "ssl_key_file", Type: TypeString, Default: ""},
	{Section: "oslo_messaging_rabbit", Name: "ssl_cert_file", Type: TypeString, Default: ""},
	{Section: "oslo_messaging_rabbit", Name: "ssl_ca_file", Type: TypeString, Default: ""},
	{Section: "oslo_messaging_rabbit", Name: "ssl_enforce_hostname_verification", Type: TypeBool, Default: false},

	// oslo.log basics that the service honours.
	{Section: "DEFAULT", Name: "debug", Type: TypeBool, Default: false},
	{Section: "DEFAULT", Name: "log_file", Type: TypeString, Deprecated: []Name{{"DEFAULT", "logfile"}}},
	{Section: "DEFAULT", Name: "log_dir", Type: TypeString, Deprecated: []Name{{"DEFAULT", "logdir"}}},
	{Section: "DEFAULT", Name: "use_stderr", Type: TypeBool, Default: false},
	{Section: "DEFAULT", Name: "use_json", Type: TypeBool, Default: false},
}

// authSections are the sections where Ironic registers keystoneauth
// session, auth and adapter options (ironic/conf/auth.py,
// ironic/common/keystone.py).
var authSections = []string{"cinder", "glance", "ironic_networking_json_rpc", "json_rpc", "neutron", "nova", "service_catalog", "swift"}

// registrationDefaults are the conf.set_default calls Ironic makes when it
// registers those options. config-options.json records the option's own
// default, which these calls leave untouched in oslo.config, so the values
// differ from the inventory on purpose.
var registrationDefaults = func() map[Name]any {
	m := map[Name]any{
		{"cinder", "service_type"}:                  "volumev3",
		{"glance", "service_type"}:                  "image",
		{"neutron", "service_type"}:                 "network",
		{"nova", "service_type"}:                    "compute",
		{"swift", "service_type"}:                   "object-store",
		{"service_catalog", "service_type"}:         "baremetal",
		{"json_rpc", "auth_type"}:                   "password",
		{"json_rpc", "timeout"}:                     120,
		{"ironic_networking_json_rpc", "auth_type"}: "password",
		{"ironic_networking_json_rpc", "timeout"}:   120,
	}
	for _, s := range authSections {
		m[Name{s, "valid_interfaces"}] = []string{"internal", "public"}
	}
	return m
}()

// machineDefaults are computed from the running machine, as upstream computes
// them at import time; config-options.json holds the values of the machine
// that extracted it.
var machineDefaults = map[Name]func() any{
	{"DEFAULT", "host"}:      hostname,
	{"DEFAULT", "my_ip"}:     func() any { return primaryIP("udp4", "192.0.2.1:80", "127.0.0.1") },
	{"DEFAULT", "my_ipv6"}:   func() any { return primaryIP("udp6", "[2001:db8::1]:80", nil) },
	{"DEFAULT", "pybasedir"}: baseDir,
	{"DEFAULT", "tempdir"}:   func() any { return os.TempDir() },
}

func hostname() any {
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "localhost"
	}
	return h
}

// primaryIP returns the source address the kernel picks for a route to
// target (a documentation address; connecting a UDP socket sends nothing),
// which is how oslo.utils finds the host's own address.
func primaryIP(network, target string, fallback any) any {
	c, err := net.Dial(network, target)
	if err != nil {
		return fallback
	}
	defer c.Close()
	a, ok := c.LocalAddr().(*net.UDPAddr)
	if !ok || a.IP.IsUnspecified() {
		return fallback
	}
	return a.IP.String()
}

// baseDir stands in for Python's package directory: the folder of the
// running executable, below which $pybasedir-relative files are looked for.
func baseDir() any {
	exe, err := os.Executable()
	if err != nil {
		wd, werr := os.Getwd()
		if werr != nil {
			return "/"
		}
		return wd
	}
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	return filepath.Dir(exe)
}
