package main

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"testing"

	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/metrics"
	"github.com/openkeel/ironic/internal/store"
	"github.com/openkeel/ironic/internal/store/sqldb"
)

// TestAPINotifierClosedAtShutdown: the API's messagingv2 notifier (its
// publisher goroutine and broker connection) is closed by the API's
// shutdown path, not left to die with the process. The broker here is a
// port nobody listens on, so the publisher is still trying to connect
// when the API shuts down.
func TestAPINotifierClosedAtShutdown(t *testing.T) {
	cfg, err := config.Load(config.LoadOptions{Overrides: map[string]map[string]string{
		"DEFAULT": {"transport_url": fmt.Sprintf("rabbit://guest:guest@127.0.0.1:%d/", freePort(t)),
			"notification_level": "info", "auth_strategy": "noauth"},
		"oslo_messaging_notifications": {"driver": "messagingv2"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	db, err := sqldb.Open(context.Background(), "sqlite://")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st := &stack{cfg: cfg, log: slog.New(slog.DiscardHandler), store: store.New(db), metrics: metrics.NewRegistry()}
	if _, err := st.apiHandler(); err != nil {
		t.Fatal(err)
	}
	if !notificationPublisherRunning() {
		t.Fatal("no notification publisher runs once the API is built")
	}
	st.closeAPI()
	if notificationPublisherRunning() {
		t.Fatal("the API's notification publisher still runs after its shutdown")
	}
}

// notificationPublisherRunning looks for the messagingv2 driver's
// publisher among the process's goroutines.
func notificationPublisherRunning() bool {
	buf := make([]byte, 4<<20)
	n := runtime.Stack(buf, true)
	return bytes.Contains(buf[:n], []byte("notify.(*Broker).run"))
}
