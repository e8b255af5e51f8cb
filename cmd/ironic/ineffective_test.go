package main

import (
	"fmt"
	"strings"
	"testing"
)

// Issue 23 item 8: an option set to a value other than its default that
// openkeel does not read is warned about at start-up, with why, and listed
// by `status upgrade check`; one set to its default is not.
func TestIneffectiveOptionsWarned(t *testing.T) {
	dir := t.TempDir()
	port := freePort(t)
	conf := writeConf(t, dir, fmt.Sprintf("[DEFAULT]\nrpc_transport = oslo\n[api]\nport = %d\napi_workers = 8\n"+
		"[profiler]\nenabled = true\nhmac_keys = SECRET_KEY\n[oslo_concurrency]\nlock_path = /var/lock/ironic\n"+
		"[database]\nconnection = sqlite:///%s/db.sqlite\n", port, dir))
	p := startIronic(t, dir, "ironic", "--config-file", conf)
	waitHealthy(t, p, fmt.Sprintf("http://127.0.0.1:%d/healthcheck", port))
	terminate(t, p)
	log := p.out.String()
	want := []string{
		"option [api]/api_workers is set but has no effect in openkeel (not applicable: number of Python WSGI worker processes;",
		"option [oslo_concurrency]/lock_path is set but has no effect in openkeel (not applicable: oslo.concurrency's file locks",
		"option [profiler]/enabled is set but has no effect in openkeel (not applicable: osprofiler traces Python calls;",
		"option [DEFAULT]/rpc_transport = oslo has no effect in the all-in-one process (",
	}
	for _, w := range want {
		if !strings.Contains(log, `level=WARN msg="`+w) {
			t.Errorf("start-up log lacks a warning %q:\n%s", w, log)
		}
	}
	if strings.Contains(log, "hmac_keys") {
		t.Errorf("[profiler]/hmac_keys is set to its default, yet warned about:\n%s", log)
	}
	out, code := runIronic(t, dir, "ironic", "--config-file", conf, "status", "upgrade", "check")
	if code != 1 || !strings.Contains(out, "| Check: Configuration Options") {
		t.Fatalf("status upgrade check: exit %d, want 1 with the Configuration Options warning\n%s", code, out)
	}
	for _, w := range want {
		if !strings.Contains(out, w[:strings.Index(w, " (")]) {
			t.Errorf("status upgrade check does not list %q\n%s", w, out)
		}
	}
}
