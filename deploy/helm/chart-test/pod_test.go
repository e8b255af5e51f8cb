package charttest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/config"
	corev1 "k8s.io/api/core/v1"
)

// Fixture contents of the Secrets, written where the kubelet would mount
// them. The "$" checks that render-config.sh escapes oslo interpolation.
var secretFixture = map[string]string{
	"connection": "mysql+pymysql://ironic:pa$$word@galera.db.svc:3306/ironic",
	"username":   "ironic-user",
	"password":   "s3cret$x",
	"htpasswd":   "ironic:$2y$05$abcdefghijklmnopqrstuv",
	"tls.crt":    "CERT",
	"tls.key":    "KEY",
	"ca.crt":     "CA",
}

// podFacts is what the kubelet would fill in for one pod.
type podFacts struct {
	Name, HostIP, PodIP, NetworkStatus string
}

// startedPod is a pod's configuration after its init container ran: the
// files on disk (under Root) and the configuration the binary would load.
type startedPod struct {
	Root   string
	Config *config.Config
	Spec   corev1.PodSpec
}

// startPod emulates the kubelet for spec: it mounts the ConfigMap and the
// Secrets (with fixture contents) under a temporary root, runs the init
// container's script with its environment resolved as the downward API
// would, and loads the main container's configuration with the product's
// own loader, failing on any option that the loader does not know.
func startPod(t *testing.T, r *rendered, spec corev1.PodSpec, main string, facts podFacts) *startedPod {
	t.Helper()
	return startPodWith(t, r, spec, main, facts, fixtureSecret)
}

// secretData gives the content of one key of one Secret.
type secretData func(secret, key string) string

// fixtureSecret serves secretFixture, the same keys for every Secret; a
// key it lacks (the database Secret's configurable key) is the DSN.
func fixtureSecret(_, key string) string {
	if data, ok := secretFixture[key]; ok {
		return data
	}
	return secretFixture["connection"]
}

// startPodWith is startPod with the Secrets' contents given by secrets.
func startPodWith(t *testing.T, r *rendered, spec corev1.PodSpec, main string, facts podFacts, secrets secretData) *startedPod {
	t.Helper()
	root := t.TempDir()
	if len(spec.InitContainers) != 1 {
		t.Fatalf("want one init container, got %d", len(spec.InitContainers))
	}
	init := spec.InitContainers[0]
	mountVolumes(t, r, spec, init, root, secrets)

	env := resolveEnv(t, init.Env, facts)
	cmd := exec.Command(init.Command[0], rooted(root, init.Command[1]))
	for k, v := range env {
		if strings.HasPrefix(v, "/") {
			v = rooted(root, v)
		}
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Env = append(cmd.Env, "PATH="+os.Getenv("PATH"), "IRONIC_NETWORK_STATUS_TRIES=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("init container %s: %v\n%s", init.Name, err, out)
	}

	c := container(t, spec, main)
	files, dirs := configArgs(t, c.Args)
	var unknown []string
	cfg, err := config.Load(config.LoadOptions{
		Files: rootedAll(root, files),
		Dirs:  rootedAll(root, dirs),
		Unknown: func(section, name, file string) {
			unknown = append(unknown, fmt.Sprintf("[%s]/%s in %s", section, name, file))
		},
	})
	if err != nil {
		t.Fatalf("load the configuration of %s: %v", main, err)
	}
	if len(unknown) > 0 {
		t.Errorf("options the binary does not know: %v", unknown)
	}
	return &startedPod{Root: root, Config: cfg, Spec: spec}
}

func rooted(root, p string) string { return filepath.Join(root, p) }

func rootedAll(root string, ps []string) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = rooted(root, p)
	}
	return out
}

