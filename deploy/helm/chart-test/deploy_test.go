package charttest

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"maps"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/rpc/hashring"
	"github.com/openkeel/ironic/internal/store/storetest"
	"github.com/openkeel/ironic/testing/await"
)

// deployValues is a release an operator could install: REST API behind
// http_basic, two conductors, JSON-RPC with basic auth and TLS (the
// chart's default), machines reaching the pod network, and the fake
// hardware type so that a deploy needs no machine.
var deployValues = map[string]any{
	"auth": map[string]any{"strategy": "http_basic"},
	"conductor": map[string]any{
		"replicas":     2,
		"provisioning": map[string]any{"mode": "podNetwork"},
	},
	"conf": map[string]any{
		"DEFAULT": map[string]any{
			"enabled_hardware_types":        "fake-hardware",
			"enabled_bios_interfaces":       "fake,no-bios",
			"enabled_boot_interfaces":       "fake",
			"enabled_console_interfaces":    "fake,no-console",
			"enabled_deploy_interfaces":     "fake",
			"enabled_firmware_interfaces":   "fake,no-firmware",
			"enabled_inspect_interfaces":    "fake,no-inspect",
			"enabled_management_interfaces": "fake",
			"enabled_network_interfaces":    "noop",
			"enabled_power_interfaces":      "fake",
			"enabled_raid_interfaces":       "fake,no-raid",
			"enabled_rescue_interfaces":     "fake,no-rescue",
			"enabled_storage_interfaces":    "noop",
			"enabled_vendor_interfaces":     "fake,no-vendor",
		},
	},
}

// apiVersion is the microversion of the test's requests (conductor field,
// /v1/conductors).
const apiVersion = "1.80"

