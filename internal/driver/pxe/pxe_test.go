package pxe

import (
	"context"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
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

// recorder is a management interface that only records boot devices; it
// refuses the device reject with an error of rejectClass
// (InvalidParameterValue when empty), as a BMC without it would.
type recorder struct {
	driver.ManagementInterface
	calls       []bootCall
	reject      string
	rejectClass errs.Class
}

func (r *recorder) SetBootDevice(_ context.Context, _ *driver.Task, device string, persistent bool) error {
	r.calls = append(r.calls, bootCall{device, persistent})
	if device == r.reject {
		class := r.rejectClass
		if class == "" {
			class = "InvalidParameterValue"
		}
		return errs.NewMessage(class, "Invalid boot device "+device+" specified.")
	}
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
	e.opts.TFTPRoot, e.opts.HTTPRoot, e.opts.HTTPURL = e.tftp, e.http, "http://127.0.0.1:8080"
	e.opts.TFTPServer = "192.0.2.1"
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

// grubFiles are what the pxe and http interfaces place in both roots once
// (upstream place_common_config).
var grubFiles = []string{"grub/", "grub/grub.cfg -rw-r--r--"}

// conductorWide tells the files the interfaces place once for every node
// (the initial GRUB configuration, the iPXE boot script) from a node's.
func conductorWide(entry string) bool {
	return entry == "pxelinux.cfg/" || entry == "boot.ipxe -rw-r--r--" || slices.Contains(grubFiles, entry)
}

func with(a []string, b ...string) []string { return append(slices.Clone(a), b...) }

// equal compares listings whatever the order the wanted one is written in.
func equal(got, want []string) bool {
	w := append([]string(nil), want...)
	sort.Strings(w)
	return strings.Join(got, "\n") == strings.Join(w, "\n")
}

// dropComments removes "#" comment lines, keeping the "#!ipxe" header.
func dropComments(s string) string {
	var out []string
	for line := range strings.SplitSeq(s, "\n") {
		if strings.HasPrefix(line, "#") && line != "#!ipxe" {
			continue
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

// sameText reports a difference between got and want line by line.
func sameText(t *testing.T, what, got, want string) {
	t.Helper()
	if got == want {
		return
	}
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < max(len(g), len(w)); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl || i >= len(g) || i >= len(w) {
			t.Errorf("%s differs from upstream's output at line %d:\n got  %q\n want %q\n(%d lines, want %d)", what, i+1, gl, wl, len(g), len(w))
			return
		}
	}
}

func TestPrepareAndCleanUpRamdisk(t *testing.T) {
	const u = "1be26c0b-03f2-4d2e-ae87-c02d7f33c123"
	// What create_pxe_config leaves under the configuration's root.
	pxeLinks := []string{
		"52:54:00:AA:BB:01.conf -> " + u + "/config", "52:54:00:aa:bb:02.conf -> " + u + "/config",
		u + "/", u + "/config -rw-r--r--",
		"grub.cfg-01-52-54-00-aa-bb-01 -> " + u + "/config", "grub.cfg-01-52-54-00-aa-bb-02 -> " + u + "/config",
		"pxelinux.cfg/", "pxelinux.cfg/01-52-54-00-aa-bb-01 -> ../" + u + "/config",
		"pxelinux.cfg/20-52-54-00-aa-bb-02 -> ../" + u + "/config",
	}
	images := []string{u + "/", u + "/deploy_kernel -rw-r--r--", u + "/deploy_ramdisk -rw-r--r--"}
	ipxeTree := []string{
		"52:54:00:AA:BB:01.conf -> " + u + "/config", "52:54:00:aa:bb:02.conf -> " + u + "/config",
		u + "/", u + "/config -rw-r--r--", u + "/deploy_kernel -rw-r--r--", u + "/deploy_ramdisk -rw-r--r--",
		"boot.ipxe -rw-r--r--",
		"grub.cfg-01-52-54-00-aa-bb-01 -> " + u + "/config", "grub.cfg-01-52-54-00-aa-bb-02 -> " + u + "/config",
		"pxelinux.cfg/", "pxelinux.cfg/52-54-00-aa-bb-01 -> ../" + u + "/config",
		"pxelinux.cfg/52-54-00-aa-bb-02 -> ../" + u + "/config",
	}
	pxeTree := append(slices.Clone(pxeLinks), images[1:]...)
	cases := []struct {
		name, mode string
		iface      func(Options) *Boot
		// tftp and http are the trees after prepare_ramdisk; config is
		// where the configuration is and its upstreamOutput key.
		tftp, http         []string
		configRoot         string
		config             string
		device             string
		tftpLeft, httpLeft []string
	}{
		{name: "pxe bios", mode: "bios", iface: NewPXE, tftp: with(pxeTree, grubFiles...), http: grubFiles, configRoot: "tftp", config: "pxeBIOS", device: "pxe",
			tftpLeft: with(grubFiles, "pxelinux.cfg/"), httpLeft: grubFiles},
		{name: "pxe uefi", mode: "uefi", iface: NewPXE, tftp: with(pxeTree, grubFiles...), http: grubFiles, configRoot: "tftp", config: "pxeUEFI", device: "pxe",
			tftpLeft: with(grubFiles, "pxelinux.cfg/"), httpLeft: grubFiles},
		{name: "ipxe bios", mode: "bios", iface: NewIPXE, http: ipxeTree, configRoot: "http", config: "ipxe", device: "pxe",
			httpLeft: []string{"boot.ipxe -rw-r--r--", "pxelinux.cfg/"}},
		{name: "ipxe uefi", mode: "uefi", iface: NewIPXE, http: ipxeTree, configRoot: "http", config: "ipxe", device: "pxe",
			httpLeft: []string{"boot.ipxe -rw-r--r--", "pxelinux.cfg/"}},
		// Upstream HttpBoot: configuration and links under tftp_root,
		// kernel and ramdisk under http_root.
		{name: "http uefi", mode: "uefi", iface: NewHTTP, tftp: with(pxeLinks, grubFiles...), http: with(images, grubFiles...), configRoot: "tftp", config: "httpUEFI", device: "uefihttp",
			tftpLeft: with(grubFiles, "pxelinux.cfg/"), httpLeft: grubFiles},
		{name: "http bios", mode: "bios", iface: NewHTTP, tftp: with(pxeLinks, grubFiles...), http: with(images, grubFiles...), configRoot: "tftp", config: "httpBIOS", device: "uefihttp",
			tftpLeft: with(grubFiles, "pxelinux.cfg/"), httpLeft: grubFiles},
		{name: "http-ipxe uefi", mode: "uefi", iface: NewHTTPIPXE, http: ipxeTree, configRoot: "http", config: "ipxe", device: "uefihttp",
			httpLeft: []string{"boot.ipxe -rw-r--r--", "pxelinux.cfg/"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			e := newEnv(t, tc.mode)
			b := tc.iface(e.opts)
			if err := b.Validate(ctx, e.task); err != nil {
				t.Fatalf("validate: %v", err)
			}
			params := map[string]any{"ipa-api-url": "http://127.0.0.1:6385", "ipa-standalone": nil}
			check := func(when string) {
				t.Helper()
				for _, r := range []struct {
					root string
					want []string
				}{{e.tftp, tc.tftp}, {e.http, tc.http}} {
					if got := tree(t, r.root); !equal(got, r.want) {
						t.Errorf("%s: files under %s:\n%s\nwant:\n%s", when, filepath.Base(r.root), strings.Join(got, "\n"), strings.Join(r.want, "\n"))
					}
				}
			}
			if err := b.PrepareRamdisk(ctx, e.task, params); err != nil {
				t.Fatalf("prepare ramdisk: %v", err)
			}
			check("after prepare")
			root := map[string]string{"tftp": e.tftp, "http": e.http}[tc.configRoot]
			cfg, err := os.ReadFile(filepath.Join(root, u, "config"))
			if err != nil {
				t.Fatal(err)
			}
			sameText(t, "config", string(cfg), upstreamOutput[tc.config])
			imageRoot := e.tftp
			if slices.Contains(tc.http, u+"/") {
				imageRoot = e.http
			}
			for label, want := range map[string]string{"deploy_kernel": "KERNEL", "deploy_ramdisk": "RAMDISK"} {
				p := filepath.Join(imageRoot, u, label)
				data, err := os.ReadFile(p)
				if err != nil || string(data) != want {
					t.Errorf("%s = %q, %v", label, data, err)
				}
				st, _ := os.Stat(p)
				if st == nil || st.Sys().(*syscall.Stat_t).Nlink != 2 {
					t.Errorf("%s is a copy, not a hard link of the image", label)
				}
			}
			if slices.Contains(tc.http, "boot.ipxe -rw-r--r--") {
				script, _ := os.ReadFile(filepath.Join(e.http, "boot.ipxe"))
				sameText(t, "boot.ipxe", dropComments(string(script)), upstreamOutput["bootScript"])
			}
			if len(e.mgmt.calls) != 1 || e.mgmt.calls[0] != (bootCall{tc.device, false}) {
				t.Errorf("boot device calls = %v, want one-time %s", e.mgmt.calls, tc.device)
			}
			// Preparing again replaces everything in place.
			if err := b.PrepareRamdisk(ctx, e.task, params); err != nil {
				t.Fatalf("prepare ramdisk again: %v", err)
			}
			check("after a second prepare")
			if err := b.CleanUpRamdisk(ctx, e.task); err != nil {
				t.Fatal(err)
			}
			for _, r := range []struct {
				root string
				want []string
			}{{e.tftp, tc.tftpLeft}, {e.http, tc.httpLeft}} {
				if got := tree(t, r.root); !equal(got, r.want) {
					t.Errorf("left under %s after clean-up: %v, want %v", filepath.Base(r.root), got, r.want)
				}
			}
		})
	}
}

func TestHTTPBootFallsBackToPXE(t *testing.T) {
	ctx := context.Background()
	for _, iface := range []func(Options) *Boot{NewHTTP, NewHTTPIPXE} {
		e := newEnv(t, "uefi")
		e.mgmt.reject = "uefihttp"
		b := iface(e.opts)
		if err := b.PrepareRamdisk(ctx, e.task, nil); err != nil {
			t.Fatal(err)
		}
		want := []bootCall{{"uefihttp", false}, {"pxe", false}}
		if !slices.Equal(e.mgmt.calls, want) {
			t.Errorf("boot device calls = %v, want %v", e.mgmt.calls, want)
		}
	}
	// Other failures are not papered over.
	e := newEnv(t, "uefi")
	e.mgmt.reject, e.mgmt.rejectClass = "uefihttp", "RedfishError"
	if err := NewHTTP(e.opts).PrepareRamdisk(ctx, e.task, nil); !errs.Is(err, errs.ClassRedfishError) || len(e.mgmt.calls) != 1 {
		t.Errorf("BMC failure: %v, calls %v", err, e.mgmt.calls)
	}
}

func TestPortsWithoutPXEAreNotLinked(t *testing.T) {
	e := newEnv(t, "bios")
	ports := e.opts.Ports.(portList)
	ports[1].PXEEnabled = ptr(false)
	if err := NewPXE(e.opts).PrepareRamdisk(context.Background(), e.task, nil); err != nil {
		t.Fatal(err)
	}
	for _, entry := range tree(t, e.tftp) {
		if strings.Contains(entry, "bb-02") || strings.Contains(entry, "bb:02") {
			t.Errorf("port without pxe_enabled linked: %s", entry)
		}
	}
	o := e.opts
	o.AddAllPorts = true
	if err := NewPXE(o).PrepareRamdisk(context.Background(), e.task, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(e.tftp, "pxelinux.cfg", "20-52-54-00-aa-bb-02")); err != nil {
		t.Errorf("add_all_ports: %v", err)
	}
	// Clean-up removes the links of every port.
	if err := NewPXE(e.opts).CleanUpRamdisk(context.Background(), e.task); err != nil {
		t.Fatal(err)
	}
	if got := tree(t, e.tftp); !equal(got, with(grubFiles, "pxelinux.cfg/")) {
		t.Errorf("left after clean-up: %v", got)
	}
}

func TestRescueMode(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, "bios")
	e.node.ProvisionState = states.Rescuing
	b := NewPXE(e.opts)
	if err := b.PrepareRamdisk(ctx, e.task, map[string]any{"ipa-api-url": "http://127.0.0.1:6385", "ipa-standalone": nil}); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(e.tftp, e.node.UUID)
	data, err := os.ReadFile(filepath.Join(dir, "rescue_kernel"))
	if err != nil || string(data) != "RESCUE-KERNEL" {
		t.Fatalf("rescue kernel = %q, %v", data, err)
	}
	cfg, _ := os.ReadFile(filepath.Join(dir, "config"))
	sameText(t, "rescue config", string(cfg), upstreamOutput["pxeRescueBIOS"])
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
	for name, iface := range map[string]func(Options) *Boot{"pxe": NewPXE, "ipxe": NewIPXE, "http": NewHTTP, "http-ipxe": NewHTTPIPXE} {
		e := newEnv(t, "uefi")
		b := iface(e.opts)
		if err := b.PrepareRamdisk(ctx, e.task, nil); err != nil {
			t.Fatal(err)
		}
		if err := b.PrepareInstance(ctx, e.task); err != nil {
			t.Fatal(err)
		}
		for _, root := range []string{e.tftp, e.http} {
			for _, entry := range tree(t, root) {
				if !conductorWide(entry) {
					t.Errorf("%s: left after prepare_instance: %s", name, entry)
				}
			}
		}
		if len(e.mgmt.calls) != 2 || e.mgmt.calls[1] != (bootCall{"disk", true}) {
			t.Errorf("%s: boot device calls = %v", name, e.mgmt.calls)
		}
		// At takeover of an active node, and at adoption, the boot
		// device stays.
		for _, st := range []string{states.Active, states.Adopting} {
			e.node.ProvisionState = st
			if err := b.PrepareInstance(ctx, e.task); err != nil {
				t.Fatal(err)
			}
		}
		if len(e.mgmt.calls) != 2 {
			t.Errorf("%s: active node's boot device changed: %v", name, e.mgmt.calls)
		}
		if err := b.CleanUpInstance(ctx, e.task); err != nil {
			t.Fatal(err)
		}
	}
}

func TestPrepareInstanceLenovoUEFIDeploy(t *testing.T) {
	e := newEnv(t, "uefi")
	e.node.Properties = map[string]any{"vendor": "Lenovo"}
	if err := NewPXE(e.opts).PrepareInstance(context.Background(), e.task); err != nil {
		t.Fatal(err)
	}
	if len(e.mgmt.calls) != 0 {
		t.Errorf("boot device set on a Lenovo UEFI node being deployed: %v", e.mgmt.calls)
	}
	e.node.BootMode = ptr("bios")
	if err := NewPXE(e.opts).PrepareInstance(context.Background(), e.task); err != nil {
		t.Fatal(err)
	}
	if len(e.mgmt.calls) != 1 {
		t.Errorf("Lenovo BIOS node: %v", e.mgmt.calls)
	}
}

func TestValidate(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, "bios")
	delete(e.node.DriverInfo, "deploy_kernel")
	delete(e.node.DriverInfo, "deploy_ramdisk")
	err := NewPXE(e.opts).Validate(ctx, e.task)
	want := "Cannot validate PXE bootloader. Some parameters were missing in node's driver_info and configuration. Missing are: ['deploy_kernel', 'deploy_ramdisk']"
	if !errs.Is(err, errs.ClassMissingParameterValue) || err.Error() != want {
		t.Errorf("no kernel: %v", err)
	}
	// The configuration's pair is used when the node names neither.
	o := e.opts
	o.DeployKernel, o.DeployRamdisk = "http://127.0.0.1/k", "http://127.0.0.1/r"
	if err := NewPXE(o).Validate(ctx, e.task); err != nil {
		t.Errorf("configured kernel: %v", err)
	}
	// Half a pair on the node is ambiguous: upstream's
	// get_agent_kernel_ramdisk passes over it for the configured pair
	// (checks_test.go has the strict option).
	e.node.DriverInfo["deploy_kernel"] = "http://127.0.0.1/other-k"
	if k, r, err := NewPXE(o).kernelRamdisk(e.task, "deploy"); err != nil || k != o.DeployKernel || r != o.DeployRamdisk {
		t.Errorf("half pair: %q %q %v", k, r, err)
	}
	o.HTTPURL = ""
	for _, iface := range []func(Options) *Boot{NewIPXE, NewHTTPIPXE} {
		if err := iface(o).Validate(ctx, e.task); !errs.Is(err, errs.ClassMissingParameterValue) || err.Error() != "iPXE boot is enabled but no HTTP URL or HTTP root was specified" {
			t.Errorf("ipxe without http_url: %v", err)
		}
	}
	// The http interface names its files relative to tftp_root and needs
	// no http_url to validate, as upstream.
	e = newEnv(t, "uefi")
	o = e.opts
	o.HTTPURL = ""
	if err := NewHTTP(o).Validate(ctx, e.task); err != nil {
		t.Errorf("http without http_url: %v", err)
	}
	e.node.InstanceInfo = map[string]any{"image_source": "http://127.0.0.1/img", "boot_iso": "http://127.0.0.1/iso"}
	if err := NewHTTP(e.opts).Validate(ctx, e.task); !errs.Is(err, errs.ClassInvalidParameterValue) || err.Error() != "An 'image_source' and 'boot_iso' parameter may not be specified at the same time" {
		t.Errorf("image_source and boot_iso: %v", err)
	}
	e.node.InstanceInfo = nil
	o.Ports = portList{}
	for _, iface := range []func(Options) *Boot{NewPXE, NewIPXE, NewHTTP, NewHTTPIPXE} {
		if err := iface(o).Validate(ctx, e.task); !errs.Is(err, errs.ClassMissingParameterValue) || err.Error() != "Node "+e.node.UUID+" does not have any port associated with it" {
			t.Errorf("no ports: %v", err)
		}
		err := iface(o).ValidateInspection(ctx, e.task)
		if !errs.Is(err, errs.ClassUnsupportedDriverExtension) || err.Error() != "Insufficient information provided for managed inspection: Node "+e.node.UUID+" does not have any port associated with it" {
			t.Errorf("inspection without ports: %v", err)
		}
	}
	if err := NewHTTP(e.opts).ValidateInspection(ctx, e.task); err != nil {
		t.Errorf("inspection: %v", err)
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
	// As Jinja, the template's last newline is dropped.
	if string(cfg) != "K="+e.node.UUID+"/deploy_kernel A=http://x" {
		t.Errorf("config = %q", cfg)
	}
}

func TestRegister(t *testing.T) {
	r := driver.NewRegistry()
	if err := Register(r, DefaultOptions()); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"pxe", "ipxe", "http", "http-ipxe"} {
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
	params := map[string]any{"ipa-api-url": "http://127.0.0.1:6385", "ipa-standalone": nil}
	if err := NewIPXE(o).PrepareRamdisk(context.Background(), e.task, params); err != nil {
		t.Fatal(err)
	}
	cfg, _ := os.ReadFile(filepath.Join(e.http, e.node.UUID, "config"))
	sameText(t, "config", string(cfg), upstreamOutput["ipxeTimeout"])
	script, _ := os.ReadFile(filepath.Join(e.http, "boot.ipxe"))
	sameText(t, "boot.ipxe", dropComments(string(script)), upstreamOutput["bootScriptFallback"])
}

// A ramdisk deployment boots the instance's kernel and ramdisk (or, with
// iPXE, its boot ISO) from the network for good: the configuration,
// written as upstream's service mode writes it, starts its boot_ramdisk
// entry, and clean-up removes it all.
func TestPrepareInstanceRamdisk(t *testing.T) {
	const u = "1be26c0b-03f2-4d2e-ae87-c02d7f33c123"
	links := func(ipxe bool) []string {
		first := []string{"pxelinux.cfg/01-52-54-00-aa-bb-01 -> ../" + u + "/config", "pxelinux.cfg/20-52-54-00-aa-bb-02 -> ../" + u + "/config"}
		if ipxe {
			first = []string{"pxelinux.cfg/52-54-00-aa-bb-01 -> ../" + u + "/config", "pxelinux.cfg/52-54-00-aa-bb-02 -> ../" + u + "/config"}
		}
		return append(first, "52:54:00:AA:BB:01.conf -> "+u+"/config", "52:54:00:aa:bb:02.conf -> "+u+"/config",
			"grub.cfg-01-52-54-00-aa-bb-01 -> "+u+"/config", "grub.cfg-01-52-54-00-aa-bb-02 -> "+u+"/config",
			"pxelinux.cfg/", u+"/", u+"/config -rw-r--r--")
	}
	for _, tc := range []struct {
		name, mode string
		iface      func(Options) *Boot
		bootISO    bool
		root       string
		config     string
		files      []string
		device     string
	}{
		{name: "pxe bios", mode: "bios", iface: NewPXE, root: "tftp", config: "pxeRamdiskBIOS", files: []string{"kernel", "ramdisk"}, device: "pxe"},
		{name: "pxe uefi", mode: "uefi", iface: NewPXE, root: "tftp", config: "pxeRamdiskUEFI", files: []string{"kernel", "ramdisk"}, device: "pxe"},
		{name: "http uefi", mode: "uefi", iface: NewHTTP, root: "tftp", config: "pxeRamdiskUEFI", files: []string{"kernel", "ramdisk"}, device: "uefihttp"},
		{name: "ipxe", mode: "uefi", iface: NewIPXE, root: "http", config: "ipxeRamdisk", files: []string{"kernel", "ramdisk"}, device: "pxe"},
		{name: "ipxe boot iso", mode: "bios", iface: NewIPXE, bootISO: true, root: "http", config: "ipxeBootISO", files: []string{"boot_iso"}, device: "pxe"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			e := newEnv(t, tc.mode)
			src := filepath.Dir(strings.TrimPrefix(e.node.DriverInfo["deploy_kernel"].(string), "file://"))
			for name, content := range map[string]string{"vmlinuz": "INSTANCE-KERNEL", "initrd": "INSTANCE-RAMDISK", "live.iso": "ISO"} {
				if err := os.WriteFile(filepath.Join(src, name), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			e.node.DeployInterface = "ramdisk"
			e.node.InstanceInfo = map[string]any{"ramdisk_kernel_arguments": "console=ttyS0"}
			if tc.bootISO {
				e.node.InstanceInfo["boot_iso"] = "file://" + filepath.Join(src, "live.iso")
			} else {
				e.node.InstanceInfo["kernel"] = "file://" + filepath.Join(src, "vmlinuz")
				e.node.InstanceInfo["ramdisk"] = "file://" + filepath.Join(src, "initrd")
			}
			b := tc.iface(e.opts)
			if err := b.Validate(ctx, e.task); err != nil {
				t.Fatalf("validate: %v", err)
			}
			if err := b.PrepareInstance(ctx, e.task); err != nil {
				t.Fatal(err)
			}
			root := map[string]string{"tftp": e.tftp, "http": e.http}[tc.root]
			want := links(tc.root == "http")
			for _, f := range tc.files {
				want = append(want, u+"/"+f+" -rw-r--r--")
			}
			if tc.root == "http" {
				want = append(want, "boot.ipxe -rw-r--r--")
			} else {
				want = append(want, grubFiles...)
			}
			if got := tree(t, root); !equal(got, want) {
				t.Errorf("files under %s:\n%s\nwant:\n%s", tc.root, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			cfg, err := os.ReadFile(filepath.Join(root, u, "config"))
			if err != nil {
				t.Fatal(err)
			}
			sameText(t, "config", string(cfg), upstreamOutput[tc.config])
			contents := map[string]string{"kernel": "INSTANCE-KERNEL", "ramdisk": "INSTANCE-RAMDISK", "boot_iso": "ISO"}
			for _, f := range tc.files {
				if data, _ := os.ReadFile(filepath.Join(root, u, f)); string(data) != contents[f] {
					t.Errorf("%s = %q", f, data)
				}
			}
			if len(e.mgmt.calls) != 1 || e.mgmt.calls[0] != (bootCall{tc.device, true}) {
				t.Errorf("boot device calls = %v, want persistent %s", e.mgmt.calls, tc.device)
			}
			// At takeover the existing configuration is kept and the boot
			// device left alone.
			e.node.ProvisionState = states.Active
			if err := b.PrepareInstance(ctx, e.task); err != nil {
				t.Fatal(err)
			}
			if again, _ := os.ReadFile(filepath.Join(root, u, "config")); string(again) != string(cfg) || len(e.mgmt.calls) != 1 {
				t.Errorf("takeover changed the configuration or the boot device: %v", e.mgmt.calls)
			}
			if err := b.CleanUpInstance(ctx, e.task); err != nil {
				t.Fatal(err)
			}
			for _, r := range []string{e.tftp, e.http} {
				for _, entry := range tree(t, r) {
					if !conductorWide(entry) {
						t.Errorf("left after clean-up: %s", entry)
					}
				}
			}
		})
	}
}

// A ramdisk deployment needs a boot ISO or a kernel and ramdisk, and not a
// boot ISO and an image at once.
func TestValidateRamdiskInstance(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, "bios")
	e.node.DeployInterface = "ramdisk"
	b := NewPXE(e.opts)
	e.node.InstanceInfo = map[string]any{"kernel": "file:///k"}
	err := b.Validate(ctx, e.task)
	if e, _ := errs.As(err); e == nil || e.Class != errs.ClassMissingParameterValue || e.Message != "Cannot validate image information for node "+
		"1be26c0b-03f2-4d2e-ae87-c02d7f33c123 because one or more parameters are missing from its instance_info and insufficient information "+
		"is present to boot from a remote volume. Missing are: ['ramdisk']" {
		t.Errorf("kernel only: %v", err)
	}
	e.node.InstanceInfo = map[string]any{"image_source": "http://127.0.0.1:1/disk.img"}
	if err := b.Validate(ctx, e.task); !errs.Is(err, errs.ClassMissingParameterValue) || err.Error() != "Image http://127.0.0.1:1/disk.img is missing the following properties: kernel, ramdisk" {
		t.Errorf("image without kernel and ramdisk: %v", err)
	}
	e.node.InstanceInfo = map[string]any{"boot_iso": "file:///live.iso", "image_source": "file:///disk.img"}
	if err := b.Validate(ctx, e.task); !errs.Is(err, errs.ClassInvalidParameterValue) {
		t.Errorf("boot_iso with image_source: %v", err)
	}
	// A local boot does not look at the instance image.
	e.node.DeployInterface = "direct"
	e.node.InstanceInfo = map[string]any{"kernel": "file:///k"}
	if err := b.Validate(ctx, e.task); err != nil {
		t.Errorf("local boot: %v", err)
	}
}

// With [pxe]/enable_netboot_fallback a local boot keeps a configuration
// whose default entry chains to the disk the image went to, as upstream's
// build_service_pxe_config writes it; the disk stays the boot device.
func TestNetbootFallback(t *testing.T) {
	const u = "1be26c0b-03f2-4d2e-ae87-c02d7f33c123"
	for _, tc := range []struct {
		name, mode string
		iface      func(Options) *Boot
		root       string
		want       string
	}{
		{"pxe bios", "bios", NewPXE, "tftp", "fallbackBIOS"},
		{"pxe uefi", "uefi", NewPXE, "tftp", "fallbackUEFI"},
		{"ipxe uefi", "uefi", NewIPXE, "http", "fallbackIPXE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			e := newEnv(t, tc.mode)
			e.opts.NetbootFallback = true
			e.node.DriverInternalInfo = map[string]any{"root_uuid_or_disk_id": "0x1234abcd", "is_whole_disk_image": true}
			b := tc.iface(e.opts)
			if err := b.PrepareInstance(ctx, e.task); err != nil {
				t.Fatal(err)
			}
			root := map[string]string{"tftp": e.tftp, "http": e.http}[tc.root]
			cfg, err := os.ReadFile(filepath.Join(root, u, "config"))
			if err != nil {
				t.Fatal(err)
			}
			sameText(t, "config", string(cfg), upstreamOutput[tc.want])
			if len(e.mgmt.calls) != 1 || e.mgmt.calls[0] != (bootCall{"disk", true}) {
				t.Errorf("boot device calls = %v, want persistent disk", e.mgmt.calls)
			}
			if err := b.CleanUpInstance(ctx, e.task); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(root, u)); !os.IsNotExist(err) {
				t.Errorf("configuration left after clean-up: %v", err)
			}
		})
	}
	// Outside the states that boot the instance there is nothing to write.
	e := newEnv(t, "bios")
	e.opts.NetbootFallback = true
	e.node.ProvisionState = states.Cleaning
	if err := NewPXE(e.opts).PrepareInstance(context.Background(), e.task); err == nil {
		t.Error("switching a configuration that does not exist succeeded")
	}
}

// Once per interface, before its first network boot, the roots get what
// upstream's constructors place: GRUB's initial configuration reading the
// MAC-named link under tftp_root (pxe and http), the iPXE boot script
// (ipxe and http-ipxe) and the configured boot loaders.
func TestSetUpPlacesCommonFiles(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, "uefi")
	loader := filepath.Join(t.TempDir(), "snponly.efi")
	if err := os.WriteFile(loader, []byte("IPXE-EFI"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.opts.LoaderFilePaths = map[string]string{"snponly.efi": loader}
	if err := NewPXE(e.opts).PrepareRamdisk(ctx, e.task, nil); err != nil {
		t.Fatal(err)
	}
	// Upstream's initial_grub_cfg.template rendered with this tftp_root
	// (checked with Jinja2: the template ends with an empty line).
	want := "echo Booting from $prefix\n\nsource " + e.tftp + "/$net_default_mac.conf\n"
	for _, root := range []string{e.tftp, e.http} {
		got, err := os.ReadFile(filepath.Join(root, "grub", "grub.cfg"))
		if err != nil || string(got) != want {
			t.Errorf("%s/grub/grub.cfg = %q, %v; want %q", filepath.Base(root), got, err, want)
		}
		data, err := os.ReadFile(filepath.Join(root, "snponly.efi"))
		st, _ := os.Stat(filepath.Join(root, "snponly.efi"))
		if err != nil || string(data) != "IPXE-EFI" || st.Mode().Perm() != 0o644 {
			t.Errorf("%s/snponly.efi = %q, %v", filepath.Base(root), data, err)
		}
	}
	// The http-ipxe interface places its script and loaders in http_root
	// only.
	e2 := newEnv(t, "uefi")
	e2.opts.LoaderFilePaths = map[string]string{"snponly.efi": loader}
	if err := NewHTTPIPXE(e2.opts).PrepareRamdisk(ctx, e2.task, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(e2.http, "snponly.efi")); err != nil {
		t.Errorf("loader not in http_root: %v", err)
	}
	for _, entry := range tree(t, e2.tftp) {
		t.Errorf("http-ipxe wrote under tftp_root: %s", entry)
	}
	// A loader destination must be a plain file name; an empty
	// initial_grub_template places no GRUB configuration.
	e3 := newEnv(t, "uefi")
	e3.opts.LoaderFilePaths = map[string]string{"efi/snponly.efi": loader}
	e3.opts.InitialGrubDisabled = true
	err := NewPXE(e3.opts).PrepareRamdisk(ctx, e3.task, nil)
	if ee, _ := errs.As(err); ee == nil || ee.Class != errs.ClassIncorrectConfiguration ||
		ee.Message != "File paths configured for [pxe]loader_file_paths must be a base path. Entry: efi/snponly.efi" {
		t.Errorf("loader in a sub-directory: %v", err)
	}
	if _, err := os.Stat(filepath.Join(e3.tftp, "grub")); !os.IsNotExist(err) {
		t.Errorf("initial grub configuration written although disabled: %v", err)
	}
}
