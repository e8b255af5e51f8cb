package mixedfleet

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/store/storetest"
	"github.com/openkeel/ironic/testing/await"
	"github.com/openkeel/ironic/testing/cluster"
	"github.com/openkeel/ironic/testing/rabbitmq"
)

// The two conductor addresses: Debian's 21.4 client calls every conductor
// at the one [json_rpc]port, so the second conductor needs an address of
// its own (doc.go).
const (
	firstHost  = "127.0.0.1"
	secondHost = "127.0.0.2"
)

// fleet is the shared configuration of the processes: one database, one
// JSON-RPC port, fake-hardware only.
type fleet struct {
	t       *testing.T
	dir     string
	bin     string
	db      string
	rpcPort int
	// transport is what every process reads after the common options:
	// the oslo.messaging variant's rpc_transport and broker.
	transport string
}

func newFleet(t *testing.T) *fleet {
	f := &fleet{t: t, dir: t.TempDir(), bin: cluster.Binary(t), db: storetest.MySQLURL(t), rpcPort: freePort(t)}
	for _, sub := range []string{"tmp", "locks", "httpboot", "tftpboot/master_images", "images", "master_images"} {
		if err := os.MkdirAll(filepath.Join(f.dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// conf writes dir/<name>.conf: the fleet's common options, then extra
// (later values win, as in oslo.config). Heartbeats and ring resets are
// short so that a stopped conductor's nodes move within seconds.
func (f *fleet) conf(name, extra string) string {
	f.t.Helper()
	text := fmt.Sprintf(`[DEFAULT]
auth_strategy = noauth
rpc_transport = json-rpc
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
hash_ring_reset_interval = 2
[json_rpc]
auth_strategy = noauth
host_ip = %[4]s
port = %[2]d
[database]
connection = %[3]s
[conductor]
heartbeat_interval = 2
heartbeat_timeout = 10
sync_power_state_interval = 0
automated_clean = true
[dhcp]
dhcp_provider = none
[deploy]
http_root = %[1]s/httpboot
http_url = http://%[4]s:%[5]d
[pxe]
tftp_root = %[1]s/tftpboot
tftp_master_path = %[1]s/tftpboot/master_images
images_path = %[1]s/images
instance_master_path = %[1]s/master_images
[oslo_concurrency]
lock_path = %[1]s/locks
%[7]s
%[6]s
`, f.dir, f.rpcPort, f.db, firstHost, freePort(f.t), extra, f.transport)
	path := filepath.Join(f.dir, name+".conf")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		f.t.Fatal(err)
	}
	return path
}

// pinned is what our processes add: 21.4's RPC and object versions.
const pinned = "[DEFAULT]\npin_release_version = 21.4\n"

func (f *fleet) ourConductor(name, host string) *proc {
	extra := pinned + fmt.Sprintf("[DEFAULT]\nhost = %s\n[json_rpc]\nhost_ip = %s\n", host, host)
	return start(f.t, f.dir, name, f.bin, "--config-file", f.conf(name, extra), "conductor")
}

func (f *fleet) debianConductor(name, host string) *proc {
	extra := fmt.Sprintf("[DEFAULT]\nhost = %s\n[json_rpc]\nhost_ip = %s\n", host, host)
	return start(f.t, f.dir, name, debianPython, "/usr/bin/ironic-conductor", "--config-file", f.conf(name, extra))
}

func (f *fleet) ourAPI(name string) (api, *proc) {
	port := freePort(f.t)
	p := start(f.t, f.dir, name, f.bin, "--config-file", f.conf(name, pinned+fmt.Sprintf("[api]\nhost_ip = 127.0.0.1\nport = %d\n", port)), "api")
	a := api{t: f.t, name: "our API", base: fmt.Sprintf("http://127.0.0.1:%d", port)}
	a.waitUp(p)
	return a, p
}

func (f *fleet) debianAPI(name string) (api, *proc) {
	port := freePort(f.t)
	p := start(f.t, f.dir, name, debianPython, "/usr/bin/ironic-api", "--config-file", f.conf(name, fmt.Sprintf("[api]\nhost_ip = 127.0.0.1\nport = %d\n", port)))
	a := api{t: f.t, name: "Debian's API", base: fmt.Sprintf("http://127.0.0.1:%d", port)}
	a.waitUp(p)
	return a, p
}

// TestRollingMigrationOverJSONRPC migrates a fleet from Debian's Ironic
// 21.4 to ours step by step, as docs/migrating.md describes it.
func TestRollingMigrationOverJSONRPC(t *testing.T) {
	requireDebianIronic(t)
	rollingMigration(t, newFleet(t))
}

// TestRollingMigrationOverOslo is the same migration with every process
// on rpc_transport = oslo, through a RabbitMQ node of the test's own (the
// conductors' queues are named by host, which the JSON-RPC variant's
// fixed addresses would share with another run on the machine's broker).
func TestRollingMigrationOverOslo(t *testing.T) {
	requireDebianIronic(t)
	broker := rabbitmq.Start(t)
	f := newFleet(t)
	f.transport = fmt.Sprintf("[DEFAULT]\nrpc_transport = oslo\ntransport_url = %s\nrpc_response_timeout = 30\n", broker.URL())
	rollingMigration(t, f)
}

func rollingMigration(t *testing.T, f *fleet) {
	phase := time.Now()
	lap := func(what string) {
		t.Logf("%s: %s", what, time.Since(phase).Round(100*time.Millisecond))
		phase = time.Now()
	}

	// The database is 21.4's; the migration begins by bringing its
	// schema to ours, which 21.4's services still run on.
	run(t, f.dir, debianPython, "/usr/bin/ironic-dbsync", "--config-file", f.conf("dbsync-21.4", ""), "upgrade")
	run(t, f.dir, f.bin, "--config-file", f.conf("dbsync", pinned), "dbsync", "upgrade")
	lap("schema of 21.4, upgraded by ours")

	// (a) Debian's API calling our conductor.
	goFirst := f.ourConductor("our-conductor-1", firstHost)
	pyAPI, _ := f.debianAPI("debian-api")
	pyAPI.waitConductor(firstHost, goFirst)
	pyAPI.lifecycle("a-node")
	lap("(a) Debian's API, our conductor: enrol, manage, provide, deploy, power off/on, undeploy")
	goFirst.Stop(t)

	// (b) Our API calling Debian's conductor.
	pyCond := f.debianConductor("debian-conductor", firstHost)
	goAPI, _ := f.ourAPI("our-api")
	goAPI.waitConductor(firstHost, pyCond)
	goAPI.lifecycle("b-node")
	// Pinned, our API serves what 21.4 serves, no newer microversion.
	if code, _ := goAPI.callAt("1.83", http.MethodGet, "/v1/nodes", nil); code != http.StatusNotAcceptable {
		t.Errorf("our pinned API answered 1.83 with %d, want 406", code)
	}
	lap("(b) our API, Debian's conductor: enrol, manage, provide, deploy, power off/on, undeploy")

	// (c) One conductor of each behind both APIs.
	goSecond := f.ourConductor("our-conductor-2", secondHost)
	for _, a := range []api{pyAPI, goAPI} {
		a.waitConductor(firstHost, pyCond)
		a.waitConductor(secondHost, goSecond)
	}
	apis := []api{pyAPI, goAPI}
	owner := map[string]string{}
	var nodes []string
	count := map[string]int{}
	// Enough nodes that the ring gives each conductor two.
	for i := 0; len(nodes) < 4 || count[firstHost] < 2 || count[secondHost] < 2; i++ {
		if i == 24 {
			t.Fatalf("24 nodes and the ring gives %v", count)
		}
		name := fmt.Sprintf("c-node-%d", i)
		apis[i%2].enrol(name)
		nodes = append(nodes, name)
		// Each API refreshes its ring every hash_ring_reset_interval:
		// they agree once both have seen both conductors.
		var o0, o1 string
		await.UntilReason(t, 30*time.Second, "both APIs to map "+name+" to one conductor", func() (bool, string) {
			o0, o1 = fmt.Sprint(pyAPI.node(name)["conductor"]), fmt.Sprint(goAPI.node(name)["conductor"])
			return o0 == o1, fmt.Sprintf("Debian's API maps it to %s, ours to %s", o0, o1)
		})
		owner[name] = o0
		count[o0]++
	}
	t.Logf("(c) %d nodes spread by the ring: %v", len(nodes), count)
	for _, step := range []struct{ target, state string }{{"manage", "manageable"}, {"provide", "available"}, {"active", "active"}} {
		for i, n := range nodes {
			apis[i%2].must(http.MethodPut, "/v1/nodes/"+n+"/states/provision", map[string]any{"target": step.target}, http.StatusAccepted)
		}
		for i, n := range nodes {
			apis[(i+1)%2].waitNode(n, "provision_state", step.state)
		}
	}
	for _, target := range []string{"power off", "power on"} {
		for i, n := range nodes {
			apis[(i+1)%2].power(n, target)
		}
	}
	// Half the nodes are undeployed while both conductors run; the rest
	// stay active for the take-over.
	for i, n := range nodes[:len(nodes)/2] {
		apis[i%2].provision(n, "deleted", "available")
	}
	lap("(c) both conductors behind both APIs")

	// Debian's conductor stops: both APIs move its nodes to ours, which
	// then serves them.
	pyCond.Stop(t)
	for _, a := range apis {
		await.UntilReason(t, 120*time.Second, a.name+" to map every node to "+secondHost, func() (bool, string) {
			for _, n := range nodes {
				if o := fmt.Sprint(a.node(n)["conductor"]); o != secondHost {
					return false, n + " on " + o
				}
			}
			return true, ""
		})
	}
	var taken []string
	for _, n := range nodes {
		if owner[n] == firstHost {
			taken = append(taken, n)
		}
	}
	for i, n := range taken {
		a := apis[i%2]
		a.power(n, "power off")
		a.power(n, "power on")
		if st := a.node(n)["provision_state"]; st == "active" {
			a.provision(n, "deleted", "available")
		}
		a.provision(n, "active", "active")
	}
	lap(fmt.Sprintf("take-over: our conductor served the %d nodes of Debian's", len(taken)))
}
