package pxe

import (
	"context"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/image"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store"
)

type portList []*model.Port

func (l portList) ListPorts(_ context.Context, f store.PortFilter, _ store.ListOptions) ([]*model.Port, error) {
	var out []*model.Port
	for _, p := range l {
		if f.NodeID == nil || (p.NodeID != nil && *p.NodeID == *f.NodeID) {
			out = append(out, p)
		}
	}
	return out, nil
}

type bootCall struct {
	device     string
	persistent bool
}

// recorder is a management interface that only records boot devices.
type recorder struct {
	driver.ManagementInterface
	calls []bootCall
}

func (r *recorder) SetBootDevice(_ context.Context, _ *driver.Task, device string, persistent bool) error {
	r.calls = append(r.calls, bootCall{device, persistent})
	return nil
}

type env struct {
	tftp, http, master string
	opts               Options
	node               *model.Node
	mgmt               *recorder
	task               *driver.Task
}

func ptr[T any](v T) *T { return &v }

const (
	mac1 = "52:54:00:AA:BB:01"
	mac2 = "52:54:00:aa:bb:02"
)

func newEnv(t *testing.T, bootMode string) *env {
	t.Helper()
	base := t.TempDir()
	e := &env{tftp: filepath.Join(base, "tftp"), http: filepath.Join(base, "http"), master: filepath.Join(base, "master")}
	src := filepath.Join(base, "images")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{"kernel": "KERNEL", "ramdisk": "RAMDISK", "rkernel": "RESCUE-KERNEL", "rramdisk": "RESCUE-RAMDISK"} {
		if err := os.WriteFile(filepath.Join(src, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	iopts := image.DefaultOptions()
	iopts.FileURLAllowedPaths = []string{src}
	sources, err := image.NewSources(iopts, nil)
	if err != nil {
		t.Fatal(err)
	}
	cache, err := image.NewCache(e.master, 1<<30, time.Hour, false, image.NewFetcher(sources, iopts))
	if err != nil {
		t.Fatal(err)
	}
	e.node = &model.Node{ID: 7, UUID: "1be26c0b-03f2-4d2e-ae87-c02d7f33c123", ProvisionState: states.Deploying,
		BootMode: ptr(bootMode),
		DriverInfo: map[string]any{
			"deploy_kernel": "file://" + filepath.Join(src, "kernel"), "deploy_ramdisk": "file://" + filepath.Join(src, "ramdisk"),
			"rescue_kernel": "file://" + filepath.Join(src, "rkernel"), "rescue_ramdisk": "file://" + filepath.Join(src, "rramdisk"),
		}}
	ports := portList{
		{UUID: "p1", NodeID: &e.node.ID, Address: ptr(mac1)},
		{UUID: "p2", NodeID: &e.node.ID, Address: ptr(mac2), Extra: map[string]any{"client-id": "ff:00"}},
		{UUID: "other", NodeID: ptr(int64(8)), Address: ptr("52:54:00:ff:ff:ff")},
	}
	e.opts = DefaultOptions()
	e.opts.TFTPRoot, e.opts.HTTPRoot, e.opts.HTTPURL = e.tftp, e.http, "http://127.0.0.1:8080/"
	e.opts.Cache, e.opts.Ports = cache, ports
	e.mgmt = &recorder{}
	e.task = &driver.Task{Node: e.node, Driver: &driver.Interfaces{Management: e.mgmt}}
	return e
}

// tree lists every entry under root: files with their mode, links with
// their target.
func tree(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		info, _ := os.Lstat(p)
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out = append(out, rel+" -> "+target)
		case info.IsDir():
			out = append(out, rel+"/")
		default:
			out = append(out, rel+" "+info.Mode().Perm().String())
		}
		return nil
	})
	sort.Strings(out)
	return out
}

// equal compares listings whatever the order the wanted one is written in.
func equal(got, want []string) bool {
	w := append([]string(nil), want...)
	sort.Strings(w)
	return strings.Join(got, "\n") == strings.Join(w, "\n")
}

