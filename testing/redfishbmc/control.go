package redfishbmc

import (
	"net/http"
	"strings"
	"time"
)

// controlPrefix is where an emulator run as a process (Config.Control)
// takes the fault injections and state changes a test makes in-process
// through the BMC's methods. It is outside /redfish, never authenticated,
// counted or faulted, so that a test can always reach it.
const controlPrefix = "/emulator/"

// WithControl serves the control API under /emulator/:
//
//	POST   /emulator/faults              {"method", "path", "count", "status", "message_id", "drop", "delay_ms"}
//	DELETE /emulator/faults
//	POST   /emulator/sessions/expire
//	POST   /emulator/tasks/fail-next     {"message"}
//	PUT    /emulator/systems/<id>/power  {"state": "On" | "Off"}
//	PUT    /emulator/systems/<id>/health {"health": "OK" | "Warning" | "Critical" | ""}
//	PUT    /emulator/sensors             Sensors (sensors.go)
//	GET    /emulator/systems/<id>
//	GET    /emulator/stats
func (b *BMC) WithControl() *BMC {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.control = true
	return b
}

// faultRequest is the body of POST /emulator/faults: a status fault
// (FailNextMatching), a dropped connection (drop) or a delay (delay_ms),
// for the next count requests matching method and path (count 1 when 0).
type faultRequest struct {
	Method    string `json:"method"`
	Path      string `json:"path"`
	Count     int    `json:"count"`
	Status    int    `json:"status"`
	MessageID string `json:"message_id"`
	Drop      bool   `json:"drop"`
	DelayMS   int    `json:"delay_ms"`
}

func (b *BMC) controlRoute(r *http.Request, path string, body []byte) response {
	rest := strings.TrimPrefix(path, strings.TrimSuffix(controlPrefix, "/"))
	if resp, ok := b.sensorControlRoute(r, rest, body); ok {
		return resp
	}
	switch {
	case rest == "/faults" && r.Method == http.MethodPost:
		var f faultRequest
		if resp, ok := decode(body, &f); !ok {
			return resp
		}
		if f.Count <= 0 {
			f.Count = 1
		}
		kinds := 0
		for _, set := range []bool{f.Status != 0, f.Drop, f.DelayMS > 0} {
			if set {
				kinds++
			}
		}
		if kinds != 1 {
			return badRequest("Base.1.8.PropertyValueConflict", "exactly one of status, drop and delay_ms is needed")
		}
		b.addFault(fault{method: f.Method, path: f.Path, remaining: f.Count, status: f.Status, messageID: f.MessageID,
			drop: f.Drop, delay: time.Duration(f.DelayMS) * time.Millisecond})
		return response{status: http.StatusNoContent}
	case rest == "/faults" && r.Method == http.MethodDelete:
		b.ClearFaults()
		return response{status: http.StatusNoContent}
	case rest == "/sessions/expire" && r.Method == http.MethodPost:
		b.ExpireSessions()
		return response{status: http.StatusNoContent}
	case rest == "/tasks/fail-next" && r.Method == http.MethodPost:
		var req struct {
			Message string `json:"message"`
		}
		if resp, ok := decode(body, &req); !ok {
			return resp
		}
		b.FailNextTask(req.Message)
		return response{status: http.StatusNoContent}
	case rest == "/stats" && r.Method == http.MethodGet:
		return response{status: http.StatusOK, body: map[string]any{
			"requests": b.Requests(), "sessions_created": b.SessionsCreated(), "active_sessions": b.ActiveSessions(),
		}}
	case strings.HasPrefix(rest, "/systems/"):
		id, sub, _ := strings.Cut(strings.TrimPrefix(rest, "/systems/"), "/")
		b.mu.Lock()
		_, known := b.systems[id]
		b.mu.Unlock()
		if !known {
			return notFound(path)
		}
		switch {
		case sub == "" && r.Method == http.MethodGet:
			return response{status: http.StatusOK, body: b.Snapshot(id)}
		case sub == "power" && r.Method == http.MethodPut:
			var req struct {
				State string `json:"state"`
			}
			if resp, ok := decode(body, &req); !ok {
				return resp
			}
			if req.State != On && req.State != Off {
				return badRequest("Base.1.8.PropertyValueNotInList", "state %q is neither On nor Off", req.State)
			}
			b.SetPower(id, req.State)
			return response{status: http.StatusNoContent}
		}
	}
	return notFound(path)
}
