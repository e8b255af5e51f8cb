package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/metrics"
	"github.com/openkeel/ironic/internal/store"
	"github.com/openkeel/ironic/internal/store/sqldb"
)

// auditStack builds the API of an all-in-one with [audit] set to audit,
// its notifications going to the log driver of log.
func auditStack(t *testing.T, audit map[string]string, log *bytes.Buffer) (http.Handler, error) {
	t.Helper()
	cfg, err := config.Load(config.LoadOptions{Overrides: map[string]map[string]string{
		"DEFAULT":                      {"auth_strategy": "noauth"},
		"oslo_messaging_notifications": {"driver": "log"},
		"audit":                        audit,
	}})
	if err != nil {
		t.Fatal(err)
	}
	db, err := sqldb.Open(context.Background(), "sqlite://")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	st := &stack{cfg: cfg, log: slog.New(slog.NewJSONHandler(log, nil)), store: store.New(db), metrics: metrics.NewRegistry()}
	t.Cleanup(st.closeAPI)
	return st.apiHandler()
}

// With [audit]/enabled the service's API sends each request's CADF
// events through the [oslo_messaging_notifications] driver; a map file
// that cannot be read stops the API from starting with Ironic's message.
func TestAuditWiring(t *testing.T) {
	mapFile := filepath.Join(t.TempDir(), "api_audit_map.conf")
	if err := os.WriteFile(mapFile, []byte("[path_keywords]\nnodes = node\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	h, err := auditStack(t, map[string]string{"enabled": "true", "audit_map_file": mapFile}, &log)
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/v1/", nil))
	if w.Code != http.StatusOK {
		t.Fatalf("GET /v1/: %d %s", w.Code, w.Body)
	}
	var events []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(log.String()), "\n") {
		var rec struct {
			Logger string `json:"logger"`
			Msg    string `json:"msg"`
		}
		if json.Unmarshal([]byte(line), &rec) != nil || !strings.HasPrefix(rec.Logger, "oslo.messaging.notification.audit.") {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(rec.Msg), &m); err != nil {
			t.Fatal(err)
		}
		events = append(events, m)
	}
	if len(events) != 2 || events[0]["event_type"] != "audit.http.request" || events[1]["event_type"] != "audit.http.response" {
		t.Fatalf("audit notifications: %v\nlog:\n%s", events, log.String())
	}
	resp := events[1]["payload"].(map[string]any)
	if events[1]["publisher_id"] != "ironic-api" || resp["action"] != "read" || resp["requestPath"] != "/v1/" || resp["outcome"] != "success" ||
		resp["reason"].(map[string]any)["reasonCode"] != "200" {
		t.Fatalf("response event %v", events[1])
	}

	missing := filepath.Join(t.TempDir(), "missing.conf")
	if _, err := auditStack(t, map[string]string{"enabled": "true", "audit_map_file": missing}, &bytes.Buffer{}); err == nil ||
		!strings.Contains(err.Error(), "Error with file "+missing+". Reason: ") {
		t.Fatalf("missing map file: %v", err)
	}
}
