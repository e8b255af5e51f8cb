package agent

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"io"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/agentclient"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/driver/fake"
	"github.com/openkeel/ironic/internal/driver/noop"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/image"
	"github.com/openkeel/ironic/internal/image/configdrive"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/testing/ipa"
)

// origin is an image server on 127.0.0.1 that counts downloads per path.
type origin struct {
	srv   *httptest.Server
	mu    sync.Mutex
	files map[string][]byte
	gets  map[string]int
}

var originModTime = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func newOrigin(t *testing.T) *origin {
	o := &origin{files: map[string][]byte{}, gets: map[string]int{}}
	o.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/redirect.img" {
			http.Redirect(w, r, "/disk.img", http.StatusFound)
			return
		}
		o.mu.Lock()
		data, ok := o.files[r.URL.Path]
		if ok && r.Method == http.MethodGet {
			o.gets[r.URL.Path]++
		}
		o.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		http.ServeContent(w, r, "", originModTime, bytes.NewReader(data))
	}))
	t.Cleanup(o.srv.Close)
	return o
}

func (o *origin) add(path string, data []byte) string {
	o.mu.Lock()
	o.files[path] = data
	o.mu.Unlock()
	return o.srv.URL + path
}

func (o *origin) downloads(path string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.gets[path]
}

// diskBytes are deterministic contents no format detector claims.
func diskBytes(seed int64, size int) []byte {
	b := make([]byte, size)
	rand.New(rand.NewSource(seed)).Read(b)
	return b
}

