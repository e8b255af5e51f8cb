package api

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/api/microversion"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/spectest"
)

func decodeDoc(t *testing.T, body []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("body %q: %v", body, err)
	}
	return m
}

// The api-ref samples were captured at 1.37 on an older release: the
// version numbers, the description-independent fields and the link hrefs
// are compared as they are; where upstream's code today answers
// differently from the sample, the test says so explicitly.
func TestRootDocument(t *testing.T) {
	h := New(Deps{Logger: quiet, Authorize: AllowAll})
	var sample map[string]any
	spectest.LoadJSON(t, "ironic/api/api-ref/samples/api-root-response.json", &sample)
	for _, v := range []string{"1.1", "1.50", "latest"} {
		rec := serve(h, http.MethodGet, "/", v, "")
		if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/json" {
			t.Fatalf("%s: %d %v", v, rec.Code, rec.Header())
		}
		got := decodeDoc(t, rec.Body.Bytes())
		if len(got) != len(sample) {
			t.Errorf("%s: keys %v, sample %v", v, got, sample)
		}
		for _, k := range []string{"name", "description"} {
			if got[k] != sample[k] {
				t.Errorf("%s: %s %q, sample %q", v, k, got[k], sample[k])
			}
		}
		want := sample["default_version"].(map[string]any)
		want["version"] = "1.115" // the sample's server had 1.37
		if !reflect.DeepEqual(got["default_version"], want) {
			t.Errorf("%s: default_version %v, want %v", v, got["default_version"], want)
		}
		if !reflect.DeepEqual(got["versions"], []any{want}) {
			t.Errorf("%s: versions %v", v, got["versions"])
		}
	}
	// Byte layout as upstream's json.dumps.
	rec := serve(h, http.MethodGet, "/", "", "")
	if !strings.HasPrefix(rec.Body.String(), `{"name": "OpenStack Ironic API", "description": `) {
		t.Errorf("layout %q", rec.Body.String())
	}
}

func TestV1Document(t *testing.T) {
	h := New(Deps{Logger: quiet, Authorize: AllowAll})
	var sample map[string]any
	spectest.LoadJSON(t, "ironic/api/api-ref/samples/api-v1-root-response.json", &sample)
	for _, tc := range []struct {
		version string
		minor   int
	}{{"1.1", 1}, {"1.50", 50}, {"latest", microversion.MinorMaxVersion}} {
		rec := serve(h, http.MethodGet, "/v1", tc.version, "")
		if rec.Code != http.StatusOK {
			t.Fatalf("%s: %d", tc.version, rec.Code)
		}
		got := decodeDoc(t, rec.Body.Bytes())
		if got["id"] != sample["id"] {
			t.Errorf("id %v", got["id"])
		}
		// Upstream sends media_types as one object since the WSME removal;
		// the sample still shows the old list.
		if !reflect.DeepEqual(got["media_types"], sample["media_types"].([]any)[0]) {
			t.Errorf("media_types %v", got["media_types"])
		}
		links := got["links"].([]any)
		wantLinks := sample["links"].([]any)
		if !reflect.DeepEqual(links[0], wantLinks[0]) {
			t.Errorf("self link %v", links[0])
		}
		// build_url joins "/ironic/latest/contributor/" with extra
		// slashes; the sample was written by hand.
		described := links[1].(map[string]any)
		if described["href"] != "https://docs.openstack.org//ironic/latest/contributor//webapi.html" ||
			described["rel"] != "describedby" || described["type"] != "text/html" {
			t.Errorf("describedby %v", described)
		}
		shown := map[string]bool{}
		for _, name := range microversion.AlwaysLinks {
			shown[name] = true
		}
		for _, l := range microversion.VersionedLinks {
			shown[l.Name] = l.Gate.Allows(microversion.Version{Major: 1, Minor: tc.minor})
		}
		for name, want := range shown {
			_, has := got[name]
			if has != want {
				t.Errorf("%s: link %s present %v, want %v", tc.version, name, has, want)
			}
			if s, ok := sample[name]; ok && has && !reflect.DeepEqual(got[name], s) {
				t.Errorf("%s: %s %v, sample %v", tc.version, name, got[name], s)
			}
		}
		if tc.minor == 50 && !(shown["conductors"] && !shown["allocations"] && shown["portgroups"]) {
			t.Errorf("1.50 gates wrong: %v", shown)
		}
		ver := got["version"].(map[string]any)
		if ver["version"] != "1.115" || ver["min_version"] != "1.1" || ver["status"] != "CURRENT" {
			t.Errorf("version %v", ver)
		}
		if len(got) != 4+countTrue(shown) {
			t.Errorf("%s: %d keys: %v", tc.version, len(got), got)
		}
	}
}

func countTrue(m map[string]bool) int {
	n := 0
	for _, v := range m {
		if v {
			n++
		}
	}
	return n
}

func TestPublicURL(t *testing.T) {
	for _, tc := range []struct {
		name     string
		override map[string]map[string]string
		headers  map[string]string
		want     string
	}{
		{"request host", nil, nil, "http://127.0.0.1:6385/v1/"},
		{"public endpoint", map[string]map[string]string{"api": {"public_endpoint": "https://bm.example.org:8443"}},
			map[string]string{"X-Forwarded-Proto": "https"}, "https://bm.example.org:8443/v1/"},
		{"proxy headers win over public_endpoint", map[string]map[string]string{
			"api":             {"public_endpoint": "https://ignored.example.org"},
			"oslo_middleware": {"enable_proxy_headers_parsing": "true"}},
			map[string]string{"X-Forwarded-Proto": "https", "X-Forwarded-Host": "proxy.example.org"}, "https://proxy.example.org/v1/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := config.Load(config.LoadOptions{Overrides: tc.override})
			if err != nil {
				t.Fatal(err)
			}
			h := New(Deps{Config: cfg, Logger: quiet, Authorize: AllowAll})
			req := newRequest(http.MethodGet, "/", "", "")
			for k, v := range tc.headers {
				req.Header.Set(k, v)
			}
			rec := record(h, req)
			doc := decodeDoc(t, rec.Body.Bytes())
			href := doc["default_version"].(map[string]any)["links"].([]any)[0].(map[string]any)["href"]
			if href != tc.want {
				t.Errorf("href %v, want %s", href, tc.want)
			}
		})
	}
}
