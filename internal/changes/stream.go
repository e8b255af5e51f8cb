package changes

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/store"
)

// Path is where the stream is served: under /openkeel/, the prefix of
// every path of ours, outside upstream's /v1.
const Path = "/openkeel/v1/changes"

// Event is the data of one SSE event: the change and its object as the
// caller's GET of it shows it at the latest microversion (null for a
// deletion).
type Event struct {
	Seq      int64           `json:"seq"`
	Resource string          `json:"resource"`
	Action   string          `json:"action"`
	UUID     string          `json:"uuid"`
	NodeUUID *string         `json:"node_uuid"`
	Time     string          `json:"time"`
	Changed  []string        `json:"changed"`
	Object   json.RawMessage `json:"object"`
}

// Handler serves the stream. It expects the caller to be authenticated
// already (auth.Handler in front of it), as the API's routes are.
type Handler struct {
	Hub      *Hub
	Renderer Renderer
}

// Mount serves the stream at Path and everything else with next.
func Mount(stream, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == Path {
			stream.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// filter is the query's selection; an empty list selects everything.
type filter struct {
	resources, nodes, provisionStates, groups, shards []string
}

var resources = []string{
	string(store.ChangeNode), string(store.ChangePort), string(store.ChangePortgroup),
	string(store.ChangeAllocation), string(store.ChangeConductor),
}

// parseFilter reads resource=, node=, provision_state=, conductor_group=
// and shard=, each a comma-separated list.
func parseFilter(r *http.Request) (filter, error) {
	q := r.URL.Query()
	list := func(name string) []string {
		var out []string
		for _, v := range q[name] {
			for _, p := range strings.Split(v, ",") {
				if p = strings.TrimSpace(p); p != "" {
					out = append(out, p)
				}
			}
		}
		return out
	}
	f := filter{
		resources: list("resource"), nodes: list("node"), provisionStates: list("provision_state"),
		groups: list("conductor_group"), shards: list("shard"),
	}
	for _, res := range f.resources {
		if !slices.Contains(resources, res) {
			return f, errs.ClientSideError(fmt.Sprintf("Invalid resource %q: expected one of %s.", res, strings.Join(resources, ", ")), http.StatusBadRequest, "")
		}
	}
	return f, nil
}

// match says whether the change is selected. Node, provision state,
// conductor group and shard are the node's (the change's own for a
// conductor's group) as the change recorded them.
func (f filter) match(c store.Change) bool {
	in := func(list []string, v string) bool { return len(list) == 0 || slices.Contains(list, v) }
	return in(f.resources, string(c.Resource)) && in(f.nodes, c.NodeUUID) &&
		in(f.provisionStates, c.ProvisionState) && in(f.groups, c.ConductorGroup) && in(f.shards, c.Shard)
}

// start is where a stream begins: after Last-Event-ID (or ?since=) when
// the caller resumes, after the newest change otherwise. A position
// older than what retention kept is 410 Gone: the caller must reread
// the resources, since changes in between are lost to it.
func (h *Handler) start(r *http.Request) (int64, error) {
	raw := r.Header.Get("Last-Event-ID")
	if raw == "" {
		raw = r.URL.Query().Get("since")
	}
	oldest, latest, err := h.Hub.log.ChangeBounds(r.Context())
	if err != nil {
		return 0, err
	}
	if raw == "" {
		return latest, nil
	}
	since, perr := strconv.ParseInt(raw, 10, 64)
	if perr != nil || since < 0 {
		return 0, errs.ClientSideError(fmt.Sprintf("Invalid event id %q: expected the id of an event of this stream.", raw), http.StatusBadRequest, "")
	}
	if since > latest {
		return 0, errs.ClientSideError(fmt.Sprintf("Event id %d is newer than the newest change (%d): it is not of this database's stream.", since, latest), http.StatusBadRequest, "")
	}
	if since < latest && (oldest == 0 || oldest > since+1) {
		return 0, errs.ClientSideError(fmt.Sprintf("Changes after event %d are no longer kept (the oldest kept is %d); read the resources again and resume from a new stream.", since, oldest), http.StatusGone, "")
	}
	return since, nil
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		errs.WriteFault(w, r, errs.ClientSideError("The change stream is read with GET.", http.StatusMethodNotAllowed, ""), errs.FaultOptions{})
		return
	}
	f, err := parseFilter(r)
	if err != nil {
		errs.WriteFault(w, r, err, errs.FaultOptions{})
		return
	}
	after, err := h.start(r)
	if err != nil {
		writeFault(w, r, err)
		return
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		writeFault(w, r, errors.New("the response cannot be streamed"))
		return
	}
	if err := h.Hub.subscribe(r.Context()); err != nil {
		writeFault(w, r, err)
		return
	}
	defer h.Hub.unsubscribe()
	// The server's write timeout would cut a stream: this one writes
	// until the client leaves.
	_ = http.NewResponseController(w).SetWriteDeadline(time.Time{})
	hdr := w.Header()
	hdr.Set("Content-Type", "text/event-stream")
	hdr.Set("Cache-Control", "no-cache")
	hdr.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprintf(w, ": openkeel change stream after %d\n\n", after)
	flusher.Flush()
	heartbeat := h.Hub.settings.Heartbeat
	if heartbeat <= 0 {
		heartbeat = 15 * time.Second
	}
	beat := time.NewTicker(heartbeat)
	defer beat.Stop()
	for {
		cs, err := h.Hub.next(r.Context(), after, beat.C)
		if r.Context().Err() != nil {
			return
		}
		if err != nil {
			h.streamError(w, flusher, err)
			return
		}
		if len(cs) == 0 {
			fmt.Fprint(w, ": heartbeat\n\n")
			flusher.Flush()
			continue
		}
		for _, c := range cs {
			if err := h.send(w, r, f, c); err != nil {
				if r.Context().Err() == nil {
					h.streamError(w, flusher, err)
				}
				return
			}
			after = c.Seq
		}
		flusher.Flush()
		beat.Reset(heartbeat)
	}
}

// send writes the change when it is selected and visible to the caller.
func (h *Handler) send(w http.ResponseWriter, r *http.Request, f filter, c store.Change) error {
	if !f.match(c) {
		return nil
	}
	obj, visible, err := h.Renderer.Render(r, c)
	if err != nil {
		return err
	}
	if !visible {
		return nil
	}
	ev := Event{Seq: c.Seq, Resource: string(c.Resource), Action: string(c.Action), UUID: c.UUID,
		Time: c.Time.UTC().Format(time.RFC3339Nano), Changed: c.Changed, Object: obj}
	if c.NodeUUID != "" {
		ev.NodeUUID = &c.NodeUUID
	}
	if ev.Object == nil {
		ev.Object = json.RawMessage("null")
	}
	data, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("change %d: %w", c.Seq, err)
	}
	_, err = fmt.Fprintf(w, "id: %d\nevent: %s.%s\ndata: %s\n\n", c.Seq, c.Resource, c.Action, data)
	return err
}

// streamError ends a stream that cannot go on with an error event; the
// client resumes from its last event id. The cause is logged, not sent:
// it may name the database.
func (h *Handler) streamError(w http.ResponseWriter, flusher http.Flusher, err error) {
	h.Hub.logger.Warn("change stream ended by an error", "error", err)
	fmt.Fprint(w, "event: error\ndata: {\"error\": \"the change stream failed; resume with Last-Event-ID\"}\n\n")
	flusher.Flush()
}

// writeFault answers a refusal before the stream starts: Ironic's error
// envelope, and 503 with Retry-After for a failure of ours.
func writeFault(w http.ResponseWriter, r *http.Request, err error) {
	if _, ok := errs.As(err); !ok {
		w.Header().Set("Retry-After", "1")
		err = errs.ClientSideError("The change stream is unavailable: "+err.Error(), http.StatusServiceUnavailable, "Server")
	}
	errs.WriteFault(w, r, err, errs.FaultOptions{})
}
