package charttest

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/config"
	"helm.sh/helm/v3/pkg/release"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
)

var (
	apiName       = releaseName + "-openkeel-ironic-api"
	conductorName = releaseName + "-openkeel-ironic-conductor"
	dbsyncName    = releaseName + "-openkeel-ironic-dbsync"
	statusName    = releaseName + "-openkeel-ironic-status-check"
	configName    = releaseName + "-openkeel-ironic-config"
)

// valueSets are the configurations every invariant is checked under.
var valueSets = []struct {
	name string
	vals map[string]any
}{
	{"defaults", nil},
	{"attachment", map[string]any{
		"conductor": map[string]any{
			"replicas": 2,
			"provisioning": map[string]any{
				"mode":       "attachment",
				"attachment": map[string]any{"networks": "metal/provisioning", "interface": "net1"},
			},
		},
	}},
	{"podNetwork, custom ports, http_basic, no TLS", map[string]any{
		"clusterDomain": "cluster.local",
		"auth":          map[string]any{"strategy": "http_basic"},
		"api": map[string]any{
			"replicas": 1, "port": 16385,
			"service": map[string]any{"type": "ClusterIP", "port": 80},
		},
		"jsonRPC": map[string]any{"port": 18089, "tls": map[string]any{"enabled": false}},
		"conductor": map[string]any{
			"replicas":                4,
			"gracefulShutdownTimeout": 300,
			"httpRoot":                "/srv/httpboot",
			"provisioning":            map[string]any{"mode": "podNetwork"},
			"httpServer":              map[string]any{"port": 18080},
		},
	}},
	{"http_basic, metrics with credentials, conductors scraped", map[string]any{
		"auth":    map[string]any{"strategy": "http_basic"},
		"metrics": map[string]any{"serviceMonitor": map[string]any{"enabled": true, "basicAuthSecretName": "ironic-metrics", "conductors": true}},
		"networkPolicy": map[string]any{"enabled": true, "metricsFrom": []any{
			map[string]any{"namespaceSelector": map[string]any{"matchLabels": map[string]any{"kubernetes.io/metadata.name": "monitoring"}}},
		}},
	}},
	{"conductors scraped without TLS", map[string]any{
		"clusterDomain": "cluster.local",
		"jsonRPC":       map[string]any{"tls": map[string]any{"enabled": false}},
		"metrics":       map[string]any{"serviceMonitor": map[string]any{"enabled": true, "conductors": true}},
	}},
	{"secrets encrypted at rest", map[string]any{
		"secretsEncryption": map[string]any{"enabled": true, "secretName": "ironic-keys", "keyIDs": []any{"2026-06", "2026-12"}, "currentKeyID": "2026-12"},
	}},
	{"noauth, metrics, no network policy", map[string]any{
		"auth":          map[string]any{"strategy": "noauth"},
		"image":         map[string]any{"digest": "sha256:" + strings.Repeat("ab", 32)},
		"networkPolicy": map[string]any{"enabled": false},
		"metrics":       map[string]any{"serviceMonitor": map[string]any{"enabled": true}},
	}},
}

func TestChartInvariants(t *testing.T) {
	for _, vs := range valueSets {
		t.Run(vs.name, func(t *testing.T) {
			r := mustRender(t, vs.vals)
			t.Run("no Secret is rendered and credentials are only mounted", func(t *testing.T) { checkSecrets(t, r) })
			t.Run("pods run non-root on a read-only root", func(t *testing.T) { checkSecurity(t, r) })
			t.Run("API", func(t *testing.T) { checkAPI(t, r) })
			t.Run("conductors", func(t *testing.T) { checkConductors(t, r) })
			t.Run("dbsync runs first", func(t *testing.T) { checkDBSync(t, r) })
			t.Run("helm test checks the upgrade", func(t *testing.T) { checkStatusTest(t, r) })
			t.Run("network policy", func(t *testing.T) { checkNetworkPolicy(t, r) })
			t.Run("service monitor", func(t *testing.T) { checkServiceMonitor(t, r) })
		})
	}
}

// podSpecs are the pod templates of every workload.
func podSpecs(r *rendered) map[string]corev1.PodSpec {
	out := map[string]corev1.PodSpec{}
	for _, o := range r.Objects {
		switch w := o.Obj.(type) {
		case *appsv1.Deployment:
			out[o.Kind+"/"+o.Name] = w.Spec.Template.Spec
		case *appsv1.StatefulSet:
			out[o.Kind+"/"+o.Name] = w.Spec.Template.Spec
		case *batchv1.Job:
			out[o.Kind+"/"+o.Name] = w.Spec.Template.Spec
		case *corev1.Pod:
			out[o.Kind+"/"+o.Name] = w.Spec
		case *appsv1.DaemonSet, *batchv1.CronJob:
			out[o.Kind+"/"+o.Name] = corev1.PodSpec{}
		}
	}
	return out
}

