package container

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/openkeel/ironic/internal/model"
)

// podReadyPoll is how often a starting console pod is asked whether it
// is ready (upstream POD_READY_POLL_INTERVAL).
const podReadyPoll = 2 * time.Second

// Kubernetes is upstream's "kubernetes" provider: the objects of
// [vnc]/kubernetes_container_template (a Secret with the BMC credentials
// and the console Pod) are applied with kubectl, which reaches the
// cluster as configured for the conductor's user (KUBECONFIG, or the
// pod's service account); the console is the pod's IP, port 5900, once
// the pod is ready.
type Kubernetes struct {
	o        Options
	template string
	log      *slog.Logger
}

func newKubernetes(o Options) (*Kubernetes, error) {
	k := &Kubernetes{o: o, log: slog.Default().With("provider", "kubernetes")}
	if _, err := k.kubectl(context.Background(), "", "version"); err != nil {
		return nil, Error(k.Name(), err)
	}
	if o.Image == "" {
		return nil, Error(k.Name(), "[vnc]console_image must be set.")
	}
	text, err := readFileOr(o.KubernetesTemplate, "templates/ironic-console-pod.yaml.template")
	if err != nil {
		return nil, Error(k.Name(), err)
	}
	k.template = text
	if _, _, err := k.resources("", "", nil); err != nil {
		return nil, Error(k.Name(), fmt.Sprintf("Parsing %s failed: %v", templateName(o.KubernetesTemplate), err))
	}
	return k, nil
}

// Name is "kubernetes".
func (k *Kubernetes) Name() string { return "kubernetes" }

// kubeObject is what the provider reads of a manifest's objects.
type kubeObject struct {
	Kind     string `yaml:"kind"`
	Metadata struct {
		Name      string            `yaml:"name"`
		Namespace string            `yaml:"namespace"`
		Labels    map[string]string `yaml:"labels"`
	} `yaml:"metadata"`
}

var documentSeparator = regexp.MustCompile(`(?m)^---\s*$`)

// render fills the template with upstream's variables; no app is
// "fake" and no app_info {} (what stopping renders with).
func (k *Kubernetes) render(uuid, app string, appInfo map[string]any) (string, error) {
	if app == "" {
		app = "fake"
	}
	if appInfo == nil {
		appInfo = map[string]any{}
	}
	info, err := json.Marshal(appInfo)
	if err != nil {
		return "", err
	}
	return substitute(k.template, map[string]string{
		"uuid":      uuid,
		"image":     k.o.Image,
		"app":       app,
		"app_info":  string(info),
		"read_only": pyBool(k.o.ReadOnly),
		"conductor": k.o.ConductorHost,
	})
}

// resources renders the manifest and reads its objects, in order.
func (k *Kubernetes) resources(uuid, app string, appInfo map[string]any) (string, []kubeObject, error) {
	text, err := k.render(uuid, app, appInfo)
	if err != nil {
		return "", nil, err
	}
	var objs []kubeObject
	for _, doc := range documentSeparator.Split(text, -1) {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		var o kubeObject
		if err := yaml.Unmarshal([]byte(doc), &o); err != nil {
			return "", nil, err
		}
		if o.Kind == "" {
			continue
		}
		objs = append(objs, o)
	}
	return text, objs, nil
}

