package charttest

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestValuesRejected: values.schema.json refuses values that would inline
// credentials, weaken the pods or leave the conductors unaddressable.
func TestValuesRejected(t *testing.T) {
	cases := []struct {
		name string
		vals map[string]any
		want string
	}{
		{"inline DSN", map[string]any{"conf": map[string]any{"database": map[string]any{"connection": "mysql+pymysql://u:p@db/ironic"}}}, "connection"},
		{"inline password", map[string]any{"conf": map[string]any{"keystone_authtoken": map[string]any{"password": "x"}}}, "password"},
		{"inline json-rpc password", map[string]any{"conf": map[string]any{"json_rpc": map[string]any{"password": "x"}}}, "password"},
		{"unknown mode", map[string]any{"conductor": map[string]any{"provisioning": map[string]any{"mode": "bridge"}}}, "mode"},
		{"attachment without network", map[string]any{"conductor": map[string]any{"provisioning": map[string]any{"mode": "attachment"}}}, "attachment"},
		{"root user", map[string]any{"podSecurityContext": map[string]any{"runAsUser": 0}}, "runAsUser"},
		{"writable root", map[string]any{"securityContext": map[string]any{"readOnlyRootFilesystem": false}}, "readOnlyRootFilesystem"},
		{"latest image", map[string]any{"image": map[string]any{"tag": "latest"}}, "tag"},
		{"no conductors", map[string]any{"conductor": map[string]any{"replicas": 0}}, "replicas"},
		{"TLS without Secret", map[string]any{"jsonRPC": map[string]any{"tls": map[string]any{"secretName": nil}}}, "secretName"},
		{"unknown key", map[string]any{"conductors": map[string]any{}}, "conductors"},
		{"bad auth", map[string]any{"auth": map[string]any{"strategy": "ldap"}}, "strategy"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := render(t, c.vals)
			if err == nil {
				t.Fatal("rendered without error")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not name %q", err, c.want)
			}
		})
	}
}

// The values of the installation guide render and keep the invariants.
func TestGuideValues(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "kubernetes.md"))
	if err != nil {
		t.Fatal(err)
	}
	var block string
	// Blocks of Kubernetes objects are the operator's own resources;
	// the others add to the guide's values.
	var overlays []string
	for _, part := range strings.Split(string(doc), "```yaml\n")[1:] {
		body, _, _ := strings.Cut(part, "```")
		switch {
		case strings.HasPrefix(body, "image:"):
			block = body
		case !strings.HasPrefix(body, "apiVersion:"):
			overlays = append(overlays, body)
		}
	}
	if block == "" {
		t.Fatal("docs/kubernetes.md has no values block (a yaml block starting with image:)")
	}
	var vals map[string]any
	if err := yaml.Unmarshal([]byte(block), &vals); err != nil {
		t.Fatalf("the guide's values: %v", err)
	}
	r := mustRender(t, vals)
	checkSecrets(t, r)
	checkAPI(t, r)
	checkConductors(t, r)
	checkNetworkPolicy(t, r)
	for _, o := range overlays {
		var extra map[string]any
		if err := yaml.Unmarshal([]byte(o), &extra); err != nil {
			t.Fatalf("the guide's values %q: %v", o, err)
		}
		r := mustRender(t, mergeValues(vals, extra))
		checkNetworkPolicy(t, r)
		checkServiceMonitor(t, r)
	}
}

// mergeValues is base with over laid on it, maps merged key by key, as
// Helm merges -f files.
func mergeValues(base, over map[string]any) map[string]any {
	out := maps.Clone(base)
	for k, v := range over {
		if bm, ok := out[k].(map[string]any); ok {
			if om, ok := v.(map[string]any); ok {
				out[k] = mergeValues(bm, om)
				continue
			}
		}
		out[k] = v
	}
	return out
}
