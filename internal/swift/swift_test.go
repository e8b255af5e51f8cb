package swift

import (
	"bytes"
	"context"
	"crypto/md5" //nolint:gosec // the checksum openstacksdk records
	"encoding/hex"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/testing/keystone"
	fakeswift "github.com/openkeel/ironic/testing/swift"
)

type env struct {
	ks      *keystone.Fixture
	sw      *fakeswift.Fixture
	c       *Client
	account string
}

// newEnv is a Keystone whose catalog lists a Swift that accepts only the
// tokens Keystone issued, and the client of a [swift] section for them.
func newEnv(t *testing.T) *env {
	t.Helper()
	ks := keystone.New(t).Project("service").User("ironic", "secret").Grant("ironic", "service", "admin")
	sw := fakeswift.New(t).ValidateTokens(ks.TokenValid)
	sw.Register(ks, ks.ProjectID("service"))
	cfg, err := config.Load(config.LoadOptions{Overrides: map[string]map[string]string{
		"swift": fakeswift.IronicSection(ks, "ironic", "secret", "service"),
	}})
	if err != nil {
		t.Fatal(err)
	}
	c := FromConfig(cfg)
	c.Now = sw.Now
	return &env{ks: ks, sw: sw, c: c, account: fakeswift.AccountName(ks.ProjectID("service"))}
}

func wantClass(t *testing.T, err error, class errs.Class, msg string) {
	t.Helper()
	e, ok := errs.As(err)
	if !ok || e.Class != class {
		t.Fatalf("error %v (%T), want %s", err, err, class)
	}
	if msg != "" && e.Message != msg {
		t.Fatalf("message %q, want %q", e.Message, msg)
	}
}

func TestCreateObject(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	if err := e.c.CreateObject(ctx, "logs", "n1.tar.gz", []byte("archive"), map[string]string{"X-Delete-After": "86400"}); err != nil {
		t.Fatal(err)
	}
	o := e.sw.Object(e.account, "logs", "n1.tar.gz")
	if o == nil || string(o.Data) != "archive" {
		t.Fatalf("object %+v", o)
	}
	// openstacksdk's checksums of the content travel as metadata.
	if o.Header.Get("X-Object-Meta-X-Sdk-Md5") != "888d0ee361af3603736f32131e7b20a2" {
		t.Fatalf("md5 metadata %q", o.Header.Get("X-Object-Meta-X-Sdk-Md5"))
	}
	if len(o.Header.Get("X-Object-Meta-X-Sdk-Sha256")) != 64 {
		t.Fatalf("sha256 metadata %q", o.Header.Get("X-Object-Meta-X-Sdk-Sha256"))
	}
	// X-Delete-After makes Swift expire the object.
	e.sw.Advance(86399 * time.Second)
	if e.sw.Object(e.account, "logs", "n1.tar.gz") == nil {
		t.Fatal("object expired early")
	}
	e.sw.Advance(time.Second)
	if e.sw.Object(e.account, "logs", "n1.tar.gz") != nil {
		t.Fatal("object outlived X-Delete-After")
	}

	// The container exists now: it is not created again, and unchanged
	// content is not uploaded again.
	if err := e.c.CreateObject(ctx, "logs", "same", []byte("x"), nil); err != nil {
		t.Fatal(err)
	}
	before := len(e.sw.Requests())
	if err := e.c.CreateObject(ctx, "logs", "same", []byte("x"), nil); err != nil {
		t.Fatal(err)
	}
	for _, r := range e.sw.Requests()[before:] {
		if r.Method == http.MethodPut {
			t.Fatalf("unchanged object or existing container put again: %s %s", r.Method, r.Path)
		}
		if r.Token == "" {
			t.Fatalf("%s %s sent without a token", r.Method, r.Path)
		}
	}
	if err := e.c.CreateObject(ctx, "logs", "same", []byte("y"), nil); err != nil {
		t.Fatal(err)
	}
	if o := e.sw.Object(e.account, "logs", "same"); o == nil || string(o.Data) != "y" {
		t.Fatalf("changed object not uploaded: %+v", o)
	}
}

