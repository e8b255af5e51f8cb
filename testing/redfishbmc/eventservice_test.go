package redfishbmc

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/openkeel/ironic/testing/await"
)

// A power change behind the client's back reaches each subscriber as a
// ResourceUpdated event with its Context, after retries when the
// subscriber answers 503 at first; a subscriber that is down loses it.
func TestEventDeliveryRetriesAndDrops(t *testing.T) {
	var mu sync.Mutex
	var got []map[string]any
	failures := 2
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if failures > 0 {
			failures--
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		var ev map[string]any
		if err := json.NewDecoder(r.Body).Decode(&ev); err != nil {
			t.Errorf("event body: %v", err)
		}
		got = append(got, ev)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer up.Close()
	down := httptest.NewServer(http.NotFoundHandler())
	downURL := down.URL
	down.Close()

	b := New(t).System("s1", PowerState(On))
	c := call{t: t, base: b.URL()}
	for dest, ctx := range map[string]string{up.URL + "/ev": "secret-up", downURL + "/ev": "secret-down"} {
		resp, _ := c.do(http.MethodPost, subscriptionsURI, map[string]any{"Destination": dest, "Protocol": "Redfish",
			"Context": ctx, "EventTypes": []string{"Alert", "ResourceUpdated"}})
		wantStatus(t, resp, http.StatusCreated)
	}
	start := time.Now()
	b.SetPower("s1", Off)
	await.Until(t, 5*time.Second, "the event delivered to one subscriber and dropped for the other", func() bool {
		delivered, failed := b.EventCounts()
		return delivered == 1 && failed == 1
	})
	if took := time.Since(start); took < eventDelay+2*eventRetryBackoff {
		t.Fatalf("delivered after %v, sooner than the delay and two retries", took)
	}
	mu.Lock()
	defer mu.Unlock()
	events, _ := got[0]["Events"].([]any)
	if got[0]["Context"] != "secret-up" || len(events) != 1 {
		t.Fatalf("event %v", got[0])
	}
	rec, _ := events[0].(map[string]any)
	origin, _ := rec["OriginOfCondition"].(map[string]any)
	if rec["EventType"] != "ResourceUpdated" || origin["@odata.id"] != "/redfish/v1/Systems/s1" {
		t.Fatalf("event record %v", rec)
	}
}
