package redfishbmc

import (
	"net/http"
	"testing"
)

// A held reset is not applied, nor answered, until the test releases it;
// requests the hold does not match are answered meanwhile.
func TestHoldKeepsMatchingRequestsUntilReleased(t *testing.T) {
	b := New(t).System("s1").System("s2")
	c := call{t: t, base: b.URL()}
	h := b.Hold(Match{Method: http.MethodPost, Path: "ComputerSystem.Reset"})
	answered := make(chan int, 2)
	for _, id := range []string{"s1", "s2"} {
		go func() {
			resp, _ := c.do(http.MethodPost, SystemPath(id)+"/Actions/ComputerSystem.Reset", map[string]string{"ResetType": "On"})
			answered <- resp.StatusCode
		}()
	}
	if !h.WaitFor(2, t.Context().Done()) {
		t.Fatal("the resets never reached the hold")
	}
	_, doc := c.do(http.MethodGet, SystemPath("s1"), nil)
	if doc["PowerState"] != Off {
		t.Fatalf("held reset applied: %v", doc["PowerState"])
	}
	select {
	case st := <-answered:
		t.Fatalf("held reset answered %d", st)
	default:
	}
	h.Release()
	for range 2 {
		if st := <-answered; st != http.StatusNoContent {
			t.Fatalf("released reset answered %d", st)
		}
	}
	if h.Waiting() != 0 || b.Snapshot("s2").PowerState != On {
		t.Fatalf("after release: %d waiting, s2 %s", h.Waiting(), b.Snapshot("s2").PowerState)
	}
	// Released for good: later requests pass.
	resp, _ := c.do(http.MethodPost, SystemPath("s1")+"/Actions/ComputerSystem.Reset", map[string]string{"ResetType": "ForceOff"})
	wantStatus(t, resp, http.StatusNoContent)
}
