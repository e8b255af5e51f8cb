package redfishbmc

import (
	"net/http"
	"testing"
)

func TestHttpBootUriPatch(t *testing.T) {
	b := New(t).System("s1")
	c := call{t: t, base: b.URL()}
	const uri = "http://127.0.0.1:8080/redfish/boot.iso"
	bootOf := func() map[string]any {
		_, doc := c.do(http.MethodGet, "/redfish/v1/Systems/s1", nil)
		return doc["Boot"].(map[string]any)
	}
	if v, ok := bootOf()["HttpBootUri"]; !ok || v != nil {
		t.Fatalf("unset HttpBootUri = %v (present %v), want null", v, ok)
	}
	resp, _ := c.do(http.MethodPatch, "/redfish/v1/Systems/s1", map[string]any{"Boot": map[string]any{
		"BootSourceOverrideTarget": "UefiHttp", "HttpBootUri": uri}})
	wantStatus(t, resp, http.StatusNoContent)
	if boot := bootOf(); boot["HttpBootUri"] != uri || boot["BootSourceOverrideTarget"] != "UefiHttp" {
		t.Fatalf("boot %v", boot)
	}
	if got := b.Snapshot("s1").HTTPBootURI; got != uri {
		t.Fatalf("snapshot HTTPBootURI %q", got)
	}
	// Absent keeps it; a rejected PATCH changes nothing.
	resp, _ = c.do(http.MethodPatch, "/redfish/v1/Systems/s1", map[string]any{"Boot": map[string]any{"BootSourceOverrideEnabled": "Continuous"}})
	wantStatus(t, resp, http.StatusNoContent)
	resp, _ = c.do(http.MethodPatch, "/redfish/v1/Systems/s1", map[string]any{"Boot": map[string]any{"HttpBootUri": 7}})
	wantStatus(t, resp, http.StatusBadRequest)
	resp, _ = c.do(http.MethodPatch, "/redfish/v1/Systems/s1", map[string]any{"Boot": map[string]any{
		"BootSourceOverrideTarget": "Usb", "HttpBootUri": "http://127.0.0.1/other.iso"}})
	wantStatus(t, resp, http.StatusBadRequest)
	if got := b.Snapshot("s1").HTTPBootURI; got != uri {
		t.Fatalf("HTTPBootURI after rejected PATCHes %q", got)
	}
	resp, _ = c.do(http.MethodPatch, "/redfish/v1/Systems/s1", map[string]any{"Boot": map[string]any{"HttpBootUri": nil}})
	wantStatus(t, resp, http.StatusNoContent)
	if v := bootOf()["HttpBootUri"]; v != nil {
		t.Fatalf("HttpBootUri after null = %v", v)
	}
}
