package agentclient

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/openkeel/ironic/testing/ipa"
)

// Every command reaches the observer once with its outcome, whatever the
// typed helper that sent it.
func TestObserveCommands(t *testing.T) {
	ctx := context.Background()
	agent := ipa.New(t).WithToken(token)
	agent.Handle("standby.sync", func(map[string]any) ipa.Outcome {
		return ipa.Outcome{Error: ipa.CommandError("TypeError", "Command execution failed", "sync() got an unexpected keyword argument 'x'", 500)}
	})
	var mu sync.Mutex
	seen := map[string][]bool{}
	e := newEnv(t, agent, func(o *Options) {
		o.Observe = func(command string, d time.Duration, err error) {
			mu.Lock()
			defer mu.Unlock()
			if d < 0 {
				t.Errorf("%s took %v", command, d)
			}
			seen[command] = append(seen[command], err == nil)
		}
	})
	if _, err := e.cl.GetCleanSteps(ctx, e.tgt, view); err != nil {
		t.Fatal(err)
	}
	if _, err := e.cl.Sync(ctx, e.tgt); err == nil {
		t.Fatal("sync with a TypeError succeeded")
	}
	mu.Lock()
	defer mu.Unlock()
	if got := seen["clean.get_clean_steps"]; len(got) != 1 || !got[0] {
		t.Errorf("get_clean_steps observations %v, want one success", got)
	}
	if got := seen["standby.sync"]; len(got) != 1 || got[0] {
		t.Errorf("sync observations %v, want one failure", got)
	}
}