func checkSecrets(t *testing.T, r *rendered) {
	for _, o := range r.Objects {
		if o.Kind == "Secret" {
			t.Errorf("the chart renders Secret %s: credentials must come from the operator's Secrets", o.Name)
		}
	}
	want := map[string]bool{r.str("database.secretName"): true}
	want[r.str("jsonRPC.auth.secretName")] = true
	if r.value("jsonRPC.tls.enabled") == true {
		want[r.str("jsonRPC.tls.secretName")] = true
	}
	if r.value("secretsEncryption.enabled") == true {
		want[r.str("secretsEncryption.secretName")] = true
	}
	switch r.str("auth.strategy") {
	case "keystone":
		want[r.str("auth.keystone.secretName")] = true
	case "http_basic":
		want[r.str("auth.httpBasic.secretName")] = true
	}
	got := map[string]bool{}
	for name, spec := range podSpecs(r) {
		for _, v := range spec.Volumes {
			if v.Secret != nil {
				got[v.Secret.SecretName] = true
			}
		}
		for _, c := range slices.Concat(spec.InitContainers, spec.Containers) {
			for _, e := range c.Env {
				for _, secret := range secretFixture {
					if e.Value != "" && strings.Contains(e.Value, secret) {
						t.Errorf("%s/%s: env %s holds a credential", name, c.Name, e.Name)
					}
				}
				if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
					t.Errorf("%s/%s: env %s carries a Secret; mount it instead (env is inherited and logged)", name, c.Name, e.Name)
				}
			}
		}
	}
	if !maps.Equal(got, want) {
		t.Errorf("Secrets referenced: %v, want %v", slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
	}
	for _, o := range r.Objects {
		cm, ok := o.Obj.(*corev1.ConfigMap)
		if !ok {
			continue
		}
		conf := cm.Data["ironic.conf"]
		for line := range strings.SplitSeq(conf, "\n") {
			name, _, ok := strings.Cut(line, "=")
			name = strings.TrimSpace(name)
			if ok && (name == "password" || name == "connection" || strings.HasSuffix(name, "_password")) {
				t.Errorf("ConfigMap %s inlines %q", cm.Name, line)
			}
		}
	}
}

func checkSecurity(t *testing.T, r *rendered) {
	for name, spec := range podSpecs(r) {
		psc := spec.SecurityContext
		if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.RunAsUser == nil || *psc.RunAsUser == 0 {
			t.Errorf("%s: pod securityContext must set runAsNonRoot and a non-zero runAsUser: %+v", name, psc)
		}
		if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
			t.Errorf("%s: mounts a service account token it never uses", name)
		}
		for _, c := range slices.Concat(spec.InitContainers, spec.Containers) {
			sc := c.SecurityContext
			switch {
			case sc == nil:
				t.Errorf("%s/%s: no securityContext", name, c.Name)
			case sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem:
				t.Errorf("%s/%s: root filesystem is writable", name, c.Name)
			case sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation:
				t.Errorf("%s/%s: privilege escalation allowed", name, c.Name)
			case sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") || len(sc.Capabilities.Add) > 0:
				t.Errorf("%s/%s: capabilities not all dropped: %+v", name, c.Name, sc.Capabilities)
			case sc.Privileged != nil && *sc.Privileged:
				t.Errorf("%s/%s: privileged", name, c.Name)
			}
		}
	}
}

// containerPort resolves a probe's or Service's port (number or name).
func containerPort(t *testing.T, c corev1.Container, p intstr.IntOrString) int {
	t.Helper()
	if p.Type == intstr.Int {
		return p.IntValue()
	}
	for _, cp := range c.Ports {
		if cp.Name == p.StrVal {
			return int(cp.ContainerPort)
		}
	}
	t.Fatalf("container %s has no port named %q", c.Name, p.StrVal)
	return 0
}

func selects(t *testing.T, selector map[string]string, podLabels map[string]string, what string) {
	t.Helper()
	if len(selector) == 0 || !labels.SelectorFromSet(selector).Matches(labels.Set(podLabels)) {
		t.Errorf("%s: selector %v does not select pods labelled %v", what, selector, podLabels)
	}
}