func TestPrepareAndCleanUpRamdisk(t *testing.T) {
	const u = "1be26c0b-03f2-4d2e-ae87-c02d7f33c123"
	cases := []struct {
		name, mode string
		ipxe       bool
		tree       []string
		config     []string
	}{
		{name: "pxe bios", mode: "bios", tree: []string{
			"52:54:00:AA:BB:01.conf -> " + u + "/config", "52:54:00:aa:bb:02.conf -> " + u + "/config",
			u + "/", u + "/config -rw-r--r--", u + "/deploy_kernel -rw-r--r--", u + "/deploy_ramdisk -rw-r--r--",
			"grub.cfg-01-52-54-00-aa-bb-01 -> " + u + "/config", "grub.cfg-01-52-54-00-aa-bb-02 -> " + u + "/config",
			"pxelinux.cfg/", "pxelinux.cfg/01-52-54-00-aa-bb-01 -> ../" + u + "/config",
			"pxelinux.cfg/20-52-54-00-aa-bb-02 -> ../" + u + "/config",
		}, config: []string{
			"kernel " + u + "/deploy_kernel\n",
			"append initrd=" + u + "/deploy_ramdisk selinux=0 troubleshoot=0 text nofb vga=normal ipa-api-url=http://127.0.0.1:6385 ipa-standalone\n",
		}},
		{name: "pxe uefi", mode: "uefi", tree: []string{
			"52:54:00:AA:BB:01.conf -> " + u + "/config", "52:54:00:aa:bb:02.conf -> " + u + "/config",
			u + "/", u + "/config -rw-r--r--", u + "/deploy_kernel -rw-r--r--", u + "/deploy_ramdisk -rw-r--r--",
			"grub.cfg-01-52-54-00-aa-bb-01 -> " + u + "/config", "grub.cfg-01-52-54-00-aa-bb-02 -> " + u + "/config",
			"pxelinux.cfg/", "pxelinux.cfg/01-52-54-00-aa-bb-01 -> ../" + u + "/config",
			"pxelinux.cfg/20-52-54-00-aa-bb-02 -> ../" + u + "/config",
		}, config: []string{
			"linux " + u + "/deploy_kernel selinux=0 troubleshoot=0 text nofb vga=normal ipa-api-url=http://127.0.0.1:6385 ipa-standalone\n",
			"initrd " + u + "/deploy_ramdisk\n",
		}},
	}
	ipxeTree := []string{
		"52:54:00:AA:BB:01.conf -> " + u + "/config", "52:54:00:aa:bb:02.conf -> " + u + "/config",
		u + "/", u + "/config -rw-r--r--", u + "/deploy_kernel -rw-r--r--", u + "/deploy_ramdisk -rw-r--r--",
		"boot.ipxe -rw-r--r--",
		"grub.cfg-01-52-54-00-aa-bb-01 -> " + u + "/config", "grub.cfg-01-52-54-00-aa-bb-02 -> " + u + "/config",
		"pxelinux.cfg/", "pxelinux.cfg/52-54-00-aa-bb-01 -> ../" + u + "/config",
		"pxelinux.cfg/52-54-00-aa-bb-02 -> ../" + u + "/config",
	}
	ipxeConfig := []string{
		"#!ipxe\n",
		"kernel http://127.0.0.1:8080/" + u + "/deploy_kernel selinux=0 troubleshoot=0 text nofb vga=normal ipa-api-url=http://127.0.0.1:6385 ipa-standalone BOOTIF=${mac} initrd=deploy_ramdisk || goto retry\n",
		"initrd http://127.0.0.1:8080/" + u + "/deploy_ramdisk || goto retry\n",
	}
	for _, mode := range []string{"bios", "uefi"} {
		cases = append(cases, struct {
			name, mode string
			ipxe       bool
			tree       []string
			config     []string
		}{name: "ipxe " + mode, mode: mode, ipxe: true, tree: ipxeTree, config: ipxeConfig})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			e := newEnv(t, tc.mode)
			b, root, other := NewPXE(e.opts), e.tftp, e.http
			if tc.ipxe {
				b, root, other = NewIPXE(e.opts), e.http, e.tftp
			}
			if err := b.Validate(ctx, e.task); err != nil {
				t.Fatalf("validate: %v", err)
			}
			params := map[string]any{"ipa-api-url": "http://127.0.0.1:6385", "ipa-standalone": nil}
			if err := b.PrepareRamdisk(ctx, e.task, params); err != nil {
				t.Fatalf("prepare ramdisk: %v", err)
			}
			if got := tree(t, root); !equal(got, tc.tree) {
				t.Errorf("files:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.tree, "\n"))
			}
			if got := tree(t, other); len(got) != 0 {
				t.Errorf("wrote outside its root: %v", got)
			}
			cfg, err := os.ReadFile(filepath.Join(root, u, "config"))
			if err != nil {
				t.Fatal(err)
			}
			for _, line := range tc.config {
				if !strings.Contains(string(cfg), line) {
					t.Errorf("config lacks %q:\n%s", line, cfg)
				}
			}
			if strings.Contains(string(cfg), "<no value>") {
				t.Errorf("config has unset variables:\n%s", cfg)
			}
			for label, want := range map[string]string{"deploy_kernel": "KERNEL", "deploy_ramdisk": "RAMDISK"} {
				p := filepath.Join(root, u, label)
				data, err := os.ReadFile(p)
				if err != nil || string(data) != want {
					t.Errorf("%s = %q, %v", label, data, err)
				}
				st, _ := os.Stat(p)
				if st.Sys().(*syscall.Stat_t).Nlink != 2 {
					t.Errorf("%s is a copy, not a hard link of the image", label)
				}
			}
			if tc.ipxe {
				script, _ := os.ReadFile(filepath.Join(root, "boot.ipxe"))
				if !strings.HasPrefix(string(script), "#!ipxe\n") || !strings.Contains(string(script), "chain pxelinux.cfg/${net${i}/mac:hexhyp} || goto try_next") {
					t.Errorf("boot.ipxe:\n%s", script)
				}
			}
			if len(e.mgmt.calls) != 1 || e.mgmt.calls[0] != (bootCall{"pxe", false}) {
				t.Errorf("boot device calls = %v", e.mgmt.calls)
			}
			// Preparing again replaces everything in place.
			if err := b.PrepareRamdisk(ctx, e.task, params); err != nil {
				t.Fatalf("prepare ramdisk again: %v", err)
			}
			if got := tree(t, root); !equal(got, tc.tree) {
				t.Errorf("files after second prepare:\n%s", strings.Join(got, "\n"))
			}
			if err := b.CleanUpRamdisk(ctx, e.task); err != nil {
				t.Fatal(err)
			}
			want := []string{"pxelinux.cfg/"}
			if tc.ipxe {
				want = []string{"boot.ipxe -rw-r--r--", "pxelinux.cfg/"}
			}
			if got := tree(t, root); !equal(got, want) {
				t.Errorf("left after clean-up: %v", got)
			}
		})
	}
}