func TestObjectFromDataGetDelete(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	if err := e.c.CreateObjectFromData(ctx, "inv", "inspector_data-u-inventory", []byte(`{"a":1}`)); err != nil {
		t.Fatal(err)
	}
	if o := e.sw.Object(e.account, "inv", "inspector_data-u-inventory"); o == nil || o.Header.Get("X-Object-Meta-X-Sdk-Md5") != "" {
		t.Fatalf("object from data %+v", o)
	}
	got, err := e.c.GetObject(ctx, "inv", "inspector_data-u-inventory")
	if err != nil || string(got) != `{"a":1}` {
		t.Fatalf("get %q %v", got, err)
	}
	if err := e.c.DeleteObject(ctx, "inv", "inspector_data-u-inventory"); err != nil {
		t.Fatal(err)
	}
	if e.sw.Object(e.account, "inv", "inspector_data-u-inventory") != nil {
		t.Fatal("object not deleted")
	}
	err = e.c.DeleteObject(ctx, "inv", "inspector_data-u-inventory")
	wantClass(t, err, "SwiftObjectNotFoundError", "Swift object inspector_data-u-inventory from container inv not found. Operation 'delete object' failed.")
	if !errs.Is(err, errs.ClassSwiftOperationError) {
		t.Fatal("not found is not a SwiftOperationError")
	}
	_, err = e.c.GetObject(ctx, "inv", "gone")
	wantClass(t, err, "SwiftObjectNotFoundError", "")
}