// kubectl runs kubectl with stdin; the manifest it may be given holds
// the BMC credentials, so neither it nor kubectl's output is logged.
func (k *Kubernetes) kubectl(ctx context.Context, stdin string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "kubectl", args...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	k.log.DebugContext(ctx, "kubectl", "args", args)
	if err != nil {
		return stdout.String(), fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// Start applies the node's objects, waits up to
// [vnc]/kubernetes_pod_timeout for the pod to be ready and returns its
// IP; a pod that does not become ready is deleted with its objects.
func (k *Kubernetes) Start(ctx context.Context, n *model.Node, app string, appInfo map[string]any) (string, int, error) {
	manifest, objs, err := k.resources(n.UUID, app, appInfo)
	if err != nil {
		return "", 0, Error(k.Name(), err)
	}
	i := slices.IndexFunc(objs, func(o kubeObject) bool { return o.Kind == "Pod" })
	if i < 0 {
		return "", 0, Error(k.Name(), "the console template has no Pod")
	}
	pod := objs[i]
	if _, err := k.kubectl(ctx, manifest, "apply", "-f", "-"); err != nil {
		return "", 0, Error(k.Name(), err)
	}
	ip, err := k.waitReady(ctx, pod.Metadata.Name, pod.Metadata.Namespace)
	if err != nil {
		k.log.ErrorContext(ctx, "Failed to start container for node, cleaning up", "node", n.UUID)
		if stopErr := k.stop(ctx, n.UUID); stopErr != nil {
			k.log.ErrorContext(ctx, "could not clean up the console's objects", "node", n.UUID, "error", stopErr)
		}
		return "", 0, err
	}
	return ip, 5900, nil
}

// podStatus is what the provider reads of a pod.
type podStatus struct {
	Status struct {
		PodIP      string `json:"podIP"`
		Conditions []struct {
			Type   string `json:"type"`
			Status string `json:"status"`
		} `json:"conditions"`
	} `json:"status"`
}

// waitReady polls the pod until its Ready condition is True and returns
// its IP. Failing reads are logged and retried until the timeout, as
// upstream does.
func (k *Kubernetes) waitReady(ctx context.Context, name, namespace string) (string, error) {
	timeout := k.o.KubernetesPodTimeout
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		out, err := k.kubectl(ctx, "", "get", "pod", name, "-n", namespace, "-o", "json")
		var st podStatus
		if err == nil {
			err = json.Unmarshal([]byte(out), &st)
		}
		if err != nil {
			k.log.WarnContext(ctx, "Could not get pod status", "pod", name, "error", err)
		}
		for _, c := range st.Status.Conditions {
			if c.Type == "Ready" && c.Status == "True" {
				return k.podIP(ctx, name, namespace)
			}
		}
		select {
		case <-ctx.Done():
			return "", Error(k.Name(), ctx.Err())
		case <-time.After(podReadyPoll):
		}
	}
	return "", Error(k.Name(), fmt.Sprintf("Pod %s did not become ready in %ds", name, int(timeout.Seconds())))
}

// podIP reads the ready pod's IP, as upstream with a second read.
func (k *Kubernetes) podIP(ctx context.Context, name, namespace string) (string, error) {
	out, err := k.kubectl(ctx, "", "get", "pod", name, "-n", namespace, "-o", "jsonpath={.status.podIP}")
	if err != nil {
		return "", Error(k.Name(), err)
	}
	ip := strings.TrimSpace(out)
	if ip == "" {
		return "", Error(k.Name(), errors.New("the ready pod "+name+" has no IP"))
	}
	return ip, nil
}

// stop deletes the node's objects, in reverse order (the pod before the
// secret it reads).
func (k *Kubernetes) stop(ctx context.Context, uuid string) error {
	_, objs, err := k.resources(uuid, "", nil)
	if err != nil {
		return Error(k.Name(), err)
	}
	for i := len(objs) - 1; i >= 0; i-- {
		o := objs[i]
		if _, err := k.kubectl(ctx, "", "delete", "-n", o.Metadata.Namespace, o.Kind, "--ignore-not-found=true", o.Metadata.Name); err != nil {
			return Error(k.Name(), err)
		}
	}
	return nil
}

// Stop deletes the node's console objects.
func (k *Kubernetes) Stop(ctx context.Context, n *model.Node) error { return k.stop(ctx, n.UUID) }

// StopAll deletes every object carrying the labels of this conductor's
// consoles, at start-up and shutdown.
func (k *Kubernetes) StopAll(ctx context.Context) error {
	_, objs, err := k.resources("", "", nil)
	if err != nil {
		return Error(k.Name(), err)
	}
	for i := len(objs) - 1; i >= 0; i-- {
		o := objs[i]
		keys := make([]string, 0, len(o.Metadata.Labels))
		for key := range o.Metadata.Labels {
			keys = append(keys, key)
		}
		slices.Sort(keys)
		sel := make([]string, len(keys))
		for j, key := range keys {
			sel[j] = key + "=" + o.Metadata.Labels[key]
		}
		if _, err := k.kubectl(ctx, "", "delete", "-n", o.Metadata.Namespace, o.Kind, "--ignore-not-found=true", "-l", strings.Join(sel, ",")); err != nil {
			return Error(k.Name(), err)
		}
	}
	return nil
}