// TestChartConfiguredDeploy runs the release as Kubernetes would run it,
// with the real binary: the dbsync hook Job and the helm test pod's
// upgrade check, then the API Deployment's pod
// and both conductor pods, each started from the rendered pod spec (init
// container script, mounted ConfigMap and Secrets, container arguments),
// and deploys one node through the REST API.
//
// Only what Kubernetes itself provides is substituted: volumes are folders
// under each pod's root (paths in the configuration follow them), the
// Secrets hold this test's credentials and MariaDB database, and the pods
// share one loopback-only network namespace instead of having one each,
// so each conductor's identity is 127.0.0.1:<its own JSON-RPC port>
// instead of its DNS name, and its file server gets its own port. The
// test checks that the configuration each process loads differs from the
// pod's in those options only.
func TestChartConfiguredDeploy(t *testing.T) {
	ns := newNetns(t)
	hostDB := storetest.MySQLURL(t)
	bin := buildIronic(t)
	began := time.Now()
	defer func() {
		t.Logf("dbsync, start of api and conductors, deploy: %v", time.Since(began).Round(time.Millisecond))
	}()
	r := mustRender(t, deployValues)

	dbURL, err := url.Parse(hostDB)
	if err != nil {
		t.Fatal(err)
	}
	// The namespace's 127.0.0.1:3306 leads to the machine's MariaDB (a
	// Unix socket needs no bridge).
	if dbURL.Query().Get("unix_socket") == "" {
		ns.importTCP(dbURL.Host, 3306)
		dbURL.Host = "127.0.0.1:3306"
	}

	creds := newCredentials(t, r, dbURL.String())
	run := &podRunner{t: t, r: r, ns: ns, bin: bin, secrets: creds.secret}

	job, _ := find[*batchv1.Job](t, r, "Job", dbsyncName)
	dbsync := run.startPod("dbsync", job.Spec.Template.Spec, "dbsync", podFacts{Name: dbsyncName + "-7xk2p"}, nil)
	select {
	case <-dbsync.done:
	case <-time.After(2 * time.Minute):
		t.Fatalf("dbsync still running after 2 minutes:\n%s", dbsync.output(40))
	}
	if code := dbsync.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("dbsync upgrade: exit %d\n%s", code, dbsync.output(40))
	}
	// `helm test`: every check of the upgrade check succeeds on the
	// migrated database (no warning either: the chart's configuration has
	// no unknown option).
	statusPod, _ := find[*corev1.Pod](t, r, "Pod", statusName)
	status := run.startPod("status", statusPod.Spec, "status", podFacts{Name: statusName}, nil)
	select {
	case <-status.done:
	case <-time.After(time.Minute):
		t.Fatalf("status check still running after a minute:\n%s", status.output(40))
	}
	if code, out := status.cmd.ProcessState.ExitCode(), status.output(40); code != 0 || strings.Count(out, "Result: ") == 0 || strings.Count(out, "Result: Success") != strings.Count(out, "Result: ") {
		t.Errorf("status upgrade check: exit %d\n%s", code, out)
	}

	sts, _ := find[*appsv1.StatefulSet](t, r, "StatefulSet", conductorName)
	basePort := toInt(r.value("jsonRPC.port"))
	baseHTTP := toInt(r.value("conductor.httpServer.port"))
	var hosts []string
	var conductors []*proc
	for i := range int(*sts.Spec.Replicas) {
		rpcPort, httpPort := basePort+i, baseHTTP+i
		host := fmt.Sprintf("127.0.0.1:%d", rpcPort)
		hosts = append(hosts, host)
		subst := map[config.Name]string{
			{Section: "DEFAULT", Name: "host"}:    host,
			{Section: "json_rpc", Name: "port"}:   fmt.Sprint(rpcPort),
			{Section: "deploy", Name: "http_url"}: fmt.Sprintf("http://127.0.0.1:%d", httpPort),
		}
		name := fmt.Sprintf("%s-%d", sts.Name, i)
		conductors = append(conductors, run.startPod(name, sts.Spec.Template.Spec, "conductor",
			podFacts{Name: name, PodIP: "127.0.0.1", HostIP: "127.0.0.1"}, subst))
	}
	d, _ := find[*appsv1.Deployment](t, r, "Deployment", apiName)
	api := run.startPod("api", d.Spec.Template.Spec, "api", podFacts{Name: apiName + "-5d8f9-x2x7q", PodIP: "127.0.0.1", HostIP: "127.0.0.1"}, nil)
	t.Cleanup(func() {
		if t.Failed() {
			for _, p := range append([]*proc{api}, conductors...) {
				t.Logf("--- %s (last 40 lines):\n%s", p.name, p.output(40))
			}
		}
	})

	client := &apiClient{t: t, http: ns.expose(toInt(r.value("api.port"))), user: creds.apiUser, password: creds.apiPassword}
	client.waitHealthy(r.str("healthcheckPath"), append([]*proc{api}, conductors...))

	// Both conductors registered under the identity the ring addresses.
	await.UntilReason(t, 30*time.Second, "both conductors registered and alive", func() (bool, string) {
		var out struct {
			Conductors []struct {
				Hostname string `json:"hostname"`
				Alive    bool   `json:"alive"`
			} `json:"conductors"`
		}
		body := client.do("GET", "/v1/conductors", nil, http.StatusOK)
		if err := json.Unmarshal(body, &out); err != nil {
			return false, err.Error()
		}
		var alive []string
		for _, c := range out.Conductors {
			if c.Alive {
				alive = append(alive, c.Hostname)
			}
		}
		slices.Sort(alive)
		return slices.Equal(alive, hosts), string(body)
	})

	// The conductors take JSON-RPC over TLS from authenticated callers only.
	rpc := ns.expose(basePort)
	rpc.Transport.(*http.Transport).TLSClientConfig = &tls.Config{RootCAs: creds.caPool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}
	resp, err := rpc.Post("https://"+hosts[0]+"/", "application/json", strings.NewReader(`{"jsonrpc": "2.0", "method": "get_conductor_info", "params": {}, "id": "1"}`))
	if err != nil {
		t.Fatalf("JSON-RPC over TLS with the chart's CA: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("JSON-RPC without credentials: %d, want 401", resp.StatusCode)
	}
	// Each conductor serves its http_root where its http_url says.
	files := ns.expose(baseHTTP)
	resp, err = files.Get(fmt.Sprintf("http://127.0.0.1:%d/no-such-file", baseHTTP))
	if err != nil {
		t.Fatalf("conductor file server: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("file server: GET of a missing file: %d, want 404", resp.StatusCode)
	}

	// One deploy: enroll → manage → provide → deploy → active.
	var node struct {
		UUID string `json:"uuid"`
	}
	if err := json.Unmarshal(client.do("POST", "/v1/nodes", map[string]any{"driver": "fake-hardware", "name": "chart-node-0"}, http.StatusCreated), &node); err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct{ verb, want string }{{"manage", "manageable"}, {"provide", "available"}, {"active", "active"}} {
		client.do("PUT", "/v1/nodes/"+node.UUID+"/states/provision", map[string]any{"target": step.verb}, http.StatusAccepted)
		client.waitState(node.UUID, step.want)
	}
	var got struct {
		Conductor      string `json:"conductor"`
		ConductorGroup string `json:"conductor_group"`
		Reservation    any    `json:"reservation"`
	}
	if err := json.Unmarshal(client.do("GET", "/v1/nodes/"+node.UUID, nil, http.StatusOK), &got); err != nil {
		t.Fatal(err)
	}
	ring, err := hashring.New(hosts, 5, "md5")
	if err != nil {
		t.Fatal(err)
	}
	want, _ := ring.Primary(node.UUID)
	if got.Conductor != want || !slices.Contains(hosts, got.Conductor) {
		t.Errorf("node conductor %q, the ring of the pods' hosts %v gives %q", got.Conductor, hosts, want)
	}
	if got.ConductorGroup != "" || got.Reservation != nil {
		t.Errorf("deployed node: conductor group %q, reservation %v", got.ConductorGroup, got.Reservation)
	}
	checkMetricsProtected(t, ns, client, creds, r, got.Conductor, hosts, basePort)
	for _, p := range append([]*proc{api}, conductors...) {
		if p.exited() {
			t.Errorf("%s exited during the deploy", p.name)
		}
	}
}

// checkMetricsProtected scrapes /metrics where the chart's ServiceMonitor
// and an operator would: on the API port as a user of the htpasswd
// Secret, on the deploying conductor's JSON-RPC port (TLS) with the
// JSON-RPC credentials. Without credentials both answer 401.
func checkMetricsProtected(t *testing.T, ns *netns, client *apiClient, creds *credentials, r *rendered, owner string, hosts []string, basePort int) {
	t.Helper()
	anonymous := &apiClient{t: t, http: client.http}
	if code, _, err := anonymous.request("GET", "/metrics", nil); err != nil || code != http.StatusUnauthorized {
		t.Errorf("API /metrics without credentials: %d %v, want 401", code, err)
	}
	body := string(client.do("GET", "/metrics", nil, http.StatusOK))
	if !strings.Contains(body, `provision_state="active"} 1`) {
		t.Errorf("API /metrics has no active node:\n%s", body)
	}
	port := basePort + slices.Index(hosts, owner)
	rpc := ns.expose(port)
	rpc.Transport.(*http.Transport).TLSClientConfig = &tls.Config{RootCAs: creds.caPool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}
	scrape := func(user, password string) (int, string) {
		req, err := http.NewRequest("GET", "https://"+owner+"/metrics", nil)
		if err != nil {
			t.Fatal(err)
		}
		if user != "" {
			req.SetBasicAuth(user, password)
		}
		resp, err := rpc.Do(req)
		if err != nil {
			t.Fatalf("conductor /metrics: %v", err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := scrape("", ""); code != http.StatusUnauthorized {
		t.Errorf("conductor /metrics without credentials: %d, want 401", code)
	}
	secret := r.str("jsonRPC.auth.secretName")
	code, text := scrape(creds.secret(secret, "username"), creds.secret(secret, "password"))
	want := `ironic_rpc_calls_total{method="do_node_deploy",outcome="ok"} 1`
	if code != http.StatusOK || !strings.Contains(text, want) {
		t.Errorf("conductor %s /metrics: %d, want 200 with %s:\n%s", owner, code, want, text)
	}
}

// buildIronic builds the binary the image ships (cmd/ironic) from this
// tree.
func buildIronic(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "ironic")
	cmd := exec.Command("go", "build", "-o", out, "./cmd/ironic")
	cmd.Dir = filepath.Join("..", "..", "..")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/ironic: %v\n%s", err, b)
	}
	return out
}

// credentials are the operator's Secrets for this release.
type credentials struct {
	apiUser, apiPassword string
	caPool               *x509.CertPool
	data                 map[string]map[string]string // Secret → key → content
}

func newCredentials(t *testing.T, r *rendered, dsn string) *credentials {
	t.Helper()
	c := &credentials{apiUser: "operator", apiPassword: rand.Text(), data: map[string]map[string]string{}}
	rpcPassword := rand.Text()
	c.data[r.str("database.secretName")] = map[string]string{r.str("database.secretKey"): dsn}
	c.data[r.str("jsonRPC.auth.secretName")] = map[string]string{
		"username": "ironic-rpc", "password": rpcPassword, "htpasswd": htpasswd(t, "ironic-rpc", rpcPassword),
	}
	c.data[r.str("auth.httpBasic.secretName")] = map[string]string{"htpasswd": htpasswd(t, c.apiUser, c.apiPassword)}
	// What cert-manager would issue (README): the conductors' DNS names,
	// plus the loopback address the test's hosts use.
	ca, caKey := certificate(t, nil, nil, func(tpl *x509.Certificate) {
		tpl.Subject.CommonName = "test CA"
		tpl.IsCA, tpl.BasicConstraintsValid = true, true
		tpl.KeyUsage = x509.KeyUsageCertSign
	})
	leaf, leafKey := certificate(t, ca, caKey, func(tpl *x509.Certificate) {
		tpl.Subject.CommonName = "conductors"
		tpl.DNSNames = []string{fmt.Sprintf("*.%s.%s.svc", conductorName, namespace)}
		tpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
		tpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tpl.KeyUsage = x509.KeyUsageDigitalSignature
	})
	keyDER, err := x509.MarshalPKCS8PrivateKey(leafKey)
	if err != nil {
		t.Fatal(err)
	}
	c.data[r.str("jsonRPC.tls.secretName")] = map[string]string{
		"tls.crt": string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leaf.Raw})),
		"tls.key": string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})),
		"ca.crt":  string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Raw})),
	}
	c.caPool = x509.NewCertPool()
	c.caPool.AddCert(ca)
	return c
}

