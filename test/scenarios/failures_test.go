package scenarios

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openkeel/ironic/testing/await"
	"github.com/openkeel/ironic/testing/ipa"
	"github.com/openkeel/ironic/testing/vbm"
)

// The failure paths of seed 001's diagnostics, on real processes: a clean
// step failing on the agent fails cleaning naming the step, keeps the
// ramdisk's logs ([agent]/deploy_logs_collect = on_failure, the default)
// and leaves the node on in maintenance, as upstream's tear down of a
// cleaning failure does; an abort while the agent runs a step fails
// cleaning naming that step and powers the node off.
func TestScenarioCleaningFailures(t *testing.T) {
	s := newScenario(t, "")
	broken := s.lab.Machine("node-f1", "52:54:00:00:f1:01")
	broken.Agent.Handle("clean.execute_clean_step",
		ipa.AsyncFail(1, ipa.CommandError("CleaningError", "Clean step failed", "Error erasing block device: disk on fire", 500)))
	slow := s.lab.Machine("node-f2", "52:54:00:00:f2:01")
	slow.Agent.Handle("clean.execute_clean_step", ipa.ExecuteStep("clean", 1<<20, nil))

	enrolled := map[*vbm.Machine]string{}
	for _, m := range []*vbm.Machine{broken, slow} {
		id := s.enroll(m, m.ID, vbm.BMCPassword)
		s.must(http.StatusCreated, "POST", "/v1/ports", map[string]any{"node_uuid": id, "address": m.MACs[0], "pxe_enabled": true})
		s.provision(id, map[string]any{"target": "manage"}, "manageable", 60*time.Second)
		s.must(http.StatusAccepted, "PUT", "/v1/nodes/"+id+"/states/provision", map[string]any{"target": "provide"})
		enrolled[m] = id
	}

	id := enrolled[broken]
	n := s.waitState(id, "clean failed", 120*time.Second)
	le, _ := n["last_error"].(string)
	if !strings.HasPrefix(le, "Clean step deploy.erase_devices_metadata failed on node "+id+". ") || !strings.Contains(le, "disk on fire") {
		t.Errorf("last_error %q", le)
	}
	if n["maintenance"] != true || n["fault"] != "clean failure" || n["power_state"] != "power on" {
		t.Errorf("after the failed step: maintenance %v fault %v power %v", n["maintenance"], n["fault"], n["power_state"])
	}
	logs, _ := filepath.Glob(filepath.Join(s.dir, "deploy-logs", id+"_"+broken.ID+"_cleaning_*.tar.gz"))
	if len(logs) != 1 {
		t.Errorf("ramdisk logs kept: %v", logs)
	} else if data, err := os.ReadFile(logs[0]); err != nil || len(data) == 0 {
		t.Errorf("ramdisk logs archive: %d bytes (%v)", len(data), err)
	}

	id = enrolled[slow]
	await.UntilReason(t, 120*time.Second, "the first clean step to start", func() (bool, string) {
		n = s.must(http.StatusOK, "GET", "/v1/nodes/"+id, nil)
		step, _ := n["clean_step"].(map[string]any)
		return n["provision_state"] == "clean wait" && step["step"] == "erase_devices_metadata",
			fmt.Sprintf("the agent never started the first clean step: %v %v", n["provision_state"], n["clean_step"])
	})
	s.must(http.StatusAccepted, "PUT", "/v1/nodes/"+id+"/states/provision", map[string]any{"target": "abort"})
	n = s.waitState(id, "clean failed", 60*time.Second)
	if le, _ := n["last_error"].(string); le != `By request, the clean operation was aborted during or after the completion of step "deploy.erase_devices_metadata"` {
		t.Errorf("last_error after abort %q", le)
	}
	if n["power_state"] != "power off" {
		t.Errorf("power after abort %v", n["power_state"])
	}
}
