package redfishbmc

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"
)

const (
	root        = "/redfish/v1"
	sessionsURI = root + "/SessionService/Sessions"
)

// response is what a route produces; the handler writes it after the lock
// is released.
type response struct {
	status  int
	body    any
	headers map[string]string
}

func link(path string) map[string]any { return map[string]any{"@odata.id": path} }

func redfishError(status int, messageID, message string) response {
	if messageID == "" {
		messageID = "Base.1.8.GeneralError"
	}
	return response{status: status, body: map[string]any{"error": map[string]any{
		"code":    messageID,
		"message": message,
		"@Message.ExtendedInfo": []any{map[string]any{
			"MessageId": messageID, "Message": message, "Severity": "Critical",
		}},
	}}}
}

func (b *BMC) serve(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	if len(path) > 1 {
		path = strings.TrimSuffix(path, "/")
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))

	b.mu.Lock()
	control := b.control && strings.HasPrefix(path+"/", controlPrefix)
	b.mu.Unlock()
	if control {
		resp := b.controlRoute(r, path, body)
		b.t.Logf("redfishbmc: control %s %s -> %d", r.Method, path, resp.status)
		b.write(w, r, resp)
		return
	}

	b.mu.Lock()
	b.total++
	b.counts[r.Method+" "+path]++
	f, faulted := b.takeFault(r.Method, path)
	hold := b.holdOf(r.Method, path)
	b.mu.Unlock()

	authDesc := describeAuth(r)
	if hold != nil {
		b.t.Logf("redfishbmc: %s %s auth=%s held", r.Method, path, authDesc)
		if !hold.wait(r) {
			return
		}
	}
	if faulted && f.delay > 0 {
		select {
		case <-time.After(f.delay):
		case <-r.Context().Done():
			return
		}
	}
	if faulted && f.drop {
		b.t.Logf("redfishbmc: %s %s auth=%s -> connection dropped", r.Method, path, authDesc)
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				_ = conn.Close()
				return
			}
		}
		panic(http.ErrAbortHandler)
	}

	var resp response
	if faulted && f.status != 0 {
		resp = redfishError(f.status, f.messageID, fmt.Sprintf("Injected failure %d", f.status))
	} else {
		b.mu.Lock()
		resp = b.route(r, path, body)
		b.mu.Unlock()
	}
	b.t.Logf("redfishbmc: %s %s auth=%s -> %d", r.Method, path, authDesc, resp.status)
	b.write(w, r, resp)
}

// describeAuth says how a request authenticated without revealing how:
// neither the password nor the token is ever logged.
func describeAuth(r *http.Request) string {
	switch {
	case r.Header.Get("X-Auth-Token") != "":
		return "token(redacted)"
	case r.Header.Get("Authorization") != "":
		if user, _, ok := r.BasicAuth(); ok {
			return "basic(" + user + ":redacted)"
		}
		return "authorization(redacted)"
	}
	return "none"
}

