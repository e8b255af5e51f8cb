package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
)

// fakeHardware is the driver configuration of every process: the
// all-in-one defaults, written out so that api and conductor agree.
const fakeHardware = `enabled_hardware_types = fake-hardware
enabled_bios_interfaces = fake,no-bios
enabled_boot_interfaces = fake
enabled_console_interfaces = fake,no-console
enabled_deploy_interfaces = fake
enabled_firmware_interfaces = fake,no-firmware
enabled_inspect_interfaces = fake,no-inspect
enabled_management_interfaces = fake
enabled_network_interfaces = noop
enabled_power_interfaces = fake
enabled_raid_interfaces = fake,no-raid
enabled_rescue_interfaces = fake,no-rescue
enabled_storage_interfaces = noop
enabled_vendor_interfaces = fake,no-vendor
`

// process is one started ironic; stop ends it with SIGTERM and waits.
type process struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error
}

func startProcess(name, dir, binary string, args ...string) (*process, error) {
	logPath := filepath.Join(dir, name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("%s log: %w", name, err)
	}
	cmd := exec.Command(binary, args...)
	cmd.Dir = dir
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	return p, nil
}

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop asks for a graceful stop and kills after 20 s.
func (p *process) stop() {
	if p.exited() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// logTail is the end of the process's log, for error messages.
func (p *process) logTail() string {
	b, err := os.ReadFile(p.log)
	if err != nil {
		return ""
	}
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

// pid is the process's id.
func (p *process) pid() int { return p.cmd.Process.Pid }

// cpuTotal sums the CPU of the deployment's processes and their children.
func (d *deployment) cpuTotal() (time.Duration, error) {
	var total time.Duration
	for _, p := range d.procs {
		c, err := treeCPU(p.pid())
		if err != nil {
			return 0, fmt.Errorf("%s: %w", p.name, err)
		}
		total += c
	}
	return total, nil
}

// runOnce runs a short ironic command (dbsync) to completion.
func runOnce(ctx context.Context, dir, binary string, args ...string) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w\n%s", binary, strings.Join(args, " "), err, out)
	}
	return nil
}