func checkAPI(t *testing.T, r *rendered) {
	d, _ := find[*appsv1.Deployment](t, r, "Deployment", apiName)
	spec := d.Spec.Template.Spec
	c := container(t, spec, "api")
	if !slices.Contains(c.Args, "api") {
		t.Errorf("api container args %q do not run the api", c.Args)
	}
	pod := startPod(t, r, spec, "api", podFacts{Name: apiName + "-5d8f9-x2x7q", PodIP: "10.244.2.3", HostIP: "192.168.0.12"})
	cfg := pod.Config
	if !cfg.Bool("healthcheck", "enabled") {
		t.Error("[healthcheck]/enabled is off: the probes would get 404")
	}
	apiPort := cfg.Int("api", "port")
	for what, p := range map[string]*corev1.Probe{"readiness": c.ReadinessProbe, "liveness": c.LivenessProbe} {
		if p == nil || p.HTTPGet == nil {
			t.Errorf("%s probe is not an HTTP GET: %+v", what, p)
			continue
		}
		if p.HTTPGet.Path != cfg.String("healthcheck", "path") {
			t.Errorf("%s probe GETs %s, the API answers %s", what, p.HTTPGet.Path, cfg.String("healthcheck", "path"))
		}
		if got := containerPort(t, c, p.HTTPGet.Port); got != apiPort {
			t.Errorf("%s probe port %d, [api]/port %d", what, got, apiPort)
		}
		if p.HTTPGet.Scheme != "" && p.HTTPGet.Scheme != corev1.URISchemeHTTP {
			t.Errorf("%s probe scheme %s, the API serves HTTP", what, p.HTTPGet.Scheme)
		}
	}
	if apiPort != toInt(r.value("api.port")) {
		t.Errorf("[api]/port %d, values api.port %v", apiPort, r.value("api.port"))
	}
	if d.Spec.Replicas == nil || int(*d.Spec.Replicas) != toInt(r.value("api.replicas")) {
		t.Errorf("replicas %v, values %v", d.Spec.Replicas, r.value("api.replicas"))
	}
	checkGrace(t, spec, cfg, "API")
	checkJSONRPCClient(t, pod, c)

	svc, _ := find[*corev1.Service](t, r, "Service", apiName)
	selects(t, svc.Spec.Selector, d.Spec.Template.Labels, "API Service")
	selects(t, d.Spec.Selector.MatchLabels, d.Spec.Template.Labels, "API Deployment")
	if len(svc.Spec.Ports) != 1 {
		t.Fatalf("API Service ports: %+v", svc.Spec.Ports)
	}
	if got := containerPort(t, c, svc.Spec.Ports[0].TargetPort); got != apiPort {
		t.Errorf("API Service targets %d, the API listens on %d", got, apiPort)
	}
	if int(svc.Spec.Ports[0].Port) != toInt(r.value("api.service.port")) {
		t.Errorf("API Service port %d, values %v", svc.Spec.Ports[0].Port, r.value("api.service.port"))
	}
	if r.value("api.podDisruptionBudget.enabled") == true {
		pdb, _ := find[*policyv1.PodDisruptionBudget](t, r, "PodDisruptionBudget", apiName)
		selects(t, pdb.Spec.Selector.MatchLabels, d.Spec.Template.Labels, "API PDB")
		if pdb.Spec.MinAvailable == nil {
			t.Error("API PDB has no minAvailable")
		}
	}
	switch r.str("auth.strategy") {
	case "http_basic":
		if s, ok := mountedFile(spec, c, cfg.String("DEFAULT", "http_basic_auth_user_file")); !ok || s != r.str("auth.httpBasic.secretName") {
			t.Errorf("[DEFAULT]/http_basic_auth_user_file %s is not the mounted htpasswd Secret", cfg.String("DEFAULT", "http_basic_auth_user_file"))
		}
	case "keystone":
		for _, section := range r.value("auth.keystone.sections").([]any) {
			s := fmt.Sprint(section)
			if cfg.String(s, "username") != secretFixture["username"] || cfg.String(s, "password") != secretFixture["password"] {
				t.Errorf("[%s] username/password not from the Keystone Secret: %q", s, cfg.String(s, "username"))
			}
			if cfg.String(s, "auth_url") != r.str("auth.keystone.authURL") {
				t.Errorf("[%s]/auth_url %q", s, cfg.String(s, "auth_url"))
			}
		}
	}
	if got := cfg.String("DEFAULT", "auth_strategy"); got != r.str("auth.strategy") {
		t.Errorf("[DEFAULT]/auth_strategy %q, values %q", got, r.str("auth.strategy"))
	}
	if cfg.String("database", "connection") != secretFixture["connection"] {
		t.Errorf("[database]/connection %q is not the Secret's", cfg.String("database", "connection"))
	}
}

