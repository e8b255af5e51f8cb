package audit_test

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/audit"
	"github.com/openkeel/ironic/internal/auth"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/notify"
	"github.com/openkeel/ironic/internal/notify/notifytest"
)

// ironicMap is Ironic's sample audit map (etc/ironic/api_audit_map.conf).
const ironicMap = `[DEFAULT]
# default target endpoint type
target_endpoint_type = None

[path_keywords]
nodes = node
drivers = driver
chassis = chassis
ports = port
states = state
power = None
provision = None
maintenance = None
validate = None
boot_device = None
supported = None
console = None
vendor_passthru = vendor_passthru

[service_endpoints]
baremetal = service/compute/baremetal
`

// keystoneCaller authenticates every request as a Keystone token of
// alice whose catalog names this API at apiURL.
type keystoneCaller struct{ apiURL string }

func (k keystoneCaller) Authenticate(*http.Request) (*auth.Context, error) {
	return &auth.Context{Strategy: auth.StrategyKeystone, UserID: "u-1", UserName: "alice", ProjectID: "p-1",
		ServiceCatalog: []auth.CatalogService{{Type: "baremetal", Name: "ironic", Endpoints: []auth.CatalogEndpoint{
			{Interface: "public", Region: "RegionOne", URL: k.apiURL},
			{Interface: "internal", Region: "RegionOne", URL: "http://ironic.internal:6385"},
		}}}}, nil
}

// auditedAPI serves the API with [audit] set to opts (the map file
// written from mapText) and returns its URL and what the audit notifier
// sent.
func auditedAPI(t *testing.T, mapText string, opts map[string]string) (string, *notifytest.Recorder) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "api_audit_map.conf")
	if err := os.WriteFile(file, []byte(mapText), 0o600); err != nil {
		t.Fatal(err)
	}
	opts["enabled"] = "true"
	opts["audit_map_file"] = file
	cfg, err := config.Load(config.LoadOptions{Overrides: map[string]map[string]string{"audit": opts}})
	if err != nil {
		t.Fatal(err)
	}
	rec := &notifytest.Recorder{}
	mw, err := audit.FromConfig(cfg, notify.NewSensorNotifier(notify.SensorOptions{PublisherID: notify.ServiceAPI, Drivers: []notify.Driver{rec}}), nil)
	if err != nil {
		t.Fatal(err)
	}
	caller := &keystoneCaller{}
	h, err := api.Build(api.Deps{Config: cfg, Logger: slog.New(slog.DiscardHandler), Authorize: api.AllowAll, Authenticate: caller, Audit: mw.Wrap,
		Handlers: map[string]api.HandlerFunc{
			"PUT /v1/nodes/{node_ident}/states/power": func(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
				w.WriteHeader(http.StatusAccepted)
				return nil
			},
		}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	caller.apiURL = srv.URL + "/"
	return srv.URL, rec
}

func do(t *testing.T, method, url string, headers map[string]string) int {
	t.Helper()
	var body io.Reader
	if method == http.MethodPut {
		body = strings.NewReader(`{"target": "power on"}`)
	}
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func get(t *testing.T, m map[string]any, path ...string) any {
	t.Helper()
	var v any = m
	for _, p := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("%v: no %s in %v", path, p, v)
		}
		v = mm[p]
	}
	return v
}

