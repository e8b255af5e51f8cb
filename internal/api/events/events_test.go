package events

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apitest"
	"github.com/openkeel/ironic/internal/api/apiutil"
	"github.com/openkeel/ironic/internal/api/collection"
	"github.com/openkeel/ironic/internal/spectest"
)

const (
	portID = "a4d8b1e2-7c1f-4a3b-9f0e-1d2c3b4a5f60"
	devID  = "0b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d"
)

func serve(t *testing.T) (http.Handler, *bytes.Buffer) {
	t.Helper()
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	handlers := map[string]api.HandlerFunc{}
	Register(handlers, Deps{Logger: log})
	return apitest.New(t, api.Deps{Logger: log, Handlers: handlers}), &logs
}

func post(h http.Handler, version, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest("POST", "http://127.0.0.1:6385/v1/events", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-OpenStack-Ironic-API-Version", version)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

func faultstring(t *testing.T, body []byte) string {
	t.Helper()
	var outer struct {
		ErrorMessage string `json:"error_message"`
	}
	if err := json.Unmarshal(body, &outer); err != nil {
		t.Fatalf("fault body %s: %v", body, err)
	}
	var inner struct {
		Faultstring string `json:"faultstring"`
	}
	if err := json.Unmarshal([]byte(outer.ErrorMessage), &inner); err != nil {
		t.Fatalf("fault %s: %v", outer.ErrorMessage, err)
	}
	return inner.Faultstring
}

func TestPostEvents(t *testing.T) {
	h, logs := serve(t)
	body := `{"events": [{"event": "network.bind_port", "port_id": "` + portID + `", "mac_address": "52:54:00:AA:bb:01",
		"status": "ACTIVE", "device_id": "` + devID + `", "binding:host_id": null, "binding:vnic_type": "baremetal"},
		{"event": "network.delete_port", "port_id": "` + portID + `", "mac_address": "52:54:00:aa:bb:02", "status": "DOWN"}]}`
	for _, v := range []string{"1.54", "1.115"} {
		logs.Reset()
		w := post(h, v, body)
		if w.Code != http.StatusNoContent || w.Body.Len() != 0 {
			t.Fatalf("%s: %d %s", v, w.Code, w.Body)
		}
		if got := strings.Count(logs.String(), "Received external event: {'event': 'network."); got != 2 {
			t.Errorf("%s: %d events logged:\n%s", v, got, logs)
		}
		if !strings.Contains(logs.String(), "'binding:host_id': None") {
			t.Errorf("%s: event not logged as upstream prints it:\n%s", v, logs)
		}
	}
	w := post(h, "1.53", body)
	if w.Code != http.StatusNotFound || faultstring(t, w.Body.Bytes()) != "The API is not supported for this version" {
		t.Errorf("1.53: %d %s", w.Code, w.Body)
	}
}

func TestSchemaErrors(t *testing.T) {
	h, _ := serve(t)
	ev := func(extra string) string {
		return `{"events": [{"event": "network.bind_port", "port_id": "` + portID + `", "mac_address": "52:54:00:aa:bb:01", "status": "ACTIVE"` + extra + `}]}`
	}
	for _, c := range []struct{ name, body, fault string }{
		{"empty body", ``, "'events' is a required property"},
		{"not an object", `[]`, "[] is not of type 'object'"},
		{"events checked before extras", `{"events": [], "x": 1}`, "[] should be non-empty"},
		{"only unexpected keys", `{"b": 1, "a": 2}`, "'events' is a required property"},
		{"events not a list", `{"events": {"a": 1}}`, "{'a': 1} is not of type 'array'"},
		{"empty list", `{"events": []}`, "[] should be non-empty"},
		{"item not an object", `{"events": ["x"]}`, "'x' is not of type 'object'"},
		{"bad event", `{"events": [{"event": "network.nope", "port_id": "x"}]}`, "'network.nope' is not one of ['network.bind_port', 'network.unbind_port', 'network.delete_port']"},
		{"event type first", `{"events": [{"event": 5}]}`, "5 is not of type 'string'"},
		{"bad port uuid", `{"events": [{"event": "network.bind_port", "port_id": "nope"}]}`, "'nope' is not a 'uuid'"},
		{"bad mac", `{"events": [{"port_id": "` + portID + `", "mac_address": "52-54-00-aa-bb-01"}]}`, "'52-54-00-aa-bb-01' is not a 'mac-address'"},
		{"status type", `{"events": [{"status": true}]}`, "True is not of type 'string'"},
		{"device id type", ev(`, "device_id": 1.5`), "1.5 is not of type 'string', 'null'"},
		{"host id format", ev(`, "binding:host_id": "host-1"`), "'host-1' is not a 'uuid'"},
		{"missing status", `{"events": [{"event": "network.bind_port", "port_id": "` + portID + `", "mac_address": "52:54:00:aa:bb:01"}]}`, "'status' is a required property"},
		{"missing event", `{"events": [{"x": 1}]}`, "'event' is a required property"},
		{"unexpected event keys", ev(`, "zz": 1, "aa": 2`), "Additional properties are not allowed ('zz', 'aa' were unexpected)"},
		{"unexpected top key", strings.TrimSuffix(ev(""), "}") + `, "extra": 1}`, "Additional properties are not allowed ('extra' was unexpected)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := post(h, "1.115", c.body)
			if w.Code != http.StatusBadRequest {
				t.Fatalf("status %d: %s", w.Code, w.Body)
			}
			if got, want := faultstring(t, w.Body.Bytes()), "Schema error: "+c.fault; got != want {
				t.Errorf("faultstring\n got  %q\n want %q", got, want)
			}
		})
	}
}

// TestSchemaMatchesSpec checks the Go table against upstream's schema
// file and replays bodies through both: they accept the same ones.
func TestSchemaMatchesSpec(t *testing.T) {
	var spec map[string]any
	rel := "ironic/api/schemas/v1/event/create_request_body.json"
	spectest.LoadJSON(t, rel, &spec)
	items := spec["properties"].(map[string]any)["events"].(map[string]any)["items"].(map[string]any)
	props := items["properties"].(map[string]any)
	if len(props) != len(eventProperties) {
		t.Errorf("spec has %d event properties, table %d", len(props), len(eventProperties))
	}
	for _, p := range eventProperties {
		sp, ok := props[p.name].(map[string]any)
		if !ok {
			t.Errorf("%s not in the spec", p.name)
			continue
		}
		var types []string
		switch x := sp["type"].(type) {
		case string:
			types = []string{x}
		case []any:
			for _, s := range x {
				types = append(types, s.(string))
			}
		}
		format, _ := sp["format"].(string)
		enum, _ := sp["enum"].([]any)
		if !slices.Equal(types, p.types) || format != p.format || !slices.Equal(enum, p.enum) {
			t.Errorf("%s: spec %v, table %+v", p.name, sp, p)
		}
	}
	var req []string
	for _, r := range items["required"].([]any) {
		req = append(req, r.(string))
	}
	if !slices.Equal(req, eventRequired) {
		t.Errorf("required: spec %v, table %v", req, eventRequired)
	}

	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.RegisterFormat(&jsonschema.Format{Name: "uuid", Validate: func(v any) error {
		if s, ok := v.(string); ok && !collection.IsUUIDLike(s) {
			return errors.New("not a uuid")
		}
		return nil
	}})
	c.RegisterFormat(&jsonschema.Format{Name: "mac-address", Validate: func(v any) error {
		if s, ok := v.(string); ok && !macRe.MatchString(strings.ToLower(s)) {
			return errors.New("not a mac")
		}
		return nil
	}})
	if err := c.AddResource("mem:///event.json", spec); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("mem:///event.json")
	if err != nil {
		t.Fatal(err)
	}
	good := `{"event": "network.unbind_port", "port_id": "` + portID + `", "mac_address": "52:54:00:aa:bb:01", "status": "x"}`
	bodies := []string{
		`{}`, `[]`, `"x"`, `null`, `{"events": []}`, `{"events": null}`, `{"events": [` + good + `]}`,
		`{"events": [` + good + `, ` + good + `]}`, `{"events": [` + good + `], "x": 1}`, `{"events": [1]}`,
		`{"events": [{}]}`, `{"events": [` + good[:len(good)-1] + `, "device_id": null, "binding:host_id": null, "binding:vnic_type": null}]}`,
		`{"events": [` + good[:len(good)-1] + `, "device_id": "` + devID + `", "binding:host_id": "` + devID + `", "binding:vnic_type": "direct"}]}`,
		`{"events": [` + good[:len(good)-1] + `, "device_id": "nope"}]}`, `{"events": [` + good[:len(good)-1] + `, "binding:vnic_type": 1}]}`,
		`{"events": [` + good[:len(good)-1] + `, "other": 1}]}`, `{"events": [` + strings.Replace(good, "52:54", "52-54", 1) + `]}`,
		`{"events": [` + strings.Replace(good, "unbind", "bind", 1) + `]}`, `{"events": [` + strings.Replace(good, "unbind", "rebind", 1) + `]}`,
		`{"events": [` + strings.Replace(good, `"status": "x"`, `"status": 1`, 1) + `]}`,
		`{"events": [` + strings.Replace(good, portID, "1", 1) + `]}`,
	}
	for _, b := range bodies {
		v, err := apiutil.DecodeOrdered([]byte(b))
		if err != nil {
			t.Fatal(err)
		}
		var plain any
		if err := json.Unmarshal([]byte(b), &plain); err != nil {
			t.Fatal(err)
		}
		specOK := sch.Validate(plain) == nil
		if msg := check(v); (msg == "") != specOK {
			t.Errorf("%s: spec valid %v, check says %q", b, specOK, msg)
		}
	}
}
