package redfish

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/image"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/swift"
	"github.com/openkeel/ironic/testing/keystone"
	"github.com/openkeel/ironic/testing/redfishbmc"
	fakeswift "github.com/openkeel/ironic/testing/swift"
)

const fwImage = "FIRMWARE-IMAGE-5.0"

// stageEnv is an emulated BMC whose firmware images come from a web
// server on 127.0.0.1 and are staged under an http_root served by
// another.
type stageEnv struct {
	*env
	f        *Firmware
	srcDir   string // what the image server serves, also file:// images
	srcURL   string
	httpRoot string
	httpURL  string
	tempDir  string
}

func newStageEnv(t *testing.T, tune func(*Options)) *stageEnv {
	t.Helper()
	base := t.TempDir()
	s := &stageEnv{srcDir: filepath.Join(base, "src"), httpRoot: filepath.Join(base, "httpboot"), tempDir: filepath.Join(base, "tmp")}
	for _, d := range []string{s.srcDir, s.httpRoot, s.tempDir} {
		must(t, os.MkdirAll(d, 0o755))
	}
	must(t, os.WriteFile(filepath.Join(s.srcDir, "bmc.bin"), []byte(fwImage), 0o644))
	src := httptest.NewServer(http.FileServer(http.Dir(s.srcDir)))
	t.Cleanup(src.Close)
	root := httptest.NewServer(http.FileServer(http.Dir(s.httpRoot)))
	t.Cleanup(root.Close)
	s.srcURL, s.httpURL = src.URL, root.URL+"/"
	// The image carries the version already running, so the update
	// finishes without rebooting the node.
	bmc := redfishbmc.New(t).System("sys-1", redfishbmc.PowerState(redfishbmc.On)).WithBMCFirmwareVersion("5.0").TaskPolls(1)
	s.env, s.f = newFirmwareEnv(t, bmc, func(o *Options) {
		iopts := image.DefaultOptions()
		iopts.TempDir = s.tempDir
		iopts.FileURLAllowedPaths = []string{s.srcDir}
		o.FirmwareStaging = FirmwareStaging{HTTPRoot: s.httpRoot, HTTPURL: s.httpURL, FilePermission: 0o640, Image: iopts,
			SwiftContainer: "ironic_redfish_container", SwiftObjectExpiry: 900 * time.Second}
		if tune != nil {
			tune(o)
		}
	})
	return s
}

func (s *stageEnv) stagedPath() string {
	return filepath.Join(s.httpRoot, "firmware", testNode, "bmc.bin")
}
func (s *stageEnv) stagedURL() string { return s.httpURL + "firmware/" + testNode + "/bmc.bin" }
func (s *stageEnv) nodeTemp() string  { return filepath.Join(s.tempDir, testNode) }

// bmcImageURIs is what SimpleUpdate was given, in order.
func (s *stageEnv) bmcImageURIs() []string {
	var out []string
	for _, tk := range s.bmc.Tasks() {
		out = append(out, strings.TrimPrefix(tk.Name, "Firmware update "))
	}
	return out
}

