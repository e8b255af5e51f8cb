// Package cinder is a Cinder block storage v3 fixture for tests: an HTTP
// server on 127.0.0.1 that keeps volumes and answers the calls upstream's
// ironic/common/cinder.py makes (GET /volumes/{id}, the os-reserve,
// os-initialize_connection, os-attach, os-begin_detaching,
// os-terminate_connection and os-detach actions, POST metadata) with
// Cinder's status rules: a volume must be available to be reserved and
// in-use to be detached. As a Cinder whose volume manager works behind its
// API, the final status of an attach or a detach shows only after a
// settle delay (Settle); faults and outages are injected by method call,
// and every request is logged.
package cinder

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Request is one logged call.
type Request struct {
	Method, Path string
	// Action is the volume action's name (os-attach ...), "" for others.
	Action string
	// Args are the action's arguments or the body of other calls.
	Args   map[string]any
	Token  string
	Status int
}

// volume is one volume's state.
type volume struct {
	id, protocol string
	status       string
	multiattach  bool
	attachments  []map[string]any
	metadata     map[string]string
	connectors   []map[string]any
	// pending is the status the volume settles to; settleAt when.
	pending  string
	settleAt time.Time
}

type fault struct {
	action, volume string
	status         int
}

// Fixture is the fake Cinder.
type Fixture struct {
	srv *httptest.Server
	t   testing.TB

	mu      sync.Mutex
	volumes map[string]*volume
	valid   func(token string) bool
	faults  []fault
	settle  time.Duration
	now     func() time.Time
	log     []Request
	nextID  int
}

// New starts the fixture; it stops with the test.
func New(t testing.TB) *Fixture {
	t.Helper()
	f := &Fixture{t: t, volumes: map[string]*volume{}, now: time.Now}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

// URL is the server's root.
func (f *Fixture) URL() string { return f.srv.URL }

// Endpoint is the block storage endpoint a catalog gives: URL()+"/v3".
func (f *Fixture) Endpoint() string { return f.srv.URL + "/v3" }

// ISCSIVolume adds an available iSCSI volume.
func (f *Fixture) ISCSIVolume(id string) *Fixture { return f.add(id, "iscsi") }

// FCVolume adds an available Fibre Channel volume.
func (f *Fixture) FCVolume(id string) *Fixture { return f.add(id, "fibre_channel") }

func (f *Fixture) add(id, protocol string) *Fixture {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.volumes[id] = &volume{id: id, protocol: protocol, status: "available", metadata: map[string]string{}}
	return f
}

// ValidateTokens makes every call whose X-Auth-Token valid rejects answer
// 401; pass an identity fixture's TokenValid.
func (f *Fixture) ValidateTokens(valid func(token string) bool) *Fixture {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.valid = valid
	return f
}

// Settle makes attach and detach show their final status (in-use,
// available) only d after the call; until then the volume is attaching
// or detaching, as Cinder's volume manager finishes behind its API.
func (f *Fixture) Settle(d time.Duration) *Fixture {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.settle = d
	return f
}

// Clock makes the fixture read the time from now, so that a test moves
// it past the settle delay instead of waiting.
func (f *Fixture) Clock(now func() time.Time) *Fixture {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = now
	return f
}

// FailNext makes the next call of action (a volume action's name such as
// "os-attach", or "GET" for reading a volume, "metadata" for setting its
// metadata) answer status, once per call given.
func (f *Fixture) FailNext(action string, status int) *Fixture {
	return f.FailNextOn("", action, status)
}

// FailNextOn is FailNext for the calls on volume id only.
func (f *Fixture) FailNextOn(id, action string, status int) *Fixture {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.faults = append(f.faults, fault{action: action, volume: id, status: status})
	return f
}

// Close stops the server early, to play a Cinder that is down.
func (f *Fixture) Close() { f.srv.Close() }

// Requests returns the log so far.
func (f *Fixture) Requests() []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Request(nil), f.log...)
}

// Actions returns the names of the volume actions called on id, in order.
func (f *Fixture) Actions(id string) []string {
	var out []string
	for _, r := range f.Requests() {
		if r.Action != "" && strings.HasSuffix(r.Path, "/volumes/"+id+"/action") {
			out = append(out, r.Action)
		}
	}
	return out
}

// Status returns the volume's status now.
func (f *Fixture) Status(id string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	v := f.volumes[id]
	if v == nil {
		return ""
	}
	f.settleLocked(v)
	return v.status
}

