package apiutil_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apiutil"
	"github.com/openkeel/ironic/internal/pyfmt"
)

// reference is what the node renderers wrote before ColumnWriter: the
// column decoded, masked as sanitize does, and encoded by api.Marshal.
func reference(t *testing.T, raw string, m apiutil.Masking) string {
	t.Helper()
	var v map[string]any
	if raw != "" {
		if err := json.Unmarshal([]byte(raw), &v); err != nil {
			t.Fatalf("reference of %q: %v", raw, err)
		}
	}
	v = apiutil.EmptyMap(v)
	if m.Dict {
		v = apiutil.MaskDict(v)
	}
	for _, k := range m.Truthy {
		if apiutil.Truthy(v[k]) {
			v[k] = apiutil.Secret
		}
	}
	b, err := api.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var fuzzKeys = []string{"a", "b", "B", "ipmi_password", "Password", "auth_token", "snmp_auth_key", "snmp_priv_key",
	"configdrive", "image_url", "deploy_kernel", "ключ", "\U0001F600", "x<y&z", "del\x7f", "tab\t", "", "a\u2028",
	"SecretThing", "İ"}

var fuzzStrings = []string{"", "plain", "password=hunter2", "--password s3cr3t", `{"password": "x"}`, "<tag>&amp;",
	"é ü ß", "\U0001F600 smile", "ctl\x01\x1f", "del\x7f", "quote\" back\\ slash/", "line\nfeed\r\t\b\f",
	"\u2028\u2029", "ADMIN_PASS = 'q'", "<password>p</password>", "bad\xffutf8", "İstanbul token=abc"}

var fuzzNumbers = []string{"0", "-0", "1", "-1", "623", "1.0", "1.5", "1788.5", "1e21", "1E21", "1e-7", "0.000001",
	"0.0000001", "123456789012345678901", "9007199254740993", "3.141592653589793", "-2.5e-3", "1e+2", "100e-2"}

// genValue writes a random JSON value as text in one of the forms a row
// may hold: keys in any order, spaces, escapes Python or Go would write.
func genValue(r *rand.Rand, depth int) string {
	switch k := r.IntN(10); {
	case k < 3 && depth < 4:
		return genObject(r, depth+1, r.IntN(2) == 0)
	case k == 3 && depth < 4:
		n := r.IntN(4)
		items := make([]string, n)
		for i := range items {
			items[i] = genValue(r, depth+1)
		}
		return "[" + strings.Join(items, sep(r)) + "]"
	case k == 4:
		return fuzzNumbers[r.IntN(len(fuzzNumbers))]
	case k == 5:
		return []string{"true", "false", "null"}[r.IntN(3)]
	}
	return genString(r, fuzzStrings[r.IntN(len(fuzzStrings))])
}

func sep(r *rand.Rand) string { return []string{",", ", ", " ,\n "}[r.IntN(3)] }

// genString encodes s by Go's rules, Python's ensure_ascii or with
// needless escapes.
func genString(r *rand.Rand, s string) string {
	switch r.IntN(3) {
	case 0:
		b, _ := json.Marshal(s)
		return string(b)
	case 1:
		return string(pyfmt.AppendJSONString(nil, s))
	}
	var b strings.Builder
	b.WriteByte('"')
	for _, c := range s {
		if c < 0x80 && c != '"' && c != '\\' && c >= 0x20 && r.IntN(3) > 0 {
			b.WriteRune(c)
			continue
		}
		if c > 0xffff {
			c -= 0x10000
			fmt.Fprintf(&b, `\u%04X\u%04X`, 0xd800+(c>>10)&0x3ff, 0xdc00+c&0x3ff)
			continue
		}
		fmt.Fprintf(&b, `\u%04x`, c)
	}
	b.WriteByte('"')
	return b.String()
}

func genObject(r *rand.Rand, depth int, sorted bool) string {
	n := r.IntN(6)
	keys := make([]string, 0, n)
	for range n {
		keys = append(keys, fuzzKeys[r.IntN(len(fuzzKeys))])
	}
	if sorted {
		sort.Strings(keys)
	}
	members := make([]string, len(keys))
	for i, k := range keys {
		members[i] = genString(r, k) + []string{":", ": ", " : "}[r.IntN(3)] + genValue(r, depth)
	}
	return "{" + strings.Join(members, sep(r)) + "}"
}

var maskings = []apiutil.Masking{
	{},
	{Dict: true},
	{Dict: true, Truthy: []string{"snmp_auth_key", "snmp_priv_key"}},
	{Dict: true, Truthy: []string{"configdrive", "image_url"}},
}

func TestColumnWriterMatchesDecodeAndEncode(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 1))
	var cw apiutil.ColumnWriter
	fixed := []string{"", "null", " null ", "{}", " { } ", `{"a":1}`, `{"b":1,"a":2}`, `{"a":1,"a":2}`,
		`{"snmp_auth_key":"","image_url":0,"configdrive":{}}`, `{"snmp_auth_key":"k","image_url":0.5,"configdrive":{"a":1}}`,
		`{"x":{"password":{"y":"password=1"}},"password":[1,"password=2"]}`, `{"a":"\ud800","b":"\udc00\ud83d\ude00"}`}
	for i := range 3000 {
		var raw string
		if i < len(fixed) {
			raw = fixed[i]
		} else {
			raw = genObject(r, 0, r.IntN(3) > 0)
		}
		for _, m := range maskings {
			want := reference(t, strings.TrimSpace(raw), m)
			got, err := cw.AppendObject([]byte("prefix"), raw, m)
			if err != nil {
				t.Fatalf("%q %+v: %v", raw, m, err)
			}
			if string(got) != "prefix"+want {
				t.Fatalf("%q masked %+v:\n got %s\nwant %s", raw, m, got[len("prefix"):], want)
			}
		}
	}
}

func TestColumnWriterRefusesWhatTheDecoderRefuses(t *testing.T) {
	var cw apiutil.ColumnWriter
	for _, raw := range []string{"[1]", "5", `{"a":}`, `{"a":1`, `{"a":"x` + "\x01" + `"}`, `{"a":01}`, `{"a":1e999}`, `{"a":1}x`} {
		if got, err := cw.AppendObject([]byte("p"), raw, apiutil.Masking{}); err == nil || string(got) != "p" {
			t.Errorf("%q: %q, %v; want an error and nothing written", raw, got, err)
		}
	}
}

func BenchmarkColumnWriter(b *testing.B) {
	raw := `{"deploy_kernel":"http://172.22.0.1/images/ironic-python-agent.kernel","deploy_ramdisk":"http://172.22.0.1/images/ironic-python-agent.initramfs","ipmi_address":"10.0.3.7","ipmi_password":"pw-0000abcd","ipmi_port":623,"ipmi_priv_level":"ADMINISTRATOR","ipmi_username":"admin"}`
	var cw apiutil.ColumnWriter
	buf := make([]byte, 0, 4096)
	m := apiutil.Masking{Dict: true, Truthy: []string{"snmp_auth_key", "snmp_priv_key"}}
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = cw.AppendObject(buf[:0], raw, m); err != nil {
			b.Fatal(err)
		}
	}
}
