package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/openkeel/ironic/internal/secrets"
	"github.com/openkeel/ironic/internal/store"
	"github.com/openkeel/ironic/internal/store/storetest"
)

// writeKey writes a key file of the ring in dir/keys: base64, as
// `openssl rand -base64 32` makes it.
func writeKey(t *testing.T, dir, id string, b byte) {
	t.Helper()
	keys := filepath.Join(dir, "keys")
	if err := os.MkdirAll(keys, 0o700); err != nil {
		t.Fatal(err)
	}
	text := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{b}, secrets.KeySize)) + "\n"
	if err := os.WriteFile(filepath.Join(keys, id), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// enrol creates a node through the API with BMC and instance secrets
// named after i and returns its UUID.
func enrol(t *testing.T, base string, i int) string {
	t.Helper()
	body := fmt.Sprintf(`{"name": "sec-%d", "driver": "fake-hardware", "driver_info": {"ipmi_address": "10.0.0.%d",
		"ipmi_username": "admin", "ipmi_password": "ipmi-pw-%d", "redfish_password": "redfish-pw-%d"},
		"instance_info": {"image_source": "img", "image_url": "https://swift/temp?sig=sig-%d"}}`, i, i, i, i, i)
	req, err := http.NewRequest(http.MethodPost, base+"/v1/nodes", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-OpenStack-Ironic-API-Version", "latest")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("enrol: %d %s", resp.StatusCode, b)
	}
	var n struct{ UUID string }
	if err := json.Unmarshal(b, &n); err != nil {
		t.Fatal(err)
	}
	return n.UUID
}

// postJSON posts body to base+path at the latest version and fails the
// test unless it is created.
func postJSON(t *testing.T, base, path, body string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-OpenStack-Ironic-API-Version", "latest")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("POST %s: %d %s", path, resp.StatusCode, b)
	}
}

// otherPlain are the secrets of the volume target, deploy template and
// runbook the test creates: the other places upstream masks.
var otherPlain = []string{"chap-pw-e2e", "template-pw-e2e", "runbook-pw-e2e"}

// plainOf are the secrets enrol(i) wrote.
func plainOf(i int) []string {
	return []string{fmt.Sprintf("ipmi-pw-%d", i), fmt.Sprintf("redfish-pw-%d", i), fmt.Sprintf("sig-%d", i)}
}

// checkRow is the result line of one upgrade check.
func checkRow(out, name string) string {
	m := regexp.MustCompile(`Check: ` + regexp.QuoteMeta(name) + `\s*\|\n\| Result: (\w+)\s*\|\n\| Details: ([^|]*)`).FindStringSubmatch(out)
	if m == nil {
		return ""
	}
	return m[1] + ": " + strings.TrimSpace(m[2])
}

