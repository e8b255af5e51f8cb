package configdrive

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/image"
)

func needXorriso(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("xorriso"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("xorriso is required in CI")
		}
		t.Skip("xorriso not installed")
	}
}

func TestIsInvalidNetworkMetadata(t *testing.T) {
	link := func(mtu any) map[string]any {
		l := map[string]any{"id": "eth0", "type": "phy"}
		if mtu != nil {
			l["mtu"] = mtu
		}
		return l
	}
	for _, tc := range []struct {
		name         string
		nd           any
		invalid      bool
		invalidNoMTU bool // with disable_metadata_mtu_check
	}{
		{name: "none", nd: nil, invalid: true, invalidNoMTU: true},
		{name: "not an object", nd: []any{}, invalid: true, invalidNoMTU: true},
		{name: "empty object", nd: map[string]any{}, invalid: true, invalidNoMTU: true},
		{name: "empty lists", nd: map[string]any{"links": []any{}, "networks": []any{}, "services": []any{}}, invalid: true, invalidNoMTU: true},
		{name: "list of empty objects", nd: map[string]any{"links": []any{map[string]any{}}}, invalid: true, invalidNoMTU: false},
		{name: "link with MTU", nd: map[string]any{"links": []any{link(1500.0)}}, invalid: false, invalidNoMTU: false},
		{name: "link without MTU", nd: map[string]any{"links": []any{link(1500.0), link(nil)}}, invalid: true, invalidNoMTU: false},
		{name: "links not a list", nd: map[string]any{"links": map[string]any{"id": "eth0"}}, invalid: true, invalidNoMTU: false},
		{name: "services only", nd: map[string]any{"services": []any{map[string]any{"type": "dns", "address": "192.0.2.53"}}}, invalid: false, invalidNoMTU: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := IsInvalidNetworkMetadata(tc.nd, false); got != tc.invalid {
				t.Errorf("invalid = %v, want %v", got, tc.invalid)
			}
			if got := IsInvalidNetworkMetadata(tc.nd, true); got != tc.invalidNoMTU {
				t.Errorf("with the MTU check disabled: invalid = %v, want %v", got, tc.invalidNoMTU)
			}
		})
	}
}

// generated is what the network interface would generate.
var generated = map[string]any{
	"links":    []any{map[string]any{"id": "iface0", "type": "phy", "ethernet_mac_address": "52:54:00:aa:bb:01", "vif_id": "vif-1", "mtu": 9000.0}},
	"networks": []any{map[string]any{"id": "sub-1", "link": "iface0", "type": "ipv4", "ip_address": "192.0.2.10", "netmask": "255.255.255.0", "routes": []any{}}},
	"services": []any{},
}

// fixOpts counts the calls of Generate, which answers md and err.
func fixOpts(calls *int, md map[string]any, err error) FixOptions {
	return FixOptions{NodeUUID: "node-1", Generate: func(context.Context) (map[string]any, error) {
		*calls++
		return md, err
	}}
}

