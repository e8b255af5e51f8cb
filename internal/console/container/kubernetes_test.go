package container

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
)

// TestKubernetesStartStop: Start applies our template's Secret (APP_INFO)
// and Pod with kubectl against a fake API server, waits while the pod is
// pending and returns the ready pod's IP and port 5900; Stop deletes the
// pod, then the secret; StopAll deletes the objects labelled with this
// conductor only.
func TestKubernetesStartStop(t *testing.T) {
	api := startKubeAPI(t, 3*time.Second)
	p, err := New(Options{Provider: "kubernetes", Image: "quay.io/x/console:1", ConductorHost: "cond-1", ReadOnly: true, KubernetesPodTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	n := &model.Node{UUID: "8f7f2c9e-1e55-4b0e-9d43-7e1f7c3e0a01"}
	name := "ironic-console-" + n.UUID
	ctx := context.Background()
	start := time.Now()
	host, port, err := p.Start(ctx, n, "redfish-graphical", map[string]any{"address": "https://bmc", "password": "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	if host != "10.1.2.3" || port != 5900 {
		t.Errorf("console at %s:%d", host, port)
	}
	if waited := time.Since(start); waited < 3*time.Second {
		t.Errorf("Start returned after %s, before the pod was ready", waited)
	}
	if got := strings.Join(api.writes(), "|"); got != "POST /api/v1/namespaces/openstack/secrets|POST /api/v1/namespaces/openstack/pods" {
		t.Errorf("writes %s", got)
	}
	secret := api.object("secrets", "openstack", name)
	data, _ := secret["stringData"].(map[string]any)
	var info map[string]any
	if err := json.Unmarshal([]byte(data["app-info"].(string)), &info); err != nil || info["password"] != "s3cret" {
		t.Errorf("secret %v", secret)
	}
	pod, _ := json.Marshal(api.object("pods", "openstack", name))
	for _, want := range []string{`"image":"quay.io/x/console:1"`, `{"name":"APP","value":"redfish-graphical"}`, `{"name":"READ_ONLY","value":"True"}`,
		`"secretKeyRef":{"key":"app-info","name":"` + name + `"}`, `"conductor":"cond-1"`, `"containerPort":5900`} {
		if !strings.Contains(string(pod), want) {
			t.Errorf("pod lacks %s: %s", want, pod)
		}
	}

	if err := p.Stop(ctx, n); err != nil {
		t.Fatal(err)
	}
	want := "DELETE /api/v1/namespaces/openstack/pods/" + name + "|DELETE /api/v1/namespaces/openstack/secrets/" + name
	if got := strings.Join(api.writes(), "|"); got != want {
		t.Errorf("stop writes\n got %s\nwant %s", got, want)
	}
	if api.object("pods", "openstack", name) != nil || api.object("secrets", "openstack", name) != nil {
		t.Error("objects left after Stop")
	}

	api.put("pods", "mine", map[string]string{"app": "ironic", "component": "ironic-console", "conductor": "cond-1"})
	api.put("secrets", "mine", map[string]string{"app": "ironic", "component": "ironic-console", "conductor": "cond-1"})
	api.put("pods", "theirs", map[string]string{"app": "ironic", "component": "ironic-console", "conductor": "cond-2"})
	if err := p.StopAll(ctx); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(api.writes(), "|"); got != "DELETE /api/v1/namespaces/openstack/pods/mine|DELETE /api/v1/namespaces/openstack/secrets/mine" {
		t.Errorf("stop all writes %s", got)
	}
	if api.object("pods", "openstack", "theirs") == nil {
		t.Error("another conductor's console was deleted")
	}
}

// A pod not ready within [vnc]/kubernetes_pod_timeout fails Start with
// upstream's error, and its objects are deleted; a cluster that refuses
// the objects fails Start with kubectl's message.
func TestKubernetesStartFails(t *testing.T) {
	api := startKubeAPI(t, time.Hour)
	p, err := New(Options{Provider: "kubernetes", Image: "i", ConductorHost: "cond-1", KubernetesPodTimeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	n := &model.Node{UUID: "9f7f2c9e-1e55-4b0e-9d43-7e1f7c3e0a01"}
	name := "ironic-console-" + n.UUID
	_, _, err = p.Start(context.Background(), n, "fake", nil)
	if err == nil || !errs.Is(err, errs.ClassConsoleContainerError) ||
		err.Error() != "Console container error with provider 'kubernetes', reason: Pod "+name+" did not become ready in 3s" {
		t.Fatalf("start: %v", err)
	}
	want := "POST /api/v1/namespaces/openstack/secrets|POST /api/v1/namespaces/openstack/pods|DELETE /api/v1/namespaces/openstack/pods/" + name +
		"|DELETE /api/v1/namespaces/openstack/secrets/" + name
	if got := strings.Join(api.writes(), "|"); got != want {
		t.Errorf("writes\n got %s\nwant %s", got, want)
	}

	api.setRefuse(true)
	_, _, err = p.Start(context.Background(), n, "fake", nil)
	if err == nil || !errs.Is(err, errs.ClassConsoleContainerError) || !strings.Contains(err.Error(), "kubectl apply -f -") ||
		!strings.Contains(err.Error(), "is forbidden") {
		t.Fatalf("refused start: %v", err)
	}
	if api.object("secrets", "openstack", name) != nil || api.object("pods", "openstack", name) != nil {
		t.Error("objects created by a refused start")
	}
}
