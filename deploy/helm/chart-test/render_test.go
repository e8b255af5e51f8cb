package charttest

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	kubefake "helm.sh/helm/v3/pkg/kube/fake"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/releaseutil"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

const (
	chartDir    = "../openkeel-ironic"
	releaseName = "bm"
	namespace   = "metal"
)

// object is one rendered manifest, decoded.
type object struct {
	Kind, Name string
	Obj        any
	Hook       *release.Hook // nil for an ordinary resource
}

// rendered is a chart installed client-only: hooks and ordinary resources
// as Helm itself separates them.
type rendered struct {
	Values  map[string]any
	Objects []object
}

// strictDecoder fails on fields that the Kubernetes types do not have, so
// a misspelt or misplaced key in a template is an error, not a silent drop.
var strictDecoder = serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict).UniversalDeserializer()

// serviceMonitor is the part of the Prometheus operator's type the chart
// writes; it has no k8s.io/api type.
type serviceMonitor struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name   string            `json:"name"`
		Labels map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec struct {
		Selector struct {
			MatchLabels map[string]string `json:"matchLabels"`
		} `json:"selector"`
		Endpoints []struct {
			Port      string `json:"port"`
			Path      string `json:"path"`
			Interval  string `json:"interval"`
			BasicAuth *struct {
				Username corev1.SecretKeySelector `json:"username"`
				Password corev1.SecretKeySelector `json:"password"`
			} `json:"basicAuth"`
			Scheme    string `json:"scheme"`
			TLSConfig *struct {
				CA struct {
					Secret corev1.SecretKeySelector `json:"secret"`
				} `json:"ca"`
				ServerName string `json:"serverName"`
			} `json:"tlsConfig"`
		} `json:"endpoints"`
	} `json:"spec"`
}

// render installs the chart with vals (client-only, as `helm install
// --dry-run` does) and decodes every manifest strictly.
func render(t *testing.T, vals map[string]any) (*rendered, error) {
	t.Helper()
	chrt, err := loader.Load(chartDir)
	if err != nil {
		t.Fatalf("load chart: %v", err)
	}
	cfg := &action.Configuration{
		Releases:     storage.Init(driver.NewMemory()),
		KubeClient:   &kubefake.PrintingKubeClient{Out: io.Discard},
		Capabilities: chartutil.DefaultCapabilities,
		Log:          func(string, ...any) {},
	}
	install := action.NewInstall(cfg)
	install.ClientOnly = true
	install.DryRun = true
	install.ReleaseName = releaseName
	install.Namespace = namespace
	// Client-only installs assume Kubernetes 1.20 unless told otherwise.
	install.KubeVersion = &chartutil.KubeVersion{Version: "v1.33.0", Major: "1", Minor: "33"}
	rel, err := install.Run(chrt, vals)
	if err != nil {
		return nil, err
	}
	merged, err := chartutil.CoalesceValues(chrt, vals)
	if err != nil {
		t.Fatalf("coalesce values: %v", err)
	}
	r := &rendered{Values: merged}
	for _, h := range rel.Hooks {
		objs := decodeAll(t, h.Path, h.Manifest)
		for i := range objs {
			objs[i].Hook = h
		}
		r.Objects = append(r.Objects, objs...)
	}
	manifests := releaseutil.SplitManifests(rel.Manifest)
	keys := make([]string, 0, len(manifests))
	for k := range manifests {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		r.Objects = append(r.Objects, decodeAll(t, k, manifests[k])...)
	}
	if len(r.Objects) == 0 {
		t.Fatal("the chart rendered nothing")
	}
	return r, nil
}

func decodeAll(t *testing.T, source, manifest string) []object {
	t.Helper()
	var out []object
	for doc := range strings.SplitSeq(manifest, "\n---") {
		if strings.TrimSpace(stripComments(doc)) == "" {
			continue
		}
		o, err := decode(doc)
		if err != nil {
			t.Fatalf("%s: %v\n%s", source, err, doc)
		}
		out = append(out, o)
	}
	return out
}

func stripComments(doc string) string {
	var b strings.Builder
	for line := range strings.SplitSeq(doc, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// decode turns one YAML document into its typed object, refusing unknown
// and duplicate fields.
func decode(doc string) (object, error) {
	var meta struct {
		Kind     string `json:"kind"`
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
		return object{}, fmt.Errorf("read kind: %w", err)
	}
	if meta.Kind == "ServiceMonitor" {
		var sm serviceMonitor
		if err := yaml.UnmarshalStrict([]byte(doc), &sm); err != nil {
			return object{}, fmt.Errorf("decode ServiceMonitor: %w", err)
		}
		return object{Kind: meta.Kind, Name: meta.Metadata.Name, Obj: &sm}, nil
	}
	obj, gvk, err := strictDecoder.Decode([]byte(doc), nil, nil)
	if err != nil {
		return object{}, fmt.Errorf("decode %s: %w", meta.Kind, err)
	}
	if _, ok := obj.(*runtime.Unknown); ok {
		return object{}, fmt.Errorf("decode %s: no Kubernetes type", gvk)
	}
	return object{Kind: gvk.Kind, Name: meta.Metadata.Name, Obj: obj}, nil
}

func mustRender(t *testing.T, vals map[string]any) *rendered {
	t.Helper()
	r, err := render(t, vals)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	return r
}

// find returns the one object of kind and name, as T.
func find[T any](t *testing.T, r *rendered, kind, name string) (T, object) {
	t.Helper()
	for _, o := range r.Objects {
		if o.Kind == kind && o.Name == name {
			v, ok := o.Obj.(T)
			if !ok {
				t.Fatalf("%s %s is a %T", kind, name, o.Obj)
			}
			return v, o
		}
	}
	var zero T
	t.Fatalf("no %s named %s among %s", kind, name, r.names())
	return zero, object{}
}

func (r *rendered) names() string {
	var s []string
	for _, o := range r.Objects {
		s = append(s, o.Kind+"/"+o.Name)
	}
	return strings.Join(s, ", ")
}

func (r *rendered) has(kind, name string) bool {
	for _, o := range r.Objects {
		if o.Kind == kind && o.Name == name {
			return true
		}
	}
	return false
}

// value reads a dotted path of the coalesced values.
func (r *rendered) value(path string) any {
	var v any = r.Values
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func (r *rendered) str(path string) string { return fmt.Sprint(r.value(path)) }

func TestStrictDecodingRejectsUnknownFields(t *testing.T) {
	doc := "apiVersion: v1\nkind: Service\nmetadata:\n  name: x\nspec:\n  clusterIp: None\n"
	if _, err := decode(doc); err == nil {
		t.Fatal("a misspelt field (clusterIp) decoded without error")
	}
	if _, err := decode(strings.Replace(doc, "clusterIp", "clusterIP", 1)); err != nil {
		t.Fatalf("the well-formed Service failed: %v", err)
	}
	sm := "apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata:\n  name: x\nspec:\n  endpoint: []\n"
	if _, err := decode(sm); err == nil {
		t.Fatal("a ServiceMonitor with an unknown field decoded without error")
	}
}

func chartPath(parts ...string) string {
	return filepath.Join(append([]string{chartDir}, parts...)...)
}
