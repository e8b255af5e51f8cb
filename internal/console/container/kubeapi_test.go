package container

import (
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// kubeAPI is a fake Kubernetes API server on 127.0.0.1 for kubectl: the
// version, discovery and OpenAPI v3 documents kubectl reads before it
// acts (enough for server-side field validation), and Secrets and Pods
// in namespaces — create, get, list by label or name, delete. A pod
// created becomes Ready, with an IP, readyAfter later; refuse makes
// every write answer 403 as an RBAC denial does.
type kubeAPI struct {
	t          *testing.T
	srv        *httptest.Server
	readyAfter time.Duration
	mu         sync.Mutex
	refuse     bool
	objects    map[string]map[string]any // "<resource>/<ns>/<name>"
	created    map[string]time.Time
	requests   []string
}

var kubeResources = map[string]string{"secrets": "Secret", "pods": "Pod"}

// startKubeAPI starts the server and points kubectl at it through a
// kubeconfig in KUBECONFIG.
func startKubeAPI(t *testing.T, readyAfter time.Duration) *kubeAPI {
	t.Helper()
	requireKubectl(t)
	k := &kubeAPI{t: t, readyAfter: readyAfter, objects: map[string]map[string]any{}, created: map[string]time.Time{}}
	// TLS, as kubectl sends its token over HTTPS only.
	k.srv = httptest.NewTLSServer(http.HandlerFunc(k.serve))
	t.Cleanup(k.srv.Close)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: k.srv.Certificate().Raw})
	cfg := filepath.Join(t.TempDir(), "kubeconfig")
	text := "apiVersion: v1\nkind: Config\nclusters:\n- name: fake\n  cluster:\n    server: " + k.srv.URL +
		"\n    certificate-authority-data: " + base64.StdEncoding.EncodeToString(ca) +
		"\ncontexts:\n- name: fake\n  context:\n    cluster: fake\n    user: conductor\ncurrent-context: fake\nusers:\n- name: conductor\n  user:\n    token: t0ken\n"
	if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", cfg)
	t.Setenv("HOME", t.TempDir()) // kubectl's discovery cache
	return k
}

// requireKubectl skips the test without a kubectl that validates fields
// on the server (1.27 and later), which is what the fake's OpenAPI v3
// document serves; older ones want the protobuf OpenAPI v2 document.
func requireKubectl(t *testing.T) {
	t.Helper()
	out, err := exec.Command("kubectl", "version", "--client", "-o", "json").Output()
	if err != nil {
		t.Skipf("kubectl not installed: %v", err)
	}
	var v struct {
		ClientVersion struct {
			Major, Minor string
		} `json:"clientVersion"`
	}
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("kubectl version: %v: %s", err, out)
	}
	minor, _ := strconv.Atoi(strings.TrimSuffix(v.ClientVersion.Minor, "+"))
	if v.ClientVersion.Major != "1" || minor < 27 {
		t.Skipf("kubectl %s.%s predates server-side field validation", v.ClientVersion.Major, v.ClientVersion.Minor)
	}
}

func (k *kubeAPI) setRefuse(b bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.refuse = b
}

// writes are the create and delete requests seen, "<METHOD> <path>".
func (k *kubeAPI) writes() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	var out []string
	for _, r := range k.requests {
		if !strings.HasPrefix(r, "GET ") {
			out = append(out, r)
		}
	}
	k.requests = nil
	return out
}

func (k *kubeAPI) object(res, ns, name string) map[string]any {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.objects[res+"/"+ns+"/"+name]
}

// put stores an object as if another client had created it.
func (k *kubeAPI) put(res, name string, labels map[string]string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	key := res + "/openstack/" + name
	l := map[string]any{}
	for lk, lv := range labels {
		l[lk] = lv
	}
	k.objects[key] = map[string]any{"kind": kubeResources[res], "apiVersion": "v1",
		"metadata": map[string]any{"name": name, "namespace": "openstack", "labels": l}}
	k.created[key] = time.Now()
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func status(w http.ResponseWriter, code int, reason, msg string) {
	writeJSON(w, code, map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": reason, "message": msg, "code": code})
}

func (k *kubeAPI) serve(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer t0ken" {
		status(w, 401, "Unauthorized", "Unauthorized")
		return
	}
	k.mu.Lock()
	k.requests = append(k.requests, r.Method+" "+r.URL.Path)
	k.mu.Unlock()
	p := r.URL.Path
	switch {
	case p == "/version":
		writeJSON(w, 200, map[string]any{"major": "1", "minor": "32", "gitVersion": "v1.32.0", "platform": "linux/amd64"})
	case p == "/api":
		writeJSON(w, 200, map[string]any{"kind": "APIVersions", "versions": []string{"v1"},
			"serverAddressByClientCIDRs": []any{map[string]any{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}}})
	case p == "/apis":
		writeJSON(w, 200, map[string]any{"kind": "APIGroupList", "apiVersion": "v1", "groups": []any{}})
	case p == "/api/v1":
		var res []any
		for name, kind := range kubeResources {
			res = append(res, map[string]any{"name": name, "singularName": strings.ToLower(kind), "namespaced": true, "kind": kind,
				"verbs": []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}})
		}
		writeJSON(w, 200, map[string]any{"kind": "APIResourceList", "groupVersion": "v1", "resources": res})
	case p == "/openapi/v3":
		writeJSON(w, 200, map[string]any{"paths": map[string]any{"api/v1": map[string]any{"serverRelativeURL": "/openapi/v3/api/v1?hash=1"}}})
	case p == "/openapi/v3/api/v1":
		writeJSON(w, 200, k.openAPI())
	case strings.HasPrefix(p, "/api/v1/namespaces/"):
		k.resource(w, r, strings.Split(strings.TrimPrefix(p, "/api/v1/namespaces/"), "/"))
	default:
		status(w, 404, "NotFound", "the server could not find the requested resource")
	}
}