func TestRescueMode(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, "bios")
	e.node.ProvisionState = states.Rescuing
	b := NewPXE(e.opts)
	if err := b.PrepareRamdisk(ctx, e.task, nil); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(e.tftp, e.node.UUID)
	data, err := os.ReadFile(filepath.Join(dir, "rescue_kernel"))
	if err != nil || string(data) != "RESCUE-KERNEL" {
		t.Fatalf("rescue kernel = %q, %v", data, err)
	}
	cfg, _ := os.ReadFile(filepath.Join(dir, "config"))
	if !strings.Contains(string(cfg), "append initrd="+e.node.UUID+"/rescue_ramdisk ") {
		t.Errorf("config:\n%s", cfg)
	}
	if _, err := os.Stat(filepath.Join(dir, "deploy_kernel")); err == nil {
		t.Error("deploy kernel fetched in rescue mode")
	}
}

func TestPrepareRamdiskSkipsOtherStates(t *testing.T) {
	e := newEnv(t, "bios")
	e.node.ProvisionState = states.Active
	if err := NewPXE(e.opts).PrepareRamdisk(context.Background(), e.task, nil); err != nil {
		t.Fatal(err)
	}
	if got := tree(t, e.tftp); len(got) != 0 || len(e.mgmt.calls) != 0 {
		t.Errorf("active node touched: %v, %v", got, e.mgmt.calls)
	}
}