// Attachments returns the server ids the volume is attached to.
func (f *Fixture) Attachments(id string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	if v := f.volumes[id]; v != nil {
		for _, a := range v.attachments {
			out = append(out, a["server_id"].(string))
		}
	}
	return out
}

// Metadata returns the volume's metadata.
func (f *Fixture) Metadata(id string) map[string]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]string{}
	if v := f.volumes[id]; v != nil {
		for k, val := range v.metadata {
			out[k] = val
		}
	}
	return out
}

// settleLocked applies a pending status whose time has come.
func (f *Fixture) settleLocked(v *volume) {
	if v.pending != "" && !f.now().Before(v.settleAt) {
		v.status, v.pending = v.pending, ""
	}
}

// moveLocked sets the transitional status now and the final one after
// the settle delay.
func (f *Fixture) moveLocked(v *volume, transitional, final string) {
	if f.settle <= 0 {
		v.status, v.pending = final, ""
		return
	}
	v.status, v.pending, v.settleAt = transitional, final, f.now().Add(f.settle)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// cinderError writes Cinder's fault body, {"badRequest": {...}} etc.
func cinderError(w http.ResponseWriter, status int, msg string) {
	kind := map[int]string{400: "badRequest", 401: "unauthorized", 404: "itemNotFound", 409: "conflictingRequest"}[status]
	if kind == "" {
		kind = "computeFault"
	}
	writeJSON(w, status, map[string]any{kind: map[string]any{"message": msg, "code": status}})
}

func (f *Fixture) serve(w http.ResponseWriter, r *http.Request) {
	req := Request{Method: r.Method, Path: r.URL.Path, Token: r.Header.Get("X-Auth-Token")}
	rec := &recorder{ResponseWriter: w, status: http.StatusOK}
	defer func() {
		req.Status = rec.status
		f.mu.Lock()
		f.log = append(f.log, req)
		f.mu.Unlock()
		f.t.Logf("cinder fixture: %s %s %s → %d", req.Method, req.Path, req.Action, req.Status)
	}()
	if r.Body != nil {
		data, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if len(data) > 0 {
			if err := json.Unmarshal(data, &req.Args); err != nil {
				cinderError(rec, http.StatusBadRequest, "Malformed request body")
				return
			}
		}
	}
	if strings.HasSuffix(r.URL.Path, "/action") && len(req.Args) == 1 {
		for k, v := range req.Args {
			req.Action = k
			args, _ := v.(map[string]any)
			req.Args = args
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.valid != nil && !f.valid(req.Token) {
		cinderError(rec, http.StatusUnauthorized, "The request you have made requires authentication.")
		return
	}
	what := req.Action
	switch {
	case r.Method == http.MethodGet:
		what = "GET"
	case strings.HasSuffix(r.URL.Path, "/metadata"):
		what = "metadata"
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/v3/volumes/")
	if !ok {
		cinderError(rec, http.StatusNotFound, "The resource could not be found.")
		return
	}
	id, sub, _ := strings.Cut(rest, "/")
	for i, flt := range f.faults {
		if flt.action == what && (flt.volume == "" || flt.volume == id) {
			f.faults = append(f.faults[:i], f.faults[i+1:]...)
			cinderError(rec, flt.status, fmt.Sprintf("injected fault for %s", what))
			return
		}
	}
	v := f.volumes[id]
	if v == nil {
		cinderError(rec, http.StatusNotFound, fmt.Sprintf("Volume %s could not be found.", id))
		return
	}
	f.settleLocked(v)
	switch {
	case r.Method == http.MethodGet && sub == "":
		writeJSON(rec, http.StatusOK, map[string]any{"volume": f.doc(v)})
	case r.Method == http.MethodPost && sub == "metadata":
		md, _ := req.Args["metadata"].(map[string]any)
		for k, val := range md {
			s, ok := val.(string)
			if !ok {
				cinderError(rec, http.StatusBadRequest, "Invalid metadata: values must be strings")
				return
			}
			v.metadata[k] = s
		}
		writeJSON(rec, http.StatusOK, map[string]any{"metadata": v.metadata})
	case r.Method == http.MethodPost && sub == "action":
		f.action(rec, v, req.Action, req.Args)
	default:
		cinderError(rec, http.StatusNotFound, "The resource could not be found.")
	}
}

// doc is the volume as GET /volumes/{id} shows it.
func (f *Fixture) doc(v *volume) map[string]any {
	atts := make([]map[string]any, len(v.attachments))
	copy(atts, v.attachments)
	return map[string]any{
		"id": v.id, "status": v.status, "multiattach": v.multiattach,
		"attachments": atts, "metadata": v.metadata, "volume_type": v.protocol,
	}
}

// action applies one volume action with Cinder's status checks.
func (f *Fixture) action(w http.ResponseWriter, v *volume, name string, args map[string]any) {
	switch name {
	case "os-reserve":
		if v.status != "available" && !(v.status == "in-use" && v.multiattach) {
			cinderError(w, http.StatusBadRequest, fmt.Sprintf("Invalid volume: Volume status must be available to reserve, but the status is %s.", v.status))
			return
		}
		v.status = "attaching"
		w.WriteHeader(http.StatusAccepted)
	case "os-initialize_connection":
		conn, ok := args["connector"].(map[string]any)
		if !ok {
			cinderError(w, http.StatusBadRequest, "Invalid input received: Must specify 'connector'.")
			return
		}
		info, err := connectionInfo(v, conn)
		if err != "" {
			cinderError(w, http.StatusBadRequest, err)
			return
		}
		v.connectors = append(v.connectors, conn)
		writeJSON(w, http.StatusOK, map[string]any{"connection_info": info})
	case "os-attach":
		instance, _ := args["instance_uuid"].(string)
		if v.status != "attaching" {
			cinderError(w, http.StatusBadRequest, fmt.Sprintf("Invalid volume: Volume status must be attaching to attach, but the status is %s.", v.status))
			return
		}
		v.attachments = append(v.attachments, map[string]any{
			"server_id": instance, "attachment_id": fmt.Sprintf("att-%s-%d", v.id, f.nextID),
			"volume_id": v.id, "device": args["mountpoint"],
		})
		f.nextID++
		f.moveLocked(v, "attaching", "in-use")
		w.WriteHeader(http.StatusAccepted)
	case "os-begin_detaching":
		if v.status != "in-use" {
			cinderError(w, http.StatusBadRequest, fmt.Sprintf("Invalid volume: Unable to detach volume. Volume status must be 'in-use' and attach_status must be 'attached' to detach, but the status is %s.", v.status))
			return
		}
		v.status = "detaching"
		w.WriteHeader(http.StatusAccepted)
	case "os-terminate_connection":
		if _, ok := args["connector"].(map[string]any); !ok {
			cinderError(w, http.StatusBadRequest, "Invalid input received: Must specify 'connector'.")
			return
		}
		v.connectors = nil
		w.WriteHeader(http.StatusAccepted)
	case "os-detach":
		att, _ := args["attachment_id"].(string)
		kept := v.attachments[:0]
		found := false
		for _, a := range v.attachments {
			if att == "" || a["attachment_id"] == att {
				found = true
				continue
			}
			kept = append(kept, a)
		}
		if !found {
			cinderError(w, http.StatusNotFound, fmt.Sprintf("Volume attachment %s could not be found.", att))
			return
		}
		v.attachments = kept
		if len(kept) == 0 {
			f.moveLocked(v, "detaching", "available")
		}
		w.WriteHeader(http.StatusAccepted)
	default:
		cinderError(w, http.StatusBadRequest, fmt.Sprintf("There is no such action: %s", name))
	}
}

// connectionInfo is what Cinder's LVM (iSCSI) or an FC driver answers for
// the connector: the target and, for iSCSI, its CHAP credentials.
func connectionInfo(v *volume, conn map[string]any) (map[string]any, string) {
	switch v.protocol {
	case "iscsi":
		if _, ok := conn["initiator"]; !ok {
			return nil, "Invalid input received: Connector doesn't have required information: initiator"
		}
		return map[string]any{"driver_volume_type": "iscsi", "data": map[string]any{
			"target_discovered": false, "target_iqn": "iqn.2010-10.org.openstack:volume-" + v.id,
			"target_portal": "127.0.0.1:3260", "target_lun": 1, "volume_id": v.id,
			"auth_method": "CHAP", "auth_username": "chap-" + prefix(v.id, 8), "auth_password": "chap-secret-" + prefix(v.id, 4),
			"encrypted": false,
		}}, ""
	default:
		if _, ok := conn["wwpns"]; !ok {
			return nil, "Invalid input received: Connector doesn't have required information: wwpns"
		}
		return map[string]any{"driver_volume_type": "fibre_channel", "data": map[string]any{
			"target_discovered": false, "target_wwn": []any{"500a098280feeba5"}, "target_lun": 1,
			"volume_id": v.id, "encrypted": false,
		}}, ""
	}
}

type recorder struct {
	http.ResponseWriter
	status int
}

func (r *recorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

func prefix(s string, n int) string {
	if len(s) < n {
		return s
	}
	return s[:n]
}
