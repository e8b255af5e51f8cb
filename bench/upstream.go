package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Upstream is Debian's python3-ironic (21.4) run beside ours in the same
// run: its all-in-one process (API and conductor, no RPC bus) on a SQLite
// file of its own dbsync, noauth, fake-hardware, power sync off, as
// /work/shared/tools/reference-ironic.sh starts it for behaviour checks.

const (
	upstreamPython = "/usr/bin/python3"
	upstreamServer = "/usr/bin/ironic"
	upstreamDBSync = "/usr/bin/ironic-dbsync"
)

// upstreamInstalled says whether Debian's Ironic is there to compare with.
func upstreamInstalled() bool {
	for _, p := range []string{upstreamServer, upstreamDBSync, "/usr/lib/python3/dist-packages/ironic/__init__.py"} {
		if _, err := os.Stat(p); err != nil {
			return false
		}
	}
	return true
}

// upstreamVersion is the Debian package's version.
func upstreamVersion() string {
	out, err := exec.Command("dpkg-query", "-W", "-f=${Version}", "python3-ironic").Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}

func upstreamConf(dir string, port, filesPort int) string {
	return fmt.Sprintf(`[DEFAULT]
debug = false
log_file = %[1]s/ironic.log
use_stderr = false
host = bench-upstream
auth_strategy = noauth
rpc_transport = none
state_path = %[1]s
tempdir = %[1]s/tmp
enabled_hardware_types = fake-hardware
enabled_bios_interfaces = fake,no-bios
enabled_boot_interfaces = fake
enabled_console_interfaces = fake,no-console
enabled_deploy_interfaces = fake
enabled_inspect_interfaces = fake,no-inspect
enabled_management_interfaces = fake
enabled_network_interfaces = noop
enabled_power_interfaces = fake
enabled_raid_interfaces = fake,no-raid
enabled_rescue_interfaces = fake,no-rescue
enabled_storage_interfaces = noop
enabled_vendor_interfaces = fake,no-vendor
default_network_interface = noop

[api]
host_ip = 127.0.0.1
port = %[2]d

[database]
connection = sqlite:///%[1]s/ironic.sqlite

[conductor]
sync_power_state_interval = 0

[dhcp]
dhcp_provider = none

[deploy]
http_root = %[1]s/httpboot
http_url = http://127.0.0.1:%[3]d

[pxe]
tftp_root = %[1]s/tftpboot
tftp_master_path = %[1]s/tftpboot/master_images
images_path = %[1]s/images
instance_master_path = %[1]s/master_images

[oslo_concurrency]
lock_path = %[1]s/locks
`, dir, port, filesPort)
}

// startUpstream builds upstream's schema with its dbsync (create_schema:
// SQLite cannot run its migration chain) and starts its all-in-one.
func startUpstream(ctx context.Context, s *settings) (*deployment, error) {
	dir := s.upstreamDir
	if err := os.RemoveAll(dir); err != nil {
		return nil, fmt.Errorf("upstream folder: %w", err)
	}
	for _, sub := range []string{"tmp", "locks", "httpboot", "tftpboot/master_images", "images", "master_images"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return nil, fmt.Errorf("upstream folder: %w", err)
		}
	}
	port := s.upstreamPort
	if port == 0 {
		var err error
		if port, err = freePort(); err != nil {
			return nil, err
		}
	}
	filesPort, err := freePort()
	if err != nil {
		return nil, err
	}
	conf := filepath.Join(dir, "ironic.conf")
	if err := os.WriteFile(conf, []byte(upstreamConf(dir, port, filesPort)), 0o600); err != nil {
		return nil, fmt.Errorf("upstream config: %w", err)
	}
	if err := runOnce(ctx, dir, upstreamPython, upstreamDBSync, "--config-file", conf, "create_schema"); err != nil {
		return nil, err
	}
	p, err := startProcess("upstream", dir, upstreamPython, upstreamServer, "--config-file", conf)
	if err != nil {
		return nil, err
	}
	dbPath := filepath.Join(dir, "ironic.sqlite")
	d := &deployment{
		base:        fmt.Sprintf("http://127.0.0.1:%d", port),
		procs:       []*process{p},
		sqlDriver:   "sqlite",
		sqlDSN:      "file:" + dbPath + "?mode=ro&_pragma=busy_timeout(10000)",
		sqlWriteDSN: "file:" + dbPath + "?_pragma=busy_timeout(10000)",
		dir:         dir,
	}
	if !s.keep {
		d.cleanup = append(d.cleanup, func() { os.RemoveAll(dir) })
	}
	if err := waitHTTP(ctx, d.base+"/v1/", p); err != nil {
		d.stop()
		return nil, err
	}
	return d, nil
}
