package secrets

import (
	"bytes"
	"encoding/base64"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func testRing(t *testing.T, current string, ids ...string) *KeyRing {
	t.Helper()
	keys := map[string][]byte{}
	for i, id := range ids {
		keys[id] = bytes.Repeat([]byte{byte(i + 1)}, KeySize)
	}
	r, err := NewKeyRing(keys, current)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestSealOpenRoundTrip(t *testing.T) {
	r := testRing(t, "k1", "k1")
	di := map[string]any{
		"ipmi_address":  "10.0.0.1",
		"ipmi_password": "s3cret",
		"snmp_auth_key": "authkey",
		"port":          float64(623),
		"nested":        map[string]any{"redfish_password": "deep", "user": "admin"},
		"empty_secret":  "",
		"agent_token":   true,
	}
	sealed, err := r.Seal("node-1", DriverInfo, di)
	if err != nil {
		t.Fatal(err)
	}
	if di["ipmi_password"] != "s3cret" {
		t.Fatal("Seal changed its input")
	}
	for _, k := range []string{"ipmi_password", "snmp_auth_key", "agent_token"} {
		if s, _ := sealed[k].(string); !strings.HasPrefix(s, Prefix+"k1:") {
			t.Errorf("%s not sealed: %v", k, sealed[k])
		}
	}
	if sealed["ipmi_address"] != "10.0.0.1" || sealed["empty_secret"] != "" || sealed["port"] != float64(623) {
		t.Errorf("non-secret values changed: %v", sealed)
	}
	if s := sealed["nested"].(map[string]any)["redfish_password"].(string); !IsSealed(s) {
		t.Errorf("nested secret not sealed: %q", s)
	}
	opened, err := Open(r, "node-1", DriverInfo, sealed)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(opened, di) {
		t.Errorf("round trip: got %v, want %v", opened, di)
	}
}

func TestOpenRefusals(t *testing.T) {
	r := testRing(t, "k1", "k1")
	sealed, err := r.Seal("node-1", DriverInfo, map[string]any{"ipmi_password": "pw"})
	if err != nil {
		t.Fatal(err)
	}
	// Another key under the same id.
	other, _ := NewKeyRing(map[string][]byte{"k1": bytes.Repeat([]byte{7}, KeySize)}, "")
	cases := []struct {
		name, node string
		ring       *KeyRing
		want       string
	}{
		{"no ring", "node-1", nil, "no key ring"},
		{"unknown key id", "node-1", testRing(t, "k2", "k2"), `"k1", which the key ring`},
		{"wrong key under the id", "node-1", other, "does not open"},
		{"moved to another node", "node-2", r, "does not open"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Open(c.ring, c.node, DriverInfo, sealed)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error with %q", err, c.want)
			}
			if strings.Contains(err.Error(), sealed["ipmi_password"].(string)) {
				t.Error("the error shows the sealed value")
			}
		})
	}
}

func TestConvert(t *testing.T) {
	r1 := testRing(t, "k1", "k1")
	r2 := testRing(t, "k2", "k1", "k2")
	plain := map[string]any{"ipmi_password": "pw", "ipmi_username": "u", "redfish_password": "pw2"}
	enc, n, err := r1.Convert(Encrypt, "n", DriverInfo, plain)
	if err != nil || n != 2 {
		t.Fatalf("encrypt: %d, %v", n, err)
	}
	if again, n, _ := r1.Convert(Encrypt, "n", DriverInfo, enc); n != 0 || !reflect.DeepEqual(again, enc) {
		t.Fatalf("encrypt is not idempotent: %d", n)
	}
	rot, n, err := r2.Convert(Rotate, "n", DriverInfo, enc)
	if err != nil || n != 2 {
		t.Fatalf("rotate: %d, %v", n, err)
	}
	if id, _ := KeyID(rot["ipmi_password"].(string)); id != "k2" {
		t.Fatalf("rotated under %q", id)
	}
	if _, n, _ := r2.Convert(Rotate, "n", DriverInfo, rot); n != 0 {
		t.Fatalf("rotate is not idempotent: %d", n)
	}
	var c Counts
	c.Count(DriverInfo, rot)
	c.Count(DriverInfo, plain)
	if c.Plain != 2 || c.Sealed["k2"] != 2 {
		t.Fatalf("counts: %+v", c)
	}
	dec, n, err := r2.Convert(Decrypt, "n", DriverInfo, rot)
	if err != nil || n != 2 || !reflect.DeepEqual(dec, plain) {
		t.Fatalf("decrypt: %v (%d, %v)", dec, n, err)
	}
}