// mountVolumes writes c's ConfigMap, Secret, emptyDir and downward-API
// volumes under root as the kubelet would.
func mountVolumes(t *testing.T, r *rendered, spec corev1.PodSpec, c corev1.Container, root string, secrets secretData) {
	t.Helper()
	for _, m := range c.VolumeMounts {
		v := volume(t, spec, m.Name)
		dir := rooted(root, m.MountPath)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		switch {
		case v.ConfigMap != nil:
			cm := configMap(t, r, v.ConfigMap.Name)
			for k, data := range cm.Data {
				write(t, filepath.Join(dir, k), data)
			}
		case v.Secret != nil:
			if len(v.Secret.Items) == 0 {
				t.Fatalf("secret volume %s mounts every key: name the keys it needs", v.Name)
			}
			for _, it := range v.Secret.Items {
				write(t, filepath.Join(dir, it.Path), secrets(v.Secret.SecretName, it.Key)+"\n")
			}
		case v.DownwardAPI != nil:
			for _, it := range v.DownwardAPI.Items {
				if it.FieldRef == nil || !strings.Contains(it.FieldRef.FieldPath, "network-status") {
					t.Fatalf("downward-API item %s: unexpected field", it.Path)
				}
				write(t, filepath.Join(dir, it.Path), networkStatusFixture)
			}
		case v.EmptyDir != nil:
		default:
			t.Fatalf("volume %s: kind not emulated", v.Name)
		}
	}
}

// networkStatusFixture is a Multus network-status annotation as Multus
// writes it (indented JSON, the attachment on net1).
const networkStatusFixture = `[{
    "name": "cbr0",
    "interface": "eth0",
    "ips": [
        "10.244.1.7"
    ],
    "mac": "0a:58:0a:f4:01:07",
    "default": true,
    "dns": {}
},{
    "name": "metal/provisioning",
    "interface": "net1",
    "ips": [
        "172.22.0.21"
    ],
    "mac": "52:54:00:aa:bb:cc",
    "dns": {}
}]`

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

var envRef = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// resolveEnv gives the values the kubelet would: field references from
// facts and $(VAR) references to earlier variables expanded.
func resolveEnv(t *testing.T, vars []corev1.EnvVar, facts podFacts) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, e := range vars {
		switch {
		case e.ValueFrom == nil:
			out[e.Name] = envRef.ReplaceAllStringFunc(e.Value, func(ref string) string {
				name := envRef.FindStringSubmatch(ref)[1]
				v, ok := out[name]
				if !ok {
					t.Errorf("env %s refers to $(%s), which is not defined before it", e.Name, name)
				}
				return v
			})
		case e.ValueFrom.FieldRef != nil:
			switch e.ValueFrom.FieldRef.FieldPath {
			case "metadata.name":
				out[e.Name] = facts.Name
			case "metadata.namespace":
				out[e.Name] = namespace
			case "status.hostIP":
				out[e.Name] = facts.HostIP
			case "status.podIP":
				out[e.Name] = facts.PodIP
			default:
				t.Fatalf("env %s: field %s not emulated", e.Name, e.ValueFrom.FieldRef.FieldPath)
			}
		default:
			t.Errorf("env %s takes its value from something other than the downward API; credentials are read from mounted Secrets", e.Name)
		}
	}
	return out
}

// configArgs returns the --config-file and --config-dir arguments.
func configArgs(t *testing.T, args []string) (files, dirs []string) {
	t.Helper()
	for i := 0; i+1 < len(args); i++ {
		switch args[i] {
		case "--config-file":
			files = append(files, args[i+1])
		case "--config-dir":
			dirs = append(dirs, args[i+1])
		}
	}
	if len(files) == 0 {
		t.Fatalf("no --config-file in %q", args)
	}
	return files, dirs
}

func container(t *testing.T, spec corev1.PodSpec, name string) corev1.Container {
	t.Helper()
	for _, c := range spec.Containers {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no container %s", name)
	return corev1.Container{}
}

func volume(t *testing.T, spec corev1.PodSpec, name string) corev1.Volume {
	t.Helper()
	for _, v := range spec.Volumes {
		if v.Name == name {
			return v
		}
	}
	t.Fatalf("no volume %s", name)
	return corev1.Volume{}
}

func configMap(t *testing.T, r *rendered, name string) *corev1.ConfigMap {
	t.Helper()
	cm, _ := find[*corev1.ConfigMap](t, r, "ConfigMap", name)
	return cm
}

// mountedFile tells whether path is a file the container c sees from a
// Secret volume key, and from which Secret.
func mountedFile(spec corev1.PodSpec, c corev1.Container, path string) (secret string, ok bool) {
	for _, m := range c.VolumeMounts {
		for _, v := range spec.Volumes {
			if v.Name != m.Name || v.Secret == nil {
				continue
			}
			for _, it := range v.Secret.Items {
				if filepath.Join(m.MountPath, it.Path) == path {
					return v.Secret.SecretName, true
				}
			}
		}
	}
	return "", false
}
