package takeover

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/openkeel/ironic/testing/await"
	"github.com/openkeel/ironic/testing/service"
)

// debianPython runs Debian's Ironic scripts: they need the system
// interpreter, not a python3 that PATH may put first.
const debianPython = "/usr/bin/python3"

// requireDebianIronic skips the test when Debian's Ironic is not installed,
// or fails it when IRONIC_SPEC_REQUIRED=1 says it must be.
func requireDebianIronic(t *testing.T) {
	t.Helper()
	for _, p := range []string{debianPython, "/usr/bin/ironic", "/usr/bin/ironic-dbsync"} {
		if _, err := os.Stat(p); err != nil {
			if os.Getenv("IRONIC_SPEC_REQUIRED") == "1" {
				t.Fatalf("Debian's Ironic 21.4 is required (IRONIC_SPEC_REQUIRED=1): %v", err)
			}
			t.Skipf("Debian's Ironic 21.4 is not installed (apt-get install ironic-api ironic-conductor): %v", err)
		}
	}
}

// run runs a command to its end in dir and fails the test, showing its
// output, when it does not succeed.
func run(t *testing.T, dir string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return string(out)
}

// startService starts a server in dir with its output in dir/<name>.log
// (testing/service) and waits until it answers on base+"/v1"; it is
// stopped at the test's end if it was not before.
func startService(t *testing.T, dir, name, base string, argv ...string) *service.Process {
	t.Helper()
	s := service.Start(t, dir, name, argv...)
	s.StopTimeout = 30 * time.Second
	await.UntilReason(t, 90*time.Second, name+" to answer on "+base, func() (bool, string) {
		if s.Exited() {
			t.Fatalf("%s exited during start-up", name)
		}
		resp, err := http.Get(base + "/v1")
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, resp.Status
	})
	return s
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// writeConf writes ironic.conf for either service: the reference
// instance's drivers and interfaces (../shared/tools/reference-ironic.sh),
// so that both serve the same nodes alike, on the given database.
func writeConf(t *testing.T, dir, dbURL string, port int) string {
	t.Helper()
	for _, sub := range []string{"tmp", "locks", "httpboot", "tftpboot/master_images", "images", "master_images"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	conf := fmt.Sprintf(`[DEFAULT]
host = refironic
auth_strategy = noauth
rpc_transport = none
state_path = %[1]s
tempdir = %[1]s/tmp
enabled_hardware_types = fake-hardware,ipmi,redfish
enabled_bios_interfaces = fake,no-bios,redfish
enabled_boot_interfaces = fake,ipxe,pxe,redfish-virtual-media
enabled_console_interfaces = fake,no-console
enabled_deploy_interfaces = fake,direct,ramdisk
enabled_inspect_interfaces = fake,no-inspect,redfish
enabled_management_interfaces = fake,ipmitool,redfish
enabled_network_interfaces = noop
enabled_power_interfaces = fake,ipmitool,redfish
enabled_raid_interfaces = fake,no-raid,agent,redfish
enabled_rescue_interfaces = fake,no-rescue
enabled_storage_interfaces = fake,noop
enabled_vendor_interfaces = fake,no-vendor,ipmitool,redfish
default_network_interface = noop

[api]
host_ip = 127.0.0.1
port = %[2]d

[database]
connection = %[3]s

[conductor]
automated_clean = true
sync_power_state_interval = 0

[dhcp]
dhcp_provider = none

[deploy]
http_root = %[1]s/httpboot
http_url = http://127.0.0.1:%[4]d

[pxe]
tftp_root = %[1]s/tftpboot
tftp_master_path = %[1]s/tftpboot/master_images
images_path = %[1]s/images
instance_master_path = %[1]s/master_images

[oslo_concurrency]
lock_path = %[1]s/locks
`, dir, port, dbURL, freePort(t))
	path := filepath.Join(dir, "ironic.conf")
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