// checkJSONRPCClient: the API calls conductors with the Secret's
// credentials and, with TLS, verifies them against the mounted CA.
func checkJSONRPCClient(t *testing.T, pod *startedPod, c corev1.Container) {
	t.Helper()
	cfg := pod.Config
	if cfg.String("json_rpc", "username") != secretFixture["username"] || cfg.String("json_rpc", "password") != secretFixture["password"] {
		t.Errorf("[json_rpc] client credentials %q/%q are not the Secret's", cfg.String("json_rpc", "username"), cfg.String("json_rpc", "password"))
	}
	if cfg.Bool("json_rpc", "use_ssl") {
		if _, ok := mountedFile(pod.Spec, c, cfg.String("json_rpc", "cafile")); !ok {
			t.Errorf("[json_rpc]/cafile %q is not mounted", cfg.String("json_rpc", "cafile"))
		}
	}
}

func checkGrace(t *testing.T, spec corev1.PodSpec, cfg interface {
	Int(string, string) int
}, what string) {
	t.Helper()
	timeout := cfg.Int("conductor", "graceful_shutdown_timeout")
	if spec.TerminationGracePeriodSeconds == nil || *spec.TerminationGracePeriodSeconds <= int64(timeout) {
		t.Errorf("%s: terminationGracePeriodSeconds %v, not above [conductor]/graceful_shutdown_timeout %d", what, spec.TerminationGracePeriodSeconds, timeout)
	}
}

func toInt(v any) int {
	switch n := v.(type) {
	case int:
		return n
	case int64:
		return int(n)
	case float64:
		return int(n)
	default:
		i, _ := strconv.Atoi(fmt.Sprint(v))
		return i
	}
}

func checkConductors(t *testing.T, r *rendered) {
	sts, _ := find[*appsv1.StatefulSet](t, r, "StatefulSet", conductorName)
	svc, _ := find[*corev1.Service](t, r, "Service", sts.Spec.ServiceName)
	spec := sts.Spec.Template.Spec
	c := container(t, spec, "conductor")
	if len(spec.Containers) != 1 {
		t.Errorf("conductor pods run %d containers: the conductor serves http_root itself, a file server beside it would fight over the port", len(spec.Containers))
	}

	if sts.Spec.PodManagementPolicy != appsv1.ParallelPodManagement {
		t.Errorf("podManagementPolicy %q, want Parallel", sts.Spec.PodManagementPolicy)
	}
	if svc.Spec.ClusterIP != corev1.ClusterIPNone {
		t.Errorf("conductor Service %s is not headless: clusterIP %q", svc.Name, svc.Spec.ClusterIP)
	}
	if !svc.Spec.PublishNotReadyAddresses {
		t.Error("the headless Service hides conductors that are on the ring but not ready")
	}
	selects(t, svc.Spec.Selector, sts.Spec.Template.Labels, "conductor Service")
	selects(t, sts.Spec.Selector.MatchLabels, sts.Spec.Template.Labels, "conductor StatefulSet")
	replicas := int(*sts.Spec.Replicas)
	if replicas != toInt(r.value("conductor.replicas")) {
		t.Errorf("replicas %d, values %v", replicas, r.value("conductor.replicas"))
	}
	mode := r.str("conductor.provisioning.mode")
	if spec.HostNetwork != (mode == "hostNetwork") {
		t.Errorf("hostNetwork %v in mode %s", spec.HostNetwork, mode)
	}
	if spec.HostNetwork && spec.DNSPolicy != corev1.DNSClusterFirstWithHostNet {
		t.Errorf("on the node's network dnsPolicy %q cannot resolve the other conductors", spec.DNSPolicy)
	}
	if mode == "attachment" && sts.Spec.Template.Annotations["k8s.v1.cni.cncf.io/networks"] != r.str("conductor.provisioning.attachment.networks") {
		t.Errorf("network attachment annotation %q", sts.Spec.Template.Annotations["k8s.v1.cni.cncf.io/networks"])
	}

	hosts := map[string]bool{}
	for i := range replicas {
		podName := fmt.Sprintf("%s-%d", sts.Name, i)
		facts := podFacts{Name: podName, HostIP: fmt.Sprintf("192.168.0.%d", 10+i), PodIP: fmt.Sprintf("10.244.%d.9", i)}
		pod := startPod(t, r, spec, "conductor", facts)
		cfg := pod.Config

		// The ring addresses a conductor as [DEFAULT]/host:[json_rpc]/port;
		// that name must be the pod's record in the headless Service.
		host := cfg.String("DEFAULT", "host")
		want := fmt.Sprintf("%s.%s.%s.svc", podName, svc.Name, namespace)
		if d := r.str("clusterDomain"); d != "" {
			want += "." + d
		}
		if host != want {
			t.Errorf("conductor %d: [DEFAULT]/host %q, the pod's DNS name is %q", i, host, want)
		}
		if hosts[host] {
			t.Errorf("conductor %d: host %q is not unique", i, host)
		}
		hosts[host] = true
		rpcPort := cfg.Int("json_rpc", "port")
		if got := containerPort(t, c, intstr.FromString("json-rpc")); got != rpcPort {
			t.Errorf("container JSON-RPC port %d, [json_rpc]/port %d", got, rpcPort)
		}
		if !servicePorts(t, svc, c)[rpcPort] {
			t.Errorf("the headless Service does not carry %s:%d", host, rpcPort)
		}
		for what, p := range map[string]*corev1.Probe{"readiness": c.ReadinessProbe, "liveness": c.LivenessProbe} {
			if p == nil || p.TCPSocket == nil || containerPort(t, c, p.TCPSocket.Port) != rpcPort {
				t.Errorf("%s probe does not check the JSON-RPC port %d: %+v", what, rpcPort, p)
			}
		}
		if got := cfg.String("json_rpc", "auth_strategy"); got != "http_basic" {
			t.Errorf("[json_rpc]/auth_strategy %q: the conductors would take calls from anyone", got)
		}
		if s, ok := mountedFile(spec, c, cfg.String("json_rpc", "http_basic_auth_user_file")); !ok || s != r.str("jsonRPC.auth.secretName") {
			t.Errorf("[json_rpc]/http_basic_auth_user_file %q is not the mounted Secret's htpasswd", cfg.String("json_rpc", "http_basic_auth_user_file"))
		}
		tls := r.value("jsonRPC.tls.enabled") == true
		if cfg.Bool("json_rpc", "use_ssl") != tls {
			t.Errorf("[json_rpc]/use_ssl %v, values %v", cfg.Bool("json_rpc", "use_ssl"), tls)
		}
		if tls {
			for _, opt := range []string{"cert_file", "key_file", "cafile"} {
				if s, ok := mountedFile(spec, c, cfg.String("json_rpc", opt)); !ok || s != r.str("jsonRPC.tls.secretName") {
					t.Errorf("[json_rpc]/%s %q is not from the TLS Secret", opt, cfg.String("json_rpc", opt))
				}
			}
		}
		checkJSONRPCClient(t, pod, c)
		checkGrace(t, spec, cfg, "conductor")
		checkFileServer(t, r, c, svc, cfg, mode, facts)
	}
}