func sha256Hex(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

type imageEnv struct {
	im       *Images
	d        *Direct
	agent    *ipa.Agent
	httpRoot string
	httpSrv  *httptest.Server
	files    string
}

// newImageEnv wires a direct interface to a conductor HTTP server that
// serves http_root on 127.0.0.1, a fake agent, and optional Glance.
func newImageEnv(t *testing.T, glance *image.GlanceService) *imageEnv {
	t.Helper()
	dir := t.TempDir()
	e := &imageEnv{httpRoot: filepath.Join(dir, "httpboot"), files: filepath.Join(dir, "files")}
	for _, p := range []string{e.httpRoot, e.files} {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	e.httpSrv = httptest.NewServer(http.FileServer(http.Dir(e.httpRoot)))
	t.Cleanup(e.httpSrv.Close)
	opts := image.DefaultOptions()
	opts.FileURLAllowedPaths = []string{e.files}
	sources, err := image.NewSources(opts, glance)
	if err != nil {
		t.Fatal(err)
	}
	e.im = &Images{
		Sources: sources, Checksums: &image.Checksums{Opts: opts, HTTP: sources.HTTP},
		Fetcher:    image.NewFetcher(sources, opts),
		MasterPath: filepath.Join(dir, "master_images"), CacheSize: 1 << 30, CacheTTL: time.Hour,
		ImagesPath: filepath.Join(dir, "images"), DownloadSource: DownloadHTTP,
		HTTPURL: e.httpSrv.URL + "/", HTTPRoot: e.httpRoot, HTTPImageSubdir: "agent_images",
		ForceRaw: true, StreamRaw: true, AllowMD5: true, DefaultEphemeralFormat: "ext4",
		ImageServerAuthStrategy: "noauth",
	}
	e.agent = ipa.New(t).WithToken("tok").Handle("deploy.execute_deploy_step", ipa.Sync(nil))
	co := agentclient.DefaultOptions()
	co.CommandWaitInterval = 10 * time.Millisecond
	client := agentclient.New(co)
	t.Cleanup(client.Close)
	e.d = NewDirect(Options{Client: client, DefaultBootMode: "uefi"})
	e.d.images = e.im
	return e
}

func (e *imageEnv) task(uuid string, ii map[string]any) *driver.Task {
	n := &model.Node{
		UUID: uuid, ProvisionState: states.Deploying, InstanceInfo: ii,
		DriverInternalInfo: map[string]any{},
		Properties:         map[string]any{},
		DriverInfo:         map[string]any{},
	}
	return &driver.Task{Node: n, Driver: &driver.Interfaces{Boot: &fake.Boot{}, Network: noop.Network{}, Storage: noop.Storage{}, Power: &fake.Power{}, Deploy: e.d}}
}

// write runs write_image and answers the image_info and configdrive the
// agent received. The ramdisk has booted and heartbeated since Prepare
// powered the node off.
func (e *imageEnv) write(t *testing.T, task *driver.Task) (map[string]any, any) {
	t.Helper()
	task.Node.DriverInternalInfo["agent_url"] = e.agent.URL()
	task.Node.DriverInternalInfo["agent_secret_token"] = "tok"
	if _, err := e.d.writeImage(context.Background(), task, nil); err != nil {
		t.Fatalf("write_image: %v", err)
	}
	step, _ := e.agent.LastParams("deploy.execute_deploy_step")["step"].(map[string]any)
	args, _ := step["args"].(map[string]any)
	info, _ := args["image_info"].(map[string]any)
	if info == nil {
		t.Fatalf("no image_info sent: %v", step)
	}
	return info, args["configdrive"]
}

func get(t *testing.T, u string) []byte {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d", u, resp.StatusCode)
	}
	return b
}

func masterFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func wantErrClass(t *testing.T, err error, class errs.Class, msg string) {
	t.Helper()
	e, ok := errs.As(err)
	if !ok {
		t.Fatalf("error %v (%T) is not an Ironic error, want %s", err, err, class)
	}
	if e.Class != class || (msg != "" && e.Message != msg) {
		t.Fatalf("got %s %q, want %s %q", e.Class, e.Message, class, msg)
	}
}

const (
	nodeA = "1a2b3c4d-0000-4000-8000-00000000000a"
	nodeB = "1a2b3c4d-0000-4000-8000-00000000000b"
)

// With image_download_source local the conductor downloads the image
// once for both nodes, and each agent is sent a URL under http_url that
// serves the same bytes, with the checksum recomputed for the raw copy.
func TestLocalDownloadSourceCachesOncePublishesUnderHTTPURL(t *testing.T) {
	e := newImageEnv(t, nil)
	o := newOrigin(t)
	data := diskBytes(1, 256<<10)
	src := o.add("/disk.img", data)
	ctx := context.Background()
	var tasks []*driver.Task
	for _, uuid := range []string{nodeA, nodeB} {
		task := e.task(uuid, map[string]any{"image_source": src, "image_checksum": sha256Hex(data), "image_download_source": "local"})
		if err := e.d.Validate(ctx, task); err != nil {
			t.Fatalf("validate: %v", err)
		}
		if err := e.d.Prepare(ctx, task); err != nil {
			t.Fatalf("prepare: %v", err)
		}
		tasks = append(tasks, task)
	}
	if n := o.downloads("/disk.img"); n != 1 {
		t.Fatalf("origin served %d downloads for two nodes, want 1", n)
	}
	for _, task := range tasks {
		info, _ := e.write(t, task)
		urls, _ := info["urls"].([]any)
		want := e.httpSrv.URL + "/agent_images/" + task.Node.UUID
		if len(urls) != 1 || urls[0] != want {
			t.Fatalf("urls %v, want [%s]", urls, want)
		}
		if got := get(t, want); !bytes.Equal(got, data) {
			t.Fatalf("published image differs from the origin's (%d bytes)", len(got))
		}
		if info["disk_format"] != "raw" || info["os_hash_algo"] != "sha256" || info["os_hash_value"] != sha256Hex(data) || info["checksum"] != nil {
			t.Fatalf("image_info checksum fields %v", info)
		}
		if info["id"] != "disk.img" || info["node_uuid"] != task.Node.UUID || info["stream_raw_images"] != true {
			t.Fatalf("image_info %v", info)
		}
		if task.Node.DriverInternalInfo["is_whole_disk_image"] != true || task.Node.InstanceInfo["image_type"] != "whole-disk" {
			t.Fatalf("image type %v / %v", task.Node.DriverInternalInfo["is_whole_disk_image"], task.Node.InstanceInfo["image_type"])
		}
	}
	if m := masterFiles(t, e.im.MasterPath); len(m) != 1 || m[0] != image.MasterFileName(src, true) {
		t.Fatalf("master cache %v", m)
	}

	// Tear down removes the node's link and copy; the master stays for
	// the other node.
	if err := e.d.CleanUp(ctx, tasks[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(e.httpRoot, "agent_images", nodeA)); !os.IsNotExist(err) {
		t.Fatalf("published link left after clean up: %v", err)
	}
	if _, err := os.Stat(filepath.Join(e.im.ImagesPath, nodeA)); !os.IsNotExist(err) {
		t.Fatalf("node image directory left after clean up: %v", err)
	}
	if got := get(t, e.httpSrv.URL+"/agent_images/"+nodeB); !bytes.Equal(got, data) {
		t.Fatal("the other node's image went with the first node's clean up")
	}
}

// A checksum that does not match fails the deployment with upstream's
// ImageChecksumError and leaves nothing in the cache or under http_root.
func TestLocalDownloadWrongChecksum(t *testing.T) {
	e := newImageEnv(t, nil)
	o := newOrigin(t)
	data := diskBytes(2, 64<<10)
	src := o.add("/disk.img", data)
	task := e.task(nodeA, map[string]any{"image_source": src, "image_checksum": sha256Hex([]byte("other")), "image_download_source": "local"})
	err := e.d.Prepare(context.Background(), task)
	wantErrClass(t, err, "ImageChecksumError", "The supplied image checksum is invalid or does not match.")
	if m := masterFiles(t, e.im.MasterPath); len(m) != 0 {
		t.Fatalf("cache holds %v after a checksum mismatch", m)
	}
	if _, err := os.Stat(filepath.Join(e.im.ImagesPath, nodeA)); !os.IsNotExist(err) {
		t.Fatalf("node image directory left: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(e.httpRoot, "agent_images", nodeA)); !os.IsNotExist(err) {
		t.Fatalf("image published after a checksum mismatch: %v", err)
	}
	if task.Node.InstanceInfo["image_url"] != nil {
		t.Fatalf("image_url %v", task.Node.InstanceInfo["image_url"])
	}
}

// An md5 checksum is refused when [agent]/allow_md5_checksum is off.
func TestLocalDownloadRefusesMD5(t *testing.T) {
	e := newImageEnv(t, nil)
	e.im.Checksums.Opts.AllowMD5 = false
	o := newOrigin(t)
	src := o.add("/disk.img", diskBytes(3, 4096))
	task := e.task(nodeA, map[string]any{"image_source": src, "image_checksum": "5d41402abc4b2a76b9719d911017c592", "image_download_source": "local"})
	err := e.d.Prepare(context.Background(), task)
	wantErrClass(t, err, "ImageChecksumAlgorithmFailure", "The requested image checksum algorithm cannot be loaded.")
	if o.downloads("/disk.img") != 0 {
		t.Fatal("image downloaded despite a refused checksum")
	}
}

// Unused master copies are evicted once the cache exceeds its size.
func TestInstanceCacheSizeLimitEvicts(t *testing.T) {
	e := newImageEnv(t, nil)
	o := newOrigin(t)
	one, two := diskBytes(4, 64<<10), diskBytes(5, 64<<10)
	src1, src2 := o.add("/one.img", one), o.add("/two.img", two)
	e.im.CacheSize = 96 << 10
	ctx := context.Background()
	a := e.task(nodeA, map[string]any{"image_source": src1, "image_checksum": sha256Hex(one), "image_download_source": "local"})
	if err := e.d.Prepare(ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := e.d.CleanUp(ctx, a); err != nil {
		t.Fatal(err)
	}
	// Unused but within the limit, the first image stays cached.
	if m := masterFiles(t, e.im.MasterPath); len(m) != 1 {
		t.Fatalf("master cache after the first clean up %v", m)
	}
	b := e.task(nodeB, map[string]any{"image_source": src2, "image_checksum": sha256Hex(two), "image_download_source": "local"})
	if err := e.d.Prepare(ctx, b); err != nil {
		t.Fatal(err)
	}
	if m := masterFiles(t, e.im.MasterPath); len(m) != 1 || m[0] != image.MasterFileName(src2, true) {
		t.Fatalf("master cache %v, want only the image in use", m)
	}
	if got := get(t, e.httpSrv.URL+"/agent_images/"+nodeB); !bytes.Equal(got, two) {
		t.Fatal("image in use was evicted")
	}
}

// With the default http source a URL goes to the agent as it is, after
// a HEAD request whose redirect target replaces it; an unreachable URL
// fails the preparation.
func TestHTTPDownloadSourcePassesURL(t *testing.T) {
	e := newImageEnv(t, nil)
	o := newOrigin(t)
	data := diskBytes(6, 4096)
	src := o.add("/disk.img", data)
	ctx := context.Background()
	task := e.task(nodeA, map[string]any{"image_source": o.srv.URL + "/redirect.img", "image_os_hash_algo": "sha256", "image_os_hash_value": sha256Hex(data)})
	if err := e.d.Prepare(ctx, task); err != nil {
		t.Fatal(err)
	}
	info, _ := e.write(t, task)
	if urls := info["urls"].([]any); urls[0] != src || task.Node.InstanceInfo["image_source"] != src {
		t.Fatalf("urls %v, image_source %v", urls, task.Node.InstanceInfo["image_source"])
	}
	if info["os_hash_value"] != sha256Hex(data) || o.downloads("/disk.img") != 0 {
		t.Fatalf("image_info %v, conductor downloads %d", info, o.downloads("/disk.img"))
	}
	if m := masterFiles(t, e.im.MasterPath); len(m) != 0 {
		t.Fatalf("http source cached %v", m)
	}

	gone := e.task(nodeB, map[string]any{"image_source": o.srv.URL + "/missing.img", "image_checksum": sha256Hex(data)})
	err := e.d.Prepare(ctx, gone)
	wantErrClass(t, err, "ImageRefValidationFailed", "Validation of image href "+o.srv.URL+"/missing.img failed, reason: Got HTTP code 404 instead of 200 in response to HEAD request.")
}

// A qcow2 image is converted to raw by the conductor and the agent is
// given the raw copy's sha256 instead of the original checksum.
func TestLocalDownloadConvertsToRaw(t *testing.T) {
	if _, err := exec.LookPath("qemu-img"); err != nil {
		t.Skip("qemu-img not installed")
	}
	e := newImageEnv(t, nil)
	dir := t.TempDir()
	raw := filepath.Join(dir, "disk.raw")
	content := diskBytes(7, 1<<20)
	if err := os.WriteFile(raw, content, 0o644); err != nil {
		t.Fatal(err)
	}
	qcow := filepath.Join(dir, "disk.qcow2")
	if out, err := exec.Command("qemu-img", "convert", "-f", "raw", "-O", "qcow2", raw, qcow).CombinedOutput(); err != nil {
		t.Fatalf("qemu-img: %v %s", err, out)
	}
	q, err := os.ReadFile(qcow)
	if err != nil {
		t.Fatal(err)
	}
	o := newOrigin(t)
	src := o.add("/disk.qcow2", q)
	sum := sha512.Sum512(q)
	task := e.task(nodeA, map[string]any{
		"image_source": src, "image_disk_format": "qcow2", "image_download_source": "local",
		"image_os_hash_algo": "sha512", "image_os_hash_value": hex.EncodeToString(sum[:]),
	})
	if err := e.d.Prepare(context.Background(), task); err != nil {
		t.Fatal(err)
	}
	info, _ := e.write(t, task)
	got := get(t, info["urls"].([]any)[0].(string))
	if !bytes.Equal(got, content) {
		t.Fatalf("agent would download %d bytes that are not the raw image", len(got))
	}
	rawSum := sha512.Sum512(content)
	if info["disk_format"] != "raw" || info["os_hash_algo"] != "sha512" || info["os_hash_value"] != hex.EncodeToString(rawSum[:]) {
		t.Fatalf("image_info %v", info)
	}
}

// file:// images in an allowed path are served by the conductor; others
// are refused.
func TestFileImageSource(t *testing.T) {
	e := newImageEnv(t, nil)
	data := diskBytes(8, 8192)
	p := filepath.Join(e.files, "disk.img")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	task := e.task(nodeA, map[string]any{"image_source": "file://" + p})
	if err := e.d.Validate(ctx, task); err != nil {
		t.Fatalf("file image without checksum: %v", err)
	}
	if err := e.d.Prepare(ctx, task); err != nil {
		t.Fatal(err)
	}
	info, _ := e.write(t, task)
	if got := get(t, info["urls"].([]any)[0].(string)); !bytes.Equal(got, data) || info["os_hash_value"] != sha256Hex(data) {
		t.Fatalf("file image served %d bytes, image_info %v", len(got), info)
	}
	bad := e.task(nodeB, map[string]any{"image_source": "file:///etc/hostname"})
	err := e.d.Prepare(ctx, bad)
	wantErrClass(t, err, "ImageRefValidationFailed", "Validation of image href file:///etc/hostname failed, reason: Security: The path /etc is not permitted in file URLs")
}

const glanceID = "6d9c51a0-52b6-4a8e-9d43-4a1f4e0e8f11"

func fakeGlance(t *testing.T, doc map[string]any, data []byte) (*image.GlanceService, *int) {
	downloads := 0
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Auth-Token") != "glance-token" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		switch r.URL.Path {
		case "/v2/images/" + glanceID:
			json.NewEncoder(w).Encode(doc)
		case "/v2/images/" + glanceID + "/file":
			mu.Lock()
			downloads++
			mu.Unlock()
			w.Write(data)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return &image.GlanceService{
		Auth: func(context.Context) (string, string, error) { return "glance-token", srv.URL, nil },
		Opts: image.DefaultOptions(),
	}, &downloads
}

// A Glance image id: checksums and formats come from the image, the
// conductor downloads it (http source) and serves it under http_url.
func TestGlanceImageID(t *testing.T) {
	data := diskBytes(9, 32<<10)
	sum := sha512.Sum512(data)
	doc := map[string]any{
		"id": glanceID, "status": "active", "visibility": "public", "size": float64(len(data)),
		"disk_format": "raw", "container_format": "bare", "checksum": "0123456789abcdef0123456789abcdef",
		"os_hash_algo": "sha512", "os_hash_value": hex.EncodeToString(sum[:]), "tags": []any{"gold"},
		"hw_firmware_type": "uefi",
	}
	g, downloads := fakeGlance(t, doc, data)
	e := newImageEnv(t, g)
	e.im.ForceRaw = false
	ctx := context.Background()
	task := e.task(nodeA, map[string]any{"image_source": glanceID})
	task.Node.Properties["memory_mb"] = 4096.0
	if err := e.d.Validate(ctx, task); err != nil {
		t.Fatalf("glance image needs no checksum in instance_info: %v", err)
	}
	if err := e.d.Prepare(ctx, task); err != nil {
		t.Fatal(err)
	}
	ii := task.Node.InstanceInfo
	if ii["image_checksum"] != doc["checksum"] || ii["image_os_hash_algo"] != "sha512" || ii["image_container_format"] != "bare" || ii["image_disk_format"] != "raw" {
		t.Fatalf("instance_info %v", ii)
	}
	if props, _ := ii["image_properties"].(map[string]any); props["hw_firmware_type"] != "uefi" {
		t.Fatalf("image_properties %v", ii["image_properties"])
	}
	if tags, _ := ii["image_tags"].([]any); len(tags) != 1 || tags[0] != "gold" {
		t.Fatalf("image_tags %v", ii["image_tags"])
	}
	info, _ := e.write(t, task)
	if info["id"] != glanceID || info["checksum"] != doc["checksum"] || info["os_hash_value"] != doc["os_hash_value"] {
		t.Fatalf("image_info %v", info)
	}
	if got := get(t, info["urls"].([]any)[0].(string)); !bytes.Equal(got, data) || *downloads != 1 {
		t.Fatalf("served %d bytes after %d Glance downloads", len(got), *downloads)
	}
	if m := masterFiles(t, e.im.MasterPath); len(m) != 1 || m[0] != glanceID {
		t.Fatalf("master cache %v", m)
	}

	// The image must fit in memory next to the agent when it is not
	// streamed.
	e.im.StreamRaw = false
	small := e.task(nodeB, map[string]any{"image_source": glanceID})
	small.Node.Properties["memory_mb"] = "0"
	err := e.d.Prepare(ctx, small)
	wantErrClass(t, err, "InvalidParameterValue", "Memory size is too small for requested image, if it is less than (image size + reserved RAM size), will break the IPA deployments. Image size: 0 MiB, Memory size: 0 MiB, Reserved size: 0 MiB.")

	// The swift source needs the [glance] swift_* options.
	sw := e.task(nodeB, map[string]any{"image_source": glanceID, "image_download_source": "swift"})
	if err := e.d.Validate(ctx, sw); !driver.IsClass(err, errs.ClassInvalidParameterValue) {
		t.Fatalf("swift download source without Swift options: %v", err)
	}
}

// fakeSwift serves objects only to correctly signed, unexpired temporary
// URLs, as Swift's tempurl middleware does.
func fakeSwift(t *testing.T, key string, objects map[string][]byte) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		exp, sig := q.Get("temp_url_expires"), q.Get("temp_url_sig")
		mac := hmac.New(sha1.New, []byte(key))
		mac.Write([]byte("GET\n" + exp + "\n" + r.URL.Path))
		expires, err := strconv.ParseInt(exp, 10, 64)
		if err != nil || expires < time.Now().Unix() || !hmac.Equal([]byte(hex.EncodeToString(mac.Sum(nil))), []byte(sig)) {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		data, ok := objects[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		http.ServeContent(w, r, "", originModTime, bytes.NewReader(data))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// A Glance image stored in Swift goes to the agent as a signed temporary
// URL; the conductor keeps no copy.
func TestGlanceImageSwiftTempURL(t *testing.T) {
	data := diskBytes(14, 16<<10)
	doc := map[string]any{"id": glanceID, "status": "active", "visibility": "public", "size": float64(len(data)),
		"disk_format": "qcow2", "container_format": "bare", "checksum": "0123456789abcdef0123456789abcdef"}
	g, downloads := fakeGlance(t, doc, data)
	e := newImageEnv(t, g)
	sw := fakeSwift(t, "s3cr3t", map[string][]byte{"/v1/AUTH_acct/glance_6d9/" + glanceID: data})
	e.im.Swift = &image.SwiftTempURLs{EndpointURL: sw.URL + "/v1/AUTH_acct", APIVersion: "v1", Account: "AUTH_acct", AccountPrefix: "AUTH",
		Container: "glance", MultipleContainersSeed: 3, Key: "s3cr3t", Duration: 20 * time.Minute}
	ctx := context.Background()
	task := e.task(nodeA, map[string]any{"image_source": glanceID, "image_download_source": "swift"})
	if err := e.d.Validate(ctx, task); err != nil {
		t.Fatal(err)
	}
	if err := e.d.Prepare(ctx, task); err != nil {
		t.Fatal(err)
	}
	info, _ := e.write(t, task)
	u, _ := info["urls"].([]any)[0].(string)
	if !strings.HasPrefix(u, sw.URL+"/v1/AUTH_acct/glance_6d9/"+glanceID+"?temp_url_sig=") || info["disk_format"] != "qcow2" || info["checksum"] != doc["checksum"] {
		t.Fatalf("image_info %v", info)
	}
	if got := get(t, u); !bytes.Equal(got, data) {
		t.Fatal("temporary URL does not serve the image")
	}
	if *downloads != 0 || len(masterFiles(t, e.im.MasterPath)) != 0 {
		t.Fatalf("conductor downloaded the image (%d) or cached it", *downloads)
	}

	// A wrong key is caught by the HEAD check, without the URL in the
	// message.
	e.im.Swift.Key = "wrong"
	err := e.d.Prepare(ctx, e.task(nodeB, map[string]any{"image_source": glanceID, "image_download_source": "swift"}))
	wantErrClass(t, err, "ImageRefValidationFailed", "Validation of image href secreturl failed, reason: Got HTTP code 401 instead of 200 in response to HEAD request.")
	e.im.Swift.Key = ""
	err = e.d.Prepare(ctx, e.task(nodeB, map[string]any{"image_source": glanceID, "image_download_source": "swift"}))
	wantErrClass(t, err, "MissingParameterValue", `Swift temporary URLs require a shared secret to be created. You must provide "swift_temp_url_key" as a config option or pre-generate the key on the project used to access Swift.`)
}

// A dict configdrive becomes a config-2 ISO, gzipped and base64-encoded;
// a string is handed on unchanged.
func TestConfigdriveDictBuiltIntoISO(t *testing.T) {
	if _, err := exec.LookPath("xorriso"); err != nil {
		t.Skip("xorriso not installed")
	}
	e := newImageEnv(t, nil)
	o := newOrigin(t)
	data := diskBytes(10, 4096)
	src := o.add("/disk.img", data)
	name := "node-a"
	task := e.task(nodeA, map[string]any{
		"image_source": src, "image_checksum": sha256Hex(data),
		"configdrive": map[string]any{
			"meta_data":    map[string]any{"hostname": "a.example"},
			"network_data": map[string]any{"links": []any{map[string]any{"id": "eth0", "mtu": 1500.0}}},
			"user_data":    "#cloud-config\n",
			"vendor_data":  map[string]any{"k": "v"},
		},
	})
	task.Node.Name = &name
	ctx := context.Background()
	if err := e.d.Prepare(ctx, task); err != nil {
		t.Fatal(err)
	}
	info, cd := e.write(t, task)
	s, ok := cd.(string)
	if !ok || info["configdrive"] != s {
		t.Fatalf("configdrive %T, image_info configdrive %T", cd, info["configdrive"])
	}
	iso, err := configdrive.Decode(s, 64<<20)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "cd.iso")
	if err := os.WriteFile(p, iso, 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if b, err := exec.Command("xorriso", "-osirrox", "on", "-indev", p, "-extract", "/openstack", out).CombinedOutput(); err != nil {
		t.Fatalf("xorriso: %v %s", err, b)
	}
	want := map[string]string{
		"latest/meta_data.json":     `{"hostname": "a.example", "name": "node-a", "uuid": "` + nodeA + `"}`,
		"latest/network_data.json":  `{"links": [{"id": "eth0", "mtu": 1500}]}`,
		"latest/user_data":          "#cloud-config\n",
		"latest/vendor_data2.json":  `{"k": "v"}`,
		"2012-08-10/meta_data.json": `{"hostname": "a.example", "name": "node-a", "uuid": "` + nodeA + `"}`,
	}
	for f, content := range want {
		got, err := os.ReadFile(filepath.Join(out, f))
		if err != nil || string(got) != content {
			t.Errorf("%s = %q (%v), want %q", f, got, err, content)
		}
	}
	if vid := strings.TrimSpace(string(iso[32768+40 : 32768+72])); vid != "config-2" {
		t.Fatalf("volume id %q", vid)
	}

	task.Node.InstanceInfo["configdrive"] = "http://127.0.0.1:9/cd"
	if _, cd := e.write(t, task); cd != "http://127.0.0.1:9/cd" {
		t.Fatalf("string configdrive changed to %v", cd)
	}
}

// Upstream's validation texts.
func TestDirectValidateImageParameters(t *testing.T) {
	e := newImageEnv(t, nil)
	ctx := context.Background()
	cases := []struct {
		name   string
		ii, di map[string]any
		class  errs.Class
		want   string
	}{
		{"no image", map[string]any{}, nil, "MissingParameterValue",
			"Node " + nodeA + " failed to validate deploy image info. Some parameters were missing. Missing are: ['instance_info.image_source']"},
		{"no checksum", map[string]any{"image_source": "http://127.0.0.1/x.img"}, nil, "MissingParameterValue",
			"image_source's \"image_checksum\", or \"image_os_hash_algo\" and \"image_os_hash_value\" must be provided in instance_info for node " + nodeA},
		{"hash value without algo", map[string]any{"image_source": "http://127.0.0.1/x.img", "image_os_hash_value": "ab"}, nil, "MissingParameterValue",
			"image_source's \"image_checksum\", or \"image_os_hash_algo\" and \"image_os_hash_value\" must be provided in instance_info for node " + nodeA},
		{"bad image_type", map[string]any{"image_source": "http://127.0.0.1/x.img", "image_checksum": "ab", "image_type": "cd"}, nil, "InvalidParameterValue",
			"Invalid image_type \"cd\", valid are partition, whole-disk"},
		{"bad download source", map[string]any{"image_source": "http://127.0.0.1/x.img", "image_checksum": "ab"}, map[string]any{"image_download_source": "ftp"}, "InvalidParameterValue",
			"Invalid value for image_download_source: \"ftp\". Valid values are swift, http or local."},
		{"bad proxy", map[string]any{"image_source": "http://127.0.0.1/x.img", "image_checksum": "ab"}, map[string]any{"image_http_proxy": "ftp://p"}, "InvalidParameterValue",
			"Proxy URL should either have HTTP(S) scheme or no scheme at all, the following URLs are invalid: {'image_http_proxy': 'ftp://p'}."},
	}
	for _, c := range cases {
		task := e.task(nodeA, c.ii)
		for k, v := range c.di {
			task.Node.DriverInfo[k] = v
		}
		err := e.d.Validate(ctx, task)
		if !driver.IsClass(err, c.class) || err.Error() != c.want {
			t.Errorf("%s: %v, want %s %q", c.name, err, c.class, c.want)
		}
	}
	// Serving an image needs the conductor's HTTP server.
	e.im.HTTPURL = ""
	task := e.task(nodeA, map[string]any{"image_source": "http://127.0.0.1/x.img", "image_checksum": "ab", "image_download_source": "local"})
	err := e.d.Validate(ctx, task)
	if want := "Node " + nodeA + " failed to validate http provisioning. Some configuration options were missing. Missing are: ['[deploy]http_url']"; err == nil || err.Error() != want {
		t.Errorf("local source without http_url: %v", err)
	}
}

// A partition image needs root_gb; its layout is recorded in MiB.
func TestPartitionImageLayout(t *testing.T) {
	e := newImageEnv(t, nil)
	o := newOrigin(t)
	data := diskBytes(11, 4096)
	src := o.add("/part.img", data)
	ctx := context.Background()
	task := e.task(nodeA, map[string]any{"image_source": src, "image_checksum": sha256Hex(data), "kernel": "http://k", "ramdisk": "http://r"})
	err := e.d.Prepare(ctx, task)
	if !driver.IsClass(err, errs.ClassMissingParameterValue) || err.Error() != "Some parameters were missing in node's instance_info. Missing are: ['root_gb']" {
		t.Fatalf("partition image without root_gb: %v", err)
	}
	task = e.task(nodeA, map[string]any{"image_source": src, "image_checksum": sha256Hex(data), "kernel": "http://k", "ramdisk": "http://r",
		"root_gb": "10", "ephemeral_gb": 2.0, "swap_mb": "512", "preserve_ephemeral": "no"})
	if err := e.d.Prepare(ctx, task); err != nil {
		t.Fatal(err)
	}
	info, _ := e.write(t, task)
	if info["image_type"] != "partition" || info["root_mb"] != 10240.0 || info["ephemeral_mb"] != 2048.0 || info["swap_mb"] != 512.0 ||
		info["ephemeral_format"] != "ext4" || info["preserve_ephemeral"] != false || info["disk_label"] != "gpt" || info["boot_option"] != "local" {
		t.Fatalf("image_info %v", info)
	}
	bad := e.task(nodeB, map[string]any{"image_source": src, "image_checksum": sha256Hex(data), "kernel": "k", "ramdisk": "r", "root_gb": 1.0, "preserve_ephemeral": "maybe"})
	err = e.d.Prepare(ctx, bad)
	if want := "Invalid parameter preserve_ephemeral: Unrecognized value 'maybe', acceptable values are: '0', '1', 'f', 'false', 'n', 'no', 'off', 'on', 't', 'true', 'y', 'yes'"; err == nil || err.Error() != want {
		t.Fatalf("preserve_ephemeral: %v", err)
	}
}

// Two nodes preparing at the same time still download the image once.
func TestLocalDownloadConcurrentNodesShareOneDownload(t *testing.T) {
	e := newImageEnv(t, nil)
	o := newOrigin(t)
	data := diskBytes(12, 512<<10)
	src := o.add("/disk.img", data)
	uuids := []string{nodeA, nodeB, "1a2b3c4d-0000-4000-8000-00000000000c"}
	errc := make(chan error, len(uuids))
	var wg sync.WaitGroup
	for _, uuid := range uuids {
		task := e.task(uuid, map[string]any{"image_source": src, "image_checksum": sha256Hex(data), "image_download_source": "local"})
		wg.Add(1)
		go func() {
			defer wg.Done()
			errc <- e.d.Prepare(context.Background(), task)
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := o.downloads("/disk.img"); n != 1 {
		t.Fatalf("origin served %d downloads for %d concurrent nodes", n, len(uuids))
	}
	for _, uuid := range uuids {
		if got := get(t, e.httpSrv.URL+"/agent_images/"+uuid); !bytes.Equal(got, data) {
			t.Fatalf("node %s image differs", uuid)
		}
	}
}

// With [conductor]/conductor_always_validates_images the conductor
// inspects an http image it does not serve, records the detected format
// and keeps no copy for the node.
func TestHTTPDownloadSourceInspectsWhenAsked(t *testing.T) {
	e := newImageEnv(t, nil)
	e.im.AlwaysValidateImages = true
	o := newOrigin(t)
	data := diskBytes(13, 8192)
	src := o.add("/disk.img", data)
	task := e.task(nodeA, map[string]any{"image_source": src, "image_checksum": sha256Hex(data)})
	if err := e.d.Prepare(context.Background(), task); err != nil {
		t.Fatal(err)
	}
	ii := task.Node.InstanceInfo
	if ii["image_disk_format"] != "raw" || ii["image_url"] != src || o.downloads("/disk.img") != 1 {
		t.Fatalf("instance_info %v after %d downloads", ii, o.downloads("/disk.img"))
	}
	if _, err := os.Stat(filepath.Join(e.im.ImagesPath, nodeA, "disk")); !os.IsNotExist(err) {
		t.Fatalf("inspected copy kept for the node: %v", err)
	}
	// A claimed format that the content does not match is refused (as
	// upstream, a master already in the cache is not inspected again).
	other := o.add("/other.img", data)
	claimed := e.task(nodeB, map[string]any{"image_source": other, "image_checksum": sha256Hex(data), "image_disk_format": "qcow2"})
	wantErrClass(t, e.d.Prepare(context.Background(), claimed), "InvalidImage", "")
}