// Issue 25: secrets enrolled through the API are never stored plain once a
// key ring is configured; `secrets encrypt` killed half-way and run again
// loses nothing; a service with the wrong key refuses to start; rotation
// and decryption; the upgrade check counts plain secrets.
func TestSecretsAtRestEndToEnd(t *testing.T) {
	ctx := context.Background()
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			dir := t.TempDir()
			port := freePort(t)
			base := fmt.Sprintf("http://127.0.0.1:%d", port)
			common := fmt.Sprintf("[api]\nport = %d\n[database]\nconnection = %s\n", port, b.URL)
			conf := writeConf(t, dir, common)

			// As upstream: without a key ring secrets are stored plain.
			p := startIronic(t, dir, "ironic", "--config-file", conf)
			waitHealthy(t, p, base+"/healthcheck")
			const before = 6
			for i := range before {
				enrol(t, base, i)
			}
			terminate(t, p)
			out, _ := runIronic(t, dir, "ironic", "--config-file", conf, "status", "upgrade", "check")
			if got := checkRow(out, "Secrets Encrypted at Rest"); !strings.HasPrefix(got, "Warning: 18 secret values of 6 nodes") {
				t.Fatalf("upgrade check without a key ring: %q\n%s", got, out)
			}

			writeKey(t, dir, "k1", 1)
			conf = writeConf(t, dir, common+"[openkeel_secrets]\nkey_files = "+filepath.Join(dir, "keys")+"\n")
			// Killed (SIGKILL) after two nodes: whole rows or nothing.
			cmd := exec.Command(binaryPath, "--config-file", conf, "secrets", "encrypt")
			cmd.Env = append(os.Environ(), killAfterEnv+"=2")
			killed, err := cmd.CombinedOutput()
			if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
				t.Fatalf("encrypt with the kill hook: %v\n%s", err, killed)
			}
			sv, err := store.SurveySecrets(ctx, b.DB)
			if err != nil || sv.PlainNodes != before-2 || sv.Counts.Sealed["k1"] != 6 {
				t.Fatalf("after the kill: %+v %v", sv, err)
			}
			out, code := runIronic(t, dir, "ironic", "--config-file", conf, "secrets", "encrypt")
			if code != 0 || !strings.Contains(out, "6 nodes and 0 volume targets and steps read, 4 rewritten, 12 values encrypted") {
				t.Fatalf("encrypt again: exit %d\n%s", code, out)
			}
			out, _ = runIronic(t, dir, "ironic", "--config-file", conf, "status", "upgrade", "check")
			if got := checkRow(out, "Secrets Encrypted at Rest"); got != "Success: None" {
				t.Fatalf("upgrade check after encrypt: %q\n%s", got, out)
			}

			// The service with the key: new nodes are sealed as written,
			// and answers never carry sealed text.
			p = startIronic(t, dir, "ironic", "--config-file", conf)
			waitHealthy(t, p, base+"/healthcheck")
			for i := before; i < before+2; i++ {
				u := enrol(t, base, i)
				resp, err := http.Get(base + "/v1/nodes/" + u)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK || bytes.Contains(body, []byte(secrets.Prefix)) {
					t.Fatalf("GET node: %d %s", resp.StatusCode, body)
				}
				if i == before {
					postJSON(t, base, "/v1/volume/targets", `{"node_uuid": "`+u+`", "volume_type": "iscsi", "volume_id": "vol-e2e",
						"boot_index": 0, "properties": {"target_iqn": "iqn.2026-01.example:e2e", "auth_password": "`+otherPlain[0]+`"}}`)
				}
			}
			postJSON(t, base, "/v1/deploy_templates", `{"name": "CUSTOM_E2E_SECRET", "steps": [{"interface": "bios",
				"step": "apply_configuration", "priority": 150, "args": {"settings": [], "password": "`+otherPlain[1]+`"}}]}`)
			postJSON(t, base, "/v1/runbooks", `{"name": "CUSTOM_E2E_RUNBOOK", "steps": [{"interface": "bios",
				"step": "apply_configuration", "order": 1, "args": {"settings": [], "password": "`+otherPlain[2]+`"}}]}`)
			resp, err := http.Get(base + "/v1/nodes/detail")
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || bytes.Contains(body, []byte(secrets.Prefix)) {
				t.Fatalf("GET nodes/detail: %d %s", resp.StatusCode, body)
			}
			terminate(t, p)
			all := storetest.AllText(t, b.DB)
			for i := range before + 2 {
				for _, s := range plainOf(i) {
					if strings.Contains(all, s) {
						t.Errorf("%q is stored in plain text", s)
					}
				}
			}
			for _, s := range otherPlain {
				if strings.Contains(all, s) {
					t.Errorf("%q is stored in plain text", s)
				}
			}

			// The wrong key: the service refuses to start, naming the key.
			wrongDir := filepath.Join(dir, "wrong")
			writeKey(t, wrongDir, "k2", 2)
			wrong := writeConf(t, wrongDir, common+"[openkeel_secrets]\nkey_files = "+filepath.Join(wrongDir, "keys")+"\n")
			out, code = runIronic(t, dir, "ironic", "--config-file", wrong)
			if code == 0 || !strings.Contains(out, "refusing to start") || !strings.Contains(out, `"k1"`) {
				t.Fatalf("all-in-one with the wrong key: exit %d\n%s", code, out)
			}

			// Rotation to k2, then back to plain text for upstream.
			writeKey(t, dir, "k2", 2)
			conf = writeConf(t, dir, common+"[openkeel_secrets]\nkey_files = "+filepath.Join(dir, "keys")+"\ncurrent_key_id = k2\n")
			out, code = runIronic(t, dir, "ironic", "--config-file", conf, "secrets", "rotate")
			if code != 0 || !strings.Contains(out, "8 nodes and 3 volume targets and steps read, 11 rewritten, 27 values re-encrypted under key k2") {
				t.Fatalf("rotate: exit %d\n%s", code, out)
			}
			out, code = runIronic(t, dir, "ironic", "--config-file", conf, "secrets", "decrypt")
			if code != 0 || !strings.Contains(out, "11 rewritten, 27 values decrypted") {
				t.Fatalf("decrypt: exit %d\n%s", code, out)
			}
			all = storetest.AllText(t, b.DB)
			if strings.Contains(all, secrets.Prefix) || !strings.Contains(all, "ipmi-pw-7") || !strings.Contains(all, otherPlain[2]) {
				t.Fatal("sealed values left after decrypt")
			}
		})
	}
}
