package image

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
)

func writeFile(t *testing.T, path string, data []byte) string {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func gptDisk(extra bool) []byte {
	b := make([]byte, 4096)
	pte := b[446:462]
	pte[2], pte[4] = 2, 0xee
	binary.LittleEndian.PutUint32(pte[8:12], 1)
	if extra {
		b[462+4] = 0x83
	}
	b[510], b[511] = 0x55, 0xaa
	return b
}

func TestDetectAndSafetyCheck(t *testing.T) {
	needTool(t, "qemu-img")
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	run(t, "qemu-img", "create", "-f", "qcow2", p("plain.qcow2"), "10M")
	run(t, "qemu-img", "create", "-f", "qcow2", "-b", p("plain.qcow2"), "-F", "qcow2", p("backed.qcow2"))
	run(t, "qemu-img", "create", "-f", "qcow2", "-o", "data_file="+p("data.raw"), p("datafile.qcow2"), "10M")
	run(t, "qemu-img", "create", "-f", "vmdk", p("sparse.vmdk"), "10M")
	run(t, "qemu-img", "create", "-f", "vpc", p("disk.vhd"), "10M")
	run(t, "qemu-img", "create", "-f", "vhdx", p("disk.vhdx"), "10M")
	run(t, "qemu-img", "create", "-f", "vdi", p("disk.vdi"), "10M")
	run(t, "qemu-img", "create", "-f", "qed", p("disk.qed"), "10M")
	writeFile(t, p("zero.raw"), make([]byte, 1<<20))
	writeFile(t, p("gpt.img"), gptDisk(false))
	writeFile(t, p("gptextra.img"), gptDisk(true))
	writeFile(t, p("desc.vmdk"), []byte("# Disk DescriptorFile\nversion=1\ncreateType=\"monolithicSparse\"\nRW 2048 SPARSE \"/etc/shadow\"\n"))

	cases := []struct {
		file   string
		format string
		safe   bool
		vsize  int64
	}{
		{"plain.qcow2", "qcow2", true, 10 << 20},
		{"backed.qcow2", "qcow2", false, 10 << 20},
		{"datafile.qcow2", "qcow2", false, 10 << 20},
		{"sparse.vmdk", "vmdk", true, 10 << 20},
		{"disk.vhd", "vhd", true, 0},
		{"disk.vhdx", "vhdx", true, 10 << 20},
		{"disk.vdi", "vdi", true, 10 << 20},
		{"disk.qed", "qed", false, 0},
		{"zero.raw", "raw", true, 1 << 20},
		{"gpt.img", "gpt", true, 4096},
		{"gptextra.img", "gpt", false, 4096},
		{"desc.vmdk", "vmdk", false, 0},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			d, err := DetectFileFormat(p(c.file))
			if err != nil {
				t.Fatal(err)
			}
			if d.Name != c.format {
				t.Fatalf("format %s, want %s", d.Name, c.format)
			}
			if c.vsize != 0 && d.VirtualSize != c.vsize {
				t.Errorf("virtual size %d, want %d", d.VirtualSize, c.vsize)
			}
			if err := d.SafetyCheck(); (err == nil) != c.safe {
				t.Fatalf("safety check: %v, want safe=%v", err, c.safe)
			}
			name, err := SafetyCheckImage(p(c.file), "")
			if c.safe {
				if err != nil || name != c.format {
					t.Fatalf("SafetyCheckImage = %q, %v", name, err)
				}
			} else {
				wantClass(t, err, "InvalidImage", "The requested image is not valid for use.")
			}
			info, err := ImgInfo(t.Context(), p(c.file), "")
			if err == nil && c.format != "gpt" && c.format != "raw" && c.file != "desc.vmdk" {
				want := map[string]string{"vhd": "vpc"}[c.format]
				if want == "" {
					want = c.format
				}
				if info.Format != want {
					t.Errorf("qemu-img says %s, inspector %s", info.Format, c.format)
				}
			}
		})
	}
}

func TestDetectISOAndHybrid(t *testing.T) {
	needTool(t, "xorriso")
	dir := t.TempDir()
	iso := filepath.Join(dir, "a.iso")
	if err := BuildDataISO(t.Context(), iso, "TEST", "x", map[string]FileEntry{"a/b": {Data: []byte("hello")}}); err != nil {
		t.Fatal(err)
	}
	d, err := DetectFileFormat(iso)
	if err != nil || d.Name != "iso" {
		t.Fatalf("iso: %v %v", d, err)
	}
	// A GPT in front of an ISO (a hybrid bootable ISO) is an ISO.
	data, _ := os.ReadFile(iso)
	copy(data, gptDisk(false)[:512])
	writeFile(t, iso, data)
	if d, err = DetectFileFormat(iso); err != nil || d.Name != "iso" {
		t.Fatalf("hybrid: %v %v", d, err)
	}
	// Any other double match is refused.
	q := make([]byte, 64*1024)
	copy(q, "QFI\xfb")
	copy(q[510:], []byte{0x55, 0xaa})
	writeFile(t, filepath.Join(dir, "two"), q)
	if _, err := SafetyCheckImage(filepath.Join(dir, "two"), ""); err == nil {
		t.Fatal("qcow2+gpt accepted")
	}
}

func TestCheckFormatPermitted(t *testing.T) {
	permitted := DefaultOptions().PermittedFormats
	cases := []struct {
		format, expected string
		ok               bool
	}{
		{"raw", "raw", true},
		{"gpt", "raw", true},
		{"qcow2", "qcow2", true},
		{"qcow2", "raw", false}, // a qcow2 claiming to be raw
		{"raw", "qcow2", false},
		{"raw", "aki", true},
		{"vmdk", "vmdk", false}, // not permitted
		{"iso", "", true},
	}
	for _, c := range cases {
		err := CheckFormatPermitted(permitted, c.format, c.expected, "")
		if (err == nil) != c.ok {
			t.Errorf("%s/%s: %v", c.format, c.expected, err)
		}
		if err != nil {
			wantClass(t, err, "InvalidImage", "")
		}
	}
	if !FormatPermitted([]string{"raw"}, "gpt") || FormatPermitted([]string{"qcow2"}, "gpt") {
		t.Error("raw must permit gpt and only raw")
	}
}
