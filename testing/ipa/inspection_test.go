package ipa

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestContinueInspection(t *testing.T) {
	var got map[string]any
	var header http.Header
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/continue_inspection" {
			http.NotFound(w, r)
			return
		}
		header = r.Header.Clone()
		got = nil
		_ = json.NewDecoder(r.Body).Decode(&got)
		w.WriteHeader(status)
		if status == http.StatusOK {
			_, _ = w.Write([]byte(`{"node": {"uuid": "u1"}, "config": {"agent_token": "tok"}}`))
			return
		}
		_, _ = w.Write([]byte(`{"error_message": "{\"faultstring\": \"no such node\"}"}`))
	}))
	defer srv.Close()
	c := &IronicClient{BaseURL: srv.URL}
	inv := map[string]any{"cpu": map[string]any{"count": 4.0}}
	out, err := c.ContinueInspection(context.Background(), inv, map[string]any{"root_disk": "sda"})
	if err != nil {
		t.Fatal(err)
	}
	if out["node"].(map[string]any)["uuid"] != "u1" {
		t.Errorf("answer %v", out)
	}
	if got["root_disk"] != "sda" || got["inventory"].(map[string]any)["cpu"] == nil {
		t.Errorf("body %v", got)
	}
	if v, ok := got["error"]; !ok || v != nil {
		t.Errorf("error field %v (present %v), want null", v, ok)
	}
	if header.Get(versionHeader) != "" || header.Get("Content-Type") != "application/json" {
		t.Errorf("headers %v", header)
	}

	status = http.StatusNotFound
	_, err = c.ContinueInspection(context.Background(), inv, map[string]any{"error": "collector failed"})
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Status != http.StatusNotFound || apiErr.Text != "Error 404: no such node" {
		t.Fatalf("404: %v", err)
	}
	if got["error"] != "collector failed" {
		t.Errorf("error field %v", got["error"])
	}
}
