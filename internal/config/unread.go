package config

import (
	"fmt"
	"reflect"
	"sort"
)

// Unread says why an option of the table has no effect in openkeel. Every
// option of the table is either read by the code or listed in unreadTable;
// the configuration reference's generator test (internal/config/cmd/
// genconfdoc) walks config-options.json and fails on an option that is
// neither, and on a listed option that the code reads after all.
type Unread struct {
	// Reason says in one line why the option has no effect: what it
	// configures does not exist in openkeel.
	Reason string
}

func (u Unread) String() string { return "not applicable: " + u.Reason }

// unreadEntry lists options of one section with one reason; no names means
// every option of the section.
type unreadEntry struct {
	section string
	names   []string
	Unread
}

// Reasons shared by several sections.
const (
	keystoneVersionBounds = "keystoneauth's API version discovery bounds; openkeel's clients speak one version of each service's API and use the catalog URL as given"
	keystoneRequestLog    = "keystoneauth's Python request logging and timing; openkeel logs its requests through its own logger"
	keystoneTenant        = "keystoneauth's v2 duplicate of project_id/project_name; a file's tenant_* is taken as project_*'s deprecated name"
	tlsCiphers            = "an OpenSSL cipher string; Go's crypto/tls chooses among its own vetted cipher suites"
	jsonRPCAdapter        = "upstream's JSON-RPC client builds each URL from the conductor's host, so the keystoneauth adapter options have no effect there either"
	inProcessNetworking   = "openkeel runs the switch configuration service (master's separate ironic-networking service) inside the conductor, so there is no service to reach over RPC"
)

// not applicable: what the option configures has no counterpart here.
func na(section, reason string, names ...string) unreadEntry {
	return unreadEntry{section, names, Unread{Reason: reason}}
}

