package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The example configurations of docs/examples stay current: each passes
// `status upgrade check` (no unknown option, its drivers enable) and
// starts a conductor that warns about nothing. Only what the test machine
// cannot provide is overridden by a second file: the database, loopback
// ports and writable folders.
func TestDocsExampleConfigurations(t *testing.T) {
	examples, err := filepath.Glob("../../docs/examples/*.conf")
	if err != nil {
		t.Fatal(err)
	}
	if len(examples) < 3 {
		t.Fatalf("docs/examples holds %d configurations, want the Redfish, IPMI and mixed fleets", len(examples))
	}
	if _, err := exec.LookPath("ipmitool"); err != nil {
		t.Skip("the IPMI examples enable the ipmitool interfaces, which probe the program")
	}
	for _, example := range examples {
		t.Run(filepath.Base(example), func(t *testing.T) {
			example, err := filepath.Abs(example)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			htpasswd := filepath.Join(dir, "htpasswd")
			if err := os.WriteFile(htpasswd, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			local := filepath.Join(dir, "local.conf")
			text := fmt.Sprintf(`[database]
connection = sqlite:///%[1]s/db.sqlite
[json_rpc]
host_ip = 127.0.0.1
port = %[2]d
http_basic_auth_user_file = %[3]s
[deploy]
http_root = %[1]s/httpboot
http_url = http://127.0.0.1:%[4]d
[pxe]
tftp_root = %[1]s/tftpboot
tftp_master_path = %[1]s/tftpboot/master_images
images_path = %[1]s/images
instance_master_path = %[1]s/master_images
[dnsmasq]
dhcp_hostsdir = %[1]s/hostsdir.d
dhcp_optsdir = %[1]s/optsdir.d
`, dir, freePort(t), htpasswd, freePort(t))
			if err := os.WriteFile(local, []byte(text), 0o600); err != nil {
				t.Fatal(err)
			}
			args := []string{"--config-file", example, "--config-file", local}
			if out, code := runIronic(t, dir, "ironic", append(args, "dbsync", "upgrade")...); code != 0 {
				t.Fatalf("dbsync upgrade: exit %d\n%s", code, out)
			}
			if out, code := runIronic(t, dir, "ironic", append(args, "status", "upgrade", "check")...); code != 0 {
				t.Fatalf("status upgrade check: exit %d\n%s", code, out)
			}
			p := startIronic(t, dir, "ironic", append(args, "conductor")...)
			waitOutput(t, p, "successfully started conductor")
			terminate(t, p)
			if log := p.out.String(); strings.Contains(log, "level=WARN") || strings.Contains(log, "level=ERROR") {
				t.Errorf("the conductor warned:\n%s", log)
			}
		})
	}
}
