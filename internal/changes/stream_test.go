package changes

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/store"
	"github.com/openkeel/ironic/internal/store/sqldb"
	"github.com/openkeel/ironic/internal/store/storetest"
)

// fakeAPI answers a render's GET as v1 would: the object's UUID, and 404
// for the objects the caller (header X-Project) may not see.
type fakeAPI struct {
	mu     sync.Mutex
	hidden map[string]string // object UUID -> project it is hidden from
	gets   int
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	uuid := r.URL.Path[strings.LastIndexByte(r.URL.Path, '/')+1:]
	f.mu.Lock()
	f.gets++
	hidden := f.hidden[uuid]
	f.mu.Unlock()
	if r.Header.Get("X-OpenStack-Ironic-API-Version") != "latest" {
		http.Error(w, "want latest", http.StatusNotAcceptable)
		return
	}
	if hidden != "" && hidden == r.Header.Get("X-Project") {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	fmt.Fprintf(w, `{"uuid": %q, "path": %q}`, uuid, r.URL.Path)
}

type fixture struct {
	st  store.Store
	api *fakeAPI
	srv *httptest.Server
}

func newFixture(t testing.TB, db *sqldb.DB) *fixture {
	t.Helper()
	st := store.New(db)
	api := &fakeAPI{hidden: map[string]string{}}
	h := &Handler{
		Hub:      NewHub(st.(store.ChangeLog), Settings{PollInterval: 50 * time.Millisecond, Heartbeat: time.Second}, nil),
		Renderer: &APIRenderer{API: api, Deleted: func(r *http.Request, c store.Change) bool { return r.Header.Get("X-Project") == "" }},
	}
	srv := httptest.NewServer(Mount(h, http.NotFoundHandler()))
	t.Cleanup(srv.Close)
	return &fixture{st: st, api: api, srv: srv}
}

// subscription is an open stream whose events arrive on events.
type subscription struct {
	events chan Event
	resp   *http.Response
	cancel context.CancelFunc
}

func (f *fixture) subscribe(t testing.TB, query string, header http.Header) *subscription {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.srv.URL+Path+query, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	s := &subscription{events: make(chan Event, 4096), resp: resp, cancel: cancel}
	t.Cleanup(s.close)
	if resp.StatusCode != http.StatusOK {
		return s
	}
	go func() {
		defer close(s.events)
		_ = ReadEvents(resp.Body, func(e SSE) error {
			var ev Event
			if err := json.Unmarshal(e.Data, &ev); err != nil {
				return err
			}
			if name := ev.Resource + "." + ev.Action; e.Event != name || e.ID != fmt.Sprint(ev.Seq) {
				return fmt.Errorf("event %s id %s for %s %d", e.Event, e.ID, name, ev.Seq)
			}
			s.events <- ev
			return nil
		})
	}()
	return s
}

func (s *subscription) close() {
	s.cancel()
	s.resp.Body.Close()
}

// take reads n events, failing after a minute without one.
func (s *subscription) take(t *testing.T, n int) []Event {
	t.Helper()
	var out []Event
	for len(out) < n {
		select {
		case ev, ok := <-s.events:
			if !ok {
				t.Fatalf("stream ended after %d of %d events", len(out), n)
			}
			out = append(out, ev)
		case <-time.After(time.Minute):
			t.Fatalf("%d of %d events after a minute without one", len(out), n)
		}
	}
	return out
}

// 1,000 changes by concurrent writers arrive once each in seq order, and
// a subscriber that left resumes with Last-Event-ID missing nothing and
// repeating nothing.
func TestStreamDeliversEveryChangeOnceAndResumes(t *testing.T) {
	const writers, perWriter = 8, 125
	storetest.ForEachBackend(t, func(t *testing.T, db *sqldb.DB) {
		f := newFixture(t, db)
		ctx := context.Background()
		nodes := make([]*model.Node, writers)
		for i := range nodes {
			n, err := f.st.CreateNode(ctx, &model.Node{Driver: "fake-hardware"})
			if err != nil {
				t.Fatal(err)
			}
			nodes[i] = n
		}
		sub := f.subscribe(t, "?resource=node", nil)
		write := func(round int) {
			var wg sync.WaitGroup
			for w := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					n := *nodes[w]
					for i := range perWriter / 2 {
						n.Description = model.Ptr(fmt.Sprintf("%d-%d", round, i))
						if _, err := f.st.UpdateNode(ctx, &n, "description"); err != nil {
							t.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
		}
		write(1)
		first := sub.take(t, writers*(perWriter/2))
		sub.close()
		write(2) // while nobody listens
		last := first[len(first)-1].Seq
		resumed := f.subscribe(t, "?resource=node", http.Header{"Last-Event-Id": {fmt.Sprint(last)}})
		write(3)
		second := resumed.take(t, 2*writers*(perWriter/2))
		all := append(first, second...)
		seen := map[int64]bool{}
		for i, ev := range all {
			if seen[ev.Seq] {
				t.Fatalf("seq %d delivered twice", ev.Seq)
			}
			seen[ev.Seq] = true
			if i > 0 && ev.Seq <= all[i-1].Seq {
				t.Fatalf("seq %d after %d", ev.Seq, all[i-1].Seq)
			}
			if ev.Action != "updated" || len(ev.Changed) != 1 || ev.Changed[0] != "description" || ev.NodeUUID == nil || *ev.NodeUUID != ev.UUID {
				t.Fatalf("event %+v", ev)
			}
			var obj struct{ UUID, Path string }
			if err := json.Unmarshal(ev.Object, &obj); err != nil || obj.UUID != ev.UUID || obj.Path != "/v1/nodes/"+ev.UUID {
				t.Fatalf("object %s of %+v: %v", ev.Object, ev, err)
			}
		}
		if len(all) != 3*writers*(perWriter/2) {
			t.Fatalf("%d events", len(all))
		}
		// One render per change: the renders are shared, not per event
		// read.
		if f.api.gets > len(all)+1 {
			t.Errorf("%d GETs for %d events", f.api.gets, len(all))
		}
	})
}

// Filters select on the node's attributes as the change recorded them;
// an object the caller may not see is not sent, nor a deletion policy
// refuses.
func TestStreamFiltersAndPolicy(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *sqldb.DB) {
		f := newFixture(t, db)
		ctx := context.Background()
		all := f.subscribe(t, "", nil)
		ports := f.subscribe(t, "?resource=port&conductor_group=g1", nil)
		scoped := f.subscribe(t, "", http.Header{"X-Project": {"p2"}})
		// Node a is hidden from p2 before it exists: the stream may render
		// its creation as soon as it commits.
		aUUID := uuid.NewString()
		f.api.mu.Lock()
		f.api.hidden[aUUID] = "p2"
		f.api.mu.Unlock()
		a, err := f.st.CreateNode(ctx, &model.Node{UUID: aUUID, Driver: "fake-hardware", ConductorGroup: "g1"})
		if err != nil {
			t.Fatal(err)
		}
		b, err := f.st.CreateNode(ctx, &model.Node{Driver: "fake-hardware"})
		if err != nil {
			t.Fatal(err)
		}
		pa, err := f.st.CreatePort(ctx, &model.Port{NodeID: &a.ID, Address: model.Ptr("52:54:00:00:00:0a")})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.st.CreatePort(ctx, &model.Port{NodeID: &b.ID, Address: model.Ptr("52:54:00:00:00:0b")}); err != nil {
			t.Fatal(err)
		}
		if err := f.st.DeleteNode(ctx, b.ID); err != nil {
			t.Fatal(err)
		}
		got := all.take(t, 5)
		if got[0].UUID != a.UUID || got[2].Resource != "port" || got[4].Action != "deleted" || string(got[4].Object) != "null" {
			t.Errorf("all: %+v", got)
		}
		if p := ports.take(t, 1); p[0].UUID != pa.UUID {
			t.Errorf("ports of g1: %+v", p)
		}
		// p2 may not see node a (its GET says 404), sees b and its port
		// (a's port's GET is the fake's 200), and no deletion.
		sc := scoped.take(t, 3)
		for _, ev := range sc {
			if ev.UUID == a.UUID || ev.Action == "deleted" {
				t.Errorf("scoped caller got %+v", ev)
			}
		}
	})
}

// A position older than retention kept is 410 Gone; one newer than the
// newest change 400; a bad filter 400; all with Ironic's error body.
func TestStreamRefusals(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *sqldb.DB) {
		f := newFixture(t, db)
		ctx := context.Background()
		for range 3 {
			if _, err := f.st.CreateNode(ctx, &model.Node{Driver: "fake-hardware"}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := f.st.(store.ChangeLog).PurgeChanges(ctx, time.Now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			query  string
			header http.Header
			status int
		}{
			{"?since=1", nil, http.StatusGone},
			{"", http.Header{"Last-Event-Id": {"0"}}, http.StatusGone},
			{"?since=99", nil, http.StatusBadRequest},
			{"?since=x", nil, http.StatusBadRequest},
			{"?resource=chassis", nil, http.StatusBadRequest},
			{"?since=3", nil, http.StatusOK},
		} {
			s := f.subscribe(t, c.query, c.header)
			if s.resp.StatusCode != c.status {
				t.Errorf("%s %v: %d, want %d", c.query, c.header, s.resp.StatusCode, c.status)
			}
			if c.status != http.StatusOK {
				var body struct {
					ErrorMessage string `json:"error_message"`
				}
				if err := json.NewDecoder(s.resp.Body).Decode(&body); err != nil || !strings.Contains(body.ErrorMessage, "faultstring") {
					t.Errorf("%s: body %+v, %v", c.query, body, err)
				}
			}
			s.close()
		}
	})
}