func (b *BMC) write(w http.ResponseWriter, r *http.Request, resp response) {
	for k, v := range resp.headers {
		w.Header().Set(k, v)
	}
	if resp.body == nil {
		w.WriteHeader(resp.status)
		return
	}
	data, err := json.Marshal(resp.body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("OData-Version", "4.0")
	if b.etags && r.Method == http.MethodGet && resp.status == http.StatusOK {
		w.Header().Set("ETag", etag(data))
	}
	w.WriteHeader(resp.status)
	_, _ = w.Write(data)
}

func etag(data []byte) string {
	sum := sha256.Sum256(data)
	return `W/"` + hex.EncodeToString(sum[:8]) + `"`
}

// authorized checks the request's credentials; the service root and the
// session login are public as the Redfish specification requires.
func (b *BMC) authorized(r *http.Request, path string) bool {
	if b.username == "" {
		return true
	}
	if r.Method == http.MethodGet && path == root {
		return true
	}
	if r.Method == http.MethodPost && path == sessionsURI && b.sessOn {
		return true
	}
	if tok := r.Header.Get("X-Auth-Token"); tok != "" {
		_, ok := b.sessions[tok]
		return ok
	}
	if user, pass, ok := r.BasicAuth(); ok && b.basic {
		return b.credentialsMatch(user, pass)
	}
	return false
}

func (b *BMC) credentialsMatch(user, pass string) bool {
	u := subtle.ConstantTimeCompare([]byte(user), []byte(b.username))
	p := subtle.ConstantTimeCompare([]byte(pass), []byte(b.password))
	return u&p == 1
}

func (b *BMC) route(r *http.Request, path string, body []byte) response {
	if resp, ok := b.dellRoute(r, path, body); ok {
		return resp
	}
	if !b.authorized(r, path) {
		return redfishError(http.StatusUnauthorized, "Base.1.8.NoValidSession",
			"There is no valid session established with the implementation.")
	}
	switch {
	case path == root || path == "/redfish":
		return b.getOnly(r, b.serviceRoot)
	case path == root+"/SessionService":
		if !b.sessOn {
			return notFound(path)
		}
		return b.getOnly(r, func() any {
			return map[string]any{"@odata.id": path, "Id": "SessionService", "ServiceEnabled": true,
				"SessionTimeout": 600, "Sessions": link(sessionsURI)}
		})
	case path == sessionsURI || strings.HasPrefix(path, sessionsURI+"/"):
		if !b.sessOn {
			return notFound(path)
		}
		return b.sessionRoute(r, path, body)
	case path == root+"/Systems":
		return b.getOnly(r, b.systemCollection)
	case strings.HasPrefix(path, root+"/Systems/"):
		return b.systemRoute(r, path, body)
	case path == root+"/Chassis":
		return b.getOnly(r, func() any { return collection(path, "ChassisCollection", root+"/Chassis/"+b.chassis.ID) })
	case path == root+"/Chassis/"+b.chassis.ID || strings.HasPrefix(path, root+"/Chassis/"+b.chassis.ID+"/"):
		return b.chassisRoute(r, path, body)
	case path == root+"/Managers":
		return b.getOnly(r, func() any { return collection(path, "ManagerCollection", root+"/Managers/"+b.manager.ID) })
	case strings.HasPrefix(path, root+"/Managers/"+b.manager.ID):
		return b.managerRoute(r, path, body)
	case path == root+"/Registries" || strings.HasPrefix(path, root+"/Registries/"):
		return b.registryRoute(r, path)
	case path == taskServiceURI || strings.HasPrefix(path, taskServiceURI+"/"):
		return b.taskRoute(r, path)
	case path == updateServiceURI || strings.HasPrefix(path, updateServiceURI+"/"):
		return b.updateRoute(r, path, body)
	case path == eventServiceURI || strings.HasPrefix(path, eventServiceURI+"/"):
		return b.eventRoute(r, path, body)
	}
	return notFound(path)
}

func notFound(path string) response {
	return redfishError(http.StatusNotFound, "Base.1.8.ResourceMissingAtURI",
		fmt.Sprintf("The resource at the URI %s was not found.", path))
}

func methodNotAllowed() response {
	return redfishError(http.StatusMethodNotAllowed, "Base.1.8.OperationNotAllowed", "The operation is not allowed.")
}

func (b *BMC) getOnly(r *http.Request, f func() any) response {
	if r.Method != http.MethodGet {
		return methodNotAllowed()
	}
	return response{status: http.StatusOK, body: f()}
}

func collection(path, typ string, members ...string) map[string]any {
	list := make([]any, 0, len(members))
	for _, m := range members {
		list = append(list, link(m))
	}
	return map[string]any{
		"@odata.id": path, "@odata.type": "#" + typ + "." + typ, "Name": typ,
		"Members": list, "Members@odata.count": len(list),
	}
}

func (b *BMC) serviceRoot() any {
	out := map[string]any{
		"@odata.id": root + "/", "@odata.type": "#ServiceRoot.v1_11_0.ServiceRoot",
		"Id": "RootService", "Name": "Root Service", "RedfishVersion": "1.11.0",
		"UUID":    b.chassis.UUID,
		"Systems": link(root + "/Systems"), "Chassis": link(root + "/Chassis"),
		"Managers": link(root + "/Managers"), "Registries": link(root + "/Registries"),
		"TaskService": link(taskServiceURI), "UpdateService": link(updateServiceURI),
		"EventService": link(eventServiceURI),
	}
	if b.vendor != "" {
		out["Vendor"] = b.vendor
	}
	if b.sessOn {
		out["SessionService"] = link(root + "/SessionService")
		out["Links"] = map[string]any{"Sessions": link(sessionsURI)}
	}
	return out
}

func (b *BMC) sessionRoute(r *http.Request, path string, body []byte) response {
	if path == sessionsURI {
		switch r.Method {
		case http.MethodGet:
			var ids []string
			for _, id := range b.sessions {
				ids = append(ids, sessionsURI+"/"+id)
			}
			slices.Sort(ids)
			return response{status: http.StatusOK, body: collection(path, "SessionCollection", ids...)}
		case http.MethodPost:
			var req struct{ UserName, Password string }
			if err := json.Unmarshal(body, &req); err != nil {
				return redfishError(http.StatusBadRequest, "Base.1.8.MalformedJSON", "The request body is not valid JSON.")
			}
			if !b.credentialsMatch(req.UserName, req.Password) {
				return redfishError(http.StatusUnauthorized, "Base.1.8.InsufficientPrivilege",
					"Invalid username or password.")
			}
			b.nextSess++
			b.created++
			id := fmt.Sprintf("%d", b.nextSess)
			tok := newToken()
			b.sessions[tok] = id
			loc := sessionsURI + "/" + id
			return response{status: http.StatusCreated,
				headers: map[string]string{"X-Auth-Token": tok, "Location": loc},
				body:    map[string]any{"@odata.id": loc, "Id": id, "UserName": req.UserName}}
		}
		return methodNotAllowed()
	}
	id := strings.TrimPrefix(path, sessionsURI+"/")
	tok, found := "", false
	for t, sid := range b.sessions {
		if sid == id {
			tok, found = t, true
		}
	}
	if !found {
		return notFound(path)
	}
	switch r.Method {
	case http.MethodGet:
		return response{status: http.StatusOK, body: map[string]any{"@odata.id": path, "Id": id}}
	case http.MethodDelete:
		delete(b.sessions, tok)
		return response{status: http.StatusNoContent}
	}
	return methodNotAllowed()
}

func (b *BMC) systemCollection() any {
	paths := make([]string, 0, len(b.order))
	for _, id := range b.order {
		paths = append(paths, SystemPath(id))
	}
	return collection(root+"/Systems", "ComputerSystemCollection", paths...)
}

// checkIfMatch refuses a write whose If-Match does not name the current
// representation of the resource.
func (b *BMC) checkIfMatch(r *http.Request, current any) (response, bool) {
	want := r.Header.Get("If-Match")
	if !b.etags || want == "" || want == "*" {
		return response{}, true
	}
	data, err := json.Marshal(current)
	if err != nil {
		return redfishError(http.StatusInternalServerError, "", err.Error()), false
	}
	if strings.Trim(strings.TrimPrefix(want, "W/"), `"`) != strings.Trim(strings.TrimPrefix(etag(data), "W/"), `"`) {
		return redfishError(http.StatusPreconditionFailed, "Base.1.8.PreconditionFailed",
			"The ETag supplied did not match the ETag required to change this resource."), false
	}
	return response{}, true
}