// A dict's invalid network_data is replaced by the generated metadata;
// valid data, metadata that cannot be regenerated and a URL are left as
// they came; Neutron's errors reach the caller.
func TestCheckAndFixDict(t *testing.T) {
	ctx := context.Background()
	noMTU := map[string]any{"links": []any{map[string]any{"id": "eth0"}}}
	withMTU := map[string]any{"links": []any{map[string]any{"id": "eth0", "mtu": 1500.0}}}
	neutronDown := errs.NewMessage(errs.ClassNetworkError, "Unable to get port info for vif-1")
	for _, tc := range []struct {
		name       string
		cd         map[string]any
		disableMTU bool
		md         map[string]any
		genErr     error
		wantND     any
		wantCalls  int
		wantErr    error
	}{
		{name: "no network_data", cd: map[string]any{"meta_data": map[string]any{}}, md: generated, wantND: generated, wantCalls: 1},
		{name: "link without MTU", cd: map[string]any{"network_data": noMTU}, md: generated, wantND: generated, wantCalls: 1},
		{name: "MTU check disabled", cd: map[string]any{"network_data": noMTU}, disableMTU: true, md: generated, wantND: noMTU},
		{name: "valid", cd: map[string]any{"network_data": withMTU}, md: generated, wantND: withMTU},
		{name: "nothing to generate", cd: map[string]any{"network_data": noMTU}, md: map[string]any{"links": []any{}, "networks": []any{}, "services": []any{}}, wantND: noMTU, wantCalls: 1},
		{name: "generated without MTU", cd: map[string]any{"network_data": noMTU}, md: noMTU, wantND: noMTU, wantCalls: 1},
		{name: "neutron down", cd: map[string]any{"network_data": noMTU}, genErr: neutronDown, wantND: noMTU, wantCalls: 1, wantErr: neutronDown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			o := fixOpts(&calls, tc.md, tc.genErr)
			o.DisableMTUCheck = tc.disableMTU
			got, err := CheckAndFix(ctx, tc.cd, o)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("error %v, want %v", err, tc.wantErr)
			}
			if calls != tc.wantCalls {
				t.Errorf("%d generations, want %d", calls, tc.wantCalls)
			}
			if nd := got.(map[string]any)["network_data"]; !reflect.DeepEqual(nd, tc.wantND) {
				t.Errorf("network_data %v, want %v", nd, tc.wantND)
			}
		})
	}
	calls := 0
	if got, err := CheckAndFix(ctx, "https://example.org/cd.iso", fixOpts(&calls, generated, nil)); err != nil || got != "https://example.org/cd.iso" || calls != 0 {
		t.Fatalf("URL: %v, %v, %d generations", got, err, calls)
	}
}