func TestPrepareInstanceLocalBoot(t *testing.T) {
	ctx := context.Background()
	for _, ipxe := range []bool{false, true} {
		e := newEnv(t, "uefi")
		b := NewPXE(e.opts)
		root := e.tftp
		if ipxe {
			b, root = NewIPXE(e.opts), e.http
		}
		if err := b.PrepareRamdisk(ctx, e.task, nil); err != nil {
			t.Fatal(err)
		}
		if err := b.PrepareInstance(ctx, e.task); err != nil {
			t.Fatal(err)
		}
		for _, entry := range tree(t, root) {
			if entry != "pxelinux.cfg/" && entry != "boot.ipxe -rw-r--r--" {
				t.Errorf("ipxe=%v: left after prepare_instance: %s", ipxe, entry)
			}
		}
		want := []bootCall{{"pxe", false}, {"disk", true}}
		if len(e.mgmt.calls) != 2 || e.mgmt.calls[1] != want[1] {
			t.Errorf("ipxe=%v: boot device calls = %v", ipxe, e.mgmt.calls)
		}
		// At takeover of an active node the boot device stays.
		e.node.ProvisionState = states.Active
		if err := b.PrepareInstance(ctx, e.task); err != nil {
			t.Fatal(err)
		}
		if len(e.mgmt.calls) != 2 {
			t.Errorf("ipxe=%v: active node's boot device changed: %v", ipxe, e.mgmt.calls)
		}
		if err := b.CleanUpInstance(ctx, e.task); err != nil {
			t.Fatal(err)
		}
	}
}

func TestValidate(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, "bios")
	delete(e.node.DriverInfo, "deploy_kernel")
	delete(e.node.DriverInfo, "deploy_ramdisk")
	err := NewPXE(e.opts).Validate(ctx, e.task)
	want := "Cannot validate PXE bootloader. Some parameters were missing in node's driver_info and configuration. Missing are: ['deploy_kernel', 'deploy_ramdisk']"
	if !errs.Is(err, "MissingParameterValue") || err.Error() != want {
		t.Errorf("no kernel: %v", err)
	}
	// The configuration's pair is used when the node names neither.
	o := e.opts
	o.DeployKernel, o.DeployRamdisk = "http://127.0.0.1/k", "http://127.0.0.1/r"
	if err := NewPXE(o).Validate(ctx, e.task); err != nil {
		t.Errorf("configured kernel: %v", err)
	}
	// Half a pair on the node is not completed from the configuration.
	e.node.DriverInfo["deploy_kernel"] = "http://127.0.0.1/k"
	if err := NewPXE(o).Validate(ctx, e.task); !errs.Is(err, "MissingParameterValue") || !strings.HasSuffix(err.Error(), "['deploy_ramdisk']") {
		t.Errorf("half pair: %v", err)
	}
	o.HTTPURL = ""
	if err := NewIPXE(o).Validate(ctx, e.task); err == nil || err.Error() != "iPXE boot is enabled but no HTTP URL or HTTP root was specified." {
		t.Errorf("ipxe without http_url: %v", err)
	}
	o.Ports = portList{}
	if err := NewPXE(o).Validate(ctx, e.task); !errs.Is(err, "MissingParameterValue") || err.Error() != "Node "+e.node.UUID+" does not have any port associated with it." {
		t.Errorf("no ports: %v", err)
	}
	if err := NewPXE(e.opts).ValidateRescue(ctx, e.task); err != nil {
		t.Errorf("rescue: %v", err)
	}
}