func servicePorts(t *testing.T, svc *corev1.Service, c corev1.Container) map[int]bool {
	t.Helper()
	out := map[int]bool{}
	for _, p := range svc.Spec.Ports {
		if p.TargetPort.Type == intstr.String && !slices.ContainsFunc(c.Ports, func(cp corev1.ContainerPort) bool { return cp.Name == p.TargetPort.StrVal }) {
			continue
		}
		target := containerPort(t, c, p.TargetPort)
		// Headless: clients dial the pod, so port and target must agree.
		if int(p.Port) != target {
			t.Errorf("headless Service port %s: %d targets %d", p.Name, p.Port, target)
		}
		out[target] = true
	}
	return out
}

// checkFileServer: http_url names this pod's address on the provisioning
// network and the port the conductor serves http_root on (the port of
// http_url), which the container and the headless Service declare; the
// file server listens on that address only.
func checkFileServer(t *testing.T, r *rendered, c corev1.Container, svc *corev1.Service, cfg *config.Config, mode string, facts podFacts) {
	t.Helper()
	httpRoot, httpURL := cfg.String("deploy", "http_root"), cfg.String("deploy", "http_url")
	port := containerPort(t, c, intstr.FromString("http"))
	addr := map[string]string{"hostNetwork": facts.HostIP, "podNetwork": facts.PodIP, "attachment": "172.22.0.21"}[mode]
	if want := fmt.Sprintf("http://%s:%d", addr, port); httpURL != want {
		t.Errorf("[deploy]/http_url %q, want %q", httpURL, want)
	}
	// Served on that address only, not on every address of the node.
	if got := cfg.String("openkeel_http", "http_root_host_ip"); got != addr {
		t.Errorf("[openkeel_http]/http_root_host_ip %q, want %q", got, addr)
	}
	if httpRoot != r.str("conductor.httpRoot") {
		t.Errorf("[deploy]/http_root %q, values %q", httpRoot, r.str("conductor.httpRoot"))
	}
	mounted := false
	for _, m := range c.VolumeMounts {
		if m.MountPath == httpRoot {
			mounted = !m.ReadOnly
		}
	}
	if !mounted {
		t.Errorf("http_root %s is not a writable volume of the conductor", httpRoot)
	}
	if !servicePorts(t, svc, c)[port] {
		t.Errorf("the headless Service does not carry the file server port %d", port)
	}
}

