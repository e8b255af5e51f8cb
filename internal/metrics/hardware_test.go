package metrics_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/metrics"
)

func TestHardwareSeries(t *testing.T) {
	reg := metrics.NewRegistry()
	h, err := metrics.NewHardware(reg, "cond-1")
	if err != nil {
		t.Fatal(err)
	}
	h.ObserveLock(10*time.Millisecond, 0, metrics.OutcomeOK)
	h.ObserveLock(3*time.Second, 3, metrics.OutcomeLocked)
	h.ObserveAgentCommand("deploy.write_image", 2*time.Second, nil)
	h.ObserveAgentCommand("deploy.write_image", time.Second, errors.New("boom"))

	bmc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	defer bmc.Close()
	client := &http.Client{Transport: h.RoundTripper("redfish", nil)}
	for _, m := range []string{http.MethodGet, http.MethodGet, http.MethodPost} {
		req, _ := http.NewRequest(m, bmc.URL+"/redfish/v1/Systems/1", nil)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}

	fams := scrape(t, serve(t, reg, http.NotFoundHandler()))
	locked := find(fams, "ironic_conductor_lock_wait_seconds", map[string]string{"outcome": "locked", "conductor": "cond-1"}).GetHistogram()
	if locked.GetSampleCount() != 1 || locked.GetSampleSum() != 3 {
		t.Errorf("locked waits %d sum %v, want 1 and 3", locked.GetSampleCount(), locked.GetSampleSum())
	}
	if c := find(fams, "ironic_conductor_lock_conflicts_total", nil).GetCounter().GetValue(); c != 3 {
		t.Errorf("lock conflicts = %v, want 3", c)
	}
	failed := find(fams, "ironic_agent_command_duration_seconds", map[string]string{"command": "deploy.write_image", "outcome": "error"}).GetHistogram()
	if failed.GetSampleCount() != 1 {
		t.Errorf("failed write_image count = %d, want 1", failed.GetSampleCount())
	}
	gets := find(fams, "ironic_bmc_request_duration_seconds", map[string]string{"driver": "redfish", "operation": "GET"}).GetHistogram()
	if gets.GetSampleCount() != 2 {
		t.Errorf("redfish GETs = %d, want 2", gets.GetSampleCount())
	}
	if e := find(fams, "ironic_bmc_request_errors_total", map[string]string{"driver": "redfish", "operation": "POST"}).GetCounter().GetValue(); e != 1 {
		t.Errorf("redfish POST errors = %v, want 1", e)
	}
	if m := find(fams, "ironic_bmc_request_errors_total", map[string]string{"operation": "GET"}); m != nil {
		t.Errorf("successful GETs counted as errors: %v", m)
	}
}