// openAPI declares the two kinds' operations with the fieldValidation
// parameter, which tells kubectl the server validates fields itself.
func (k *kubeAPI) openAPI() map[string]any {
	paths := map[string]any{}
	for res, kind := range kubeResources {
		gvk := map[string]any{"group": "", "version": "v1", "kind": kind}
		op := func() map[string]any {
			return map[string]any{"x-kubernetes-group-version-kind": gvk,
				"parameters": []any{map[string]any{"name": "fieldValidation", "in": "query", "schema": map[string]any{"type": "string"}}}}
		}
		paths["/api/v1/namespaces/{namespace}/"+res] = map[string]any{"post": op()}
		paths["/api/v1/namespaces/{namespace}/"+res+"/{name}"] = map[string]any{"patch": op(), "put": op()}
	}
	return map[string]any{"openapi": "3.0.0", "info": map[string]any{"title": "Kubernetes", "version": "v1.32.0"}, "paths": paths,
		"components": map[string]any{"schemas": map[string]any{}}}
}

func (k *kubeAPI) resource(w http.ResponseWriter, r *http.Request, parts []string) {
	if len(parts) < 2 || kubeResources[parts[1]] == "" {
		status(w, 404, "NotFound", "the server could not find the requested resource")
		return
	}
	ns, res := parts[0], parts[1]
	kind := kubeResources[res]
	k.mu.Lock()
	defer k.mu.Unlock()
	if r.Method != http.MethodGet && k.refuse {
		status(w, 403, "Forbidden", fmt.Sprintf(`%s is forbidden: User "system:serviceaccount:openstack:ironic" cannot %s resource %q in API group "" in the namespace %q`,
			res, strings.ToLower(r.Method), res, ns))
		return
	}
	if len(parts) == 2 {
		switch r.Method {
		case http.MethodGet:
			items := []any{}
			q := r.URL.Query()
			for key, o := range k.objects {
				if !strings.HasPrefix(key, res+"/"+ns+"/") || !selects(o, q.Get("labelSelector"), q.Get("fieldSelector")) {
					continue
				}
				items = append(items, k.withStatus(key, o))
			}
			writeJSON(w, 200, map[string]any{"kind": kind + "List", "apiVersion": "v1", "metadata": map[string]any{"resourceVersion": "1"}, "items": items})
		case http.MethodPost:
			var o map[string]any
			body, _ := io.ReadAll(r.Body)
			if err := json.Unmarshal(body, &o); err != nil {
				status(w, 400, "BadRequest", err.Error())
				return
			}
			meta, _ := o["metadata"].(map[string]any)
			name, _ := meta["name"].(string)
			key := res + "/" + ns + "/" + name
			if _, dup := k.objects[key]; dup {
				status(w, 409, "AlreadyExists", fmt.Sprintf("%s %q already exists", res, name))
				return
			}
			meta["uid"], meta["resourceVersion"], meta["namespace"] = "uid-"+name, "1", ns
			k.objects[key], k.created[key] = o, time.Now()
			writeJSON(w, 201, o)
		default:
			status(w, 405, "MethodNotAllowed", "method not allowed")
		}
		return
	}
	key := res + "/" + ns + "/" + parts[2]
	o, ok := k.objects[key]
	switch r.Method {
	case http.MethodGet:
		if !ok {
			status(w, 404, "NotFound", fmt.Sprintf("%s %q not found", res, parts[2]))
			return
		}
		writeJSON(w, 200, k.withStatus(key, o))
	case http.MethodDelete:
		if !ok {
			status(w, 404, "NotFound", fmt.Sprintf("%s %q not found", res, parts[2]))
			return
		}
		delete(k.objects, key)
		writeJSON(w, 200, o)
	default:
		status(w, 405, "MethodNotAllowed", "method not allowed")
	}
}

// withStatus adds a pod's status: Pending, then Running and Ready with
// an IP once readyAfter has passed since its creation.
func (k *kubeAPI) withStatus(key string, o map[string]any) map[string]any {
	if !strings.HasPrefix(key, "pods/") {
		return o
	}
	out := map[string]any{}
	for kk, v := range o {
		out[kk] = v
	}
	if time.Since(k.created[key]) < k.readyAfter {
		out["status"] = map[string]any{"phase": "Pending", "conditions": []any{map[string]any{"type": "Ready", "status": "False"}}}
	} else {
		out["status"] = map[string]any{"phase": "Running", "podIP": "10.1.2.3",
			"conditions": []any{map[string]any{"type": "Ready", "status": "True"}}}
	}
	return out
}

// selects applies "a=b,c=d" label and "metadata.name=x" field selectors.
func selects(o map[string]any, labels, fields string) bool {
	meta, _ := o["metadata"].(map[string]any)
	have, _ := meta["labels"].(map[string]any)
	for _, term := range strings.Split(labels, ",") {
		if k, v, ok := strings.Cut(term, "="); ok && fmt.Sprint(have[k]) != v {
			return false
		}
	}
	if name, ok := strings.CutPrefix(fields, "metadata.name="); ok && meta["name"] != name {
		return false
	}
	return true
}