func TestLoadKeyRingFromSecretVolume(t *testing.T) {
	// What kubelet makes of a Secret volume: the keys are links into a
	// timestamped folder through ..data.
	dir := t.TempDir()
	ts := filepath.Join(dir, "..2026_12_02_13_00_00.123")
	if err := os.Mkdir(ts, 0o700); err != nil {
		t.Fatal(err)
	}
	raw := bytes.Repeat([]byte{3}, KeySize)
	if err := os.WriteFile(filepath.Join(ts, "2026-12"), raw, 0o600); err != nil {
		t.Fatal(err)
	}
	b64 := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{4}, KeySize)) + "\n"
	if err := os.WriteFile(filepath.Join(ts, "2026-06"), []byte(b64), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Base(ts), filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"2026-12", "2026-06"} {
		if err := os.Symlink(filepath.Join("..data", k), filepath.Join(dir, k)); err != nil {
			t.Fatal(err)
		}
	}
	r, err := LoadKeyRing([]string{dir}, "2026-12")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(r.IDs(), ","); got != "2026-06,2026-12" || r.CurrentID() != "2026-12" {
		t.Fatalf("ring %s current %s", got, r.CurrentID())
	}
	if _, err := LoadKeyRing([]string{dir}, ""); err == nil {
		t.Fatal("two keys and no current key id: want an error")
	}
	if _, err := LoadKeyRing([]string{dir}, "nope"); err == nil {
		t.Fatal("unknown current key id: want an error")
	}
	short := filepath.Join(t.TempDir(), "short")
	if err := os.WriteFile(short, []byte("too short"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadKeyRing([]string{short}, ""); err == nil {
		t.Fatal("a short key: want an error")
	}
}

func TestInstanceInfoFields(t *testing.T) {
	r := testRing(t, "", "k1")
	ii := map[string]any{"configdrive": "H4sI...", "image_url": "https://swift/temp?sig=x", "image_source": "glance://x",
		"rescue_password": "r", "hashed_rescue_password": "$6$x"}
	s, err := r.Seal("n", InstanceInfo, ii)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range s {
		if sealed := IsSealed(v.(string)); sealed != (k != "image_source") {
			t.Errorf("%s sealed=%v", k, sealed)
		}
	}
}

// The CPU cost of sealing and opening one node's driver_info (three
// secrets among seven keys): what encryption adds to a write and a read.
func BenchmarkDriverInfo(b *testing.B) {
	keys := map[string][]byte{"k1": bytes.Repeat([]byte{1}, KeySize)}
	r, err := NewKeyRing(keys, "")
	if err != nil {
		b.Fatal(err)
	}
	di := map[string]any{"ipmi_address": "10.0.0.1", "ipmi_username": "admin", "ipmi_password": "pw-0001",
		"ipmi_port": float64(623), "deploy_kernel": "http://x/k", "deploy_ramdisk": "http://x/r", "snmp_auth_key": "a", "redfish_password": "p"}
	sealed, err := r.Seal("5c7a7d45-8d44-4f3c-9f3e-0d9a6c1f2b11", DriverInfo, di)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("Seal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := r.Seal("5c7a7d45-8d44-4f3c-9f3e-0d9a6c1f2b11", DriverInfo, di); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Open", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Open(r, "5c7a7d45-8d44-4f3c-9f3e-0d9a6c1f2b11", DriverInfo, sealed); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("OpenPlain", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Open(nil, "5c7a7d45-8d44-4f3c-9f3e-0d9a6c1f2b11", DriverInfo, di); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// The other resources' secrets are sealed at their own place: a value does
// not open at another, and the error names the resource, not a node.
func TestOtherPlaces(t *testing.T) {
	r := testRing(t, "k1", "k1")
	props := map[string]any{"target_iqn": "iqn", "auth_password": "chap"}
	sealed, err := r.Seal("vt-uuid", VolumeTargetProperties, props)
	if err != nil || sealed["target_iqn"] != "iqn" || !IsSealed(sealed["auth_password"].(string)) {
		t.Fatalf("seal: %v %v", sealed, err)
	}
	if opened, err := Open(r, "vt-uuid", VolumeTargetProperties, sealed); err != nil || opened["auth_password"] != "chap" {
		t.Fatalf("open: %v %v", opened, err)
	}
	_, err = Open(r, "vt-uuid", RunbookStepArgs, sealed)
	if err == nil || !strings.Contains(err.Error(), "of runbook vt-uuid") {
		t.Fatalf("opened at another place: %v", err)
	}
	_, err = Open(nil, "n-uuid", DriverInfo, map[string]any{"ipmi_password": sealed["auth_password"]})
	if err == nil || !strings.Contains(err.Error(), "of node n-uuid") {
		t.Fatalf("a node's error: %v", err)
	}
}
