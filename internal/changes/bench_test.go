package changes

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/store/storetest"
)

// 100 subscribers follow the stream while one writer commits 1,000 node
// changes: events delivered per second (all subscribers together) and
// the delay from the start of a change's write to its arrival at a subscriber (p50,
// p99). Objects come from the fake v1 of the tests (one GET per change,
// shared by the subscribers, who are one caller).
//
//	go test -run '^$' -bench Stream -benchtime 1x ./internal/changes/
func BenchmarkStream(b *testing.B) {
	const subscribers, changes = 100, 1000
	for _, be := range storetest.Backends(b) {
		b.Run(be.Name, func(b *testing.B) {
			f := newFixture(b, be.DB)
			ctx := context.Background()
			n, err := f.st.CreateNode(ctx, &model.Node{Driver: "fake-hardware"})
			if err != nil {
				b.Fatal(err)
			}
			for range b.N {
				subs := make([]*subscription, subscribers)
				for i := range subs {
					subs[i] = f.subscribe(b, "", nil)
				}
				var mu sync.Mutex
				committed := map[int64]time.Time{}
				var lat []time.Duration
				var wg sync.WaitGroup
				start := time.Now()
				for _, s := range subs {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for range changes {
							ev, ok := <-s.events
							if !ok {
								return
							}
							at := time.Now()
							mu.Lock()
							if c, ok := committed[ev.Seq]; ok {
								lat = append(lat, at.Sub(c))
							}
							mu.Unlock()
						}
					}()
				}
				_, latest, err := f.st.(interface {
					ChangeBounds(context.Context) (int64, int64, error)
				}).ChangeBounds(ctx)
				if err != nil {
					b.Fatal(err)
				}
				for i := range changes {
					// Timed from before the write (its own time included):
					// its seq is the next one, as this is the only writer.
					mu.Lock()
					committed[latest+int64(i)+1] = time.Now()
					mu.Unlock()
					n.Description = model.Ptr(fmt.Sprint(i))
					if _, err := f.st.UpdateNode(ctx, n, "description"); err != nil {
						b.Fatal(err)
					}
				}
				wg.Wait()
				elapsed := time.Since(start)
				for _, s := range subs {
					s.close()
				}
				slices.Sort(lat)
				q := func(p float64) float64 {
					return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
				}
				b.ReportMetric(float64(subscribers*changes)/elapsed.Seconds(), "events/s")
				b.ReportMetric(q(0.5), "p50-ms")
				b.ReportMetric(q(0.99), "p99-ms")
			}
		})
	}
}