// isoFile reads one file of an encoded config drive.
func isoFile(t *testing.T, cd, path string) []byte {
	t.Helper()
	iso, err := Decode(cd, 64<<20)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "cd.iso")
	if err := os.WriteFile(p, iso, 0o644); err != nil {
		t.Fatal(err)
	}
	data, err := image.ReadISOFile(context.Background(), p, path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// An ISO (gzipped and base64, as the API receives it) whose latest
// network_data.json is invalid is rebuilt with the generated metadata,
// the rest of the tree kept; one that is valid, cannot be read or lacks
// the file comes back unchanged.
func TestCheckAndFixISO(t *testing.T) {
	needXorriso(t)
	ctx := context.Background()
	build := func(nd map[string]any) string {
		t.Helper()
		cd := map[string]any{"meta_data": map[string]any{"hostname": "h1", "public-keys": map[string]any{"k": "ssh-ed25519 AAA"}}, "user_data": "#!/bin/sh\necho hi\n"}
		if nd != nil {
			cd["network_data"] = nd
		}
		s, err := Build(ctx, "node-1", "n1", cd)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	noMTU := map[string]any{"links": []any{map[string]any{"id": "eth0", "type": "phy", "ethernet_mac_address": "52:54:00:aa:bb:01"}}}
	bad := build(noMTU)

	calls := 0
	got, err := CheckAndFix(ctx, bad, fixOpts(&calls, generated, nil))
	if err != nil || calls != 1 {
		t.Fatalf("%v, %d generations", err, calls)
	}
	fixed := got.(string)
	if fixed == bad {
		t.Fatal("the config drive was not regenerated")
	}
	var nd map[string]any
	if err := json.Unmarshal(isoFile(t, fixed, "/openstack/latest/network_data.json"), &nd); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(nd, generated) {
		t.Errorf("latest network_data.json %v, want %v", nd, generated)
	}
	// Upstream replaces the latest version only.
	if old := isoFile(t, fixed, "/openstack/2012-08-10/network_data.json"); !IsInvalidNetworkMetadata(decodeJSON(t, old), false) {
		t.Errorf("2012-08-10 network_data.json changed: %s", old)
	}
	if meta := isoFile(t, bad, "/openstack/latest/meta_data.json"); string(isoFile(t, fixed, "/openstack/latest/meta_data.json")) != string(meta) {
		t.Error("meta_data.json changed")
	}
	if u := isoFile(t, fixed, "/openstack/latest/user_data"); string(u) != "#!/bin/sh\necho hi\n" {
		t.Errorf("user_data %q", u)
	}
	// The rebuilt drive passes the check as it is.
	calls = 0
	if again, err := CheckAndFix(ctx, fixed, fixOpts(&calls, generated, nil)); err != nil || again != fixed || calls != 0 {
		t.Fatalf("rebuilt drive checked again: changed %v, %v, %d generations", again != fixed, err, calls)
	}

	unparsable, err := Encode(mustISO(t, map[string][]byte{"openstack/latest/network_data.json": []byte("{not json")}))
	if err != nil {
		t.Fatal(err)
	}
	lacking := build(nil)
	notGzip := "aGVsbG8gd29ybGQ="
	for _, tc := range []struct {
		name       string
		cd         string
		disableMTU bool
		md         map[string]any
		same       bool
		calls      int
	}{
		{name: "MTU check disabled", cd: bad, disableMTU: true, md: generated, same: true},
		{name: "valid", cd: build(map[string]any{"links": []any{map[string]any{"id": "eth0", "mtu": 1500.0}}}), md: generated, same: true},
		{name: "no network_data.json", cd: lacking, md: generated, same: true},
		{name: "not gzipped", cd: notGzip, md: generated, same: true},
		{name: "not an ISO", cd: mustEncode(t, []byte("plain text")), md: generated, same: true},
		{name: "nothing to generate", cd: bad, md: map[string]any{}, same: true, calls: 1},
		{name: "unparsable network_data.json", cd: unparsable, md: generated, same: false, calls: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			o := fixOpts(&calls, tc.md, nil)
			o.DisableMTUCheck = tc.disableMTU
			got, err := CheckAndFix(ctx, tc.cd, o)
			if err != nil {
				t.Fatal(err)
			}
			if (got == tc.cd) != tc.same || calls != tc.calls {
				t.Errorf("unchanged %v (want %v), %d generations (want %d)", got == tc.cd, tc.same, calls, tc.calls)
			}
		})
	}

	calls = 0
	neutronDown := errs.NewMessage(errs.ClassNetworkError, "Unable to get port info for vif-1")
	if _, err := CheckAndFix(ctx, bad, fixOpts(&calls, nil, neutronDown)); !errors.Is(err, neutronDown) {
		t.Fatalf("Neutron's error: %v", err)
	}
	if _, err := CheckAndFix(ctx, "not base64!", fixOpts(&calls, generated, nil)); err == nil {
		t.Fatal("undecodable base64 accepted")
	}
}

// A link in the ISO could have the rewrite write outside the tree: it is
// upstream's InvalidContent.
func TestCheckAndFixISOLink(t *testing.T) {
	needXorriso(t)
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "openstack", "latest"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/hostname", filepath.Join(dir, "openstack", "latest", "network_data.json")); err != nil {
		t.Fatal(err)
	}
	iso := filepath.Join(t.TempDir(), "cd.iso")
	if err := image.BuildDataISOFromDir(context.Background(), iso, Label, "Ironic", dir); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(iso)
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	_, err = CheckAndFix(context.Background(), mustEncode(t, data), fixOpts(&calls, generated, nil))
	if !errs.Is(err, errs.ClassInvalidContent) || calls != 0 {
		t.Fatalf("error %v, %d generations; want InvalidContent", err, calls)
	}
}

func decodeJSON(t *testing.T, data []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func mustEncode(t *testing.T, data []byte) string {
	t.Helper()
	s, err := Encode(data)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// mustISO builds a config-2 ISO of files.
func mustISO(t *testing.T, files map[string][]byte) []byte {
	t.Helper()
	entries := map[string]image.FileEntry{}
	for p, d := range files {
		entries[p] = image.FileEntry{Data: d}
	}
	iso := filepath.Join(t.TempDir(), "cd.iso")
	if err := image.BuildDataISO(context.Background(), iso, Label, "Ironic", entries); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(iso)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
