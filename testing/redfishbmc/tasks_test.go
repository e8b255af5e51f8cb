package redfishbmc

import (
	"net/http"
	"testing"
)

func TestSimpleUpdateRunsAsTask(t *testing.T) {
	b := New(t).System("s1", BiosVersion("1.0")).WithBasicAuth("admin", "pw").TaskPolls(2).
		FirmwareImage("http://127.0.0.1:9/bios.bin", "bios", "2.0")
	c := call{t: t, base: b.URL(), user: "admin", pass: "pw"}

	resp, svc := c.do(http.MethodGet, "/redfish/v1/UpdateService", nil)
	wantStatus(t, resp, http.StatusOK)
	target := svc["Actions"].(map[string]any)["#UpdateService.SimpleUpdate"].(map[string]any)["target"].(string)

	resp, _ = c.do(http.MethodPost, target, map[string]any{"ImageURI": "http://127.0.0.1:9/unknown.bin"})
	wantStatus(t, resp, http.StatusBadRequest)

	resp, task := c.do(http.MethodPost, target, map[string]any{"ImageURI": "http://127.0.0.1:9/bios.bin"})
	wantStatus(t, resp, http.StatusAccepted)
	mon := resp.Header.Get("Location")
	if mon == "" || task["TaskState"] != "New" {
		t.Fatalf("monitor %q task %v", mon, task)
	}
	resp, task = c.do(http.MethodGet, mon, nil)
	wantStatus(t, resp, http.StatusAccepted)
	if task["TaskState"] != "Running" {
		t.Fatalf("first poll %v", task)
	}
	if bios, _ := b.FirmwareVersions("s1"); bios != "1.0" {
		t.Fatalf("version changed before the task finished: %s", bios)
	}
	resp, task = c.do(http.MethodGet, mon, nil)
	wantStatus(t, resp, http.StatusOK)
	if task["TaskState"] != "Completed" || task["TaskStatus"] != "OK" {
		t.Fatalf("second poll %v", task)
	}
	if bios, _ := b.FirmwareVersions("s1"); bios != "2.0" {
		t.Fatalf("BiosVersion %s after the update", bios)
	}
	resp, sys := c.do(http.MethodGet, "/redfish/v1/Systems/s1", nil)
	wantStatus(t, resp, http.StatusOK)
	if sys["BiosVersion"] != "2.0" {
		t.Fatalf("system %v", sys)
	}
	resp, _ = c.do(http.MethodGet, task["@odata.id"].(string), nil)
	wantStatus(t, resp, http.StatusOK)
}

func TestFailNextTask(t *testing.T) {
	b := New(t).System("s1").TaskPolls(1).WithBMCFirmwareVersion("5.0").FirmwareImage("http://127.0.0.1:9/bmc.bin", "bmc", "5.1")
	c := call{t: t, base: b.URL()}
	b.FailNextTask("Image is corrupted")
	resp, _ := c.do(http.MethodPost, simpleUpdateURI, map[string]any{"ImageURI": "http://127.0.0.1:9/bmc.bin"})
	wantStatus(t, resp, http.StatusAccepted)
	resp, task := c.do(http.MethodGet, resp.Header.Get("Location"), nil)
	wantStatus(t, resp, http.StatusOK)
	msgs, _ := task["Messages"].([]any)
	if task["TaskState"] != "Exception" || task["TaskStatus"] != "Critical" || len(msgs) != 1 ||
		msgs[0].(map[string]any)["Message"] != "Image is corrupted" {
		t.Fatalf("failed task %v", task)
	}
	if _, bmc := b.FirmwareVersions("s1"); bmc != "5.0" {
		t.Fatalf("a failed update changed the BMC version to %s", bmc)
	}
	if tasks := b.Tasks(); len(tasks) != 1 || tasks[0].State != "Exception" {
		t.Fatalf("tasks %+v", tasks)
	}
}

func TestAsyncRAIDVolume(t *testing.T) {
	b := New(t).System("s1", RAIDController(RAIDDrive{ID: "d1", CapacityBytes: 1 << 40}, RAIDDrive{ID: "d2", CapacityBytes: 1 << 40})).
		WithAsyncRAID().TaskPolls(1)
	c := call{t: t, base: b.URL()}
	vols := "/redfish/v1/Systems/s1/Storage/1/Volumes"
	resp, _ := c.do(http.MethodPost, vols, map[string]any{"RAIDType": "RAID9", "CapacityBytes": 1})
	wantStatus(t, resp, http.StatusBadRequest)
	resp, _ = c.do(http.MethodPost, vols, map[string]any{"RAIDType": "RAID1", "CapacityBytes": int64(1 << 30),
		"Links": map[string]any{"Drives": []any{link("/redfish/v1/Systems/s1/Storage/1/Drives/d1"), link("/redfish/v1/Systems/s1/Storage/1/Drives/d2")}}})
	wantStatus(t, resp, http.StatusAccepted)
	if len(b.RAIDVolumesOf("s1")) != 0 {
		t.Fatal("volume created before its task ran")
	}
	resp, _ = c.do(http.MethodGet, resp.Header.Get("Location"), nil)
	wantStatus(t, resp, http.StatusOK)
	got := b.RAIDVolumesOf("s1")
	if len(got) != 1 {
		t.Fatalf("volumes %+v", got)
	}
	resp, _ = c.do(http.MethodDelete, vols+"/"+got[0].ID, nil)
	wantStatus(t, resp, http.StatusAccepted)
	resp, _ = c.do(http.MethodGet, resp.Header.Get("Location"), nil)
	wantStatus(t, resp, http.StatusOK)
	if len(b.RAIDVolumesOf("s1")) != 0 {
		t.Fatal("volume still there after its delete task")
	}
}

func TestEventSubscriptions(t *testing.T) {
	b := New(t).System("s1")
	c := call{t: t, base: b.URL()}
	resp, _ := c.do(http.MethodPost, subscriptionsURI, map[string]any{"Destination": "ftp://x", "Protocol": "Redfish"})
	wantStatus(t, resp, http.StatusBadRequest)
	resp, sub := c.do(http.MethodPost, subscriptionsURI, map[string]any{"Destination": "https://127.0.0.1:9/events",
		"Protocol": "Redfish", "Context": "ironic", "EventTypes": []string{"Alert"}, "HttpHeaders": []any{map[string]any{"X-Token": "t"}}})
	wantStatus(t, resp, http.StatusCreated)
	if _, leaked := sub["HttpHeaders"]; leaked || sub["Context"] != "ironic" {
		t.Fatalf("subscription %v", sub)
	}
	loc := resp.Header.Get("Location")
	resp, _ = c.do(http.MethodGet, loc, nil)
	wantStatus(t, resp, http.StatusOK)
	if subs := b.Subscriptions(); len(subs) != 1 || subs[0].Destination != "https://127.0.0.1:9/events" {
		t.Fatalf("subscriptions %+v", subs)
	}
	resp, _ = c.do(http.MethodDelete, loc, nil)
	wantStatus(t, resp, http.StatusNoContent)
	resp, _ = c.do(http.MethodGet, loc, nil)
	wantStatus(t, resp, http.StatusNotFound)
}