// finish polls the BMC update through its reboot delay to the end.
func (s *stageEnv) finish(t *testing.T) {
	t.Helper()
	for i := 0; i < 10; i++ {
		status, err := s.f.PollAsyncStep(s.ctx, s.task)
		must(t, err)
		if status == driver.AsyncStepDone {
			return
		}
		must(t, s.clock.Sleep(s.ctx, 300*time.Second))
	}
	t.Fatalf("update not done: %v", s.node.DriverInternalInfo)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// TestFirmwareStageLocalFromHTTP: with firmware_source local an HTTP
// image is downloaded, hard-linked into http_root/firmware/<node>/ with
// file_permission and the BMC fetches it from there; the end of the
// update removes it.
func TestFirmwareStageLocalFromHTTP(t *testing.T) {
	s := newStageEnv(t, func(o *Options) { o.FirmwareSource = "local" })
	s.bmc.FirmwareImage(s.stagedURL(), "bmc", "5.0")
	_, err := s.f.Update(s.ctx, s.task, []map[string]any{{"component": "bmc", "url": s.srcURL + "/bmc.bin"}})
	must(t, err)
	if got := s.bmcImageURIs(); !reflect.DeepEqual(got, []string{s.stagedURL()}) {
		t.Fatalf("BMC given %v, want the staged %s", got, s.stagedURL())
	}
	st, err := os.Stat(s.stagedPath())
	must(t, err)
	if st.Mode().Perm() != 0o640 {
		t.Fatalf("staged with mode %v, want file_permission 0640", st.Mode().Perm())
	}
	if tmp, err := os.Stat(filepath.Join(s.nodeTemp(), "bmc.bin")); err != nil || !os.SameFile(tmp, st) {
		t.Fatalf("staged file is no hard link of the download: %v", err)
	}
	if status, body := httpGet(t, s.stagedURL()); status != http.StatusOK || string(body) != fwImage {
		t.Fatalf("GET the staged URL: %d %q", status, body)
	}
	if got := s.node.DriverInternalInfo["firmware_cleanup"]; !reflect.DeepEqual(got, []any{"http"}) {
		t.Fatalf("firmware_cleanup %v", got)
	}
	s.finish(t)
	if exists(filepath.Dir(s.stagedPath())) || exists(s.nodeTemp()) {
		t.Fatal("staged or downloaded firmware left after the update")
	}
	if _, ok := s.node.DriverInternalInfo["firmware_cleanup"]; ok {
		t.Fatalf("firmware_cleanup left: %v", s.node.DriverInternalInfo)
	}
}

// TestFirmwareStagedImageRefused: when the BMC refuses the staged image,
// the staging is cleaned up at once (upstream leaves it behind).
func TestFirmwareStagedImageRefused(t *testing.T) {
	s := newStageEnv(t, func(o *Options) { o.FirmwareSource = "local" })
	_, err := s.f.Update(s.ctx, s.task, []map[string]any{{"component": "bmc", "url": s.srcURL + "/bmc.bin"}})
	wantClass(t, err, "RedfishError", "")
	if !strings.Contains(err.Error(), "The value "+s.stagedURL()+" for the parameter ImageURI") {
		t.Fatalf("error %q", err)
	}
	if exists(filepath.Dir(s.stagedPath())) || exists(s.nodeTemp()) || s.node.DriverInternalInfo["firmware_cleanup"] != nil {
		t.Fatalf("staging left after the BMC refused the image: %v", s.node.DriverInternalInfo)
	}
}

// TestFirmwareHTTPPassThrough: firmware_source http hands an HTTP(S)
// image's own URL to the BMC and stages nothing.
func TestFirmwareHTTPPassThrough(t *testing.T) {
	s := newStageEnv(t, nil)
	s.bmc.FirmwareImage(fwBMCImage, "bmc", "5.0")
	_, err := s.f.Update(s.ctx, s.task, []map[string]any{{"component": "bmc", "url": fwBMCImage}})
	must(t, err)
	if got := s.bmcImageURIs(); !reflect.DeepEqual(got, []string{fwBMCImage}) {
		t.Fatalf("BMC given %v", got)
	}
	if exists(filepath.Join(s.httpRoot, "firmware")) || exists(s.nodeTemp()) {
		t.Fatal("a pass-through image was staged")
	}
	if _, ok := s.node.DriverInternalInfo["firmware_cleanup"]; ok {
		t.Fatalf("firmware_cleanup set: %v", s.node.DriverInternalInfo)
	}
}

// TestFirmwareStageFileURL: a file:// image is never given to the BMC:
// with firmware_source http it is staged on the HTTP server too.
func TestFirmwareStageFileURL(t *testing.T) {
	s := newStageEnv(t, nil)
	s.bmc.FirmwareImage(s.stagedURL(), "bmc", "5.0")
	_, err := s.f.Update(s.ctx, s.task, []map[string]any{{"component": "bmc", "url": "file://" + filepath.Join(s.srcDir, "bmc.bin")}})
	must(t, err)
	if got := s.bmcImageURIs(); !reflect.DeepEqual(got, []string{s.stagedURL()}) {
		t.Fatalf("BMC given %v", got)
	}
	if data, err := os.ReadFile(s.stagedPath()); err != nil || string(data) != fwImage {
		t.Fatalf("staged %q %v", data, err)
	}
	s.finish(t)
	if exists(filepath.Dir(s.stagedPath())) {
		t.Fatal("staged firmware left after the update")
	}
	if data, err := os.ReadFile(filepath.Join(s.srcDir, "bmc.bin")); err != nil || string(data) != fwImage {
		t.Fatalf("the source file was touched by the clean up: %q %v", data, err)
	}

	// Outside [conductor]/file_url_allowed_paths the download is refused
	// and nothing reaches the BMC.
	outside := filepath.Join(t.TempDir(), "bmc.bin")
	must(t, os.WriteFile(outside, []byte(fwImage), 0o644))
	s2 := newStageEnv(t, nil)
	_, err = s2.f.Update(s2.ctx, s2.task, []map[string]any{{"component": "bmc", "url": "file://" + outside}})
	wantClass(t, err, "ImageRefValidationFailed", "")
	if len(s2.bmc.Tasks()) != 0 || exists(s2.nodeTemp()) {
		t.Fatal("a refused file image went on")
	}
}

// TestFirmwareStageRefusedSchemes: upstream downloads only http, swift
// and file URLs, so an https image with firmware_source local is refused
// as well as ftp.
func TestFirmwareStageRefusedSchemes(t *testing.T) {
	s := newStageEnv(t, func(o *Options) { o.FirmwareSource = "local" })
	for _, u := range []string{"https://127.0.0.1:9/bmc.bin", "ftp://127.0.0.1:9/bmc.bin"} {
		_, err := s.f.Update(s.ctx, s.task, []map[string]any{{"component": "bmc", "url": u}})
		scheme, _, _ := strings.Cut(u, ":")
		wantClass(t, err, "InvalidParameterValue", scheme+" is not supported for "+u+".")
	}
	if len(s.bmc.Tasks()) != 0 {
		t.Fatal("a refused image reached the BMC")
	}
}

// TestManagementFirmwareChecksum: update_firmware checks the staged
// download against its checksum (sha1/sha256/sha512 by length); a
// mismatch is upstream's RedfishError and nothing is left staged.
func TestManagementFirmwareChecksum(t *testing.T) {
	s := newStageEnv(t, nil)
	s.node.ProvisionState = states.Cleaning
	update := func(checksum string) error {
		_, err := s.mgmt.StepHandlers()["update_firmware"](s.ctx, s.task, map[string]any{"firmware_images": []any{
			map[string]any{"url": s.srcURL + "/bmc.bin", "checksum": checksum, "source": "local"}}})
		return err
	}
	wrong := strings.Repeat("0", 64)
	sum := sha256.Sum256([]byte(fwImage))
	right := hex.EncodeToString(sum[:])
	wantClass(t, update(wrong), "RedfishError", "For node "+testNode+" firmware file "+filepath.Join(s.nodeTemp(), "bmc.bin")+
		" checksums do not match. Expected: "+wrong+", calculated: "+right+".")
	if len(s.bmc.Tasks()) != 0 || exists(filepath.Join(s.httpRoot, "firmware", testNode)) || exists(s.nodeTemp()) {
		t.Fatal("an image with a wrong checksum was staged or sent")
	}
	long := strings.Repeat("a", 129)
	wantClass(t, update(long), "RedfishError", "Unable to identify checksum to perform firmware file checksum calculation. "+
		"Please validate your input in and try again. Received: "+long)

	s.bmc.FirmwareImage(s.stagedURL(), "bmc", "5.0")
	must(t, update(right))
	if got := s.bmcImageURIs(); !reflect.DeepEqual(got, []string{s.stagedURL()}) || !exists(s.stagedPath()) {
		t.Fatalf("BMC given %v", got)
	}
	for i := 0; i < 5 && s.mgmt.AsyncStepPending(s.node); i++ {
		_, err := s.mgmt.PollAsyncStep(s.ctx, s.task)
		must(t, err)
	}
	if s.mgmt.AsyncStepPending(s.node) || exists(filepath.Dir(s.stagedPath())) {
		t.Fatalf("update not finished and cleaned up: %v", s.node.DriverInternalInfo)
	}
}

// swiftStage is a Keystone and a Swift on 127.0.0.1 and the staging
// options OptionsFromConfig gives for them.
type swiftStage struct {
	sw      *fakeswift.Fixture
	account string
	client  *swift.Client
	opts    FirmwareStaging
}

func newSwiftStage(t *testing.T) *swiftStage {
	t.Helper()
	ks := keystone.New(t).Project("service").User("ironic", "secret").Grant("ironic", "service", "admin")
	sw := fakeswift.New(t).ValidateTokens(ks.TokenValid)
	sw.Register(ks, ks.ProjectID("service"))
	account := fakeswift.AccountName(ks.ProjectID("service"))
	sw.SetTempURLKey(account, "fw-key", false)
	c, err := config.Load(config.LoadOptions{Overrides: map[string]map[string]string{
		"redfish": {"swift_container": "fw", "swift_object_expiry_timeout": "1200"},
		"swift":   fakeswift.IronicSection(ks, "ironic", "secret", "service"),
	}})
	must(t, err)
	opts := OptionsFromConfig(c).FirmwareStaging
	client, ok := opts.Swift.(*swift.Client)
	if !ok || opts.SwiftContainer != "fw" || opts.SwiftObjectExpiry != 1200*time.Second {
		t.Fatalf("staging options %+v", opts)
	}
	client.Now = sw.Now
	return &swiftStage{sw: sw, account: account, client: client, opts: opts}
}

// tempURL is the temporary URL the tempurl middleware accepts for the
// object for 1200 s from the fixture's now.
func (w *swiftStage) tempURL(container, obj string) string {
	path := "/v1/" + w.account + "/" + container + "/" + obj
	return w.sw.URL() + swift.SignTempURL("fw-key", http.MethodGet, path, w.sw.Now().Add(1200*time.Second).Unix())
}

func (s *stageEnv) useSwift(w *swiftStage) {
	st := &s.core.opts.FirmwareStaging
	st.Swift, st.SwiftContainer, st.SwiftObjectExpiry = w.opts.Swift, w.opts.SwiftContainer, w.opts.SwiftObjectExpiry
}

// TestFirmwareStageSwift: with firmware_source swift an HTTP image is
// uploaded to swift_container as <node>/<file>, expiring after
// swift_object_expiry_timeout, and the BMC fetches it through a
// temporary URL; the end of the update deletes the node's objects only.
func TestFirmwareStageSwift(t *testing.T) {
	w := newSwiftStage(t)
	s := newStageEnv(t, func(o *Options) { o.FirmwareSource = "swift" })
	s.useSwift(w)
	other := "0cd5e4c5-8d40-4d4c-a2b1-7a0f4c5d6e7f/bmc.bin"
	w.sw.PutObject(w.account, "fw", other, []byte("other node"))
	w.sw.PutObject(w.account, "fw", "unrelated", []byte("x"))
	obj := testNode + "/bmc.bin"
	temp := w.tempURL("fw", obj)
	s.bmc.FirmwareImage(temp, "bmc", "5.0")

	_, err := s.f.Update(s.ctx, s.task, []map[string]any{{"component": "bmc", "url": s.srcURL + "/bmc.bin"}})
	must(t, err)
	if got := s.bmcImageURIs(); !reflect.DeepEqual(got, []string{temp}) {
		t.Fatalf("BMC given %v, want the temporary URL %s", got, temp)
	}
	o := w.sw.Object(w.account, "fw", obj)
	if o == nil || string(o.Data) != fwImage || !o.DeleteAt.Equal(w.sw.Now().Add(1200*time.Second)) {
		t.Fatalf("object %+v, want the image expiring in 1200 s", o)
	}
	for _, r := range w.sw.Requests() {
		if r.Method == http.MethodPut && strings.HasSuffix(r.Path, "/"+obj) && r.Header.Get("X-Delete-After") != strconv.Itoa(1200) {
			t.Fatalf("uploaded with X-Delete-After %q", r.Header.Get("X-Delete-After"))
		}
	}
	if status, body := httpGet(t, temp); status != http.StatusOK || string(body) != fwImage {
		t.Fatalf("GET the temporary URL: %d %q", status, body)
	}
	if exists(filepath.Join(s.httpRoot, "firmware")) {
		t.Fatal("image staged under http_root as well")
	}
	if got := s.node.DriverInternalInfo["firmware_cleanup"]; !reflect.DeepEqual(got, []any{"swift"}) {
		t.Fatalf("firmware_cleanup %v", got)
	}
	s.finish(t)
	if got := w.sw.Objects(w.account, "fw"); !reflect.DeepEqual(got, []string{other, "unrelated"}) {
		t.Fatalf("objects after clean up %v, want only the other node's and the unrelated one", got)
	}
	if exists(s.nodeTemp()) {
		t.Fatal("download left in the temporary directory")
	}
}

// TestFirmwareSwiftSource: a swift://container/path image goes to the BMC
// as a temporary URL of the object itself with firmware_source swift,
// and is downloaded through one and staged with firmware_source local.
func TestFirmwareSwiftSource(t *testing.T) {
	w := newSwiftStage(t)
	w.sw.PutObject(w.account, "images", "bmc/bmc.bin", []byte(fwImage))
	src := "swift://images/bmc/bmc.bin"

	s := newStageEnv(t, func(o *Options) { o.FirmwareSource = "swift" })
	s.useSwift(w)
	temp := w.tempURL("images", "bmc/bmc.bin")
	s.bmc.FirmwareImage(temp, "bmc", "5.0")
	_, err := s.f.Update(s.ctx, s.task, []map[string]any{{"component": "bmc", "url": src}})
	must(t, err)
	if got := s.bmcImageURIs(); !reflect.DeepEqual(got, []string{temp}) {
		t.Fatalf("BMC given %v, want %s", got, temp)
	}
	if _, ok := s.node.DriverInternalInfo["firmware_cleanup"]; ok || w.sw.Objects(w.account, "fw") != nil {
		t.Fatalf("a swift image served in place was staged: %v", s.node.DriverInternalInfo)
	}
	s.finish(t)
	if w.sw.Object(w.account, "images", "bmc/bmc.bin") == nil {
		t.Fatal("the source object was deleted")
	}

	l := newStageEnv(t, func(o *Options) { o.FirmwareSource = "local" })
	l.useSwift(w)
	l.bmc.FirmwareImage(l.stagedURL(), "bmc", "5.0")
	_, err = l.f.Update(l.ctx, l.task, []map[string]any{{"component": "bmc", "url": src}})
	must(t, err)
	if got := l.bmcImageURIs(); !reflect.DeepEqual(got, []string{l.stagedURL()}) {
		t.Fatalf("BMC given %v", got)
	}
	if data, err := os.ReadFile(l.stagedPath()); err != nil || string(data) != fwImage {
		t.Fatalf("staged %q %v", data, err)
	}
}

// failingDeletes is a Swift whose deletions fail.
type failingDeletes struct{ FirmwareObjectStore }

func (failingDeletes) DeleteObject(_ context.Context, container, obj string) error {
	return errs.New(errs.ClassSwiftOperationError, map[string]any{"operation": "delete object", "error": "503: Server Error"})
}

// TestFirmwareCleanupSwiftFailureLogged: objects Swift fails to list or
// delete are only warned about, and the updates are discarded all the
// same.
func TestFirmwareCleanupSwiftFailureLogged(t *testing.T) {
	w := newSwiftStage(t)
	obj := testNode + "/bmc.bin"
	w.sw.PutObject(w.account, "fw", obj, []byte(fwImage))
	for _, tc := range []struct {
		name, warning string
		setup         func(*stageEnv)
	}{
		{"delete", "For node " + testNode + " failed to clean up " + obj + ". Error: Swift operation 'delete object' failed: 503: Server Error",
			func(s *stageEnv) { s.core.opts.FirmwareStaging.Swift = failingDeletes{w.opts.Swift} }},
		{"list", "For node " + testNode + " failed to list the objects of Swift container fw.",
			func(*stageEnv) { w.sw.Fail(http.StatusServiceUnavailable) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStageEnv(t, nil)
			s.useSwift(w)
			tc.setup(s)
			s.node.DriverInternalInfo["firmware_cleanup"] = []any{"swift"}
			s.node.DriverInternalInfo["redfish_fw_updates"] = []any{map[string]any{"component": "bmc", "url": fwBMCImage}}
			must(t, s.f.DiscardAsyncStep(s.ctx, s.task))
			if !strings.Contains(s.logs.String(), tc.warning) {
				t.Fatalf("no warning %q logged:\n%s", tc.warning, s.logs.String())
			}
			if s.f.AsyncStepPending(s.node) || s.node.DriverInternalInfo["firmware_cleanup"] != nil {
				t.Fatalf("updates not discarded: %v", s.node.DriverInternalInfo)
			}
		})
	}
	w.sw.Heal()
	if w.sw.Object(w.account, "fw", obj) == nil {
		t.Fatal("the object went although every deletion failed")
	}
}