func TestOperationErrors(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.sw.Fail(http.StatusInternalServerError)
	err := e.c.CreateObject(ctx, "c", "o", []byte("d"), nil)
	wantClass(t, err, "SwiftOperationError", "")
	if msg := err.Error(); !strings.HasPrefix(msg, "Swift operation 'put container' failed: 500: Server Error for url: ") {
		t.Fatalf("message %q", msg)
	}
	err = e.c.DeleteObject(ctx, "c", "o")
	wantClass(t, err, "SwiftOperationError", "")
	if !strings.HasPrefix(err.Error(), "Swift operation 'delete object' failed: ") {
		t.Fatalf("message %q", err)
	}
	e.sw.Heal()
	if err := e.c.CreateContainer(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	e.sw.Fail(http.StatusServiceUnavailable)
	wantClass(t, e.c.CreateObjectFromData(ctx, "c", "o", []byte("d")), "SwiftOperationError", "")
}

func TestTempURL(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	if err := e.c.CreateObject(ctx, "cd", "node-1", []byte("configdrive"), nil); err != nil {
		t.Fatal(err)
	}
	_, err := e.c.TempURL(ctx, "cd", "node-1", time.Minute)
	wantClass(t, err, "MissingParameterValue", "Swift temporary URLs require a shared secret to be created. You must provide pre-generate the key on the project used to access Swift.")

	e.sw.SetTempURLKey(e.account, "first", false)
	u, err := e.c.TempURL(ctx, "cd", "node-1", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	pu, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	wantExp := e.sw.Now().Add(time.Hour).Unix()
	if pu.Path != "/v1/"+e.account+"/cd/node-1" || pu.Query().Get("temp_url_expires") != itoa(wantExp) ||
		pu.Query().Get("temp_url_sig") != TempURLSignature("first", "GET", pu.Path, wantExp) {
		t.Fatalf("temp url %s", u)
	}
	// Anyone can GET it, with no token, until it expires.
	if body, status := get(t, u); status != http.StatusOK || body != "configdrive" {
		t.Fatalf("GET temp url: %d %q", status, body)
	}
	e.sw.Advance(time.Hour)
	if _, status := get(t, u); status != http.StatusUnauthorized {
		t.Fatalf("expired temp url answered %d", status)
	}

	// The second key, when set, is the one signed with.
	e.sw.SetTempURLKey(e.account, "second", true)
	u, err = e.c.TempURL(ctx, "cd", "node-1", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	pu, _ = url.Parse(u)
	if pu.Query().Get("temp_url_sig") != TempURLSignature("second", "GET", pu.Path, e.sw.Now().Add(time.Hour).Unix()) {
		t.Fatalf("not signed with the second key: %s", u)
	}
	if _, status := get(t, u); status != http.StatusOK {
		t.Fatalf("GET temp url signed with key 2: %d", status)
	}
	// A tampered path is refused.
	if _, status := get(t, strings.Replace(u, "node-1", "node-2", 1)); status != http.StatusUnauthorized {
		t.Fatalf("tampered temp url answered %d", status)
	}
}

func TestSignTempURL(t *testing.T) {
	// Computed independently with Python's hmac and hashlib.sha1.
	got := SignTempURL("mykey", "GET", "/v1/AUTH_account/container/object", 1323479485)
	want := "/v1/AUTH_account/container/object?temp_url_sig=d9fc2067e52b06598421664cf6610bfc8fc431f6&temp_url_expires=1323479485"
	if got != want {
		t.Fatalf("got %s\nwant %s", got, want)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func get(t *testing.T, u string) (string, int) {
	t.Helper()
	resp, err := http.Get(u) //nolint:noctx // test helper
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b := new(strings.Builder)
	_, _ = io.Copy(b, resp.Body)
	return b.String(), resp.StatusCode
}

func TestCreateObjectFromFile(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "boot.iso")
	content := bytes.Repeat([]byte("CD001"), 100000)
	if err := os.WriteFile(path, content, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := e.c.CreateObjectFromFile(ctx, "isos", "boot-n1.iso", path, map[string]string{"X-Delete-After": "900"}); err != nil {
		t.Fatal(err)
	}
	o := e.sw.Object(e.account, "isos", "boot-n1.iso")
	sum := md5.Sum(content)
	if o == nil || !bytes.Equal(o.Data, content) || o.Header.Get("X-Object-Meta-X-Sdk-Md5") != hex.EncodeToString(sum[:]) ||
		!o.DeleteAt.Equal(e.sw.Now().Add(900*time.Second)) {
		t.Fatalf("uploaded object %v", o != nil)
	}
	err := e.c.CreateObjectFromFile(ctx, "isos", "x", filepath.Join(t.TempDir(), "missing"), nil)
	if err == nil || errs.Is(err, errs.ClassSwiftOperationError) {
		t.Fatalf("missing file: %v", err)
	}
}

// TestListObjects: every object is listed across pages of the server's
// listing limit; an empty container lists nothing and a missing one is a
// SwiftOperationError.
func TestListObjects(t *testing.T) {
	e := newEnv(t)
	e.sw.ListingLimit(2)
	ctx := context.Background()
	want := []string{"n1/a.bin", "n1/b.bin", "n2/c.bin", "other"}
	for _, n := range want {
		e.sw.PutObject(e.account, "fw", n, []byte(n))
	}
	got, err := e.c.ListObjects(ctx, "fw")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("listed %v, want %v", got, want)
	}
	lists := 0
	for _, r := range e.sw.Requests() {
		if r.Method == http.MethodGet && strings.HasSuffix(r.Path, "/fw") {
			lists++
		}
	}
	if lists != 3 {
		t.Fatalf("%d listing requests, want 3 (two full pages and an empty one)", lists)
	}
	if err := e.c.CreateContainer(ctx, "empty"); err != nil {
		t.Fatal(err)
	}
	if got, err := e.c.ListObjects(ctx, "empty"); err != nil || len(got) != 0 {
		t.Fatalf("empty container: %v %v", got, err)
	}
	_, err = e.c.ListObjects(ctx, "missing")
	wantClass(t, err, "SwiftOperationError", "")
	if !strings.Contains(err.Error(), "Swift operation 'list objects' failed: 404") {
		t.Fatalf("error %q", err)
	}
}
