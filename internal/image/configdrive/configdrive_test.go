package configdrive

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/image"
)

func TestBuildReadsBack(t *testing.T) {
	if _, err := exec.LookPath("xorriso"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("xorriso is required in CI")
		}
		t.Skip("xorriso not installed")
	}
	cd := map[string]any{
		"meta_data":    map[string]any{"hostname": "h1", "public_keys": map[string]any{"k": "ssh-ed25519 AAA"}},
		"network_data": map[string]any{"links": []any{map[string]any{"id": "eth0", "mtu": 1500.0}}},
		"user_data":    map[string]any{"runcmd": []any{"echo é"}},
		"vendor_data":  map[string]any{"cloud-init": "#cloud-config"},
	}
	s, err := Build(t.Context(), "uuid-1", "node-1", cd)
	if err != nil {
		t.Fatal(err)
	}
	if err := Validate(s); err != nil {
		t.Fatal(err)
	}
	iso, err := Decode(s, 64<<20)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "cd.iso")
	if err := os.WriteFile(p, iso, 0o644); err != nil {
		t.Fatal(err)
	}
	if vid := string(iso[32768+40 : 32768+48]); vid != Label {
		t.Fatalf("volume id %q", vid)
	}
	want := map[string]string{
		"meta_data.json":    `{"hostname": "h1", "name": "node-1", "public_keys": {"k": "ssh-ed25519 AAA"}, "uuid": "uuid-1"}`,
		"network_data.json": `{"links": [{"id": "eth0", "mtu": 1500}]}`,
		"user_data":         `{"runcmd": ["echo \u00e9"]}`,
		"vendor_data2.json": `{"cloud-init": "#cloud-config"}`,
	}
	for _, v := range []string{"latest", "2012-08-10"} {
		for name, content := range want {
			got, err := image.ReadISOFile(t.Context(), p, "/openstack/"+v+"/"+name)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != content {
				t.Errorf("%s/%s = %s, want %s", v, name, got, content)
			}
		}
	}
	// A string user_data is written as is; no network_data, no file.
	files, err := Files("u", "", map[string]any{"user_data": "#!/bin/sh\n"})
	if err != nil {
		t.Fatal(err)
	}
	if string(files["openstack/latest/user_data"].Data) != "#!/bin/sh\n" || string(files["openstack/latest/meta_data.json"].Data) != `{"uuid": "u"}` {
		t.Fatalf("files %v", files)
	}
	if _, ok := files["openstack/latest/network_data.json"]; ok {
		t.Fatal("empty network_data written")
	}
	if _, err := Decode(s, 100); err == nil {
		t.Fatal("size limit not enforced")
	}
}

func TestValidate(t *testing.T) {
	ok := []any{nil, "", "H4sIAAAA\n==", "http://x/cd", map[string]any{"meta_data": map[string]any{}, "user_data": nil}, map[string]any{"user_data": []any{}}}
	for _, v := range ok {
		if err := Validate(v); err != nil {
			t.Errorf("%v: %v", v, err)
		}
	}
	e, _ := errs.As(Validate("{not json}"))
	if e == nil || e.Code != 400 || e.Message != "Invalid configdrive format: it is neither a JSON, nor a URL, nor a base64 string" {
		t.Fatalf("string: %v", e)
	}
	for _, v := range []any{map[string]any{"foo": map[string]any{}}, map[string]any{"meta_data": "x"}, 5.0} {
		e, _ := errs.As(Validate(v))
		if e == nil || e.Code != 400 {
			t.Errorf("%v accepted", v)
		}
	}
}