// checkStatusTest: `helm test` runs `ironic status upgrade check` with the
// services' configuration and database (and the key ring, whose check
// opens a sealed value), and nothing else.
func checkStatusTest(t *testing.T, r *rendered) {
	pod, po := find[*corev1.Pod](t, r, "Pod", statusName)
	if po.Hook == nil || !slices.Equal(po.Hook.Events, []release.HookEvent{release.HookTest}) {
		t.Fatalf("%s is not a test hook: %+v", statusName, po.Hook)
	}
	c := container(t, pod.Spec, "status")
	if n := len(c.Args); n < 3 || !slices.Equal(c.Args[n-3:], []string{"status", "upgrade", "check"}) {
		t.Errorf("status check args %q", c.Args)
	}
	if pod.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("restartPolicy %q: a failed check would be run again and again", pod.Spec.RestartPolicy)
	}
	for _, v := range pod.Spec.Volumes {
		if v.ConfigMap != nil && v.ConfigMap.Name != configName {
			t.Errorf("status check reads ConfigMap %s, the services read %s", v.ConfigMap.Name, configName)
		}
		keyRing := r.value("secretsEncryption.enabled") == true && v.Secret != nil && v.Secret.SecretName == r.str("secretsEncryption.secretName")
		if v.Secret != nil && v.Secret.SecretName != r.str("database.secretName") && !keyRing {
			t.Errorf("status check mounts Secret %s, it needs the database's only", v.Secret.SecretName)
		}
	}
	started := startPod(t, r, pod.Spec, "status", podFacts{Name: statusName})
	if got := started.Config.String("database", "connection"); got != secretFixture["connection"] {
		t.Errorf("status check [database]/connection %q", got)
	}
}

func checkDBSync(t *testing.T, r *rendered) {
	job, jo := find[*batchv1.Job](t, r, "Job", dbsyncName)
	if jo.Hook == nil {
		t.Fatal("the dbsync Job is an ordinary resource: it would run beside the Deployments, not before them")
	}
	for _, ev := range []release.HookEvent{release.HookPreInstall, release.HookPreUpgrade} {
		if !slices.Contains(jo.Hook.Events, ev) {
			t.Errorf("dbsync hook events %v lack %s", jo.Hook.Events, ev)
		}
	}
	spec := job.Spec.Template.Spec
	c := container(t, spec, "dbsync")
	if i := slices.Index(c.Args, "dbsync"); i < 0 || i+1 >= len(c.Args) || c.Args[i+1] != "upgrade" {
		t.Errorf("dbsync args %q do not run `dbsync upgrade`", c.Args)
	}
	if spec.RestartPolicy != corev1.RestartPolicyNever && spec.RestartPolicy != corev1.RestartPolicyOnFailure {
		t.Errorf("restartPolicy %q", spec.RestartPolicy)
	}
	// What the hook needs must exist when it runs: ConfigMaps it mounts
	// are hooks of the same events created before it; Secrets are the
	// operator's.
	for _, v := range spec.Volumes {
		if v.ConfigMap == nil {
			continue
		}
		_, co := find[any](t, r, "ConfigMap", v.ConfigMap.Name)
		if co.Hook == nil || co.Hook.Weight >= jo.Hook.Weight {
			t.Errorf("ConfigMap %s is not a hook created before the dbsync Job", v.ConfigMap.Name)
			continue
		}
		for _, ev := range jo.Hook.Events {
			if !slices.Contains(co.Hook.Events, ev) {
				t.Errorf("ConfigMap %s is not created on %s", v.ConfigMap.Name, ev)
			}
		}
	}
	for _, o := range r.Objects {
		if (o.Kind == "Deployment" || o.Kind == "StatefulSet") && o.Hook != nil {
			t.Errorf("%s %s is a hook", o.Kind, o.Name)
		}
	}
	pod := startPod(t, r, spec, "dbsync", podFacts{Name: dbsyncName + "-abcde"})
	if got := pod.Config.String("database", "connection"); got != secretFixture["connection"] {
		t.Errorf("dbsync [database]/connection %q", got)
	}
	// The hook's copy of ironic.conf is the one the services read.
	sts, _ := find[*appsv1.StatefulSet](t, r, "StatefulSet", conductorName)
	main := configMap(t, r, volume(t, sts.Spec.Template.Spec, "config").ConfigMap.Name)
	hook := configMap(t, r, volume(t, spec, "config").ConfigMap.Name)
	if main.Data["ironic.conf"] != hook.Data["ironic.conf"] {
		t.Error("the dbsync hook reads a different ironic.conf than the services")
	}
}