// unreadTable is the one list of the options openkeel accepts without
// effect. Keep it short: an option moves out of it when the code reads it.
var unreadTable = []unreadEntry{
	// ---- Not applicable: Python, its libraries and services openkeel does not run.
	na("DEFAULT", "folder of upstream's Python helper scripts; openkeel is one binary", "bindir"),
	na("DEFAULT", "oslo.config's remote configuration source drivers; openkeel reads configuration files only", "config_source"),
	na("DEFAULT", "debug mode of the pecan web framework, which openkeel's API does not use", "pecan_debug"),
	na("DEFAULT", "the API reaches the database through the store and node state through RPC by design (see DESIGN.md)", "use_rpc_for_database"),
	na("DEFAULT", "oslo.log's files; openkeel logs to stderr for the journal or the container runtime, which keep the files", "log_dir", "log_file", "use_stderr"),
	na("DEFAULT", tlsCiphers, "webserver_tls_ciphers"),
	na("api", "number of Python WSGI worker processes; openkeel's API is one Go process serving requests concurrently (scale with replicas)", "api_workers"),
	na("api", "Python WSGI middleware classes inserted into upstream's pipeline", "middleware"),
	na("api", "upstream's development check of its own responses against its schemas; openkeel's are checked by its wire tests", "response_validation"),
	na("api", tlsCiphers, "tls_ciphers"),
	na("json_rpc", tlsCiphers, "tls_ciphers"),
	na("errors", "a Python test aid that raises when an exception message fails to format; openkeel's messages are Go format strings checked by go vet", "fatal_exception_format_errors"),
	na("profiler", "osprofiler traces Python calls; openkeel exposes Prometheus metrics instead"),
	na("metrics", "ironic-lib's statsd metrics of the conductor and API; openkeel exports Prometheus metrics on /metrics", "backend", "global_prefix", "prepend_host", "prepend_host_reverse"),
	na("metrics_statsd", "ironic-lib's statsd target for the conductor and API; openkeel exports Prometheus metrics on /metrics", "statsd_host", "statsd_port"),
	na("oslo_concurrency", "oslo.concurrency's file locks between Python processes of one host; openkeel's locks are in-process or in the database", "disable_process_locking", "lock_path"),
	na("database", "oslo.db's database API plugin; there is only one (SQL) here", "backend"),
	na("database", "SQLAlchemy's SQL echo and caller tracing; openkeel's store logs its own statements at debug level", "connection_debug", "connection_trace"),
	na("database", "MySQL NDB Cluster table options; openkeel's migrations target InnoDB on MySQL, MariaDB and Galera", "mysql_enable_ndb"),
	na("database", "the storage engine of tables oslo.db creates; openkeel's migrations create InnoDB tables as upstream's do", "mysql_engine"),
	na("database", "oslo.db's read replica connection, which Ironic itself never reads through", "slave_connection"),
	na("keystone_authtoken", "Keystone v2 identity, removed from Keystone; openkeel validates tokens with the v3 API", "auth_version"),
	na("keystone_authtoken", "token binding to Kerberos or X.509, removed from Keystone", "enforce_token_bind"),
	na("keystone_authtoken", "Swift's WSGI environment cache; openkeel caches validated tokens in memory for token_cache_time", "cache"),
	na("keystone_authtoken", "hands unauthenticated requests to a later middleware; openkeel's API decides its public routes itself", "delay_auth_decision"),
	na("keystone_authtoken", "memcached token cache shared by Python workers; openkeel's one process caches validated tokens in memory",
		"memcache_pool_conn_get_timeout", "memcache_pool_dead_retry", "memcache_pool_maxsize", "memcache_pool_socket_timeout",
		"memcache_pool_unused_timeout", "memcache_secret_key", "memcache_security_strategy", "memcache_use_advanced_pool", "memcached_servers"),
	na("json_rpc", "Python server log format of request ids", "debug_log_request_id_only"),
	na("json_rpc", jsonRPCAdapter, "connect_retries", "connect_retry_delay", "endpoint_override", "interface", "region_name",
		"service_name", "service_type", "status_code_retries", "status_code_retry_delay", "valid_interfaces"),
	na("json_rpc", keystoneVersionBounds, "max_version", "min_version", "version"),
	na("json_rpc", keystoneRequestLog, "collect_timing", "split_loggers"),
	na("json_rpc", keystoneTenant, "tenant_id", "tenant_name"),
	na("glance", keystoneVersionBounds, "max_version", "min_version", "version"),
	na("glance", keystoneRequestLog, "collect_timing", "split_loggers"),
	na("glance", keystoneTenant, "tenant_id", "tenant_name"),
	na("nova", keystoneVersionBounds, "max_version", "min_version", "version"),
	na("nova", keystoneRequestLog, "collect_timing", "split_loggers"),
	na("nova", keystoneTenant, "tenant_id", "tenant_name"),
	na("cinder", keystoneVersionBounds, "max_version", "min_version", "version"),
	na("cinder", keystoneRequestLog, "collect_timing", "split_loggers"),
	na("cinder", keystoneTenant, "tenant_id", "tenant_name"),
	na("cinder", "registered by master but read nowhere: retries is deprecated for [cinder]/status_code_retries", "retries"),
	na("neutron", keystoneVersionBounds, "max_version", "min_version", "version"),
	na("neutron", keystoneRequestLog, "collect_timing", "split_loggers"),
	na("neutron", keystoneTenant, "tenant_id", "tenant_name"),
	na("service_catalog", keystoneVersionBounds, "max_version", "min_version", "version"),
	na("service_catalog", keystoneRequestLog, "collect_timing", "split_loggers"),
	na("service_catalog", keystoneTenant, "tenant_id", "tenant_name"),
	na("swift", keystoneVersionBounds, "max_version", "min_version", "version"),
	na("swift", keystoneRequestLog, "collect_timing", "split_loggers"),
	na("swift", keystoneTenant, "tenant_id", "tenant_name"),

	// ---- Not yet implemented: planned by open issues.
	na("ironic_networking", inProcessNetworking, "rpc_transport"),
	na("ironic_networking", "master writes networking-generic-switch's translation of switch_config_file there for that library to read; openkeel's switch drivers read switch_config_file itself", "driver_config_dir"),
	na("ironic_networking_json_rpc", inProcessNetworking),
	na("auto_discovery", "master defines it and reads it nowhere", "inspection_scope"),
	na("inspector", "the period of the status poll of ironic-inspector, which master no longer talks to; master declares the option and reads it nowhere",
		"status_check_period"),
	na("vnc", tlsCiphers, "tls_ciphers"),
	na("drac", "read by the WS-Man idrac interfaces upstream removed; master's idrac-redfish interfaces do not read it",
		"bios_factory_reset_timeout", "boot_device_job_status_timeout", "config_job_max_retries"),
	na("redfish", "registered by master but read nowhere (its BMC firmware updates are bounded by firmware_update_resource_validation_timeout)", "firmware_update_bmc_timeout"),
	na("mdns", "registered by master but read nowhere: it bounded the client lookup that mdns.py no longer has", "lookup_attempts"),
	na("neutron", "registered by master but read nowhere: request_timeout has no reader, retries is deprecated for [neutron]/status_code_retries", "request_timeout", "retries"),
	na("oslo_middleware", "read by oslo.middleware's sizelimit filter, which upstream's API pipeline (ironic/api/app.py) does not include; [api]/max_json_body_size* bound request bodies", "max_request_body_size"),
	na("pxe", "master reads it only as the default of dhcp_options_for_instance's ip_version, which every caller in master "+
		"(pxe_base prepare_ramdisk, prepare_instance_pxe_config) passes as 4 and then 6; openkeel sends both sets the same way", "ip_version"),
}