func (c *credentials) secret(secret, key string) string {
	data, ok := c.data[secret][key]
	if !ok {
		panic(fmt.Sprintf("the pod mounts key %q of Secret %q, which the operator's Secrets of the README do not have", key, secret))
	}
	return strings.TrimRight(data, "\n")
}

func htpasswd(t *testing.T, user, password string) string {
	t.Helper()
	h, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	return user + ":" + string(h)
}

// certificate makes a P-256 certificate signed by parent (self-signed
// when parent is nil).
func certificate(t *testing.T, parent *x509.Certificate, parentKey *ecdsa.PrivateKey, edit func(*x509.Certificate)) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		t.Fatal(err)
	}
	tpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	edit(tpl)
	signer, signerKey := tpl, key
	if parent != nil {
		signer, signerKey = parent, parentKey
	}
	der, err := x509.CreateCertificate(rand.Reader, tpl, signer, &key.PublicKey, signerKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert, key
}

// podRunner starts the pods of one rendered release.
type podRunner struct {
	t       *testing.T
	r       *rendered
	ns      *netns
	bin     string
	secrets secretData
}

// startPod runs the pod's init container, then its main container's
// command with the real binary in the namespace. subst replaces options
// that Kubernetes gives each pod through its own network namespace.
func (rl *podRunner) startPod(name string, spec corev1.PodSpec, main string, facts podFacts, subst map[config.Name]string) *proc {
	t := rl.t
	t.Helper()
	pod := startPodWith(t, rl.r, spec, main, facts, rl.secrets)
	c := container(t, spec, main)
	mountVolumes(t, rl.r, spec, c, pod.Root, rl.secrets)

	// The volumes are folders under the pod's root: options naming a
	// file or folder in a volume follow it.
	subst = maps.Clone(subst)
	if subst == nil {
		subst = map[config.Name]string{}
	}
	for _, o := range config.Options() {
		if o.Type != config.TypeString || !pod.Config.IsSet(o.Section, o.Name) {
			continue
		}
		v := pod.Config.String(o.Section, o.Name)
		for _, m := range c.VolumeMounts {
			if v == m.MountPath || strings.HasPrefix(v, strings.TrimSuffix(m.MountPath, "/")+"/") {
				subst[config.Name{Section: o.Section, Name: o.Name}] = rooted(pod.Root, v)
			}
		}
	}
	files, dirs := configArgs(t, c.Args)
	if len(dirs) != 1 {
		t.Fatalf("%s: want one --config-dir, got %q", name, dirs)
	}
	var b strings.Builder
	b.WriteString("# Substitutions for what Kubernetes gives each pod (chart-test).\n")
	for _, n := range slices.SortedFunc(maps.Keys(subst), func(a, b config.Name) int { return strings.Compare(a.String(), b.String()) }) {
		fmt.Fprintf(&b, "[%s]\n%s = %s\n", n.Section, n.Name, strings.ReplaceAll(subst[n], "$", "$$"))
	}
	write(t, filepath.Join(rooted(pod.Root, dirs[0]), "99-loopback.conf"), b.String())

	// What the process loads is the pod's configuration but for subst.
	loaded, err := config.Load(config.LoadOptions{Files: rootedAll(pod.Root, files), Dirs: rootedAll(pod.Root, dirs)})
	if err != nil {
		t.Fatalf("%s: load the substituted configuration: %v", name, err)
	}
	for _, o := range config.Options() {
		n := config.Name{Section: o.Section, Name: o.Name}
		got, was := loaded.Display(o.Section, o.Name), pod.Config.Display(o.Section, o.Name)
		if want, ok := subst[n]; ok {
			if got != want {
				t.Fatalf("%s: %s = %q after substitution, want %q", name, n, got, want)
			}
		} else if got != was {
			t.Fatalf("%s: %s = %q, the pod would have %q", name, n, got, was)
		}
	}

	args := make([]string, len(c.Args))
	for i, a := range c.Args {
		if strings.HasPrefix(a, "/") {
			a = rooted(pod.Root, a)
		}
		args[i] = a
	}
	cmd := rl.ns.command(rl.bin, args...)
	// The image's WORKDIR is the conductor's work volume.
	cmd.Dir = rooted(pod.Root, "/var/lib/ironic")
	if err := os.MkdirAll(cmd.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + cmd.Dir}
	for k, v := range resolveEnv(t, c.Env, facts) {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	return rl.ns.start(name, cmd, filepath.Join(pod.Root, name+".log"))
}

// apiClient calls the REST API as the operator of the htpasswd Secret.
type apiClient struct {
	t              *testing.T
	http           *http.Client
	user, password string
}

func (c *apiClient) request(method, path string, body any) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, "http://127.0.0.1"+path, rd)
	if err != nil {
		return 0, nil, err
	}
	req.SetBasicAuth(c.user, c.password)
	req.Header.Set("X-OpenStack-Ironic-API-Version", apiVersion)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return resp.StatusCode, data, err
}

