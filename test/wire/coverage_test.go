package wire

import (
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/spectest"
)

// route is one operation of upstream's route table.
type route struct {
	ID     string `json:"id"`
	Method string `json:"method"`
	Path   string `json:"path"`
}

// matches tells whether a request line's method and path (query
// stripped) reach the route: a {param} segment takes any one segment, and
// a {{name}} in the step's path is a value, which any {param} takes.
func (r route) matches(method, path string) bool {
	if method != r.Method {
		return false
	}
	path, _, _ = strings.Cut(path, "?")
	want := strings.Split(strings.Trim(r.Path, "/"), "/")
	got := strings.Split(strings.Trim(path, "/"), "/")
	if len(want) != len(got) {
		return false
	}
	for i, w := range want {
		if strings.HasPrefix(w, "{") {
			// {ind_ident}@{component} needs the @ to be one segment.
			if strings.Contains(w, "}@{") && !strings.Contains(got[i], "@") {
				return false
			}
			continue
		}
		if w != got[i] {
			return false
		}
	}
	return true
}

// requestLine is the method and path a step sends.
func requestLine(st *Step) (string, string) {
	if st.Raw != "" {
		line, _, _ := strings.Cut(st.Raw, "\n")
		f := strings.Fields(line)
		if len(f) < 2 {
			return "", ""
		}
		return f[0], f[1]
	}
	return st.Method, st.Path
}

// noSuccess are the routes no scenario can see succeed on the reference
// configuration, with why; a step still sends each.
var noSuccess = map[string]string{
	"GET /v1/nodes/{node_ident}/vendor_passthru":                               "the fake, ipmitool and redfish vendor interfaces have POST methods only",
	"PUT /v1/nodes/{node_ident}/vendor_passthru":                               "the fake, ipmitool and redfish vendor interfaces have POST methods only",
	"PATCH /v1/nodes/{node_ident}/vendor_passthru":                             "the fake, ipmitool and redfish vendor interfaces have POST methods only",
	"DELETE /v1/nodes/{node_ident}/vendor_passthru":                            "the fake, ipmitool and redfish vendor interfaces have POST methods only",
	"GET /v1/drivers/{driver_name}/vendor_passthru":                            "no enabled vendor interface has driver-level methods",
	"POST /v1/drivers/{driver_name}/vendor_passthru":                           "no enabled vendor interface has driver-level methods",
	"PUT /v1/drivers/{driver_name}/vendor_passthru":                            "no enabled vendor interface has driver-level methods",
	"PATCH /v1/drivers/{driver_name}/vendor_passthru":                          "no enabled vendor interface has driver-level methods",
	"DELETE /v1/drivers/{driver_name}/vendor_passthru":                         "no enabled vendor interface has driver-level methods",
	"PUT /v1/nodes/{node_ident}/management/inject_nmi":                         "fake management does not implement inject_nmi",
	"PUT /v1/nodes/{node_ident}/management/indicators/{ind_ident}@{component}": "fake management does not implement set_indicator_state",
	"GET /v1/nodes/{node_ident}/inventory":                                     "fake inspection stores no inventory",
	"GET /v1/lookup":                                                           "needs a node in a wait state: fake-hardware's own steps never wait, and its direct deploy or cleaning fails upstream before booting the agent, as the reference configuration gives no API URL for it",
	"POST /v1/heartbeat/{node_ident}":                                          "needs the agent token that lookup hands out in a wait state (see GET /v1/lookup)",
	"POST /v1/continue_inspection":                                             "needs a node waiting for inspection data (agent inspection)",
	"GET /v1/nodes/{node_ident}/vmedia":                                        "fake boot and management do not implement get_virtual_media",
	"DELETE /v1/inspection_rules":                                              "master's controller has no delete_all: pecan calls delete without its argument",
}

// noStep are the routes no step sends yet, with why.
var noStep = map[string]string{}

// Every operation of upstream's route table is sent by at least one step
// and answered with success by at least one (a scenario creates what the
// route needs), but for the routes listed above.
func TestCoverage(t *testing.T) {
	var table struct {
		Routes []route `json:"routes"`
	}
	spectest.LoadJSON(t, "ironic/api/routes.json", &table)
	corpus, err := LoadCorpus(".")
	if err != nil {
		t.Fatal(err)
	}
	sent := map[string]int{}
	succeeded := map[string]bool{}
	total := 0
	for _, sc := range corpus {
		rec, err := LoadRecording(".", sc.Name)
		if err != nil {
			t.Fatal(err)
		}
		for i := range sc.Steps {
			st := &sc.Steps[i]
			total++
			method, path := requestLine(st)
			for _, r := range table.Routes {
				if !r.matches(method, path) {
					continue
				}
				sent[r.ID]++
				if want, _, ok := Expected(st, rec); ok && want.Status/100 == 2 {
					succeeded[r.ID] = true
				}
			}
		}
	}
	for _, r := range table.Routes {
		switch {
		case sent[r.ID] == 0 && noStep[r.ID] == "":
			t.Errorf("no step sends %s", r.ID)
		case sent[r.ID] > 0 && noStep[r.ID] != "":
			t.Errorf("a step sends %s now: remove it from noStep", r.ID)
		case sent[r.ID] > 0 && !succeeded[r.ID] && noSuccess[r.ID] == "":
			t.Errorf("no step expects success from %s", r.ID)
		case succeeded[r.ID] && noSuccess[r.ID] != "":
			t.Errorf("a step expects success from %s now: remove it from noSuccess", r.ID)
		}
	}
	t.Logf("%d scenarios, %d steps; %d of %d routes sent, %d answered with success", len(corpus), total, len(sent), len(table.Routes), len(succeeded))
}
