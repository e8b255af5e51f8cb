package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/changes"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/store"
	"github.com/openkeel/ironic/internal/store/sqldb"
	"github.com/openkeel/ironic/internal/store/storetest"
	"github.com/openkeel/ironic/testing/await"
)

// streamReader follows one API process's change stream, resuming with
// Last-Event-ID when the stream ends (its process restarted).
type streamReader struct {
	t    *testing.T
	url  string
	mu   sync.Mutex
	seqs []int64
	last int64
	// conns counts the streams opened.
	conns int
}

// follow reads until ctx ends, reconnecting after a lost stream.
func (s *streamReader) follow(ctx context.Context) {
	for ctx.Err() == nil {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url+changes.Path, nil)
		if err != nil {
			s.t.Error(err)
			return
		}
		s.mu.Lock()
		if s.conns > 0 {
			req.Header.Set("Last-Event-ID", fmt.Sprint(s.last))
		}
		s.mu.Unlock()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			// The process is restarting: retry, as an SSE client does.
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
			continue
		}
		if resp.StatusCode != http.StatusOK {
			s.t.Errorf("%s: stream answered %d", s.url, resp.StatusCode)
			resp.Body.Close()
			return
		}
		s.mu.Lock()
		s.conns++
		s.mu.Unlock()
		_ = changes.ReadEvents(resp.Body, func(e changes.SSE) error {
			var ev changes.Event
			if err := json.Unmarshal(e.Data, &ev); err != nil {
				return err
			}
			s.mu.Lock()
			s.seqs = append(s.seqs, ev.Seq)
			s.last = ev.Seq
			s.mu.Unlock()
			return nil
		})
		resp.Body.Close()
	}
}

func (s *streamReader) lastSeq() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

// The change stream across processes: every API process sees every
// change, whichever process wrote it (the API, a conductor), once each
// and in commit order, including an API killed and restarted in the
// middle, whose client resumes with Last-Event-ID. On MariaDB with two
// API processes and a conductor; on SQLite with the all-in-one.
func TestChangeStreamAcrossProcesses(t *testing.T) {
	for _, backend := range []string{"sqlite", "mysql"} {
		t.Run(backend, func(t *testing.T) {
			var c *Cluster
			var url string
			if backend == "mysql" {
				if os.Getenv(storetest.MySQLEnv) == "" {
					t.Skip(storetest.MySQLEnv + " not set")
				}
				url = storetest.MySQLURL(t)
				c = Start(t, Options{Conductors: 1, APIs: 2, Database: url})
			} else {
				url = "sqlite:///" + t.TempDir() + "/ironic.sqlite"
				c = StartAllInOne(t, Options{Database: url})
			}
			ctx := context.Background()
			db, err := sqldb.Open(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			st := store.New(db)
			log := st.(store.ChangeLog)
			_, start, err := log.ChangeBounds(ctx)
			if err != nil {
				t.Fatal(err)
			}
			fctx, stop := context.WithCancel(ctx)
			var readers []*streamReader
			var wg sync.WaitGroup
			for _, p := range c.APIs {
				r := &streamReader{t: t, url: p.URL()}
				readers = append(readers, r)
				wg.Add(1)
				go func() { defer wg.Done(); r.follow(fctx) }()
			}
			defer func() { stop(); wg.Wait() }()
			await.Until(t, time.Minute, "every stream open", func() bool {
				for _, r := range readers {
					r.mu.Lock()
					open := r.conns > 0
					r.mu.Unlock()
					if !open {
						return false
					}
				}
				return true
			})

			// 1,000 changes and more: 200 nodes created by 8 clients,
			// each patched four times, and manage (the conductor's
			// provision and power writes) on 20 of them; the last API
			// process is killed halfway and restarted.
			nodes := createNodes(t, c, 200)
			patch := func(round int) {
				var pw sync.WaitGroup
				for w := range 8 {
					pw.Add(1)
					go func() {
						defer pw.Done()
						for i := w; i < len(nodes); i += 8 {
							body := fmt.Appendf(nil, `[{"op": "add", "path": "/description", "value": "round %d"}]`, round)
							if status, out, err := c.Do(ctx, http.MethodPatch, "/v1/nodes/"+nodes[i], "1.115", body); err != nil || status != http.StatusOK {
								t.Errorf("patch %s: %d %s %v", nodes[i], status, out, err)
								return
							}
						}
					}()
				}
				pw.Wait()
			}
			patch(1)
			patch(2)
			victim := c.APIs[len(c.APIs)-1]
			victim.Kill()
			if len(c.APIs) > 1 {
				patch(3)
			} else {
				// The all-in-one was the only writer: this test's own
				// store writes while it is down.
				for _, u := range nodes {
					n, err := st.GetNodeByUUID(ctx, u)
					if err != nil {
						t.Fatal(err)
					}
					n.Description = model.Ptr("round 3")
					if _, err := st.UpdateNode(ctx, n, "description"); err != nil {
						t.Fatal(err)
					}
				}
			}
			victim.Restart(t)
			c.WaitAPI(victim)
			patch(4)
			provision(t, c, nodes[:20], "manage")

			_, latest, err := log.ChangeBounds(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if latest-start < 1000 {
				t.Fatalf("only %d changes recorded", latest-start)
			}
			await.Until(t, 2*time.Minute, "every stream at the newest change", func() bool {
				_, latest, _ = log.ChangeBounds(ctx)
				for _, r := range readers {
					if r.lastSeq() < latest {
						return false
					}
				}
				return true
			})
			for _, r := range readers {
				r.mu.Lock()
				for i, seq := range r.seqs {
					if seq != start+int64(i)+1 {
						t.Fatalf("%s: event %d has seq %d, want %d (a change missed, repeated or out of order)", r.url, i, seq, start+int64(i)+1)
					}
				}
				t.Logf("%s: %d changes in %d streams", r.url, len(r.seqs), r.conns)
				r.mu.Unlock()
			}
			if readers[len(readers)-1].conns < 2 {
				t.Error("the restarted API's client never reconnected")
			}
		})
	}
}
