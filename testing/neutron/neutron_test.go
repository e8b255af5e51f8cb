package neutron

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

func call(t *testing.T, f *Fixture, method, path, token string, body any) (int, map[string]any) {
	t.Helper()
	var rd *bytes.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	} else {
		rd = bytes.NewReader(nil)
	}
	req, err := http.NewRequest(method, f.URL()+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Auth-Token", token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&doc)
	return resp.StatusCode, doc
}

const net1 = "11111111-1111-4111-8111-111111111111"

func TestPortsNetworksAndFaults(t *testing.T) {
	f := New(t).Network(net1, "prov").SecurityGroup("sg-1", "default").
		ValidateTokens(func(tok string) bool { return tok == "good" })
	if st, _ := call(t, f, http.MethodGet, "/v2.0/networks", "bad", nil); st != http.StatusUnauthorized {
		t.Fatalf("bad token: %d", st)
	}
	st, doc := call(t, f, http.MethodPost, "/v2.0/ports", "good", map[string]any{"port": map[string]any{"network_id": net1, "mac_address": "52:54:00:00:00:01"}})
	if st != http.StatusCreated {
		t.Fatalf("create: %d %v", st, doc)
	}
	id := doc["port"].(map[string]any)["id"].(string)
	if st, doc := call(t, f, http.MethodPost, "/v2.0/ports", "good", map[string]any{"port": map[string]any{"network_id": net1, "mac_address": "52:54:00:00:00:01"}}); st != http.StatusConflict ||
		doc["NeutronError"].(map[string]any)["type"] != "MacAddressInUse" {
		t.Fatalf("duplicate MAC: %d %v", st, doc)
	}
	if st, _ := call(t, f, http.MethodPut, "/v2.0/ports/"+id, "good", map[string]any{"port": map[string]any{"binding:host_id": "node"}}); st != http.StatusOK || f.GetPort(id)["status"] != "ACTIVE" {
		t.Fatalf("bind: %d %v", st, f.GetPort(id))
	}
	if st, doc := call(t, f, http.MethodPut, "/v2.0/ports/"+id, "good", map[string]any{"port": map[string]any{"mac_address": "52:54:00:00:00:02"}}); st != http.StatusConflict ||
		doc["NeutronError"].(map[string]any)["type"] != "PortBound" {
		t.Fatalf("MAC change of a bound port: %d %v", st, doc)
	}
	if st, doc := call(t, f, http.MethodGet, "/v2.0/ports?network_id="+net1+"&mac_address=52:54:00:00:00:01&mac_address=x&fields=id", "good", nil); st != http.StatusOK ||
		len(doc["ports"].([]any)) != 1 || len(doc["ports"].([]any)[0].(map[string]any)) != 1 {
		t.Fatalf("list: %d %v", st, doc)
	}
	if st, doc := call(t, f, http.MethodGet, "/v2.0/security-groups?id=sg-1&id=sg-2", "good", nil); st != http.StatusOK || len(doc["security_groups"].([]any)) != 1 {
		t.Fatalf("security groups: %d %v", st, doc)
	}
	if st, _ := call(t, f, http.MethodGet, "/v2.0/networks/nope", "good", nil); st != http.StatusNotFound {
		t.Fatalf("unknown network: %d", st)
	}
	f.Fail(http.MethodDelete, "/v2.0/ports/", http.StatusInternalServerError, 1)
	if st, _ := call(t, f, http.MethodDelete, "/v2.0/ports/"+id, "good", nil); st != http.StatusInternalServerError || f.GetPort(id) == nil {
		t.Fatalf("injected fault: %d", st)
	}
	if st, _ := call(t, f, http.MethodDelete, "/v2.0/ports/"+id, "good", nil); st != http.StatusNoContent || f.GetPort(id) != nil {
		t.Fatalf("delete after the fault: %d", st)
	}
	reqs := f.Requests()
	if last := reqs[len(reqs)-1]; last.Method != http.MethodDelete || !strings.HasSuffix(last.Path, id) || last.Token != "good" {
		t.Fatalf("request log %v", last)
	}
}
