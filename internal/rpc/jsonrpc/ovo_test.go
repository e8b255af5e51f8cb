package jsonrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/rpc/ovo"
)

// storedRows is the API's store as a pinned client reads it.
type storedRows struct {
	StoredObjects
	node *model.Node
	port *model.Port
}

func (s *storedRows) GetNodeByUUID(_ context.Context, uuid string) (*model.Node, error) {
	n := *s.node
	return &n, nil
}

func (s *storedRows) GetPortByID(_ context.Context, id int64) (*model.Port, error) {
	p := *s.port
	return &p, nil
}

// recordingServer serves the fake and keeps the last request body.
type recordingServer struct {
	*Server
	last chan []byte
}

func (r *recordingServer) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	select {
	case <-r.last:
	default:
	}
	r.last <- body
	req.Body = io.NopCloser(bytes.NewReader(body))
	r.Server.ServeHTTP(w, req)
}

func newPinned(t *testing.T, fake *fakeConductor, rows *storedRows) (*Client, string, *recordingServer) {
	t.Helper()
	codec, err := ovo.NewCodec("21.4")
	if err != nil {
		t.Fatal(err)
	}
	rec := &recordingServer{Server: NewServer(fake, ServerOptions{Codec: codec}), last: make(chan []byte, 1)}
	ts := startServer(t, rec)
	c, err := NewClient(ClientOptions{AuthStrategy: "noauth", Timeout: 10 * time.Second, PinReleaseVersion: "21.4", Store: rows})
	if err != nil {
		t.Fatal(err)
	}
	return c, topicFor(ts), rec
}

// Pinned to 21.4, our client sends update_node as upstream's API does (the
// node object at 1.37 naming the changed fields), and our server turns it
// back into edits of exactly those fields, which the conductor applies
// under the node's lock.
func TestPinnedUpdateNodeTravelsAsUpstreams(t *testing.T) {
	fake := newFake()
	stored := sampleNode()
	stored.Health = model.Ptr("OK")
	stored.Extra = map[string]any{"rack": "r0", "row": "a"}
	c, topic, rec := newPinned(t, fake, &storedRows{node: stored})
	fake.results["UpdateNode"] = stored

	upd := &model.NodeUpdate{Edits: []model.NodeEdit{{Path: []string{"extra", "rack"}, Value: []byte(`"r1"`), Check: true, Was: []byte(`"r0"`)}}}
	got, err := c.UpdateNode(context.Background(), topic, stored.UUID, upd, true)
	if err != nil {
		t.Fatal(err)
	}
	var frame struct {
		Params struct {
			NodeObj         ovo.Primitive `json:"node_obj"`
			ResetInterfaces bool          `json:"reset_interfaces"`
			Version         string        `json:"rpc.version"`
		} `json:"params"`
	}
	if err := json.Unmarshal(<-rec.last, &frame); err != nil {
		t.Fatal(err)
	}
	p := frame.Params
	if p.NodeObj.Version != "1.37" || strings.Join(p.NodeObj.Changes, ",") != "extra" || !p.ResetInterfaces || p.Version != "1.1" {
		t.Errorf("sent node_obj %s changes %v reset %v version %s", p.NodeObj.Version, p.NodeObj.Changes, p.ResetInterfaces, p.Version)
	}
	if string(p.NodeObj.Data["extra"]) != `{"rack":"r1","row":"a"}` {
		t.Errorf("sent extra %s", p.NodeObj.Data["extra"])
	}
	if _, ok := p.NodeObj.Data["health"]; ok {
		t.Error("Node 1.37 carries health")
	}
	calls := fake.takeCalls()
	if len(calls) != 1 {
		t.Fatalf("calls %+v", calls)
	}
	if calls[0].args[0] != stored.UUID || jsonOf(t, calls[0].args[1]) != `{"edits":[{"path":["extra"],"value":{"rack":"r1","row":"a"}}]}` || calls[0].args[2] != true {
		t.Errorf("conductor got %v %s %v", calls[0].args[0], jsonOf(t, calls[0].args[1]), calls[0].args[2])
	}
	// The answer came at 1.37 too: what 1.38 and later added is lost.
	if got.UUID != stored.UUID || got.Health != nil {
		t.Errorf("answer %+v", got)
	}

	// A condition that no longer holds fails before anything is sent.
	stale := &model.NodeUpdate{Edits: []model.NodeEdit{{Path: []string{"extra", "rack"}, Value: []byte(`"r2"`), Check: true, Was: []byte(`"r9"`)}}}
	_, err = c.UpdateNode(context.Background(), topic, stored.UUID, stale, false)
	if e, ok := errs.As(err); !ok || e.Class != errs.ClassNodeChanged {
		t.Errorf("stale update: %v", err)
	}
	if n := len(fake.takeCalls()); n != 0 {
		t.Errorf("%d calls for a stale update", n)
	}
}