func checkNetworkPolicy(t *testing.T, r *rendered) {
	enabled := r.value("networkPolicy.enabled") == true
	if r.has("NetworkPolicy", conductorName) != enabled || r.has("NetworkPolicy", apiName) != enabled {
		t.Fatalf("NetworkPolicies present %v/%v, enabled %v", r.has("NetworkPolicy", apiName), r.has("NetworkPolicy", conductorName), enabled)
	}
	if !enabled {
		return
	}
	sts, _ := find[*appsv1.StatefulSet](t, r, "StatefulSet", conductorName)
	d, _ := find[*appsv1.Deployment](t, r, "Deployment", apiName)
	np, _ := find[*networkingv1.NetworkPolicy](t, r, "NetworkPolicy", conductorName)
	selects(t, np.Spec.PodSelector.MatchLabels, sts.Spec.Template.Labels, "conductor NetworkPolicy")
	c := container(t, sts.Spec.Template.Spec, "conductor")
	apiAllowed := false
	for _, rule := range np.Spec.Ingress {
		for _, p := range rule.Ports {
			if p.Port == nil || containerPortOrZero(c, *p.Port) != containerPort(t, c, intstr.FromString("json-rpc")) {
				continue
			}
			if len(rule.From) == 0 {
				t.Error("the conductors' JSON-RPC port is open to every pod")
			}
			for _, peer := range rule.From {
				if peer.PodSelector != nil && labels.SelectorFromSet(peer.PodSelector.MatchLabels).Matches(labels.Set(d.Spec.Template.Labels)) {
					apiAllowed = true
				}
			}
		}
	}
	if !apiAllowed {
		t.Error("the conductor NetworkPolicy does not let the API reach JSON-RPC")
	}
	// The scrapers the operator names reach the JSON-RPC port (/metrics).
	for _, want := range r.value("networkPolicy.metricsFrom").([]any) {
		found := false
		for _, rule := range np.Spec.Ingress {
			for _, p := range rule.Ports {
				if p.Port == nil || containerPortOrZero(c, *p.Port) != containerPort(t, c, intstr.FromString("json-rpc")) {
					continue
				}
				for _, peer := range rule.From {
					if peer.NamespaceSelector != nil && fmt.Sprint(peer.NamespaceSelector.MatchLabels) == fmt.Sprint(want.(map[string]any)["namespaceSelector"].(map[string]any)["matchLabels"]) {
						found = true
					}
				}
			}
		}
		if !found {
			t.Errorf("metricsFrom peer %v cannot reach the conductors' JSON-RPC port", want)
		}
	}
	anp, _ := find[*networkingv1.NetworkPolicy](t, r, "NetworkPolicy", apiName)
	selects(t, anp.Spec.PodSelector.MatchLabels, d.Spec.Template.Labels, "API NetworkPolicy")
	a := container(t, d.Spec.Template.Spec, "api")
	if len(anp.Spec.Ingress) == 0 || len(anp.Spec.Ingress[0].Ports) == 0 || containerPortOrZero(a, *anp.Spec.Ingress[0].Ports[0].Port) != containerPort(t, a, intstr.FromString("api")) {
		t.Error("the API NetworkPolicy does not open the API port")
	}
}

func containerPortOrZero(c corev1.Container, p intstr.IntOrString) int {
	if p.Type == intstr.Int {
		return p.IntValue()
	}
	for _, cp := range c.Ports {
		if cp.Name == p.StrVal {
			return int(cp.ContainerPort)
		}
	}
	return 0
}

func checkServiceMonitor(t *testing.T, r *rendered) {
	enabled := r.value("metrics.serviceMonitor.enabled") == true
	if r.has("ServiceMonitor", apiName) != enabled {
		t.Fatalf("ServiceMonitor present %v, enabled %v", r.has("ServiceMonitor", apiName), enabled)
	}
	if !enabled {
		return
	}
	sm, _ := find[*serviceMonitor](t, r, "ServiceMonitor", apiName)
	svc, _ := find[*corev1.Service](t, r, "Service", apiName)
	if !maps.Equal(sm.Spec.Selector.MatchLabels, svc.Labels) && !labels.SelectorFromSet(sm.Spec.Selector.MatchLabels).Matches(labels.Set(svc.Labels)) {
		t.Errorf("ServiceMonitor selects %v, the API Service is labelled %v", sm.Spec.Selector.MatchLabels, svc.Labels)
	}
	if len(sm.Spec.Endpoints) != 1 || sm.Spec.Endpoints[0].Port != svc.Spec.Ports[0].Name || sm.Spec.Endpoints[0].Path != "/metrics" {
		t.Fatalf("ServiceMonitor endpoints %+v", sm.Spec.Endpoints)
	}
	// /metrics is behind the API's authentication: a scraper needs the
	// credentials of an htpasswd user, from a Secret, never inline.
	ba := sm.Spec.Endpoints[0].BasicAuth
	if name := r.str("metrics.serviceMonitor.basicAuthSecretName"); name != "" {
		if ba == nil || ba.Username.Name != name || ba.Password.Name != name || ba.Username.Key != "username" || ba.Password.Key != "password" {
			t.Errorf("ServiceMonitor basicAuth %+v, want keys username/password of Secret %s", ba, name)
		}
	} else if ba != nil {
		t.Errorf("ServiceMonitor basicAuth %+v without basicAuthSecretName", ba)
	}
	checkConductorServiceMonitor(t, r)
}