// freePort asks the kernel for an unused loopback port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitHTTP polls url until it answers 200, the process dies or 60 s pass.
func waitHTTP(ctx context.Context, url string, procs ...*process) error {
	deadline := time.Now().Add(60 * time.Second)
	for {
		for _, p := range procs {
			if p.exited() {
				return fmt.Errorf("%s exited: %v\n%s", p.name, p.err, p.logTail())
			}
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return fmt.Errorf("wait %s: %w", url, err)
		}
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not answer 200 within 60 s", url)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// deployment is a started service: its API address, its processes and
// the database the floor reads.
type deployment struct {
	base      string
	procs     []*process
	sqlDriver string
	sqlDSN    string
	// sqlWriteDSN is sqlDSN with writes allowed.
	sqlWriteDSN string
	cleanup     []func()
	// dir is the work folder; writeConf writes the configuration with
	// the power sync every syncInterval seconds (0: off, as during the
	// request windows). procs[conductor] runs the power sync, started
	// with conductorArgs; conductorMetrics is its /metrics.
	dir              string
	writeConf        func(syncInterval int) error
	conductor        int
	conductorArgs    []string
	conductorMetrics string
	// onStart is told of every process started after the deployment
	// (the restarted conductor), for the memory tracker.
	onStart func(*process)
}

func (d *deployment) stop() {
	for i := len(d.procs) - 1; i >= 0; i-- {
		d.procs[i].stop()
	}
	for i := len(d.cleanup) - 1; i >= 0; i-- {
		d.cleanup[i]()
	}
}

// startSQLite runs the all-in-one service on a SQLite file in dir. Every
// listener (API, http_root file server) is on a free port. Both
// deployments let agents call back over plain HTTP (require_tls off): the
// fake agents of the heartbeat load are on the loopback.
func startSQLite(ctx context.Context, s *settings, dir string) (*deployment, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	filesPort, err := freePort()
	if err != nil {
		return nil, err
	}
	keyRing, err := secretsConf(s, dir)
	if err != nil {
		return nil, err
	}
	dbPath := filepath.Join(dir, "ironic.sqlite")
	conf := filepath.Join(dir, "ironic.conf")
	d := &deployment{
		base:        fmt.Sprintf("http://127.0.0.1:%d", port),
		sqlDriver:   "sqlite",
		sqlDSN:      "file:" + dbPath + "?mode=ro&_pragma=busy_timeout(10000)",
		sqlWriteDSN: "file:" + dbPath + "?_pragma=busy_timeout(10000)",
		dir:         dir,
		writeConf: func(syncInterval int) error {
			text := fmt.Sprintf("[api]\nhost_ip = 127.0.0.1\nport = %d\n\n[agent]\nrequire_tls = false\n\n[conductor]\nsync_power_state_interval = %d\n\n[database]\nconnection = sqlite:///%s\n\n[deploy]\nhttp_url = http://127.0.0.1:%d\n"+keyRing,
				port, syncInterval, dbPath, filesPort)
			if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
				return fmt.Errorf("config: %w", err)
			}
			return nil
		},
		conductorArgs:    []string{"--config-file", conf},
		conductorMetrics: fmt.Sprintf("http://127.0.0.1:%d/metrics", port),
	}
	if err := d.writeConf(0); err != nil {
		return nil, err
	}
	p, err := startProcess("all-in-one", dir, s.binary, d.conductorArgs...)
	if err != nil {
		return nil, err
	}
	d.procs = []*process{p}
	if err := waitHTTP(ctx, d.base+"/v1/", p); err != nil {
		d.stop()
		return nil, err
	}
	return d, nil
}

// startMariaDB creates a throw-away database, brings it to our schema
// with dbsync and runs one conductor and one API process on it.
func startMariaDB(ctx context.Context, s *settings, dir string, logf func(string, ...any)) (*deployment, error) {
	server, err := mysql.ParseDSN(s.mysqlDSN)
	if err != nil {
		return nil, fmt.Errorf("BENCH_MYSQL_DSN: %w", err)
	}
	dbName := fmt.Sprintf("ironic_bench_%d_%d", os.Getpid(), time.Now().Unix())
	admin, err := sql.Open("mysql", server.FormatDSN())
	if err != nil {
		return nil, fmt.Errorf("mariadb: %w", err)
	}
	defer admin.Close()
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+dbName+" CHARACTER SET utf8mb4"); err != nil {
		return nil, fmt.Errorf("create database: %w", err)
	}
	d := &deployment{sqlDriver: "mysql"}
	if !s.keep {
		d.cleanup = append(d.cleanup, func() {
			// The run's context may be cancelled by now; the drop must
			// still happen.
			admin, err := sql.Open("mysql", server.FormatDSN())
			if err != nil {
				logf("drop database %s: %v", dbName, err)
				return
			}
			defer admin.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if _, err := admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+dbName); err != nil {
				logf("drop database %s: %v", dbName, err)
			}
		})
	} else {
		logf("keeping database %s", dbName)
	}
	floorCfg := server.Clone()
	floorCfg.DBName = dbName
	d.sqlDSN = floorCfg.FormatDSN()
	d.sqlWriteDSN = d.sqlDSN

	apiPort, err := freePort()
	if err != nil {
		d.stop()
		return nil, err
	}
	rpcPort, err := freePort()
	if err != nil {
		d.stop()
		return nil, err
	}
	cred := server.User
	if server.Passwd != "" {
		cred += ":" + server.Passwd
	}
	keyRing, err := secretsConf(s, dir)
	if err != nil {
		d.stop()
		return nil, err
	}
	conf := filepath.Join(dir, "ironic.conf")
	d.dir = dir
	d.writeConf = func(syncInterval int) error {
		text := fmt.Sprintf(`[DEFAULT]
host = 127.0.0.1
auth_strategy = noauth
%s
[api]
host_ip = 127.0.0.1
port = %d

[agent]
require_tls = false

[conductor]
sync_power_state_interval = %d

[json_rpc]
auth_strategy = noauth
host_ip = 127.0.0.1
port = %d

[database]
connection = mysql+pymysql://%s@%s/%s
`+keyRing, fakeHardware, apiPort, syncInterval, rpcPort, cred, server.Addr, dbName)
		if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
			return fmt.Errorf("config: %w", err)
		}
		return nil
	}
	if err := d.writeConf(0); err != nil {
		d.stop()
		return nil, err
	}
	if err := runOnce(ctx, dir, s.binary, "dbsync", "upgrade", "--config-file", conf); err != nil {
		d.stop()
		return nil, err
	}
	// The conductor serves its /metrics on the JSON-RPC listener.
	d.conductorArgs = []string{"conductor", "--config-file", conf}
	d.conductorMetrics = fmt.Sprintf("http://127.0.0.1:%d/metrics", rpcPort)
	cond, err := startProcess("conductor", dir, s.binary, d.conductorArgs...)
	if err != nil {
		d.stop()
		return nil, err
	}
	d.conductor = len(d.procs)
	d.procs = append(d.procs, cond)
	api, err := startProcess("api", dir, s.binary, "api", "--config-file", conf)
	if err != nil {
		d.stop()
		return nil, err
	}
	d.procs = append(d.procs, api)
	d.base = fmt.Sprintf("http://127.0.0.1:%d", apiPort)
	if err := waitHTTP(ctx, d.base+"/v1/", cond, api); err != nil {
		d.stop()
		return nil, err
	}
	return d, nil
}

// secretsConf is the configuration section of a run with secrets sealed
// at rest (BENCH_SECRETS=1): one random key of the run's own, written to
// dir/keys, as a mounted Secret would hold it. Without it, nothing.
func secretsConf(s *settings, dir string) (string, error) {
	if !s.secrets {
		return "", nil
	}
	keys := filepath.Join(dir, "keys")
	if err := os.MkdirAll(keys, 0o700); err != nil {
		return "", fmt.Errorf("key ring: %w", err)
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return "", fmt.Errorf("key ring: %w", err)
	}
	if err := os.WriteFile(filepath.Join(keys, "bench"), []byte(base64.StdEncoding.EncodeToString(key)), 0o600); err != nil {
		return "", fmt.Errorf("key ring: %w", err)
	}
	return fmt.Sprintf("\n[openkeel_secrets]\nkey_files = %s\ncurrent_key_id = bench\n", filepath.Join(keys, "*")), nil
}