// An update_port names the fields that differ from the stored port, as
// upstream's save() writes only those.
func TestPinnedUpdatePortNamesItsChanges(t *testing.T) {
	fake := newFake()
	stored := samplePort()
	c, topic, rec := newPinned(t, fake, &storedRows{port: stored})
	changed := *stored
	changed.Extra = map[string]any{"k": "v"}
	changed.PXEEnabled = model.Ptr(false)
	if _, err := c.UpdatePort(context.Background(), topic, &changed); err != nil {
		t.Fatal(err)
	}
	var frame struct {
		Params struct {
			PortObj ovo.Primitive `json:"port_obj"`
		} `json:"params"`
	}
	if err := json.Unmarshal(<-rec.last, &frame); err != nil {
		t.Fatal(err)
	}
	if o := frame.Params.PortObj; o.Version != "1.11" || strings.Join(o.Changes, ",") != "extra,pxe_enabled" {
		t.Errorf("sent port %s changes %v", o.Version, o.Changes)
	}
}

// Upstream's update_node frame, with the node object Debian's Ironic 21.4
// writes, reaches the conductor as edits of its changed fields; traits,
// which its TraitList lists as changed, are not updated through it.
func TestServerTakesUpstreamUpdateNode(t *testing.T) {
	obj, err := os.ReadFile("../ovo/testdata/node-21.4.json")
	if err != nil {
		t.Fatal(err)
	}
	fake := newFake()
	fake.results["UpdateNode"] = sampleNode()
	ts := startServer(t, NewServer(fake, ServerOptions{}))
	body := `{"jsonrpc": "2.0", "id": "r1", "method": "update_node", "params": {"context": {}, "rpc.version": "1.1", "node_obj": ` + string(obj) + `}}`
	resp, data := post(t, ts.URL, body, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, data)
	}
	var r response
	if err := json.Unmarshal(data, &r); err != nil || r.Error != nil {
		t.Fatalf("answer %s (%v)", data, err)
	}
	var answer ovo.Primitive
	if err := json.Unmarshal(r.Result, &answer); err != nil || answer.Name != "Node" || answer.Version != "1.44" {
		t.Errorf("result %s", r.Result)
	}
	calls := fake.takeCalls()
	if len(calls) != 1 || calls[0].args[0] != "1be26c0b-03f2-4d2e-ae87-c02d7f33c123" ||
		jsonOf(t, calls[0].args[1]) != `{"edits":[{"path":["extra"],"value":{"rack":"r2"}}]}` || calls[0].args[2] != false {
		t.Errorf("conductor got %+v", calls)
	}

	// Neither form: upstream's missing argument.
	resp, data = post(t, ts.URL, `{"jsonrpc": "2.0", "id": "r2", "method": "update_node", "params": {"context": {}}}`, nil)
	if resp.StatusCode != 200 || !strings.Contains(string(data), "missing required argument: 'node_obj'") {
		t.Errorf("no node: %d %s", resp.StatusCode, data)
	}
}

// A call newer than the pinned release's RPC version is refused before it
// is sent, as upstream's client does.
func TestPinnedClientRefusesNewerCalls(t *testing.T) {
	fake := newFake()
	c, topic, _ := newPinned(t, fake, &storedRows{})
	err := c.DoNodeService(context.Background(), topic, "n1", nil, false)
	if err == nil || !strings.Contains(err.Error(), "requested version 1.57, maximum allowed version is 1.55") {
		t.Errorf("do_node_service under 21.4: %v", err)
	}
	if err := c.ChangeNodeBootMode(context.Background(), topic, "n1", "uefi"); err != nil {
		t.Errorf("change_node_boot_mode (1.55) under 21.4: %v", err)
	}
	if n := len(fake.takeCalls()); n != 1 {
		t.Errorf("fake saw %d calls, want 1", n)
	}
	if _, err := NewClient(ClientOptions{AuthStrategy: "noauth", PinReleaseVersion: "zed"}); err == nil {
		t.Error("a pin older than 21.4 was accepted")
	}
}