// checkConductorServiceMonitor: the conductors' /metrics is scraped on the
// JSON-RPC port of the headless Service with the JSON-RPC client
// credentials, over TLS verified against the conductors' CA under a name
// their wildcard certificate covers.
func checkConductorServiceMonitor(t *testing.T, r *rendered) {
	enabled := r.value("metrics.serviceMonitor.conductors") == true
	if r.has("ServiceMonitor", conductorName) != enabled {
		t.Fatalf("conductor ServiceMonitor present %v, enabled %v", r.has("ServiceMonitor", conductorName), enabled)
	}
	if !enabled {
		return
	}
	sm, _ := find[*serviceMonitor](t, r, "ServiceMonitor", conductorName)
	svc, _ := find[*corev1.Service](t, r, "Service", conductorName)
	sts, _ := find[*appsv1.StatefulSet](t, r, "StatefulSet", conductorName)
	if !labels.SelectorFromSet(sm.Spec.Selector.MatchLabels).Matches(labels.Set(svc.Labels)) {
		t.Errorf("conductor ServiceMonitor selects %v, the headless Service is labelled %v", sm.Spec.Selector.MatchLabels, svc.Labels)
	}
	if len(sm.Spec.Endpoints) != 1 {
		t.Fatalf("conductor ServiceMonitor endpoints %+v", sm.Spec.Endpoints)
	}
	ep := sm.Spec.Endpoints[0]
	rpcPort := containerPort(t, container(t, sts.Spec.Template.Spec, "conductor"), intstr.FromString("json-rpc"))
	portOK := false
	for _, p := range svc.Spec.Ports {
		portOK = portOK || (p.Name == ep.Port && int(p.Port) == rpcPort)
	}
	if !portOK || ep.Path != "/metrics" {
		t.Errorf("conductor ServiceMonitor scrapes port %q path %q; the JSON-RPC port is %d", ep.Port, ep.Path, rpcPort)
	}
	secret := r.str("jsonRPC.auth.secretName")
	if ba := ep.BasicAuth; ba == nil || ba.Username.Name != secret || ba.Username.Key != "username" || ba.Password.Name != secret || ba.Password.Key != "password" {
		t.Errorf("conductor ServiceMonitor basicAuth %+v, want username/password of Secret %s", ba, secret)
	}
	if r.value("jsonRPC.tls.enabled") != true {
		if ep.Scheme == "https" || ep.TLSConfig != nil {
			t.Errorf("conductor ServiceMonitor uses TLS that the conductors do not serve: %q %+v", ep.Scheme, ep.TLSConfig)
		}
		return
	}
	tlsSecret := r.str("jsonRPC.tls.secretName")
	if ep.Scheme != "https" || ep.TLSConfig == nil || ep.TLSConfig.CA.Secret.Name != tlsSecret || ep.TLSConfig.CA.Secret.Key != "ca.crt" {
		t.Fatalf("conductor ServiceMonitor scheme %q TLS %+v, want https with ca.crt of %s", ep.Scheme, ep.TLSConfig, tlsSecret)
	}
	// The certificate's name is *.<the domain the conductors' hosts share>.
	pod := startPod(t, r, sts.Spec.Template.Spec, "conductor", podFacts{Name: sts.Name + "-0", HostIP: "192.168.0.10", PodIP: "10.244.0.9"})
	_, domain, _ := strings.Cut(pod.Config.String("DEFAULT", "host"), ".")
	if _, rest, _ := strings.Cut(ep.TLSConfig.ServerName, "."); rest != domain {
		t.Errorf("conductor ServiceMonitor serverName %q is not under the conductors' domain %q", ep.TLSConfig.ServerName, domain)
	}
}
