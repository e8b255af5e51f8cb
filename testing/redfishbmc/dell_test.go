package redfishbmc

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// A Dell job runs Scheduled, Running, then Completed (or Failed when
// told), one step per GET; its task answers 202 until it is done.
func TestDellJobLifecycle(t *testing.T) {
	var b *BMC
	post := func(path, body string) *http.Response {
		t.Helper()
		resp, err := http.Post(b.URL()+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	get := func(path string) (int, map[string]any) {
		t.Helper()
		resp, err := http.Get(b.URL() + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var doc map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, doc
	}
	const importURI = "/redfish/v1/Managers/iDRAC.Embedded.1/Actions/Oem/EID_674_Manager.ImportSystemConfiguration"
	profile := `{"ShareParameters": {"Target": "ALL"}, "ImportBuffer": "<SystemConfiguration><Component FQDD=\"iDRAC.Embedded.1\">` +
		`<Attribute Name=\"ServerBoot.1#BootOnce\">Disabled</Attribute>` +
		`<Attribute Name=\"ServerBoot.1#FirstBootDevice\">VCD-DVD</Attribute></Component></SystemConfiguration>"}`
	for _, tc := range []struct {
		name, fail, want string
		boot             string
	}{
		{name: "completed", want: "Completed", boot: "Cd"},
		{name: "failed", fail: "Unable to apply the configuration.", want: "Failed", boot: "None"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b = New(t).WithDellOEM().TaskPolls(2).System("s1")
			if tc.fail != "" {
				b.DellFailNextJob(tc.fail)
			}
			resp := post(importURI, profile)
			loc := resp.Header.Get("Location")
			if resp.StatusCode != http.StatusAccepted || !strings.Contains(loc, "/TaskService/Tasks/JID_") {
				t.Fatalf("import answered %d %q", resp.StatusCode, loc)
			}
			if jobs := b.DellJobs(); jobs[len(jobs)-1].JobState != "Scheduled" {
				t.Fatalf("new job %+v", jobs)
			}
			if status, doc := get(loc); status != http.StatusAccepted || doc["JobState"] != "Running" {
				t.Fatalf("first poll %d %v", status, doc["JobState"])
			}
			status, doc := get(loc)
			if status != http.StatusOK || doc["JobState"] != tc.want {
				t.Fatalf("second poll %d %v", status, doc["JobState"])
			}
			if s := b.Snapshot("s1"); s.BootTarget != tc.boot {
				t.Fatalf("boot target %s", s.BootTarget)
			}
			post("/redfish/v1/Managers/iDRAC.Embedded.1/Oem/Dell/DellJobService/Actions/DellJobService.DeleteJobQueue",
				`{"JobID": "JID_CLEARALL"}`)
			if jobs := b.DellJobs(); len(jobs) != 0 {
				t.Fatalf("jobs after JID_CLEARALL %+v", jobs)
			}
		})
	}
}
