package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/spectest"
)

// TestTableCurrent regenerates the route table in memory and compares it
// with the committed internal/api/routes_table.go, so that the table is
// never edited by hand nor left behind routes.json or local.go.
func TestTableCurrent(t *testing.T) {
	routes := spectest.ReadFile(t, "ironic/api/routes.json")
	minors := readFile(t, filepath.Join("..", "..", "microversion", "minor.go"))
	committed := readFile(t, filepath.Join("..", "..", "routes_table.go"))

	got, err := generate(routes, minors, localRoutes(), signatures())
	if err != nil {
		t.Fatalf("generate: %v", err)
	}
	if !bytes.Equal(got, committed) {
		gl, cl := strings.Split(string(got), "\n"), strings.Split(string(committed), "\n")
		for i := 0; i < len(gl) || i < len(cl); i++ {
			var g, c string
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(cl) {
				c = cl[i]
			}
			if g != c {
				t.Fatalf("internal/api/routes_table.go is not current (run go generate ./internal/api); line %d:\n committed: %q\n generated: %q", i+1, c, g)
			}
		}
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

const testMinors = `package microversion

const (
	Minor1InitialVersion = 1
	Minor2AvailableState = 2
	MinorMaxVersion      = 2
)
`

// TestGenerate covers the derivations and the refusals on small inputs of
// our own, so that a change of routes.json's vocabulary fails loudly
// instead of producing a table that silently answers differently.
func TestGenerate(t *testing.T) {
	route := func(tooOld string) string {
		return `{"count": 1, "routes": [{"id": "GET /v1/things", "method": "GET", "path": "/v1/things",
			"min_version": "1.2", "success_status": 200, "too_old": ` + tooOld + `,
			"policies": ["baremetal:thing:get"], "rpc": {"topic": [], "calls": []},
			"handler": "ThingsController.get_all"}]}`
	}
	tests := []struct {
		name    string
		routes  string
		minors  string
		local   map[string]localRoute
		want    []string
		wantErr string
	}{
		{
			name:   "ironic exception",
			routes: route(`{"status": 406, "raised": "exception.NotAcceptable", "at": "ThingsController.get_all", "order": "after_policy"}`),
			minors: testMinors,
			want: []string{
				`Min:        microversion.Minor2AvailableState,`,
				`{Below: microversion.Minor2AvailableState, Status: 406, Kind: Ironic, Class: "NotAcceptable", Order: AfterPolicy},`,
				`Policies:   []string{"baremetal:thing:get"},`,
				`Controller: "ThingsController",`,
			},
		},
		{
			name:   "webob in _lookup routes",
			routes: route(`{"status": 404, "raised": "webob.exc.HTTPNotFound", "at": "ThingsController._lookup", "order": "before_policy", "message": "no"}`),
			minors: testMinors,
			want:   []string{`Status: 404, Kind: Routing, Message: "no", Order: BeforePolicy},`},
		},
		{
			name:   "webob in a decorator is a handler answer",
			routes: route(`{"status": 404, "raised": "webob.exc.HTTPNotFound", "at": "@validation.api_version decorator", "order": "before_policy"}`),
			minors: testMinors,
			want:   []string{`Status: 404, Kind: Handler, Order: BeforePolicy},`},
		},
		{
			name:   "local steps and overrides",
			routes: route(`{"status": 405, "raised": "pecan.abort(405)", "at": "x", "order": "before_policy"}`),
			minors: testMinors,
			local: map[string]localRoute{"GET /v1/things": {
				Earlier: []step{{Below: 1, Status: 404, Kind: "Routing", Order: "BeforePolicy"}},
				AllowOf: "ThingsController",
			}},
			want: []string{
				`{Below: microversion.Minor1InitialVersion, Status: 404, Kind: Routing, Order: BeforePolicy},
			{Below: microversion.Minor2AvailableState, Status: 405, Kind: Routing, AllowOf: "ThingsController", Order: BeforePolicy},`,
			},
		},
		{
			name:    "unknown raiser",
			routes:  route(`{"status": 404, "raised": "flask.abort(404)", "at": "x", "order": "before_policy"}`),
			minors:  testMinors,
			wantErr: `too_old.raised "flask.abort(404)" unknown`,
		},
		{
			name:    "unknown order",
			routes:  route(`{"status": 404, "raised": "pecan.abort(404)", "at": "x", "order": "after_lunch"}`),
			minors:  testMinors,
			wantErr: `too_old.order "after_lunch" unknown`,
		},
		{
			name:    "version without a constant",
			routes:  route(`null`),
			minors:  strings.Replace(testMinors, "Minor2AvailableState = 2", "", 1),
			wantErr: "no microversion constant for 1.2",
		},
		{
			name:    "local input for a route routes.json lacks",
			routes:  route(`null`),
			minors:  testMinors,
			local:   map[string]localRoute{"GET /v1/gone": {TrailingArg: "x"}},
			wantErr: "local.go: not in routes.json: GET /v1/gone",
		},
		{
			name:    "local too-old steps for a route without any",
			routes:  route(`null`),
			minors:  testMinors,
			local:   map[string]localRoute{"GET /v1/things": {AllowOf: "ThingsController"}},
			wantErr: "local.go gives too-old answers",
		},
		{
			name:    "count mismatch",
			routes:  strings.Replace(route(`null`), `"count": 1`, `"count": 2`, 1),
			minors:  testMinors,
			wantErr: "1 routes, count 2",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := generate([]byte(tc.routes), []byte(tc.minors), tc.local, map[string]handlerArgs{"GET /v1/things": {}})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("generate: %v", err)
			}
			// gofmt aligns a literal's fields by its longest name, so
			// compare with runs of blanks collapsed.
			flat := squash(string(got))
			for _, w := range tc.want {
				if !strings.Contains(flat, squash(w)) {
					t.Errorf("output lacks %q:\n%s", w, got)
				}
			}
		})
	}
}

func squash(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