// wire is a message's payload as a consumer decodes it.
func wire(t *testing.T, m *notify.Message) map[string]any {
	t.Helper()
	b, err := json.Marshal(m.Payload)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

var (
	uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	timeRE = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+0000$`)
)

// A request is described before it is served and again, with its
// outcome, after: one CADF event whose target is this API's catalog
// service, typed by the map's path keywords.
func TestAuditEvents(t *testing.T) {
	url, rec := auditedAPI(t, ironicMap, map[string]string{})
	token := "gAAAAABlongtokenvalue0123456789abcdef"
	if code := do(t, "PUT", url+"/v1/nodes/n1/states/power", map[string]string{
		"X-Auth-Token": token, "User-Agent": "audit-test", "X-OpenStack-Ironic-API-Version": "1.1"}); code != 202 {
		t.Fatalf("PUT: %d", code)
	}
	msgs := rec.Take()
	if len(msgs) != 2 || msgs[0].EventType != "audit.http.request" || msgs[1].EventType != "audit.http.response" {
		t.Fatalf("events %v", rec.Events())
	}
	req, resp := wire(t, msgs[0]), wire(t, msgs[1])
	for _, m := range msgs {
		if m.PublisherID != "ironic-api" || m.Priority != "INFO" {
			t.Errorf("publisher %q priority %q", m.PublisherID, m.Priority)
		}
	}
	for k, want := range map[string]any{"typeURI": "http://schemas.dmtf.org/cloud/audit/1.0/event", "eventType": "activity",
		"action": "update", "outcome": "pending", "requestPath": "/v1/nodes/n1/states/power"} {
		if req[k] != want {
			t.Errorf("request event %s = %v, want %v", k, req[k], want)
		}
	}
	if !uuidRE.MatchString(req["id"].(string)) || !timeRE.MatchString(req["eventTime"].(string)) {
		t.Errorf("id %v time %v", req["id"], req["eventTime"])
	}
	if tags := req["tags"].([]any); len(tags) != 1 || !strings.HasPrefix(tags[0].(string), "correlation_id?value=") {
		t.Errorf("tags %v", tags)
	}
	if get(t, req, "observer", "id") != "target" || req["reason"] != nil || req["reporterchain"] != nil {
		t.Errorf("observer %v reason %v chain %v", req["observer"], req["reason"], req["reporterchain"])
	}
	ini := req["initiator"].(map[string]any)
	for k, want := range map[string]any{"typeURI": "service/security/account/user", "id": "u-1", "name": "alice", "project_id": "p-1"} {
		if ini[k] != want {
			t.Errorf("initiator %s = %v, want %v", k, ini[k], want)
		}
	}
	if get(t, ini, "host", "address") != "127.0.0.1" || get(t, ini, "host", "agent") != "audit-test" {
		t.Errorf("host %v", ini["host"])
	}
	if tok := get(t, ini, "credential", "token"); tok != token[:5]+" xxxxxxxx "+token[len(token)-5:] {
		t.Errorf("token %v", tok)
	}
	if strings.Contains(wire(t, msgs[0])["initiator"].(map[string]any)["credential"].(map[string]any)["token"].(string), token) {
		t.Error("the token is sent whole")
	}
	if get(t, ini, "credential", "identity_status") != "Confirmed" || !strings.HasPrefix(ini["request_id"].(string), "req-") {
		t.Errorf("credential %v request id %v", ini["credential"], ini["request_id"])
	}
	tgt := req["target"].(map[string]any)
	if tgt["typeURI"] != "service/compute/baremetal/nodes/node/states/power" || tgt["name"] != "ironic" || tgt["id"] != "ironic" {
		t.Errorf("target %v", tgt)
	}
	addrs := tgt["addresses"].([]any)
	if len(addrs) != 3 || get(t, addrs[0].(map[string]any), "url") != "unknown" ||
		get(t, addrs[1].(map[string]any), "url") != "http://ironic.internal:6385" || get(t, addrs[2].(map[string]any), "name") != "public" {
		t.Errorf("addresses %v", addrs)
	}

	if resp["id"] != req["id"] || resp["eventTime"] != req["eventTime"] || resp["outcome"] != "success" {
		t.Errorf("response event %v", resp)
	}
	if get(t, resp, "reason", "reasonType") != "HTTP" || get(t, resp, "reason", "reasonCode") != "202" {
		t.Errorf("reason %v", resp["reason"])
	}
	chain := resp["reporterchain"].([]any)
	if len(chain) != 1 || get(t, chain[0].(map[string]any), "role") != "modifier" ||
		get(t, chain[0].(map[string]any), "reporter", "id") != "target" || !timeRE.MatchString(get(t, chain[0].(map[string]any), "reporterTime").(string)) {
		t.Errorf("reporter chain %v", chain)
	}

	// A failed request is audited as a failure; GET of a collection is a
	// list.
	if code := do(t, "GET", url+"/v1/nodes?limit=1", nil); code != 501 {
		t.Fatalf("GET without handler: %d", code)
	}
	msgs = rec.Take()
	if len(msgs) != 2 || wire(t, msgs[0])["action"] != "read/list" || wire(t, msgs[1])["outcome"] != "failure" ||
		get(t, wire(t, msgs[1]), "reason", "reasonCode") != "501" || wire(t, msgs[0])["requestPath"] != "/v1/nodes?limit=1" {
		t.Fatalf("GET events %v", msgs)
	}
}

// Methods of ignore_req_list are served unaudited, whatever their case.
func TestAuditIgnoredMethods(t *testing.T) {
	url, rec := auditedAPI(t, ironicMap, map[string]string{"ignore_req_list": "get, put"})
	if code := do(t, "PUT", url+"/v1/nodes/n1/states/power", nil); code != 202 {
		t.Fatalf("PUT: %d", code)
	}
	do(t, "GET", url+"/v1/nodes", nil)
	if ev := rec.Events(); len(ev) != 0 {
		t.Fatalf("ignored methods audited: %v", ev)
	}
	do(t, "DELETE", url+"/v1/nodes/n1", nil)
	if ev := rec.Events(); len(ev) != 2 {
		t.Fatalf("DELETE: %v", ev)
	}
}

// Custom actions and the map's defaults: a map with [custom_actions]
// names the action; without a matching catalog service the target is
// unknown.
func TestAuditMapActions(t *testing.T) {
	m := "[custom_actions]\npower/put = update/power\nvalidate = read/validate\n\n[path_keywords]\nnodes = node\n"
	url, rec := auditedAPI(t, m, map[string]string{})
	do(t, "PUT", url+"/v1/nodes/n1/states/power", nil)
	do(t, "GET", url+"/v1/nodes/n1/validate", nil)
	msgs := rec.Take()
	if len(msgs) != 4 || wire(t, msgs[0])["action"] != "update/power" || wire(t, msgs[2])["action"] != "read/validate" {
		t.Fatalf("actions %v", msgs)
	}
	if tgt := wire(t, msgs[0])["target"].(map[string]any); tgt["typeURI"] != "unknown" || tgt["id"] != "ironic" {
		// The catalog service matches the host but [service_endpoints]
		// does not map its type.
		t.Fatalf("target %v", tgt)
	}
}

// An unreadable or malformed map file stops the API as Ironic's
// InputFileError.
func TestAuditMapErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.conf")
	if err := os.WriteFile(bad, []byte("no section = here\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{filepath.Join(dir, "missing.conf"), bad} {
		cfg, err := config.Load(config.LoadOptions{Overrides: map[string]map[string]string{"audit": {"enabled": "true", "audit_map_file": file}}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = audit.FromConfig(cfg, notify.NewSensorNotifier(notify.SensorOptions{}), nil)
		var ife *audit.InputFileError
		if !errors.As(err, &ife) || !strings.HasPrefix(err.Error(), "Error with file "+file+". Reason: ") {
			t.Errorf("%s: %v", file, err)
		}
	}
	cfg, err := config.Load(config.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if mw, err := audit.FromConfig(cfg, nil, nil); mw != nil || err != nil {
		t.Fatalf("disabled: %v %v", mw, err)
	}
}