// do sends one request and fails the test unless it gets want.
func (c *apiClient) do(method, path string, body any, want int) []byte {
	c.t.Helper()
	status, data, err := c.request(method, path, body)
	if err != nil || status != want {
		c.t.Fatalf("%s %s: %d %s %v, want %d", method, path, status, data, err, want)
	}
	return data
}

// waitHealthy waits until the kubelet's readiness probe would pass.
func (c *apiClient) waitHealthy(path string, procs []*proc) {
	c.t.Helper()
	await.UntilReason(c.t, 60*time.Second, "API healthy", func() (bool, string) {
		for _, p := range procs {
			if p.exited() {
				c.t.Fatalf("%s exited: %v\n%s", p.name, p.cmd.ProcessState, p.output(40))
			}
		}
		status, data, err := c.request("GET", path, nil)
		return err == nil && status == http.StatusOK, fmt.Sprint(status, string(data), err)
	})
}

// waitState waits until the node reaches state, no transition is in
// progress and no conductor holds it; a failure state ends the wait at once.
func (c *apiClient) waitState(uuid, state string) {
	c.t.Helper()
	await.UntilReason(c.t, 60*time.Second, "node "+state, func() (bool, string) {
		var n struct {
			ProvisionState string  `json:"provision_state"`
			Target         *string `json:"target_provision_state"`
			LastError      *string `json:"last_error"`
			Reservation    *string `json:"reservation"`
		}
		data := c.do("GET", "/v1/nodes/"+uuid, nil, http.StatusOK)
		if err := json.Unmarshal(data, &n); err != nil {
			return false, err.Error()
		}
		if strings.HasSuffix(n.ProvisionState, "failed") {
			c.t.Fatalf("node %s: %s", uuid, data)
		}
		// The conductor saves the new state before it releases the node's
		// lock (as upstream's task does), so a read can see the state with
		// the reservation still held: settled means both.
		return n.ProvisionState == state && n.Target == nil && n.Reservation == nil, string(data)
	})
}