// unreadIndex is unreadTable by option, built once at start.
var unreadIndex = buildUnreadIndex()

func buildUnreadIndex() map[Name]Unread {
	out := map[Name]Unread{}
	add := func(n Name, u Unread) {
		if _, dup := out[n]; dup {
			panic("config: option listed twice as unread: " + n.String())
		}
		out[n] = u
	}
	for _, e := range unreadTable {
		if !registry.sections[e.section] {
			panic("config: unread table names unknown section [" + e.section + "]")
		}
		if len(e.names) == 0 {
			for _, o := range registry.ordered {
				if o.Section == e.section {
					add(Name{o.Section, o.Name}, e.Unread)
				}
			}
			continue
		}
		for _, name := range e.names {
			n := Name{e.section, name}
			if _, ok := registry.byName[n]; !ok {
				panic("config: unread table names unknown option " + n.String())
			}
			add(n, e.Unread)
		}
	}
	return out
}

// UnreadReason says why openkeel does not read an option, if it is listed.
func UnreadReason(section, name string) (Unread, bool) {
	u, ok := unreadIndex[Name{section, name}]
	return u, ok
}

// UnreadSection reports whether unreadTable lists a whole section, which
// must then have no option the code reads.
func UnreadSection(section string) bool {
	for _, e := range unreadTable {
		if e.section == section && len(e.names) == 0 {
			return true
		}
	}
	return false
}

// Ineffective is an option that a configuration file sets to a value
// other than its default, which openkeel does not read.
type Ineffective struct {
	Name
	Unread
}

// String names the option and says why setting it changes nothing.
func (i Ineffective) String() string {
	return fmt.Sprintf("option %s is set but has no effect in openkeel (%s)", i.Name, i.Unread)
}

// Ineffective lists the options the files set to a value other than the
// default that have no effect here, sorted by name: the operator meant
// something by them and gets no behaviour, so the services warn.
func (c *Config) Ineffective() []Ineffective { return append([]Ineffective(nil), c.ineffective...) }

// findIneffective compares the value of each set, unread option with its
// default (interpolated as it would be).
func findIneffective(r *resolver) []Ineffective {
	var out []Ineffective
	for n := range r.set {
		u, ok := unreadIndex[n]
		if !ok {
			continue
		}
		def, err := r.defaultValue(registry.byName[n])
		if err == nil && reflect.DeepEqual(def, r.values[n]) {
			continue
		}
		out = append(out, Ineffective{n, u})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Section != out[j].Section {
			return out[i].Section < out[j].Section
		}
		return out[i].Name.Name < out[j].Name.Name
	})
	return out
}
