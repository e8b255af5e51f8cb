package config

// ourOptions are openkeel's own options, for what upstream Ironic has no
// option for. They live in sections named openkeel_*, so that upstream's
// sections keep exactly upstream's options; docs/operators.md describes
// them and the configuration reference lists them with their Help.
var ourOptions = []Option{
	// Listeners: the API, the conductor's JSON-RPC and its http_root file
	// server. Upstream leaves these bounds to the WSGI server or the web
	// server in front of it.
	{Section: "openkeel_http", Name: "max_connections", Type: TypeInt, Default: 4096, Min: bound(1),
		Help: "Connections each listener keeps open at once; clients beyond it wait in the kernel's accept queue until one closes."},
	{Section: "openkeel_http", Name: "request_body_timeout", Type: TypeInt, Default: 60, Min: bound(1),
		Help: "Seconds a request body may take to arrive after its headers; a client still sending is disconnected."},
	{Section: "openkeel_http", Name: "idle_timeout", Type: TypeInt, Default: 120, Min: bound(1),
		Help: "Seconds a kept-alive connection may wait for its next request."},
	{Section: "openkeel_http", Name: "http_root_host_ip", Type: TypeHostAddress,
		Help: "Address the conductor's http_root file server listens on; unset: every address (conductor mode) or [api]/host_ip (all-in-one)."},
	{Section: "openkeel_http", Name: "allow_unauthenticated_json_rpc", Type: TypeBool, Default: false,
		Help: "Let a conductor serve JSON-RPC without authentication on an address other than loopback; without it such a conductor refuses to start."},
	// Encryption at rest of nodes' secret values (internal/secrets):
	// upstream stores them in plain text.
	{Section: "openkeel_secrets", Name: "key_files", Type: TypeList,
		Help: "Files holding the key ring's AES-256 keys (32 bytes, raw or base64), as globs; a directory stands for its files, so a Kubernetes Secret mounted as a volume works unchanged. A key's id is its file's name. Unset: secrets are stored in plain text, as upstream does."},
	{Section: "openkeel_secrets", Name: "current_key_id", Type: TypeString,
		Help: "Id of the key that seals values written from now on; the other keys only open values sealed before. May be unset when there is one key."},
	// The change stream (internal/changes, docs/changes.md), served at
	// /openkeel/v1/changes; upstream has none.
	{Section: "openkeel_changes", Name: "retention", Type: TypeInt, Default: 86400, Min: bound(60),
		Help: "Seconds changes are kept in the change stream's table for clients resuming with Last-Event-ID; an older id is answered 410 Gone."},
	{Section: "openkeel_changes", Name: "poll_interval", Type: TypeFloat, Default: 0.2, Min: bound(0.01),
		Help: "Seconds between an API process's reads of the change table for changes committed by other processes (its own wake it at once)."},
	{Section: "openkeel_changes", Name: "heartbeat_interval", Type: TypeInt, Default: 15, Min: bound(1),
		Help: "Seconds a change stream may stay silent before a comment is sent, so that proxies and clients see the connection live."},
	// BMC push events (internal/conductor/pushevents.go): the conductor
	// subscribes to each Redfish node's EventService and listens for its
	// events; upstream only polls.
	{Section: "openkeel_events", Name: "enabled", Type: TypeBool, Default: false,
		Help: "Subscribe to each Redfish node's EventService and correct its power state and health within seconds of an event; the power sync stays the fallback."},
	{Section: "openkeel_events", Name: "host_ip", Type: TypeHostAddress, Default: "0.0.0.0",
		Help: "Address the conductor's event listener binds to."},
	{Section: "openkeel_events", Name: "port", Type: TypeInt, Default: 8091, Min: bound(0),
		Help: "Port of the conductor's event listener; 0 picks a free port (tests)."},
	{Section: "openkeel_events", Name: "external_url", Type: TypeString,
		Help: "URL the BMCs post events to, up to the listener's root (e.g. https://conductor-0.example.com:8091); unset: http://<host_ip>:<port>."},
	{Section: "openkeel_events", Name: "cert_file", Type: TypeString,
		Help: "Certificate (PEM) the event listener serves TLS with; with key_file. Unset: plain HTTP."},
	{Section: "openkeel_events", Name: "key_file", Type: TypeString,
		Help: "Private key (PEM) of cert_file."},
	{Section: "openkeel_events", Name: "subscription_check_interval", Type: TypeInt, Default: 300, Min: bound(0),
		Help: "Seconds between passes that check each node's subscription still exists on its BMC and create it again if lost; 0 disables the pass."},
}