func TestTemplateOverride(t *testing.T) {
	e := newEnv(t, "bios")
	custom := filepath.Join(t.TempDir(), "my.template")
	if err := os.WriteFile(custom, []byte("K={{ .pxe_options.deployment_aki_path }} A={{ index .pxe_options \"ipa-api-url\" }}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := e.opts
	o.PXEConfigTemplate = custom
	if err := NewPXE(o).PrepareRamdisk(context.Background(), e.task, map[string]any{"ipa-api-url": "http://x"}); err != nil {
		t.Fatal(err)
	}
	cfg, _ := os.ReadFile(filepath.Join(e.tftp, e.node.UUID, "config"))
	if string(cfg) != "K="+e.node.UUID+"/deploy_kernel A=http://x\n" {
		t.Errorf("config = %q", cfg)
	}
}

func TestRegister(t *testing.T) {
	r := driver.NewRegistry()
	if err := Register(r, DefaultOptions()); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"pxe", "ipxe"} {
		if _, ok := r.Implementation(driver.KindBoot, name); !ok {
			t.Errorf("%s not registered", name)
		}
	}
}

func TestCacheMadeAtFirstDownload(t *testing.T) {
	e := newEnv(t, "bios")
	o := e.opts
	o.Fetcher, o.Cache = e.opts.Cache.Fetcher, nil
	o.CacheDir, o.CacheSize, o.CacheTTL = filepath.Join(t.TempDir(), "lazy"), 1<<30, time.Hour
	// File images are linked, never cached: serve them over HTTP.
	srv := httptest.NewServer(http.FileServer(http.Dir(filepath.Dir(strings.TrimPrefix(e.node.DriverInfo["deploy_kernel"].(string), "file://")))))
	t.Cleanup(srv.Close)
	e.node.DriverInfo["deploy_kernel"], e.node.DriverInfo["deploy_ramdisk"] = srv.URL+"/kernel", srv.URL+"/ramdisk"
	r := driver.NewRegistry()
	if err := Register(r, o); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(o.CacheDir); err == nil {
		t.Fatal("cache directory made at registration")
	}
	impl, _ := r.Implementation(driver.KindBoot, "pxe")
	if err := impl.(*Boot).PrepareRamdisk(context.Background(), e.task, nil); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(o.CacheDir)
	if err != nil || len(entries) != 2 {
		t.Fatalf("cache directory = %v, %v", entries, err)
	}
	st, _ := os.Stat(filepath.Join(e.tftp, e.node.UUID, "deploy_kernel"))
	if st.Sys().(*syscall.Stat_t).Nlink != 2 {
		t.Error("kernel is not linked to the master copy")
	}
}

func TestIPXETimeoutAndFallback(t *testing.T) {
	e := newEnv(t, "uefi")
	o := e.opts
	o.IPXETimeoutSeconds, o.IPXEFallbackScript = 5, "http://127.0.0.1:8080/inspector.ipxe"
	if err := NewIPXE(o).PrepareRamdisk(context.Background(), e.task, nil); err != nil {
		t.Fatal(err)
	}
	cfg, _ := os.ReadFile(filepath.Join(e.http, e.node.UUID, "config"))
	if !strings.Contains(string(cfg), "kernel --timeout 5000 http://127.0.0.1:8080/"+e.node.UUID+"/deploy_kernel ") ||
		!strings.Contains(string(cfg), "initrd --timeout 5000 http://127.0.0.1:8080/"+e.node.UUID+"/deploy_ramdisk ") {
		t.Errorf("config:\n%s", cfg)
	}
	script, _ := os.ReadFile(filepath.Join(e.http, "boot.ipxe"))
	if !strings.Contains(string(script), "chain http://127.0.0.1:8080/inspector.ipxe || goto boot_failed\n") {
		t.Errorf("boot.ipxe:\n%s", script)
	}
}
